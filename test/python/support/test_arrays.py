"""The shared array helpers: bf16 rounding and NaN-aware equality."""

import numpy as np
import pytest

from hyperoffload.support.arrays import (
    equal_elements,
    from_bf16_bits,
    max_abs_diff,
    round_bf16,
    same_array,
    to_bf16_bits,
)


def _bits(values: list[int]) -> np.ndarray[tuple[int], np.dtype[np.float32]]:
    return np.array(values, np.uint32).view(np.float32)


def test_round_bf16_goes_to_the_nearest_and_ties_to_even() -> None:
    values = _bits([0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF, 0x7F7FFFFF])
    rounded = round_bf16(values)
    assert rounded.dtype == np.float32
    assert rounded.view(np.uint32).tolist() == [
        0x3F800000,  # a tie rounds down to the even 0x3F80
        0x3F820000,  # a tie rounds up to the even 0x3F82
        0x3F810000,  # above the tie
        0x3F800000,  # below the tie
        0x7F800000,  # past the largest bf16: inf
    ]


def test_round_bf16_keeps_signs_infinities_and_quiets_nans() -> None:
    values = _bits([0x80000000, 0xFF800000, 0x7F800001, 0xFFC12345])
    assert round_bf16(values).view(np.uint32).tolist() == [
        0x80000000,
        0xFF800000,
        0x7FC00000,
        0xFFC10000,
    ]


def test_round_bf16_takes_any_array_like_and_keeps_the_shape() -> None:
    assert round_bf16(1.0).shape == ()
    assert round_bf16([[1.0, 2.0]]).shape == (1, 2)
    assert round_bf16(np.float64(1 + 3 * 2**-9)) == np.float32(1 + 2**-7)


def test_bf16_bits_round_trip() -> None:
    values = np.array([1.0, -2.5, 0.66796875, np.inf], np.float32)
    bits = to_bf16_bits(values)
    assert bits.dtype == np.uint16
    assert bits.tolist() == [0x3F80, 0xC020, 0x3F2B, 0x7F80]
    np.testing.assert_array_equal(from_bf16_bits(bits), values)
    assert to_bf16_bits(np.nan).tolist() == 0x7FC0


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ([1.0, np.nan], [1.0, np.nan], [True, True]),
        ([1.0, np.nan], [1.0, 2.0], [True, False]),
        ([0.0], [-0.0], [True]),
        ([1, 2], [1, 3], [True, False]),
    ],
)
def test_equal_elements_counts_nan_equal_to_nan(
    a: list[float], b: list[float], equal: list[bool]
) -> None:
    assert equal_elements(np.array(a), np.array(b)).tolist() == equal


def test_same_array_needs_the_same_dtype_and_shape() -> None:
    x = np.array([1.0, np.nan], np.float32)
    assert same_array(x, x.copy())
    assert not same_array(x, x.astype(np.float64))
    assert not same_array(x, x.reshape(2, 1))
    assert not same_array(x, np.array([1.0, 2.0], np.float32))
    assert same_array(np.zeros((0, 3)), np.zeros((0, 3)))


def test_max_abs_diff() -> None:
    assert max_abs_diff(np.array([1.0, np.nan]), np.array([3.0, np.nan])) == 2.0
    assert max_abs_diff(np.array([1.0]), np.array([np.nan])) == np.inf
    assert max_abs_diff(np.array([np.inf]), np.array([np.inf])) == 0.0
    assert max_abs_diff(np.zeros(2), np.zeros(3)) == np.inf
    assert max_abs_diff(np.zeros(0), np.zeros(0)) == 0.0
    assert max_abs_diff(np.array([1], np.int8), np.array([-1], np.int8)) == 2.0
