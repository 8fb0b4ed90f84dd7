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

import numpy as np
from xdsl.ir import Operation
from xdsl.ir.affine import AffineMap

from hyperoffload.evaluators.numeric.backend import NUMPY
from hyperoffload.evaluators.numeric.core import Fail, Value
from hyperoffload.evaluators.numeric.frame import Frame
from hyperoffload.evaluators.semantics.linalg import (
    Structured,
    affine,
    loop_ranges,
)


def _indices(indexing_map: AffineMap, dims: Sequence[Value]) -> tuple[Value, ...]:
    return tuple(affine(NUMPY, e, dims) for e in indexing_map.results)


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
    ranges = loop_ranges(NUMPY, spec.maps, [*inputs, *outputs])
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
