"""
xDSL's printer, faster on large programs, with the same text.

A training step prints hundreds of thousands of strings and tens of thousands
of tensor types. `FastPrinter` writes a string without a line break straight
to its stream (xDSL's goes through `print`), a string literal in one piece
(xDSL's, a byte at a time), and prints each distinct builtin type once,
reusing its text (a type's text depends on nothing but the type).

```python
FastPrinter(stream=out).print_op(module)  # as Printer(stream=out), faster
```

```mlir
%0 = tensor.empty() : tensor<1x512x4096xbf16>  // the type's text printed once
```
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from io import StringIO
from typing import cast, get_args

from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    IndexType,
    IntegerType,
    NoneAttr,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.printer import Printer


@dataclass(eq=False, repr=False)
class FastPrinter(Printer):
    """A `Printer` whose output is the same text, printed faster."""

    _type_texts: dict[Attribute, str] = field(
        default_factory=dict[Attribute, str], init=False
    )

    def print_string(self, text: str, *, indent: int | None = None) -> None:
        if "\n" in text:
            super().print_string(text, indent=indent)
            return
        self._current_column += len(text)
        (self.stream or sys.stdout).write(text)

    def print_bytes_literal(self, bytestring: bytes) -> None:
        """As xDSL's, in one string rather than one per byte."""
        self.print_string(f'"{"".join(_ESCAPED[byte] for byte in bytestring)}"')

    def print_attribute(self, attribute: Attribute) -> None:
        if type(attribute) not in _TYPE_KINDS:
            super().print_attribute(attribute)
            return
        text = self._type_texts.get(attribute)
        if text is None:
            text = self._type_texts[attribute] = _plain_text(attribute)
        if text:
            self.print_string(text)
        else:
            super().print_attribute(attribute)


_ESCAPED = tuple(
    "\\\\"
    if byte == 0x5C
    else f"\\{byte:02X}"
    if byte < 0x20 or byte > 0x7E or byte == 0x22
    else chr(byte)
    for byte in range(256)
)
"""How xDSL's `print_bytes_literal` writes each byte in a string literal."""

_TYPE_KINDS = frozenset(
    (TensorType, IntegerType, IndexType, *get_args(AnyFloat), ArrayAttr)
)
"""The kinds of builtin attribute whose text `FastPrinter` reuses."""


def _plain_text(type_: Attribute) -> str:
    """
    The text of a builtin type that is all of it (no dialect's type inside,
    no encoding), else `""`.
    """
    printed = type_
    if isinstance(type_, ArrayAttr):
        items = cast(ArrayAttr[Attribute], type_)
        if not all(isinstance(item, AffineMapAttr) for item in items):
            return ""
    if isinstance(type_, TensorType):
        tensor = cast(TensorType[Attribute], type_)
        plain = isinstance(tensor.encoding, NoneAttr) and isinstance(
            tensor.get_element_type(), IntegerType | IndexType | AnyFloat
        )
        if not plain:
            return ""
    out = StringIO()
    Printer(stream=out).print_attribute(printed)
    return out.getvalue()
