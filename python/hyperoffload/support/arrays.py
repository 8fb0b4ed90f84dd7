"""
Array helpers shared by the evaluators and the tools: `bf16` rounding (numpy
has no `bf16` dtype, so a `bf16` value is held in `float32`) and one
NaN-aware equality.

```python
round_bf16(np.float32(1 + 2**-8))   # 1.0: a tie goes to the even bf16
to_bf16_bits([1.0, np.nan])         # [0x3F80, 0x7FC0] as uint16
same_array(np.array([np.nan]), np.array([np.nan]))        # True
max_abs_diff(np.array([1.0, 2.0]), np.array([1.0, 4.0]))  # 2.0
```
"""

from typing import Any

import numpy as np
import numpy.typing as npt

Array = np.ndarray[Any, Any]


def round_bf16(array: npt.ArrayLike) -> Array:
    """
    `array` rounded to the nearest `bf16` (ties to even), held in `float32`;
    a NaN stays a NaN, made quiet.
    """
    floats = np.asarray(array, dtype=np.float32)
    bits = floats.view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & 1)) & np.uint32(0xFFFF0000)
    quiet_nan = (bits & np.uint32(0xFFFF0000)) | np.uint32(0x00400000)
    out: Array = np.where(np.isnan(floats), quiet_nan, rounded).astype(np.uint32)
    return np.asarray(out.view(np.float32))


def to_bf16_bits(array: npt.ArrayLike) -> Array:
    """The bit patterns of `round_bf16(array)` as uint16: what `bf16` memory holds."""
    return np.asarray((round_bf16(array).view(np.uint32) >> 16).astype(np.uint16))


def from_bf16_bits(bits: Array) -> Array:
    """The `bf16` values of the bit patterns `bits` (unsigned), in `float32`."""
    widened = bits.astype(np.uint32) << 16
    return np.asarray(widened.view(np.float32))


def equal_elements(a: Array, b: Array) -> Array:
    """`a == b` element by element, where a NaN equals any NaN."""
    equal = a == b
    if a.dtype.kind in "fc":
        equal = equal | (np.isnan(a) & np.isnan(b))
    return np.asarray(equal)


def same_array(a: Array, b: Array) -> bool:
    """Same dtype, same shape and `equal_elements` everywhere (NaN equals NaN)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return bool(equal_elements(a, b).all())


def max_abs_diff(a: Array, b: Array) -> float:
    """
    Largest |a - b| over elements that are not `equal_elements`: 0 when
    every element is; inf on a shape mismatch or a NaN against a number.
    """
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    x = a.astype(np.float64)
    y = b.astype(np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.where(equal_elements(x, y), 0.0, np.abs(x - y))
    return float(np.where(np.isnan(diff), np.inf, diff).max())
