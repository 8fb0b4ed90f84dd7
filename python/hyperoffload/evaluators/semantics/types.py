"""
MLIR types as both evaluators read them: a (remote) tensor type's element
type and shape, and the name of the dtype its elements have in numpy and
torch alike (each backend maps the name to its own dtype; numpy holds
`bfloat16` in `float32`).

```python
bf16 = TensorType(BFloat16Type(), [2, -1])
element_type(bf16)      # bf16
shape_of(bf16)          # (2, -1): a dynamic size is < 0
dtype_name(bf16)        # "bfloat16"
dtype_name(IntegerType(4))  # None: neither library has 4-bit integers
```
"""

from typing import cast

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
from xdsl.ir import Attribute

from hyperoffload.dialects.hyperoffload import RemoteType


def element_type(type_: Attribute) -> Attribute:
    """The element type of a (remote) tensor type; a scalar type itself."""
    if isinstance(type_, RemoteType):
        type_ = type_.tensor
    if isinstance(type_, TensorType):  # not `isa`: this runs once per value
        return cast(TensorType[Attribute], type_).get_element_type()
    return type_


def shape_of(type_: Attribute) -> tuple[int, ...]:
    """Shape of a (remote) tensor type, `()` for a scalar; dynamic sizes are < 0."""
    if isinstance(type_, RemoteType):
        type_ = type_.tensor
    if isinstance(type_, TensorType):
        return tuple(type_.get_shape())
    return ()


_FLOATS: dict[type[Attribute], str] = {
    Float16Type: "float16",
    BFloat16Type: "bfloat16",
    Float32Type: "float32",
    Float64Type: "float64",
    IndexType: "int64",
}


def dtype_name(type_: Attribute) -> str | None:
    """The dtype of a type's elements, as numpy and torch name it; None if neither has it."""
    element = element_type(type_)
    name = _FLOATS.get(type(element))
    if name is not None or not isinstance(element, IntegerType):
        return name
    width = element.bitwidth
    if width == 1:
        return "bool"
    if width in (8, 16, 32, 64):
        unsigned = element == IntegerType(width, Signedness.UNSIGNED)
        return f"{'u' if unsigned else ''}int{width}"
    return None
