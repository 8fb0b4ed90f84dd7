"""
`tensor` ops on numpy arrays: creation, reshapes, slices and element
access; dynamic sizes, offsets and strides are read from their operands.

```mlir
%e = tensor.empty() : tensor<2x3xf32>                                  // zeros
%s = tensor.extract_slice %x[0, 1] [2, 2] [1, 1] : tensor<2x3xf32> to tensor<2x2xf32>
%v = tensor.extract %x[%i, %j] : tensor<2x3xf32>                       // x[i, j]
```
"""

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import tensor
from xdsl.ir import Operation, SSAValue

from hyperoffload.evaluators.numeric.core import Value, dtype_of, shape_of
from hyperoffload.evaluators.numeric.frame import Frame, OpImpls

TENSOR = OpImpls()


def _resolve(
    frame: Frame, op: Operation, static: Sequence[int], dynamic: Sequence[SSAValue]
) -> list[int]:
    """Static sizes with the dynamic ones (`< 0`) read from `dynamic`, in order."""
    values = iter(dynamic)
    return [int(frame.read(op, next(values))) if s < 0 else s for s in static]


@TENSOR.impl("tensor.empty")
def _empty(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, tensor.EmptyOp)
    type_ = op.tensor.type
    shape = _resolve(frame, op, shape_of(type_), op.dynamic_sizes)
    return [np.zeros(shape, dtype_of(type_))]


@TENSOR.impl("tensor.cast")
def _cast(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    return [args[0]]


@TENSOR.impl("tensor.collapse_shape")
def _collapse(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    shape = tuple(max(s, -1) for s in shape_of(op.results[0].type))
    return [args[0].reshape(shape)]


@TENSOR.impl("tensor.expand_shape")
def _expand(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, tensor.ExpandShapeOp)
    static = op.static_output_shape.get_values()
    return [args[0].reshape(_resolve(frame, op, static, op.dynamic_output_shape))]


@TENSOR.impl("tensor.reshape")
def _reshape(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    return [args[0].reshape(tuple(int(s) for s in args[1]))]


def _slices(
    frame: Frame, op: tensor.ExtractSliceOp | tensor.InsertSliceOp
) -> tuple[slice, ...]:
    offsets = _resolve(frame, op, op.static_offsets.get_values(), op.offsets)
    sizes = _resolve(frame, op, op.static_sizes.get_values(), op.sizes)
    strides = _resolve(frame, op, op.static_strides.get_values(), op.strides)
    return tuple(
        slice(o, o + (n - 1) * s + 1 if n else o, s)
        for o, n, s in zip(offsets, sizes, strides, strict=True)
    )


@TENSOR.impl("tensor.extract_slice")
def _extract_slice(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, tensor.ExtractSliceOp)
    part = args[0][_slices(frame, op)]
    shape = shape_of(op.result.type)
    if all(s >= 0 for s in shape):
        part = part.reshape(shape)  # drops the unit dimensions of a rank reduction
    return [part.copy()]


@TENSOR.impl("tensor.insert_slice")
def _insert_slice(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, tensor.InsertSliceOp)
    slices = _slices(frame, op)
    dest = args[1].copy()
    dest[slices] = args[0].reshape(dest[slices].shape)
    return [dest]


@TENSOR.impl("tensor.concat")
def _concat(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, tensor.ConcatOp)
    return [np.concatenate(args, axis=op.dim.value.data)]


@TENSOR.impl("tensor.extract")
def _extract(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    return [args[0][tuple(args[1:])]]


@TENSOR.impl("tensor.insert")
def _insert(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    dest = args[1].copy()
    dest[tuple(int(i) for i in args[2:])] = args[0]
    return [dest]


@TENSOR.impl("tensor.dim")
def _dim(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    return [np.asarray(args[0].shape[int(args[1])], np.int64)]


@TENSOR.impl("tensor.from_elements")
def _from_elements(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    return [np.asarray(args).reshape(shape_of(op.results[0].type))]


@TENSOR.impl("tensor.splat")
def _splat(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, tensor.SplatOp)
    shape = _resolve(frame, op, shape_of(op.result.type), op.dynamicSizes)
    return [np.full(shape, args[0])]
