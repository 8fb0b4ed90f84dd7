"""
Structured `linalg` ops (`linalg.generic` and every named op, `broadcast`
and `reduce` included, seen as a generic) run the same floating-point
operations as their loop nest, in a fixed order: vectorised over the
parallel loops, sequential over the points of the reduction loops.

```mlir
%s = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
  (%a: f32, %acc: f32) {
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  }
// the body runs 8 times on whole columns: ((init + x[:, 0]) + x[:, 1]) + ...
```
"""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
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

from hyperoffload.evaluators.numeric.core import Fail, Value, shape_of
from hyperoffload.evaluators.numeric.frame import Frame, OpImpls

LINALG = OpImpls()


@LINALG.impl("linalg.index")
def _index(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, IndexOp)
    return [frame.loop_indices[op.dim.value.data]]


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


def _affine(expr: AffineExpr, dims: Sequence[Value]) -> Value:
    """An affine expression over loop indices (arrays that broadcast together)."""
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return np.asarray(expr.value, np.int64)
    if isinstance(expr, AffineBinaryOpExpr):
        lhs, rhs = _affine(expr.lhs, dims), _affine(expr.rhs, dims)
        match expr.kind:
            case AffineBinaryOpKind.Add:
                return lhs + rhs
            case AffineBinaryOpKind.Mul:
                return lhs * rhs
            case AffineBinaryOpKind.Mod:
                return np.mod(lhs, rhs)
            case AffineBinaryOpKind.FloorDiv:
                return np.floor_divide(lhs, rhs)
            case AffineBinaryOpKind.CeilDiv:
                return -np.floor_divide(-lhs, rhs)
    raise Fail(f"unsupported affine expression {expr}")


def _loop_ranges(maps: Sequence[AffineMap], arrays: Sequence[Value]) -> list[int]:
    """Each loop's trip count, read off an operand dimension it indexes alone."""
    ranges: list[int | None] = [None] * maps[0].num_dims
    for indexing_map, array in zip(maps, arrays, strict=True):
        if len(indexing_map.results) != array.ndim:
            raise Fail(
                f"indexing map {indexing_map} does not match an operand of rank {array.ndim}"
            )
        for dim, expr in enumerate(indexing_map.results):
            if isinstance(expr, AffineDimExpr) and ranges[expr.position] is None:
                ranges[expr.position] = array.shape[dim]
    if any(r is None for r in ranges):
        missing = [f"d{d}" for d, r in enumerate(ranges) if r is None]
        raise Fail(f"cannot infer the range of loop(s) {', '.join(missing)}")
    return [r for r in ranges if r is not None]


def _indices(indexing_map: AffineMap, dims: Sequence[Value]) -> tuple[Value, ...]:
    return tuple(_affine(e, dims) for e in indexing_map.results)


def run_structured(frame: Frame, op: Operation, spec: Structured) -> list[Value]:
    """
    Evaluate the body once per point of the reduction loops (in lexicographic
    order), vectorised over the parallel loops, feeding the yielded values
    back as the output block arguments.
    """
    if len(op.results) != len(spec.outputs):
        raise Fail("only tensor semantics are supported")
    inputs = [frame.read(op, v) for v in spec.inputs]
    outputs = [frame.read(op, v).copy() for v in spec.outputs]
    ranges = _loop_ranges(spec.maps, [*inputs, *outputs])
    parallel = [d for d, p in enumerate(spec.parallel) if p]
    reduction = [d for d, p in enumerate(spec.parallel) if not p]
    domain = tuple(ranges[d] for d in parallel)
    dims: list[Value] = [np.asarray(0, np.int64)] * len(ranges)
    for k, d in enumerate(parallel):
        grid = [1] * len(parallel)
        grid[k] = ranges[d]
        dims[d] = np.arange(ranges[d], dtype=np.int64).reshape(grid)
    in_maps, out_maps = spec.maps[: len(inputs)], spec.maps[len(inputs) :]
    args = spec.body.args
    saved, frame.loop_indices = frame.loop_indices, dims
    try:
        for point in itertools.product(*(range(ranges[d]) for d in reduction)):
            for d, i in zip(reduction, point, strict=True):
                dims[d] = np.asarray(i, np.int64)
            for arg, array, m in zip(
                args, [*inputs, *outputs], [*in_maps, *out_maps], strict=True
            ):
                frame.device[arg] = np.asarray(array[_indices(m, dims)])
            terminator = frame.interpreter.run_block(frame, spec.body)
            yielded = [frame.read(terminator, v) for v in terminator.operands]
            for output, m, value in zip(outputs, out_maps, yielded, strict=True):
                index = tuple(np.broadcast_to(i, domain) for i in _indices(m, dims))
                output[index] = np.broadcast_to(value, domain)
    finally:
        frame.loop_indices = saved
    return outputs
