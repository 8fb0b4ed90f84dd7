"""
Compressed transfer: the INT8 quantiser of `compress = "int8"` on
`hyperoffload.store` / `hyperoffload.prefetch`, written once and used by the
numeric evaluator, the accuracy benchmark and the tests (the lowering
`convert-hyperoffload-to-linalg` spells the same arithmetic in linalg).

A compressed copy holds int8 values and one scale per *row* (a vector along
the last dimension: per token and head for a KV cache `(b, heads, seq,
head_dim)`):

    scale = the f16 at or above min(absmax(row) / 127, 65504)
    q     = clamp(round_half_even(x / scale), -127, 127)   (0 where scale is 0)
    x'    = q * scale                               (back to x's element type)

The arithmetic runs in f32 (f64 for an f64 tensor). The scale is rounded up
to an f16, so `|x / scale| <= 127`: no element clamps (below 65504 * 127) and
`|x - x'| <= scale / 2` for every element (up to the f32 rounding of
`x / scale` and `q * scale`, and the rounding to x's element type); a row
of zeros has scale 0 and comes back as zeros, any other row a positive
scale (unless its `absmax / 127` underflows the compute type: f32
subnormals below `127 * 2**-149`); a row whose absmax is on the grid (`127 * s`, `s` an f16) comes back
exactly. Rounding up costs at most one f16 step: `scale <= absmax / 127 *
(1 + 2**-10)` while `absmax / 127` is a normal f16 (`>= 2**-14`), so
`|x - x'| <= absmax / 254` up to that factor. NaNs are not supported (their
rows are undefined).

On the link and in the remote tier it takes `elements * 1 B + rows * 2 B`:

```python
q, scales = quantize_int8(x)              # int8 of x's shape, f16 of shape[:-1] + (1,)
y = dequantize_int8(q, scales, x.dtype)   # x, rounded through the quantiser
y = round_trip(x, Compression.INT8)       # the same, in one call
compressed_bytes((1, 8, 128, 64))         # 65536 + 1024 * 2 = 67584 (f32: 262144)
```
"""

from collections.abc import Sequence
from enum import StrEnum
from math import prod
from typing import Any

import numpy as np
import numpy.typing as npt

Array = np.ndarray[Any, Any]


class Compression(StrEnum):
    """The compression schemes of a transfer (`compress = "..."`)."""

    INT8 = "int8"
    """Per-row absmax INT8 with f16 scales."""


QMAX = 127
"""The largest magnitude of a quantised value (the grid is symmetric: -127..127)."""
SCALE_BYTES = 2
"""Bytes of one scale (f16)."""
SCALE_MAX = float(np.finfo(np.float16).max)
"""The largest scale an f16 holds (65504): larger rows clamp."""


def compressed_bytes(
    shape: Sequence[int], scheme: Compression = Compression.INT8
) -> int:
    """Bytes a tensor of `shape` takes on the link and in the remote tier, compressed."""
    assert scheme is Compression.INT8
    elements = prod(shape)
    rows = prod(shape[:-1]) if shape else 1
    return elements + rows * SCALE_BYTES


def _work_dtype(dtype: npt.DTypeLike) -> np.dtype[Any]:
    """The dtype the quantiser computes in: f64 for f64, else f32."""
    return np.dtype(np.float64 if np.dtype(dtype) == np.float64 else np.float32)


def _rows(x: Array) -> Array:
    """`x` with at least one dimension (a 0-d tensor is one row of one element)."""
    return x.reshape(1) if x.ndim == 0 else x


def quantize_int8(x: npt.ArrayLike) -> tuple[Array, Array]:
    """
    The int8 values (of `x`'s shape) and the f16 scales (`shape[:-1] + (1,)`)
    of `x`, a float array (bf16 held in float32).
    """
    array = np.asarray(x)
    work = _work_dtype(array.dtype)
    rows = _rows(array.astype(work, copy=False))
    if rows.shape[-1] == 0:
        absmax = np.zeros((*rows.shape[:-1], 1), work)
    else:
        absmax = np.max(np.abs(rows), axis=-1, keepdims=True)
    wanted = np.minimum(absmax / work.type(QMAX), work.type(SCALE_MAX))
    nearest = wanted.astype(np.float16)
    below = nearest.astype(work) < wanted
    scales = np.nextafter(nearest, np.float16(np.inf), out=nearest.copy(), where=below)
    wide = scales.astype(work)
    ratio = np.divide(rows, wide, out=np.zeros_like(rows), where=wide > 0)
    q = np.clip(np.rint(ratio), -QMAX, QMAX).astype(np.int8)
    return q.reshape(array.shape), scales


def dequantize_int8(q: Array, scales: Array, dtype: npt.DTypeLike) -> Array:
    """The values of `q` at `scales`, as `dtype` (computed in f32, or f64)."""
    work = _work_dtype(dtype)
    values = _rows(q).astype(work) * scales.astype(work)
    return values.reshape(q.shape).astype(dtype)


def round_trip(x: npt.ArrayLike, scheme: Compression = Compression.INT8) -> Array:
    """`x` compressed and decompressed: what a compressed copy gives back."""
    assert scheme is Compression.INT8
    array = np.asarray(x)
    q, scales = quantize_int8(array)
    return dequantize_int8(q, scales, array.dtype)
