"""
The numpy `ArrayBackend`: values are numpy arrays of their type's element
dtype (`bf16` held in `float32`, rounded), a slice of a tensor is a copy, an
assertion fails at once.

```python
NUMPY.fn("asin")(x)                          # np.asin(x)
NUMPY.fn("roundeven")(x)                     # np.rint(x)
NUMPY.cast(x, TensorType(BFloat16Type(), [2]))  # float32, rounded to bf16
```
"""

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.ir import Attribute, Operation, SSAValue

from hyperoffload.evaluators.numeric.core import (
    Fail,
    Value,
    coerce,
    dtype_of,
    is_bf16,
)
from hyperoffload.evaluators.numeric.frame import Frame
from hyperoffload.evaluators.semantics.backend import ArrayBackend
from hyperoffload.support.arrays import from_bf16_bits, to_bf16_bits


def _maximumf(a: Value, b: Value) -> Value:
    equal = np.where(np.signbit(a), b, a)
    return np.where(
        np.isnan(a) | np.isnan(b), a + b, np.where(a == b, equal, np.maximum(a, b))
    )


def _minimumf(a: Value, b: Value) -> Value:
    equal = np.where(np.signbit(a), a, b)
    return np.where(
        np.isnan(a) | np.isnan(b), a + b, np.where(a == b, equal, np.minimum(a, b))
    )


def _div_trunc(a: Value, b: Value) -> Value:
    quotient = np.floor_divide(a, b)
    inexact = (a - quotient * b != 0) & ((a < 0) != (b < 0))
    return quotient + inexact.astype(quotient.dtype)


def _rsqrt(x: Value) -> Value:
    return np.reciprocal(np.sqrt(x))


def _erf(x: Value) -> Value:
    erf = np.frompyfunc(math.erf, 1, 1)
    return np.asarray(erf(x.astype(np.float64)), dtype=np.float64)


class NumpyBackend(ArrayBackend):
    """The primitives on numpy arrays; the scope is the numeric `Frame`."""

    library = np
    own: ClassVar[Mapping[str, Callable[..., Value]]] = {
        "maximumf": _maximumf,
        "minimumf": _minimumf,
        "floor_div": np.floor_divide,
        "div_trunc": _div_trunc,
        "roundeven": np.rint,
        "rsqrt": _rsqrt,
        "cbrt": np.cbrt,
        "erf": _erf,
    }

    def astype(self, x: Value, dtype: str) -> Value:
        return x.astype(np.dtype(dtype))

    def astype_like(self, x: Value, like: Value) -> Value:
        return x.astype(like.dtype)

    def kind(self, x: Value) -> str:
        return x.dtype.kind

    def itemsize(self, x: Value) -> int:
        return x.dtype.itemsize

    def cast(self, x: Value, type_: Attribute) -> Value:
        return coerce(x, type_)

    def unsigned(self, x: Value) -> Value:
        if x.dtype.kind == "i":
            return x.astype(np.dtype(f"u{x.dtype.itemsize}"))
        return x

    def float_to_int(self, x: Value, unsigned: bool, type_: Attribute) -> Value:
        if not unsigned:
            return x  # the cast to the result truncates
        return np.trunc(x).astype(np.dtype(f"u{max(dtype_of(type_).itemsize, 1)}"))

    def bitcast(self, x: Value, source: Attribute, target: Attribute) -> Value:
        if is_bf16(source):
            x = to_bf16_bits(x)  # exact: bf16 values are held rounded
        if is_bf16(target):
            return from_bf16_bits(x.view(np.uint16))
        return x.view(dtype_of(target))

    def bools(self, a: Value, b: Value, value: bool) -> Value:
        return np.full(np.broadcast(a, b).shape, value, np.bool_)

    def where(self, cond: Value, a: Value, b: Value) -> Value:
        return np.where(cond, a, b)

    def index(self, value: int) -> Value:
        return np.asarray(value, np.int64)

    def empty(self, shape: Sequence[int], type_: Attribute) -> Value:
        return np.zeros(shape, dtype_of(type_))

    def new_zeros(self, like: Value, shape: Sequence[int]) -> Value:
        return np.zeros(shape, like.dtype)

    def readable(self, scope: Frame, x: Value) -> Value:
        return x

    def copy(self, x: Value) -> Value:
        return x.copy()

    def part(self, x: Value) -> Value:
        return x.copy()

    def reshape(self, x: Value, shape: Sequence[int]) -> Value:
        return x.reshape(tuple(shape))

    def pad(self, x: Value, widths: Sequence[tuple[int, int]], fill: object) -> Value:
        return np.pad(x, widths, constant_values=np.asarray(fill, x.dtype))

    def concat(self, parts: Sequence[Value], dim: int) -> Value:
        return np.concatenate(parts, axis=dim)

    def stack(self, scope: Frame, elements: Sequence[Value]) -> Value:
        return np.asarray(elements)

    def splat(self, scope: Frame, x: Value, shape: Sequence[int]) -> Value:
        return np.full(shape, x)

    def gather(self, scope: Frame, x: Value, indices: Sequence[Value]) -> Value:
        return x[tuple(indices)]

    def outer(
        self, scope: Frame, op: Operation, value: SSAValue, args: Sequence[Any]
    ) -> Value:
        return scope.read(op, value)

    def check(self, scope: Frame, op: Operation, cond: Value, message: str) -> None:
        if not np.all(cond):
            raise Fail(message)


NUMPY = NumpyBackend()
