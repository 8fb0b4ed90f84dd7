"""
Remove every offload op (`prefetch`, `store`, `detach`), giving the
reference program that the offloaded one must compute exactly (the
`hyperoffload-strip` pass); collectives (`reduce_scatter`, `all_gather`)
stay: they compute.

A prefetch of a stored copy is replaced by the stored tensor; a remote
function argument becomes a tensor argument tagged with its tier; a returned
remote copy (a written-back result, whose result attribute names its tier)
is returned as the stored tensor.

```mlir
func.func @f(%x: tensor<4xf32>, %w: !hyperoffload.remote<tensor<4xf32>>) -> tensor<4xf32> {
  %h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
  hyperoffload.detach %x : tensor<4xf32>
  %y = hyperoffload.prefetch %h : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
  %v = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
  %r = arith.addf %y, %v : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
```
becomes
```mlir
func.func @f(%x: tensor<4xf32>, %w: tensor<4xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) -> tensor<4xf32> {
  %r = arith.addf %x, %w : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
```
"""

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from hyperoffload.dialects.hyperoffload import (
    EXPERT_PLAN_ATTR,
    TIER_ARG_ATTR,
    DetachOp,
    GatherOp,
    PrefetchOp,
    RemoteType,
    StoreOp,
)
from hyperoffload.dialects.residency import describe
from hyperoffload.ir.diagnostics import diagnostic_at


def _retype_remote_arguments(func: FuncOp) -> None:
    """Turn each remote argument into a tensor argument tagged with its tier."""
    if func.is_declaration:
        return
    arg_attrs = (
        list(func.arg_attrs.data)
        if func.arg_attrs
        else [DictionaryAttr({}) for _ in func.args]
    )
    rewriter = Rewriter()
    retyped = False
    for index, arg in enumerate(func.args):
        if isinstance(arg.type, RemoteType):
            attrs = dict(arg_attrs[index].data)
            attrs[TIER_ARG_ATTR] = arg.type.tier_attr
            arg_attrs[index] = DictionaryAttr(attrs)
            func.replace_argument_type(index, arg.type.tensor, rewriter)
            retyped = True
    if retyped:
        func.arg_attrs = ArrayAttr(arg_attrs)


def _stored_tensor(prefetch: PrefetchOp) -> SSAValue:
    """The device tensor whose copy `prefetch` reads."""
    source = prefetch.source
    if isinstance(source.owner, StoreOp):
        return source.owner.value
    if isinstance(source, BlockArgument) and isinstance(
        source.owner.parent_op(), FuncOp
    ):
        return source
    raise PassFailedException(
        diagnostic_at(
            prefetch,
            f"cannot strip a prefetch of "
            f"{describe(source)}: it is neither stored in this function nor a "
            "function argument",
        )
    )


def _return_stored_tensor(store: StoreOp) -> None:
    """A written-back result (a returned remote copy) is returned as the tensor."""
    for use in list(store.handle.uses):
        if isinstance(use.operation, ReturnOp):
            use.operation.operands[use.index] = store.value
            function = use.operation.parent_op()
            assert isinstance(function, FuncOp)
            function.update_function_type()


def _erase_unused(op: Operation, rewriter: Rewriter) -> None:
    for result in op.results:
        if result.uses:
            user = next(iter(result.uses)).operation
            raise PassFailedException(
                diagnostic_at(
                    user,
                    f"cannot strip: the remote copy "
                    f"{describe(result)} escapes through '{user.name}'",
                )
            )
    rewriter.erase_op(op)


def reject_gathers(module: ModuleOp, what: str) -> None:
    """
    Fail, located at the first `hyperoffload.gather`, where `what` (a pass)
    has no form for it: the blocks it reads from a remote pool are chosen at
    run time.
    """
    gather = next((o for o in module.walk() if isinstance(o, GatherOp)), None)
    if gather is not None:
        raise PassFailedException(
            diagnostic_at(
                gather,
                f"'{gather.name}' is not supported by {what}: it reads blocks of "
                f"{describe(gather.pool)} chosen at run time",
            )
        )


def strip_offload_ops(module: ModuleOp) -> None:
    """Remove all hyperoffload ops from `module` in place, keeping what it computes."""
    rewriter = Rewriter()
    ops = [o for o in module.walk() if isinstance(o, PrefetchOp | StoreOp | DetachOp)]
    for prefetch in ops:
        if isinstance(prefetch, PrefetchOp):
            rewriter.replace_op(prefetch, [], [_stored_tensor(prefetch)])
    for detach in ops:
        if isinstance(detach, DetachOp):
            rewriter.erase_op(detach)
    for store in ops:
        if isinstance(store, StoreOp):
            _return_stored_tensor(store)
            _erase_unused(store, rewriter)
    for func in module.walk():
        if isinstance(func, FuncOp):
            _retype_remote_arguments(func)
            func.attributes.pop(EXPERT_PLAN_ATTR, None)  # the plan is gone
