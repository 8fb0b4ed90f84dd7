"""
Routed experts: put each routed expert's work of an exported MoE layer
under an `scf.if` on whether any token chose it.

torch-mlir's FX importer cannot import `torch.cond` (llvm/torch-mlir#4028),
so the routed export is traced densely, every expert computed on its
dispatched rows, with markers: for each MoE layer and routed expert, two
extra function results tagged `hyperoffload.route_marker = array<i64:
layer, expert, kind>`, a 0-d `i1` "some token chose the expert"
(`MarkerKind.ROUTED`) and the expert's contribution to the layer's output
(`MarkerKind.CONTRIBUTION`). `route_experts` takes the markers off the
function and wraps the ops only the contribution needs (its backward slice,
closed under "every use of every result lies inside the slice": the
expert's weight transposes, the gather of its rows, its FFN and the
contribution matmul; shared values stay outside and are captured):

```mlir
%r = linalg.generic ... -> tensor<i1>               // marker: expert (0, 1) chosen?
%t = linalg.transpose ins(%w1 : tensor<32x64xf32>) ...
...
%c = linalg.matmul ins(%g, %y : ...) outs(%fill : tensor<1x64xf32>) -> tensor<1x64xf32>
%o = linalg.generic ... ins(%acc, %c : ...)         // the layer's output adds %c
func.return %logits, %r, %c : ..., tensor<i1>, tensor<1x64xf32>
```

becomes

```mlir
%r = linalg.generic ... -> tensor<i1>
%p = tensor.extract %r[] : tensor<i1>
%c = scf.if %p -> (tensor<1x64xf32>) {
  %t = linalg.transpose ins(%w1 : tensor<32x64xf32>) ...
  ...
  %c0 = linalg.matmul ins(%g, %y : ...) outs(%fill : tensor<1x64xf32>) -> tensor<1x64xf32>
  scf.yield %c0 : tensor<1x64xf32>
} else {
  %z = arith.constant dense<0.000000e+00> : tensor<1x64xf32>
  scf.yield %z : tensor<1x64xf32>
} {hyperoffload.expert = array<i64: 0, 1>}
%o = linalg.generic ... ins(%acc, %c : ...)
func.return %logits : ...
```

A contribution is exactly zero in the dense form when no token chose the
expert, so the routed program computes the same values. Ops keep their
order; each `scf.if` stands where the last op of its slice stood.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import IntEnum
from io import StringIO
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IntegerType,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SSAValue
from xdsl.printer import Printer
from xdsl.utils.hints import isa

from hyperoffload.dialects.hyperoffload import EXPERT_ATTR
from hyperoffload.ir.diagnostics import location_of, verify_module
from hyperoffload.ir.parsing import parse_mlir

MARKER_ATTR = "hyperoffload.route_marker"
"""Result attribute of a marker: `array<i64: layer, expert, kind>` (`MarkerKind`)."""

ExpertKey = tuple[int, int]
"""(layer, expert)."""


class MarkerKind(IntEnum):
    """What a marker result holds (the last field of `hyperoffload.route_marker`)."""

    ROUTED = 0
    """A 0-d `i1`: whether any token chose the expert."""
    CONTRIBUTION = 1
    """The value the expert adds to its layer's output."""


class RouteError(ValueError):
    """Markers the rewrite cannot use (the message says where and why)."""


@dataclass(frozen=True)
class ExpertMarkers:
    """The two marker values of one expert, as the traced program returned them."""

    routed: SSAValue
    contribution: SSAValue


def _marker_key(attrs: Attribute) -> tuple[ExpertKey, MarkerKind] | None:
    assert isinstance(attrs, DictionaryAttr)
    tag = attrs.data.get(MARKER_ATTR)
    if tag is None:
        return None
    values = (
        cast(DenseArrayBase[IntegerType], tag).get_values()
        if isinstance(tag, DenseArrayBase)
        else ()
    )
    kinds = {int(k) for k in MarkerKind}
    if len(values) != 3 or values[2] not in kinds:
        raise RouteError(
            f"'{MARKER_ATTR}' must be array<i64: layer, expert, kind> with a kind "
            f"in {sorted(kinds)}, not {tag}"
        )
    layer, expert, kind = values
    return (layer, expert), MarkerKind(kind)


def take_markers(function: func.FuncOp) -> dict[ExpertKey, ExpertMarkers]:
    """
    Remove the marker results of `function` (from its `func.return`, type and
    result attributes) and return them by expert, in result order.
    """
    returned = function.get_return_op()
    where = f"{location_of(function)}: @{function.sym_name.data}"
    if returned is None or function.res_attrs is None:
        return {}
    found: dict[ExpertKey, dict[MarkerKind, SSAValue]] = {}
    kept: list[SSAValue] = []
    kept_attrs: list[DictionaryAttr] = []
    for value, attrs in zip(returned.operands, function.res_attrs.data, strict=True):
        key = _marker_key(attrs)
        if key is None:
            kept.append(value)
            kept_attrs.append(attrs)
            continue
        expert, kind = key
        if kind in found.setdefault(expert, {}):
            raise RouteError(f"{where}: two {kind.name} markers of expert {expert}")
        found[expert][kind] = value
    if not found:
        return {}
    markers: dict[ExpertKey, ExpertMarkers] = {}
    for expert, kinds in found.items():
        if len(kinds) != len(MarkerKind):
            raise RouteError(f"{where}: expert {expert} lacks a marker")
        routed = kinds[MarkerKind.ROUTED]
        if routed.type != TensorType(i1, []):
            raise RouteError(f"{where}: expert {expert}: routed is not a tensor<i1>")
        markers[expert] = ExpertMarkers(routed, kinds[MarkerKind.CONTRIBUTION])
    returned.operands = kept
    function.res_attrs = (
        ArrayAttr(kept_attrs) if any(a.data for a in kept_attrs) else None
    )
    function.update_function_type()
    return markers


def _producers(block: Block, op: Operation) -> Iterator[Operation]:
    """The ops of `block` whose results `op` (or an op nested in it) reads."""
    for inner in op.walk():
        for value in inner.operands:
            if isinstance(value, OpResult):
                producer = block.find_ancestor_op_in_block(value.op)
                if producer is not None and producer is not op:
                    yield producer


def expert_slice(
    block: Block, root: Operation, position: Mapping[Operation, float]
) -> list[Operation]:
    """
    The ops of `block` only `root` needs, in program order (`position`):
    `root` and each op of its backward slice every use of whose results
    lies in the slice. Walked backwards from `root`, latest op first, so
    that an op is judged once all its users are: the work is the slice and
    its frontier, not the program.
    """
    members = {root}
    frontier = [(-position[root], id(root), root)]
    seen = {root}
    while frontier:
        op = heapq.heappop(frontier)[2]
        if op is not root and any(
            block.find_ancestor_op_in_block(use.operation) not in members
            for result in op.results
            for use in result.uses
        ):
            continue
        members.add(op)
        for producer in _producers(block, op):
            if producer not in seen:
                seen.add(producer)
                heapq.heappush(frontier, (-position[producer], id(producer), producer))
    return sorted(members, key=position.__getitem__)


def _zeros(type_: Attribute, where: str) -> arith.ConstantOp:
    """`arith.constant dense<0> : type_`: what an expert no token chose adds."""
    if isa(type_, TensorType[AnyFloat]):
        return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(type_, [0.0]))
    if isa(type_, TensorType[IntegerType]):
        return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(type_, [0]))
    raise RouteError(f"{where}: a contribution of type {type_} is not a tensor")


def route_experts(function: func.FuncOp) -> list[scf.IfOp]:
    """
    Take the markers off `function` and put each marked expert's work under
    an `scf.if` on its routed marker; returns the `scf.if`s in program order.
    """
    markers = take_markers(function)
    block = function.body.block
    position: dict[Operation, float] = {op: i for i, op in enumerate(block.ops)}
    where = f"{location_of(function)}: @{function.sym_name.data}"
    # every predicate first: a use no slice may take in
    roots: list[tuple[ExpertKey, Operation, tensor.ExtractOp]] = []
    for (layer, expert), marker in markers.items():
        root = marker.contribution.owner
        if not isinstance(root, Operation) or root.parent_block() is not block:
            raise RouteError(
                f"{where}: the contribution of expert {(layer, expert)} is not "
                "computed in the function's body"
            )
        if any(root is other for _, other, _ in roots):
            raise RouteError(
                f"{where}: expert {(layer, expert)} shares its contribution's op"
            )
        routed = marker.routed.owner
        if isinstance(routed, Operation) and not (
            routed.parent_block() is block and position[routed] < position[root]
        ):
            raise RouteError(
                f"{where}: expert {(layer, expert)} is routed only after its "
                "contribution is computed"
            )
        predicate = tensor.ExtractOp(marker.routed, [], i1)
        predicate.result.name_hint = f"routed_l{layer}e{expert}"
        block.insert_op_before(predicate, root)
        position[predicate] = position[root] - 0.5
        roots.append(((layer, expert), root, predicate))
    branches: list[scf.IfOp] = []
    for key, root, predicate in sorted(roots, key=lambda r: position[r[1]]):
        members = expert_slice(block, root, position)
        contribution = markers[key].contribution
        zeros = _zeros(contribution.type, where)
        branch = scf.IfOp(
            predicate.result,
            [contribution.type],
            Region(Block()),
            Region(Block([zeros, scf.YieldOp(zeros.result)])),
            {EXPERT_ATTR: DenseArrayBase.from_list(i64, list(key))},
        )
        branch.output[0].name_hint = f"expert_l{key[0]}e{key[1]}"
        block.insert_op_after(branch, root)
        position[branch] = position[root]
        contribution.replace_all_uses_with(branch.output[0])
        then = branch.true_region.block
        for op in members:
            op.detach()
            then.add_op(op)
        then.add_op(scf.YieldOp(contribution))
        branches.append(branch)
    return branches


def route_experts_text(ctx: Context, text: str, name: str) -> str:
    """
    `text` (a module, markers on its function results) with every function's
    experts routed (`route_experts`), verified and printed by xDSL.
    """
    module = parse_mlir(ctx, text, name)
    for op in module.ops:
        if isinstance(op, func.FuncOp) and not op.is_declaration:
            route_experts(op)
    verify_module(module)
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue() + "\n"
