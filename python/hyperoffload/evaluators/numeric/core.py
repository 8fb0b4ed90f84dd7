"""
Values and element types of the numpy evaluator: every runtime value is a
numpy array (a scalar is a 0-d one) of its type's element dtype.

```python
bf16 = TensorType(BFloat16Type(), [2])
dtype_of(bf16)                  # float32: bf16 is held in float32
coerce([1.0, 1.00390625], bf16)  # [1.0, 1.0]: rounded to bf16
```
"""

from typing import Any, TypeAlias, cast

import numpy as np
import numpy.typing as npt
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import DiagnosticException

from hyperoffload.dialects.hyperoffload import RemoteType
from hyperoffload.ir.diagnostics import location_of
from hyperoffload.support.arrays import round_bf16

Value: TypeAlias = npt.NDArray[Any]
"""Every runtime value is an array; a scalar is a 0-d array."""


class NumericError(DiagnosticException):
    """An op that cannot be evaluated; the message starts with `file:line:col: error: `."""


class Fail(Exception):
    """Raised by op implementations; the interpreter locates it at the op."""


def error(op: Operation, message: str) -> NumericError:
    """A `NumericError` located at `op`."""
    return NumericError(f"{location_of(op)}: error: {message}")


def element_type(type_: Attribute) -> Attribute:
    """The element type of a (remote) tensor type; a scalar type itself."""
    if isinstance(type_, RemoteType):
        type_ = type_.tensor
    if isinstance(type_, TensorType):  # not `isa`: this runs once per value
        return cast(TensorType[Attribute], type_).get_element_type()
    return type_


def is_bf16(type_: Attribute) -> bool:
    return isinstance(element_type(type_), BFloat16Type)


def dtype_of(type_: Attribute) -> np.dtype[Any]:
    """numpy dtype of a type's elements; `bf16` is held in `float32`."""
    element = element_type(type_)
    if isinstance(element, Float16Type):
        return np.dtype(np.float16)
    if isinstance(element, Float32Type | BFloat16Type):
        return np.dtype(np.float32)
    if isinstance(element, Float64Type):
        return np.dtype(np.float64)
    if isinstance(element, IndexType):
        return np.dtype(np.int64)
    if isinstance(element, IntegerType):
        width = element.bitwidth
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            unsigned = element == IntegerType(width, Signedness.UNSIGNED)
            return np.dtype(f"{'u' if unsigned else 'i'}{width // 8}")
    raise Fail(f"no numpy dtype for {element}")


def shape_of(type_: Attribute) -> tuple[int, ...]:
    """Shape of a (remote) tensor type, `()` for a scalar; dynamic sizes are < 0."""
    if isinstance(type_, RemoteType):
        type_ = type_.tensor
    if isinstance(type_, TensorType):
        return tuple(type_.get_shape())
    return ()


def coerce(value: object, type_: Attribute) -> Value:
    """`value` as an array of `type_`'s element dtype (numpy cast rules)."""
    target = dtype_of(type_)
    array: Value = np.asarray(value)
    if array.dtype != target:
        array = array.astype(target)
    if is_bf16(type_):
        array = round_bf16(array)
    return array
