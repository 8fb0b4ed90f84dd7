"""Byte sizes of IR types: the one rule the cost model and the arena share."""

import pytest
from xdsl.dialects.builtin import (
    ComplexType,
    Float4E2M1FNType,
    FloatTF32Type,
    IndexType,
    IntegerType,
    TensorType,
    VectorType,
    bf16,
    f32,
)
from xdsl.ir import Attribute

from hyperoffload.ir.arena import tensor_bytes as arena_bytes
from hyperoffload.ir.sizes import element_bytes, tensor_bytes


@pytest.mark.parametrize(
    ("element", "size"),
    [
        (f32, 4),
        (bf16, 2),
        (IntegerType(1), 1),  # sub-byte types take a byte
        (Float4E2M1FNType(), 1),
        (FloatTF32Type(), 3),  # 19 bits, rounded up
        (IntegerType(12), 2),
        (IndexType(), 8),
        (VectorType(bf16, [2, 4]), 16),  # all of its lanes
        (ComplexType(f32), None),
    ],
)
def test_element_bytes(element: Attribute, size: int | None):
    assert element_bytes(element) == size


def test_tensor_bytes():
    assert tensor_bytes(TensorType(bf16, [4, 8])) == 64
    assert tensor_bytes(TensorType(VectorType(f32, [4]), [3])) == 48
    assert tensor_bytes(TensorType(f32, [-1, 8])) is None
    assert tensor_bytes(TensorType(ComplexType(f32), [2])) is None


def test_the_arena_sizes_a_static_tensor_by_the_same_rule():
    assert arena_bytes(TensorType(IntegerType(1), [10])) == 10
    assert arena_bytes(TensorType(f32, [-1])) is None
    assert arena_bytes(f32) is None
