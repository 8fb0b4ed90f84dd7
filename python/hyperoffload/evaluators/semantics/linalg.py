"""
What both evaluators read off a structured `linalg` op (`linalg.generic` and
every named op, `broadcast` and `reduce` included, seen as a generic): its
operands, indexing maps, loops and body; its loops' trip counts; and affine
index expressions over an `ArrayBackend`'s arrays of loop indices.

```mlir
%s = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
  (%a: f32, %acc: f32) {
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  }
// as a generic: maps (d0, d1) -> (d0, d1) and (d0, d1) -> (d0); loops [parallel, reduction]
```
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import BroadcastOp, IndexOp, ReduceOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)

from hyperoffload.evaluators.op_registry import Fail, OpRegistry
from hyperoffload.evaluators.semantics.backend import Array, ArrayBackend, Scope
from hyperoffload.evaluators.semantics.types import shape_of


@dataclass
class Structured:
    """A linalg op seen as a generic: operands, maps, loops and body."""

    inputs: Sequence[SSAValue]
    outputs: Sequence[SSAValue]
    maps: list[AffineMap]
    parallel: list[bool]
    body: Block


def as_structured(op: Operation) -> Structured | None:
    """`op` as a generic, or None if it is not a structured linalg op."""
    if isinstance(op, BroadcastOp):
        added = set(op.dimensions.get_values())
        rank = len(shape_of(op.init.type))
        kept = tuple(AffineDimExpr(d) for d in range(rank) if d not in added)
        maps = [AffineMap(rank, 0, kept), AffineMap.identity(rank)]
        return Structured(
            [op.input], [op.init], maps, [True] * rank, op.hidden_region.block
        )
    if isinstance(op, ReduceOp):
        reduced = set(op.dimensions.get_values())
        rank = len(shape_of(op.input.type))
        kept = tuple(AffineDimExpr(d) for d in range(rank) if d not in reduced)
        maps = [AffineMap.identity(rank), AffineMap(rank, 0, kept)]
        parallel = [d not in reduced for d in range(rank)]
        return Structured([op.input], [op.init], maps, parallel, op.region.block)
    if isinstance(op, LinalgStructuredOperation):
        maps = [m.data for m in op.get_indexing_maps()]
        parallel = [it == IteratorTypeAttr.parallel() for it in op.get_iterator_types()]
        return Structured(op.inputs, op.outputs, maps, parallel, op.body.block)
    return None


def affine(xp: ArrayBackend, expr: AffineExpr, dims: Sequence[Array]) -> Array:
    """An affine expression over loop indices (arrays that broadcast together)."""
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return xp.index(expr.value)
    if isinstance(expr, AffineBinaryOpExpr):
        lhs, rhs = affine(xp, expr.lhs, dims), affine(xp, expr.rhs, dims)
        match expr.kind:
            case AffineBinaryOpKind.Add:
                return lhs + rhs
            case AffineBinaryOpKind.Mul:
                return lhs * rhs
            case AffineBinaryOpKind.Mod:
                return xp.fn("remainder")(lhs, rhs)
            case AffineBinaryOpKind.FloorDiv:
                return xp.fn("floor_div")(lhs, rhs)
            case AffineBinaryOpKind.CeilDiv:
                return -xp.fn("floor_div")(-lhs, rhs)
    raise Fail(f"unsupported affine expression {expr}")


def loop_ranges(
    xp: ArrayBackend, maps: Sequence[AffineMap], arrays: Sequence[Array]
) -> list[int]:
    """Each loop's trip count, read off an operand dimension it indexes alone."""
    ranges: list[int | None] = [None] * maps[0].num_dims
    for indexing_map, array in zip(maps, arrays, strict=True):
        rank = len(array.shape)
        if len(indexing_map.results) != rank:
            raise Fail(
                f"indexing map {indexing_map} does not match an operand of rank {rank}"
            )
        for dim, expr in enumerate(indexing_map.results):
            if isinstance(expr, AffineDimExpr) and ranges[expr.position] is None:
                ranges[expr.position] = array.shape[dim]
    if any(r is None for r in ranges):
        missing = [f"d{d}" for d, r in enumerate(ranges) if r is None]
        raise Fail(f"cannot infer the range of loop(s) {', '.join(missing)}")
    return [r for r in ranges if r is not None]


def register(registry: OpRegistry[Any, Any]) -> None:
    """Fill `registry` with `linalg.index`: the scope's index of the loop."""

    @registry.impl("linalg.index")
    def _index(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        assert isinstance(op, IndexOp)
        return [scope.loop_indices[op.dim.value.data]]
