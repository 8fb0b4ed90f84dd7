"""
Reading MLIR text: xDSL first, upstream MLIR where xDSL lacks an op or a
syntax. Every op remembers the `file:line:col` it was parsed from.

```python
module = parse_mlir(ctx, text, "model.mlir")  # torch-mlir output included
```
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from math import prod
from typing import cast

from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import (
    AnyDenseElement,
    AnyFloat,
    Builtin,
    BytesAttr,
    ComplexType,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IndexType,
    IntAttr,
    IntegerType,
    ModuleOp,
    RankedStructure,
    StringAttr,
    TensorType,
)
from xdsl.ir import Operation
from xdsl.parser import AttrParser, Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from hyperoffload.ir.upstream import UpstreamParseError, normalize_with_upstream


@dataclass
class _HexLiteralElement(AttrParser._TensorLiteralElement):  # pyright: ignore[reportPrivateUsage]
    """
    A hexadecimal element of a `dense<...>` literal. For a float element type
    it is the value's bit pattern, as in upstream MLIR (`dense<0xFF800000> :
    tensor<f32>` is -inf); xDSL would read the integer 4286578688 instead.
    """

    def to_type(
        self,
        parser: AttrParser,
        type: AnyFloat | IntegerType | IndexType | ComplexType,
    ):
        if isinstance(type, AnyFloat) and isinstance(self.value, int):
            size = type.compile_time_size
            if self.value >= 1 << (8 * size):
                parser.raise_error(
                    f"hexadecimal float literal does not fit {type}",
                    at_position=self.span,
                )
            raw = self.value.to_bytes(size, "little")
            return next(type.iter_unpack(raw))
        return super().to_type(parser, type)


class LocatingParser(Parser):
    """A parser that attaches a `FileLineColLoc` to every op without a `loc(...)`."""

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int = 0):
        super().__init__(ctx, text, name)
        self._file_name = name
        self._text = text
        self._line_offset = line_offset
        self._line_starts = [0]
        self._line_starts.extend(i + 1 for i, c in enumerate(text) if c == "\n")
        self._line_starts.append(len(text) + 1)

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        try:
            op = super().parse_operation()
        except (VerifyException, AssertionError) as err:
            # Some xDSL ops check operand types while they are built.
            message = str(err) or "operands of an unexpected type"
            line_end = self._line_starts[bisect_right(self._line_starts, start)] - 1
            self.raise_error(f"invalid operation: {message}", start, line_end)
        if not isinstance(op.location, FileLineColLoc):
            line = bisect_right(self._line_starts, start)
            column = start - self._line_starts[line - 1] + 1
            op.location = FileLineColLoc(
                StringAttr(self._file_name),
                IntAttr(line + self._line_offset),
                IntAttr(column),
            )
        return op

    def parse_dense_int_or_fp_elements_attr(
        self, type: RankedStructure[AnyDenseElement] | None
    ) -> DenseIntOrFPElementsAttr:
        """
        As xDSL's, but a splat (`dense<0.0> : tensor<1x32x2048x128xbf16>`) is
        packed once and repeated as bytes instead of element by element.
        """
        start = self.pos
        if _SPLAT.match(self._text, start) is None:
            return super().parse_dense_int_or_fp_elements_attr(type)
        self.parse_punctuation("<")
        elements, shape = self._parse_tensor_literal()
        self.parse_punctuation(">")
        if type is None:
            self.parse_punctuation(":")
            type = self._parse_dense_literal_type()
        element_type = type.element_type
        if shape or len(elements) != 1 or isinstance(element_type, ComplexType):
            self._resume_from(start)
            return super().parse_dense_int_or_fp_elements_attr(type)
        value = elements[0].to_type(self, element_type)
        one: DenseIntOrFPElementsAttr = DenseIntOrFPElementsAttr.from_list(  # pyright: ignore[reportCallIssue, reportUnknownVariableType]
            TensorType(element_type, [1]),  # pyright: ignore[reportArgumentType]
            [value],  # pyright: ignore[reportArgumentType]
        )
        single = cast(bytes, one.data.data)  # pyright: ignore[reportUnknownMemberType]
        return DenseIntOrFPElementsAttr(
            type, BytesAttr(single * prod(type.get_shape()))
        )

    def _parse_tensor_literal_element(self) -> AttrParser._TensorLiteralElement:
        element = super()._parse_tensor_literal_element()
        hexadecimal = element.span.text[:2] in ("0x", "0X")
        if hexadecimal and not element.is_negative and type(element.value) is int:
            return _HexLiteralElement(False, element.value, element.span)
        return element


_SPLAT = re.compile(r"<\s*[^\[\]<>,\"\s]+\s*>")
"""A dense literal of one element: `<0.0>`, `<0xFF800000>`, `<true>`."""

_RESOURCE_HANDLE = re.compile(r"dense_resource<([^>]+)>")


@contextmanager
def _own_resources(text: str) -> Generator[None]:
    """
    Let `text` declare its `dense_resource` keys afresh, and undo what a
    failed parse declared. xDSL keeps blobs in the (process-wide) builtin
    dialect and renames a key declared twice, which would detach the handles
    of a re-parse from the blobs in its own `{-# dialect_resources #-}`.
    """
    interface = Builtin.get_interface(OpAsmDialectInterface)
    assert interface is not None
    storage = interface._blob_storage  # pyright: ignore[reportPrivateUsage]
    saved = dict(storage)
    for key in _RESOURCE_HANDLE.findall(text):
        storage.pop(key, None)
    try:
        yield
    except BaseException:
        storage.clear()
        storage.update(saved)
        raise


def parse_mlir(
    ctx: Context,
    text: str,
    name: str,
    line_offset: int = 0,
    implicit_module: bool = True,
) -> ModuleOp:
    """
    Parse `text` with xDSL; if xDSL cannot read it, normalise it through
    upstream MLIR (`hyperoffload.ir.upstream`) and parse the generic form.
    Raises `ParseError` or `UpstreamParseError` with `file:line:col`.
    """
    try:
        with _own_resources(text):
            return LocatingParser(ctx, text, name, line_offset).parse_module(
                implicit_module
            )
    except ParseError as error:
        xdsl_error = error
        try:
            located, plain = normalize_with_upstream(text, name, line_offset)
        except UpstreamParseError as upstream_error:
            # xDSL's diagnostic knows our dialect; upstream's knows the rest.
            if "hyperoffload." in text:
                raise xdsl_error from None
            raise upstream_error from None
    normalized_name = f"{name} (normalised by upstream MLIR)"
    for normalized in (located, plain):
        try:
            with _own_resources(normalized):
                return LocatingParser(ctx, normalized, normalized_name).parse_module(
                    implicit_module
                )
        except ParseError:
            continue
    raise xdsl_error
