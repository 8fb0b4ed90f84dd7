"""
The collectives of a sharded training step (`hyperoffload-gen --shard N`,
ZeRO-1/2): one device of an N-way data-parallel group reduce-scatters every
gradient, updates its shard of the master weights and moments, and
all-gathers the updated weights.

torch-mlir has no op for them, so the step is traced with stand-ins of
their single-process semantics (`hyperoffload.dialects.collectives`: the
rank's rows of a gradient, a shard padded with zeros) and markers: after
its results the traced step returns, for each parameter, the gradient and
its stand-in shard, then for each parameter the updated shard and its
stand-in gathered weight. `insert_collectives` takes the markers off the
function and puts the collectives in place of the stand-ins, each right
after its operand is computed (a gradient is reduced as soon as the
backward pass has it, as ZeRO-2 does: the float32 copy of a lower-precision
gradient, which the trace makes after the whole backward pass, first moves
up to the gradient it copies, `_hoist`):

```mlir
%g = linalg.generic ... -> tensor<16x8xf32>                 // the gradient
...
%s = tensor.extract_slice %g[4, 0] [4, 8] [1, 1] ...        // stand-in
func.return %loss, ..., %g, %s, ... : ...
```
becomes
```mlir
%g = linalg.generic ... -> tensor<16x8xf32>
%s = hyperoffload.reduce_scatter %g {group = 4 : i64, rank = 1 : i64} : tensor<16x8xf32> -> tensor<4x8xf32>
...
func.return %loss, ... : ...
```

Expert parallelism (`hyperoffload-gen --expert-shard N`) marks its
exchanges the same way, one (operand, stand-in) pair per all-to-all of
`hyperoffload.frontend.models.ReplicaExchange`, after the ZeRO markers:
`insert_exchanges` puts `hyperoffload.all_to_all` in place of each stand-in.
"""

from __future__ import annotations

from collections.abc import Sequence
from io import StringIO

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, FunctionType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import region_dce

from hyperoffload.dialects.collectives import (
    AllGatherOp,
    AllToAllOp,
    CollectiveOp,
    ReduceScatterOp,
)
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir


def _after_definition(value: SSAValue) -> InsertPoint:
    owner = value.owner
    if isinstance(owner, Block):
        assert owner.first_op is not None
        return InsertPoint.before(owner.first_op)
    return InsertPoint.after(owner)


def _read_values(op: Operation) -> list[SSAValue]:
    """The operands of `op` and the values its regions read from above it."""
    values = list(op.operands)
    for inner in op.walk():
        if inner is op:
            continue
        for value in inner.operands:
            owner = value.owner
            parent = owner if isinstance(owner, Operation) else owner.parent_op()
            if parent is not None and not op.is_ancestor(parent):
                values.append(value)
    return values


def _hoist(op: Operation) -> None:
    """
    Move `op` (and the operand-free ops it reads, `tensor.empty` inits) up
    to right after the last definition of the other values it reads in its
    block.
    """
    block = op.parent_block()
    if block is None:
        return
    order = {o: i for i, o in enumerate(block.ops)}
    inits: list[Operation] = []
    last: Operation | None = None
    for value in _read_values(op):
        owner = value.owner
        if not isinstance(owner, Operation) or owner.parent_block() is not block:
            continue
        if not owner.operands and not owner.regions:
            inits.append(owner)
        elif last is None or order[owner] > order[last]:
            last = owner
    if last is None or order[last] + 1 >= order[op]:
        return
    at = InsertPoint.after(last)
    for moved in [*dict.fromkeys(i for i in inits if order[i] > order[last]), op]:
        moved.detach()
        Rewriter.insert_op(moved, at)
        at = InsertPoint.after(moved)


def insert_collectives(
    function: func.FuncOp,
    params: int = 0,
    group: int = 1,
    rank: int = 0,
    groups: Sequence[tuple[int, int]] = (),
) -> None:
    """
    Replace the stand-ins that the last ``4 · params`` results of `function`
    mark (gradient and shard of each parameter, then shard and gathered
    weight of each) by `group`-device collectives, this device being `rank`
    (or each parameter's (group, rank) of `groups`); the markers leave the
    function's results.
    """
    groups = groups or [(group, rank)] * params
    kinds: list[type[CollectiveOp]] = [ReduceScatterOp] * len(groups)
    kinds += [AllGatherOp] * len(groups)
    _replace_markers(function, kinds, [*groups, *groups])


def insert_exchanges(function: func.FuncOp, count: int, group: int, rank: int) -> None:
    """
    Replace the stand-ins that the last ``2 · count`` results of `function`
    mark (operand and stand-in of each exchange, `models.ReplicaExchange`)
    by `hyperoffload.all_to_all` over `group` devices, this device being
    `rank`; the markers leave the function's results.
    """
    _replace_markers(function, [AllToAllOp] * count, [(group, rank)] * count)


def _replace_markers(
    function: func.FuncOp,
    kinds: list[type[CollectiveOp]],
    groups: Sequence[tuple[int, int]],
) -> None:
    """Each (source, stand-in) pair of the last results by a collective of its kind."""
    ret = function.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    values = list(ret.arguments)
    kept = len(values) - 2 * len(kinds)
    markers = values[kept:]
    Rewriter.replace_op(ret, func.ReturnOp(*values[:kept]))
    for index, (kind, (group, rank)) in enumerate(zip(kinds, groups, strict=True)):
        source, stand_in = markers[2 * index], markers[2 * index + 1]
        if kind is ReduceScatterOp and isinstance(source.owner, Operation):
            _hoist(source.owner)
        collective = kind(source, stand_in.type, group, rank)
        Rewriter.insert_op(collective, _after_definition(source))
        if stand_in.name_hint is not None:
            collective.result.name_hint = stand_in.name_hint
        stand_in.replace_all_uses_with(collective.result)
    outputs = function.function_type.outputs.data[:kept]
    function.function_type = FunctionType.from_lists(
        function.function_type.inputs.data, outputs
    )
    if function.res_attrs is not None:
        function.res_attrs = ArrayAttr(function.res_attrs.data[:kept])
    while region_dce(function.body):  # a stand-in's constants die with it
        pass


def insert_collectives_text(
    ctx: Context,
    text: str,
    name: str,
    groups: Sequence[tuple[int, int]],
    exchanges: int = 0,
    expert_group: int = 1,
    expert_rank: int = 0,
) -> str:
    """
    `text` (one exported program with markers) with its collectives, printed
    by xDSL: its `exchanges` all-to-alls over `expert_group` devices (the
    last markers), then the ZeRO collectives of each parameter over its
    (group, rank) of `groups` (none if empty).
    """
    module = parse_mlir(ctx, text, name)
    for op in module.ops:
        if isinstance(op, func.FuncOp) and not op.is_declaration:
            if exchanges:
                insert_exchanges(op, exchanges, expert_group, expert_rank)
            if groups:
                insert_collectives(op, groups=groups)
    verify_module(module)
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue() + "\n"
