"""
`arith.constant` on numpy arrays: dense literals, splats (held as one
element broadcast, never expanded) and `dense_resource` blobs, in the
result type's element dtype. The torch executor converts these values.

```mlir
%c = arith.constant dense<1.5> : tensor<4xf32>     // np.full(4, 1.5, float32), a read-only view
%w = arith.constant dense_resource<w0> : tensor<2xbf16>  // the blob's bf16 bits, held in float32
```
"""

import math

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    Builtin,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
)
from xdsl.ir import Attribute, Operation

from hyperoffload.evaluators.numeric.core import (
    Fail,
    Value,
    dtype_of,
    is_bf16,
)
from hyperoffload.evaluators.numeric.frame import Frame, OpImpls
from hyperoffload.evaluators.semantics.types import shape_of
from hyperoffload.support.arrays import from_bf16_bits

CONSTANTS = OpImpls()


def _resource_array(attr: DenseResourceAttr, type_: Attribute) -> Value:
    """The contents of a `dense_resource` blob: hex, 4-byte alignment header, data."""
    interface = Builtin.get_interface(OpAsmDialectInterface)
    key = attr.resource_handle.data
    blob = interface.lookup(key) if interface is not None else None
    if blob is None:
        raise Fail(f"no data for dense_resource<{key}>")
    raw = bytes.fromhex(blob.removeprefix("0x"))[4:]
    if is_bf16(type_):
        array = from_bf16_bits(np.frombuffer(raw, "<u2"))
    elif dtype_of(type_) == np.bool_:
        array = np.frombuffer(raw, np.uint8) != 0
    else:
        array = np.frombuffer(raw, dtype_of(type_).newbyteorder("<"))
    return _fill_shape(array, shape_of(type_))


def _fill_shape(flat: Value, shape: tuple[int, ...]) -> Value:
    """`flat` in `shape`, a single value splatted."""
    if flat.size == math.prod(shape):
        return flat.reshape(shape).copy()
    if flat.size == 1:
        return np.full(shape, flat.reshape(()), flat.dtype)
    raise Fail(f"{flat.size} values do not fill shape {shape}")


@CONSTANTS.impl("arith.constant")
def _constant(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, arith.ConstantOp)
    value, type_ = op.value, op.result.type
    if isinstance(value, IntegerAttr | FloatAttr):
        return [np.asarray(value.value.data)]
    if isinstance(value, DenseIntOrFPElementsAttr) and len(value) == 1:
        # a splat, held as its one element: a read-only view, never expanded
        one = np.asarray(value.get_values()).astype(dtype_of(type_))
        return [np.broadcast_to(one.reshape(()), shape_of(type_))]
    if isinstance(value, DenseIntOrFPElementsAttr):
        flat = np.asarray(value.get_values()).astype(dtype_of(type_))
        return [_fill_shape(flat, shape_of(type_))]
    return [_resource_array(value, type_)]
