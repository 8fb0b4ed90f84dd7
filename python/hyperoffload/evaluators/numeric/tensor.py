"""
`tensor` ops on numpy arrays: creation, reshapes, slices and element
access; dynamic sizes, offsets and strides are read from their operands.

```mlir
%e = tensor.empty() : tensor<2x3xf32>                                  // zeros
%s = tensor.extract_slice %x[0, 1] [2, 2] [1, 1] : tensor<2x3xf32> to tensor<2x2xf32>
%v = tensor.extract %x[%i, %j] : tensor<2x3xf32>                       // x[i, j]
%p = tensor.pad %x low[0, 1] high[0, 1] {                              // zeros around x
^bb0(%i: index, %j: index):
  tensor.yield %zero : f32
} : tensor<2x3xf32> to tensor<2x5xf32>
```
"""

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import tensor
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation, SSAValue

from hyperoffload.evaluators.numeric.core import Value, dtype_of, error, shape_of
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


def pad_value(op: tensor.PadOp) -> SSAValue | float | int:
    """
    What `op` pads with: the value its body yields, defined above the op, or
    the constant the body defines; `NotImplementedError` for a padding
    computed from the positions.
    """
    yielded = op.region.block.last_op
    assert yielded is not None
    value = yielded.operands[0]
    owner = value.owner
    if not (isinstance(owner, Operation) and owner.parent_op() is op):
        return value
    constant = owner.properties.get("value") or owner.attributes.get("value")
    if owner.name == "arith.constant" and isinstance(constant, FloatAttr | IntegerAttr):
        return constant.value.data
    raise NotImplementedError("a tensor.pad whose padding depends on the position")


def pad_widths(
    op: tensor.PadOp, read: Callable[[SSAValue], int]
) -> list[tuple[int, int]]:
    """The (low, high) padding of each dimension, dynamic ones read with `read`."""
    low_values, high_values = iter(op.low), iter(op.high)
    low = [read(next(low_values)) if v < 0 else v for v in op.static_low.get_values()]
    high = [
        read(next(high_values)) if v < 0 else v for v in op.static_high.get_values()
    ]
    return list(zip(low, high, strict=True))


@TENSOR.impl("tensor.pad")
def _pad(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, tensor.PadOp)
    try:
        padding = pad_value(op)
    except NotImplementedError as err:
        raise error(op, str(err)) from None
    fill = frame.read(op, padding) if isinstance(padding, SSAValue) else padding
    widths = pad_widths(op, lambda v: int(frame.read(op, v)))
    source = args[0]
    return [np.pad(source, widths, constant_values=np.asarray(fill, source.dtype))]


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
