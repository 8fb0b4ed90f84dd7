"""
Function-wide residency invariants of the `hyperoffload` dialect.

Per-op verifiers see one op; these invariants need a whole block:

- no compute op reads a remote copy (only `prefetch`, calls and terminators,
  which forward values, may take an `!hyperoffload.remote` operand);
- nothing uses a tensor after its `detach`: later in the detach's block, or,
  for a detach inside a branch (`scf.if`, `scf.index_switch`) of a tensor
  defined above it, after the branch op in any enclosing block (the detach may
  have run); a use in another branch of the same op is on another path. If a
  `store` before the detach on its path (in its block or an enclosing one)
  persisted the tensor, the later use must read a `prefetch` of that copy;
  otherwise the detach dropped the only copy of live data;
- a `speculative` prefetch is read only inside branches below it: it is
  issued ahead of a branch's decision, never inside the branch it anticipates;
- the blocks of a `gather` issued `ahead` (for the next call) are read by
  nothing in this call but a return or a detach;
- a `hyperoffload.tier` argument attribute names a tier and agrees with the
  argument's type.

```mlir
%h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
hyperoffload.detach %x : tensor<4xf32>
%y = arith.addf %x, %x : tensor<4xf32>   // error: %x used after its detach

scf.if %routed {
  hyperoffload.detach %w : tensor<4xf32>
}
%z = arith.addf %w, %w : tensor<4xf32>   // error: the detach may have run
```

A compute op inside a branch that reads a remote copy is told so with the
branch (`... inside scf.if (else branch) reads %w ...`): an expert's weights
are read in its branch only if they are resident (a device tensor from
above) or prefetched there.

The check is linear in the size of the IR (times the nesting depth).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import DictionaryAttr, TensorType, UnitAttr
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.dialects.scf import IfOp, IndexSwitchOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import IsTerminator

from hyperoffload.dialects.hyperoffload import (
    BRANCH_OPS,
    SPECULATIVE_ATTR,
    TIER_ARG_ATTR,
    DetachOp,
    GatherOp,
    PrefetchOp,
    RemoteType,
    StoreOp,
    TierAttr,
)
from hyperoffload.dialects.provenance import written_as
from hyperoffload.dialects.views import readers, view_source

ErrorFactory = Callable[[Operation, str], Exception]
"""Builds the exception to raise for a violation at an op."""


def _may_take_remote(op: Operation) -> bool:
    """
    Ops that may take a remote copy without computing on it: our own ops
    (their verifiers check their operands), calls and terminators (which
    forward values).
    """
    return isinstance(
        op, PrefetchOp | StoreOp | DetachOp | GatherOp | CallOp
    ) or op.has_trait(IsTerminator, value_if_unregistered=False)


def describe(value: SSAValue) -> str:
    """`%name` when the value has a name, else its type."""
    return f"%{value.name_hint}" if value.name_hint else f"a value of type {value.type}"


def ancestor_in(block: Block, op: Operation) -> Operation | None:
    """The op of `block` that is `op` or contains it, if any."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def _branch_of(op: Operation) -> tuple[Operation, int] | None:
    """The innermost branch op (`BRANCH_OPS`) around `op`, and the region it is in."""
    current = op
    while (parent := current.parent_op()) is not None:
        if isinstance(parent, FuncOp):
            return None
        if isinstance(parent, BRANCH_OPS):
            region = current.parent_region()
            assert region is not None
            return parent, parent.regions.index(region)
        current = parent
    return None


def _branch_name(branch: Operation, region: int) -> str:
    """`scf.if (else branch)`, `scf.index_switch (case 2)`."""
    if isinstance(branch, IfOp):
        which = "then branch" if region == 0 else "else branch"
    elif isinstance(branch, IndexSwitchOp) and region > 0:
        which = f"case {list(branch.cases.iter_values())[region - 1]}"
    else:
        which = "default case"
    return f"{branch.name} ({which})"


def _check_compute_reads(op: Operation, error: ErrorFactory) -> None:
    if _may_take_remote(op):
        return
    for operand in op.operands:
        if not isinstance(operand.type, RemoteType):
            continue
        reads = f"reads {describe(operand)}, a remote copy ({operand.type})"
        branch = _branch_of(op)
        if branch is None:
            raise error(
                op,
                f"{written_as(op)} {reads}; compute reads only device-resident "
                "tensors, prefetch it first",
            )
        where = _branch_name(*branch)
        raise error(
            op,
            f"{written_as(op)} inside {where} {reads}; compute reads only "
            "device-resident tensors: prefetch it in this branch, or "
            f"speculatively before the {branch[0].name}",
        )


def _check_tier_arguments(func: FuncOp, error: ErrorFactory) -> None:
    if func.arg_attrs is None or not func.body.blocks:
        return
    for arg, attrs in zip(func.args, func.arg_attrs.data, strict=False):
        assert isinstance(attrs, DictionaryAttr)
        tier = attrs.data.get(TIER_ARG_ATTR)
        if tier is None:
            continue
        where = f"argument #{arg.index} of @{func.sym_name.data}"
        if not isinstance(tier, TierAttr):
            raise error(
                func, f"'{TIER_ARG_ATTR}' on {where} must be a #hyperoffload.tier"
            )
        if isinstance(arg.type, RemoteType):
            if arg.type.tier != tier.tier:
                raise error(
                    func,
                    f"'{TIER_ARG_ATTR}' on {where} says '{tier.tier}' but its "
                    f"type {arg.type} lives in '{arg.type.tier}'",
                )
        elif not isinstance(arg.type, TensorType):
            raise error(
                func, f"'{TIER_ARG_ATTR}' on {where} needs a tensor, got {arg.type}"
            )


class _Positions:
    """The index of each op in its block, computed once per block."""

    def __init__(self) -> None:
        self._index: dict[Block, dict[Operation, int]] = {}

    def of(self, op: Operation) -> int:
        block = op.parent_block()
        assert block is not None
        index = self._index.get(block)
        if index is None:
            index = self._index[block] = {o: i for i, o in enumerate(block.ops)}
        return index[op]


def _check_detach(detach: DetachOp, positions: _Positions, error: ErrorFactory) -> None:
    """
    Whether a use of the detached buffer may run after `detach`.

    The buffer is the detached value's, looking through views
    (`hyperoffload.dialects.views`), and its uses are the `readers` of it
    and of its views: a view reads nothing, the op reading through it does.
    `path` holds, for the detach's block and each enclosing block up to the
    buffer's, the op there that is (or contains) the detach. A use is placed
    at the innermost of those blocks that contains it: after the path's op
    there it may run after the detach; inside the path's op (a branch op) but
    not in the detach's region, it is on another path.
    """
    buffer = view_source(detach.value)
    owner = buffer.owner
    defining = owner if isinstance(owner, Block) else owner.parent_block()
    path: dict[Block, Operation] = {}
    current: Operation | None = detach
    while current is not None and (block := current.parent_block()) is not None:
        path[block] = current
        if block is defining:
            break
        current = block.parent_op()

    def placed(user: Operation) -> tuple[Operation, Operation] | None:
        """(the user or its ancestor, the path's op) in the innermost shared block."""
        current: Operation | None = user
        while current is not None:
            block = current.parent_block()
            if block is not None and block in path:
                return current, path[block]
            current = current.parent_op()
        return None

    before: list[Operation] = []
    after: list[tuple[int, Operation, SSAValue]] = []  # the first is blamed
    for user, operand in readers(buffer):
        where = placed(user)
        if where is None or where[0] is where[1]:
            continue  # the detach itself, or another branch of a path's op
        ancestor, on_path = where
        if positions.of(ancestor) < positions.of(on_path):
            if ancestor is user:  # a use that runs before the detach, always
                before.append(user)
        else:
            after.append((positions.of(ancestor), user, operand))
    if not after:
        return
    _, user, operand = min(after, key=lambda a: a[0])  # in program order
    branch = _branch_of(detach)
    note = (
        ""
        if branch is None or detach.parent_block() is defining
        else (f" (the detach inside {_branch_name(*branch)} may have run)")
    )
    through = [v for v in (operand, detach.value) if v is not buffer]
    if through:
        views = " and ".join(dict.fromkeys(describe(v) for v in through))
        note = f", through its view {views}{note}"
    if any(isinstance(u, StoreOp) for u in before):
        raise error(
            user,
            f"{describe(buffer)} is used after its detach; read a prefetch of its "
            f"stored copy instead{note}",
        )
    raise error(
        detach,
        f"detach of live data that no store has persisted: {describe(buffer)} is "
        f"still used by {written_as(user)} after it{note}",
    )


def _check_speculative(prefetch: PrefetchOp, error: ErrorFactory) -> None:
    """Every reader of a speculative prefetch sits in a branch below it."""
    if not isinstance(prefetch.attributes.get(SPECULATIVE_ATTR), UnitAttr):
        return  # absent, or not a unit attribute (the op's verifier says so)
    home = prefetch.parent_block()
    for use in prefetch.result.uses:
        user = use.operation
        if isinstance(user, DetachOp):
            continue
        current = user
        while current.parent_block() is not home:
            parent = current.parent_op()
            if parent is None or isinstance(parent, BRANCH_OPS):
                break
            current = parent
        else:
            raise error(
                prefetch,
                f"speculative prefetch {describe(prefetch.result)} is read "
                f"unconditionally by {written_as(user)}: a speculative prefetch "
                "is issued ahead of a branch's decision, so its readers must sit "
                "inside an scf.if (or scf.index_switch) below it; hoist it above "
                "the branch it anticipates or drop 'speculative'",
            )


def _check_ahead(gather: GatherOp, error: ErrorFactory) -> None:
    """
    The blocks of a gather issued `ahead` (for the next call) are not
    resident in this one: only a terminator (return) or a detach takes them.
    """
    if gather.ahead is None:
        return
    for use in gather.result.uses:
        user = use.operation
        if isinstance(user, DetachOp) or user.has_trait(
            IsTerminator, value_if_unregistered=False
        ):
            continue
        raise error(
            user,
            f"{written_as(user)} reads {describe(gather.result)}, blocks gathered "
            "ahead for the next call: they are not resident in this one; gather "
            "the blocks this call reads without 'ahead' (resident blocks, or "
            "fetched on demand)",
        )


def verify_residency(root: Operation, error: ErrorFactory) -> None:
    """Raise `error(op, message)` at the first op that breaks an invariant."""
    positions = _Positions()
    for op in root.walk():
        _check_compute_reads(op, error)
        if isinstance(op, FuncOp):
            _check_tier_arguments(op, error)
        elif isinstance(op, DetachOp):
            _check_detach(op, positions, error)
        elif isinstance(op, PrefetchOp):
            _check_speculative(op, error)
        elif isinstance(op, GatherOp):
            _check_ahead(op, error)
