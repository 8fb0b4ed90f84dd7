"""
Values and element types of the numpy evaluator: every runtime value is a
numpy array (a scalar is a 0-d one) of its type's element dtype.

```python
bf16 = TensorType(BFloat16Type(), [2])
dtype_of(bf16)                  # float32: bf16 is held in float32
coerce([1.0, 1.00390625], bf16)  # [1.0, 1.0]: rounded to bf16
```
"""

from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
from xdsl.dialects.builtin import BFloat16Type
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import DiagnosticException

from hyperoffload.evaluators.op_registry import Fail
from hyperoffload.evaluators.semantics.types import dtype_name, element_type
from hyperoffload.ir.diagnostics import location_of
from hyperoffload.support.arrays import round_bf16

__all__ = ["Fail", "NumericError", "Value", "coerce", "dtype_of", "error", "is_bf16"]

Value: TypeAlias = npt.NDArray[Any]
"""Every runtime value is an array; a scalar is a 0-d array."""


class NumericError(DiagnosticException):
    """An op that cannot be evaluated; the message starts with `file:line:col: error: `."""


def error(op: Operation, message: str) -> NumericError:
    """A `NumericError` located at `op`."""
    return NumericError(f"{location_of(op)}: error: {message}")


def is_bf16(type_: Attribute) -> bool:
    return isinstance(element_type(type_), BFloat16Type)


def dtype_of(type_: Attribute) -> np.dtype[Any]:
    """numpy dtype of a type's elements; `bf16` is held in `float32`."""
    name = dtype_name(type_)
    if name is None:
        raise Fail(f"no numpy dtype for {element_type(type_)}")
    return np.dtype("float32" if name == "bfloat16" else name)


def coerce(value: object, type_: Attribute) -> Value:
    """`value` as an array of `type_`'s element dtype (numpy cast rules)."""
    target = dtype_of(type_)
    array: Value = np.asarray(value)
    if array.dtype != target:
        array = array.astype(target)
    if is_bf16(type_):
        array = round_bf16(array)
    return array
