"""
Byte sizes of IR types, the one rule every layer sizes a tensor by: an
element takes its bit width rounded up to whole bytes (`i1` and other
sub-byte types a byte), an `index` 8 bytes, a vector element all of its
lanes; a tensor its element size times its element count.

```python
element_bytes(i1)                               # 1
tensor_bytes(TensorType(BFloat16Type(), [4, 8]))  # 64
tensor_bytes(TensorType(f32, [-1]))             # None: a dynamic shape
```
"""

from math import prod
from typing import cast

from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntegerType,
    TensorType,
    VectorType,
)
from xdsl.ir import Attribute


def element_bytes(element_type: Attribute) -> int | None:
    """Bytes of one element of `element_type`; None for a type without a size."""
    if isinstance(element_type, AnyFloat | IntegerType):
        return max(1, (element_type.bitwidth + 7) // 8)
    if isinstance(element_type, IndexType):
        return 8
    if isinstance(element_type, VectorType):  # a vector element: all of its lanes
        vector = cast(VectorType[Attribute], element_type)
        lane = element_bytes(vector.element_type)
        return None if lane is None else prod(vector.get_shape()) * lane
    return None


def tensor_bytes(tensor_type: TensorType[Attribute]) -> int | None:
    """Bytes of a tensor of `tensor_type`; None for a dynamic shape or an unsized element."""
    shape = tensor_type.get_shape()
    element = element_bytes(tensor_type.element_type)
    if element is None or any(dim < 0 for dim in shape):
        return None
    return prod(shape) * element
