"""The INT8 quantiser of compressed transfers (`hyperoffload.support.quantize`)."""

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from hyperoffload.support.quantize import (
    QMAX,
    Compression,
    compressed_bytes,
    dequantize_int8,
    quantize_int8,
    round_trip,
)

Array = np.ndarray[Any, Any]

F32_SLACK = 2.0**-22
"""Relative slack for the f32 rounding of `x / scale` and `q * scale`."""
F16_SCALE = 1 + 2.0**-10
"""How far above `absmax / 127` a normal scale, rounded up to an f16, can go."""

_magnitudes = st.floats(min_value=2.0**-100, max_value=1e4, width=32)
_floats = st.one_of(st.just(0.0), _magnitudes, _magnitudes.map(lambda m: -m))
"""Finite f32 values whose `/ 127` does not underflow f32 (that row would scale 0)."""
_tensors = hnp.arrays(
    np.float32,
    hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
    elements=_floats,
)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(_tensors)
def test_each_element_is_within_half_a_step_of_its_row(x: Array) -> None:
    q, scales = quantize_int8(x)
    y = dequantize_int8(q, scales, x.dtype)
    step = scales.astype(np.float32)
    assert q.dtype == np.int8
    assert scales.dtype == np.float16
    assert scales.shape == (*x.shape[:-1], 1)
    assert np.all(np.abs(q.astype(np.int32)) <= QMAX)
    error = np.abs(x - y)
    assert np.all(error <= step / 2 * (1 + F32_SLACK) + np.abs(x) * F32_SLACK)
    # a row whose scale is a normal f16 is within absmax / 254, up to its rounding
    absmax = np.max(np.abs(x), axis=-1, keepdims=True)
    normal = absmax / QMAX >= 2.0**-14
    bound = absmax / (2 * QMAX) * F16_SCALE * (1 + F32_SLACK)
    assert np.all((error <= bound + np.abs(x) * F32_SLACK) | ~normal)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    hnp.arrays(np.int8, st.tuples(st.integers(1, 4), st.integers(1, 8))),
    hnp.arrays(
        np.float16,
        st.integers(1, 4).map(lambda rows: (rows, 1)),
        elements=st.floats(2.0**-14, 100.0, width=16),
    ),
)
def test_values_on_the_grid_come_back_exactly(q: Array, step: Array) -> None:
    rows = min(q.shape[0], step.shape[0])
    q, step = q[:rows].copy(), step[:rows]
    q[q == -128] = -127
    q[:, 0] = QMAX  # each row reaches the end of its grid: the scale is `step`
    x = q.astype(np.float32) * step.astype(np.float32)
    got_q, scales = quantize_int8(x)
    np.testing.assert_array_equal(scales, step)
    np.testing.assert_array_equal(got_q, q)
    np.testing.assert_array_equal(round_trip(x), x)


def test_a_row_of_zeros_has_scale_zero_and_comes_back_as_zeros() -> None:
    x = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5]], np.float32)
    q, scales = quantize_int8(x)
    assert scales[0, 0] == 0
    np.testing.assert_array_equal(q[0], 0)
    np.testing.assert_array_equal(round_trip(x)[0], 0)
    assert q[1, 1] == -QMAX  # the absmax element is the end of the grid


def test_rounding_is_half_to_even_and_keeps_the_dtype() -> None:
    # scale 1: 127 on the grid; 0.5 and 2.5 are ties (to 0 and 2), 1.5 to 2
    x = np.array([127.0, 0.5, 1.5, 2.5, -0.5], np.float32)
    np.testing.assert_array_equal(quantize_int8(x)[0], [127, 0, 2, 2, 0])
    assert round_trip(x.astype(np.float64)).dtype == np.float64
    assert round_trip(x.astype(np.float16)).dtype == np.float16


def test_huge_rows_clamp_their_scale_to_the_largest_f16() -> None:
    x = np.array([1e10, -1e10, 1.0], np.float32)
    q, scales = quantize_int8(x)
    assert np.isfinite(scales).all()
    assert scales[0] == np.float16(65504)
    np.testing.assert_array_equal(q, [127, -127, 0])


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ((1, 8, 128, 64), 65536 + 1024 * 2),  # a KV block: per token and head
        ((4, 64), 256 + 8),
        ((64,), 64 + 2),
        ((), 1 + 2),
    ],
)
def test_compressed_bytes_are_one_per_element_and_two_per_row(
    shape: tuple[int, ...], expected: int
) -> None:
    assert compressed_bytes(shape, Compression.INT8) == expected
