"""
Reading MLIR text: xDSL first, upstream MLIR where xDSL lacks an op or a
syntax. Every op remembers the `file:line:col` it was parsed from (the
module: where the text starts). Text upstream reads is read in generic form:
its named linalg ops generalised (each `linalg.generic` remembers the op the
input wrote, `hyperoffload.dialects.provenance`), the ops upstream registers
and xDSL does not read as `UpstreamOnlyOp`s (`hyperoffload.ir.xdsl_fixes`),
an op neither registers an error located at it, as in `mlir-opt`.

```python
module = parse_mlir(ctx, text, "model.mlir")  # torch-mlir output included
module = parse_upstream(ctx, upstream_module, "<upstream module>")  # an mlir.ir.Module
```

An upstream module the bindings hold is read through them (`parse_upstream`),
not through its text: each op, value and block is visited once, and each
distinct type and attribute is parsed once.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from collections.abc import Generator, Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import import_module
from typing import Any, cast

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
    LocationAttr,
    ModuleOp,
    RankedStructure,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.parser import AttrParser, Parser
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.mlir_lexer import MLIRTokenKind

from hyperoffload.dialects.provenance import note_generalised
from hyperoffload.ir.upstream import (
    Correspondence,
    OpState,
    UpstreamParseError,
    file_line_col,
    generalize_named_ops,
    generic_attribute_text,
    generic_texts,
    normalize_with_upstream,
    registered_ops,
    relocated,
)
from hyperoffload.ir.upstream_check import check_with_upstream_later
from hyperoffload.ir.xdsl_fixes import linear_string_literals, upstream_only_op

linear_string_literals()


def _unreadable(err: Exception) -> str:
    """What an exception xDSL raised while building an op says, in our words."""
    if isinstance(err, NotImplementedError):
        if "semi-affine" in str(err):
            return (
                "semi-affine maps (a product of two dimensions or symbols) "
                "are not supported"
            )
        return "a construct this reader does not support"
    return str(err) or "operands of an unexpected type"


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
        except (
            VerifyException,
            AssertionError,
            IndexError,
            OverflowError,
            TypeError,
            KeyError,
            ValueError,
            NotImplementedError,
        ) as err:
            # Some xDSL ops check operands while they are built (a missing
            # operand, a constant too wide for its type), and its affine
            # expressions refuse semi-affine products: not a located
            # ParseError of their own. (parse_mlir then asks upstream MLIR,
            # whose diagnostic is the one shown where the text is invalid.)
            message = _unreadable(err)
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

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """
        As xDSL's; an implicit module is located where the text starts, and
        text with no op (only comments) is an empty module, as upstream reads it.
        """
        at_end = self._current_token.kind == MLIRTokenKind.EOF
        try:
            module = (
                ModuleOp([])
                if allow_implicit_module and at_end
                else super().parse_module(allow_implicit_module)
            )
        except NotImplementedError as err:  # in an attribute alias (`#map = ...`)
            self.raise_error(_unreadable(err), self._current_token.span)
        loc = module.location
        if not isinstance(loc, FileLineColLoc) or loc.line.data < 1:
            module.location = FileLineColLoc(
                StringAttr(self._file_name), IntAttr(1 + self._line_offset), IntAttr(1)
            )
        return module

    def parse_dense_int_or_fp_elements_attr(
        self, type: RankedStructure[AnyDenseElement] | None
    ) -> DenseIntOrFPElementsAttr:
        """
        As xDSL's, but a splat (`dense<0.0> : tensor<1x32x2048x128xbf16>`) is
        held as its one element, never expanded: its data is that element's
        bytes alone (`len(attr) == 1`, `attr.is_splat()`; it prints as
        `dense<0.0>`), so a splat of any size parses, prints, prices and
        evaluates in constant memory.
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
        return DenseIntOrFPElementsAttr(type, BytesAttr(single))

    def _parse_tensor_literal_element(self) -> AttrParser._TensorLiteralElement:
        element = super()._parse_tensor_literal_element()
        hexadecimal = element.span.text[:2] in ("0x", "0X")
        if hexadecimal and not element.is_negative and type(element.value) is int:
            return _HexLiteralElement(False, element.value, element.span)
        return element


_SPLAT = re.compile(r"<\s*[^\[\]<>,\"\s]+\s*>")
"""A dense literal of one element: `<0.0>`, `<0xFF800000>`, `<true>`."""

_RESOURCE_HANDLE = re.compile(r"dense_resource<([^>]+)>")

_ABORTED = "upstream MLIR aborted"
"""How `normalize_with_upstream` says that upstream tripped an assertion."""


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


def _parse_text(
    ctx: Context, text: str, name: str, line_offset: int, implicit_module: bool
) -> ModuleOp:
    with _own_resources(text):
        try:
            return LocatingParser(ctx, text, name, line_offset).parse_module(
                implicit_module
            )
        except ParseError as err:  # its lines are the text's: put them in the file
            if line_offset:
                err.span = dataclasses.replace(err.span, line_offset=line_offset)
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
    Raises `ParseError` or `UpstreamParseError` with `file:line:col`. What
    xDSL read is verified by upstream too, by the first `verify_module`
    (`hyperoffload.ir.upstream_check`).
    """
    try:
        module = _parse_text(ctx, text, name, line_offset, implicit_module)
        check_with_upstream_later(module, text, name, line_offset)
        return module
    except ParseError as error:
        xdsl_error = error
        try:
            normalized = normalize_with_upstream(text, name, line_offset)
        except UpstreamParseError as upstream_error:
            # xDSL's diagnostic knows our dialect; upstream's knows the rest,
            # unless upstream aborted inside the text (an assertion's words
            # are not the user's; an abort at the end says the text is cut).
            said = str(upstream_error)
            aborted_inside = _ABORTED in said and "at its end" not in said
            if "hyperoffload." in text or aborted_inside:
                raise xdsl_error from None
            raise upstream_error from None
    admit_upstream_ops(ctx, normalized.registered)
    for op_name, diagnostic in normalized.unregistered:
        if ctx.get_optional_op(op_name) is None:  # not ours either: as mlir-opt
            raise UpstreamParseError(diagnostic)
    normalized_name = f"{name} (normalised by upstream MLIR)"
    for generic, located in ((normalized.located, True), (normalized.plain, False)):
        try:
            module = _parse_text(ctx, generic, normalized_name, 0, implicit_module)
        except ParseError:
            continue
        if located:
            note_generalised_ops(module, normalized.generalised)
        loc = module.location
        if not isinstance(loc, FileLineColLoc) or (
            loc.column.data < 1 or loc.filename.data == normalized_name
        ):  # upstream's implicit module is at 0:0: put it where the text starts
            module.location = FileLineColLoc(
                StringAttr(name), IntAttr(1 + line_offset), IntAttr(1)
            )
        return module
    raise xdsl_error


def admit_upstream_ops(ctx: Context, names: Iterable[str]) -> None:
    """
    Let `ctx` read, as an `UpstreamOnlyOp`, each op of `names` (ops upstream
    MLIR registers) that xDSL does not know.
    """
    for op_name in names:
        if ctx.get_optional_op(op_name) is None:
            ctx.load_op(upstream_only_op(op_name))


def note_generalised_ops(
    module: ModuleOp, generalised: Iterable[tuple[str, int, int, str]]
) -> None:
    """
    Note each `linalg.generic` of `module` at a (file, line, column) of
    `generalised` as the named op written there
    (`hyperoffload.dialects.provenance`), for diagnostics.
    """
    named = {(file, line, col): op for file, line, col, op in generalised}
    if not named:
        return
    for op in module.walk():
        loc = op.location
        if op.name == "linalg.generic" and isinstance(loc, FileLineColLoc):
            key = (loc.filename.data, loc.line.data, loc.column.data)
            if key in named:
                note_generalised(op, named[key])


class _Unreadable(Exception):
    """The bindings reader met something only the text path handles."""


_FILE_LINE_COL = re.compile(r'"([^"\\]*)":(\d+):(\d+)')


class _UpstreamReader:
    """
    xDSL IR of an upstream module op, built through the bindings. It gives
    what `LocatingParser` gives on the module's generic text: the same ops,
    types, attributes (each distinct one parsed by `LocatingParser`), the
    same split of properties and attributes (xDSL's generic parser moves an
    attribute its op defines as a property into the properties) and the same
    value names; locations are the upstream ops' own (`"-"`, the file of
    text parsed from a string, becomes `name`). It records which upstream
    op, value and block each xDSL one came from (`seen`), and each distinct
    type and attribute that does not read back from its xDSL print as it is
    (an opaque `#hyperoffload.tier<remote>` parsed before the dialect was
    loaded), with the ops and blocks that hold one: the text path would give
    them the print's reading, so `write_back` does too.
    """

    def __init__(self, ctx: Context, module: Any, name: str, record: bool = True):
        ir: Any = import_module(type(module).__module__)
        self.ir = ir
        self.ctx = ctx
        self.name = name
        self.record = record
        """Whether to note each op's and block's state as read (for `write_back`)."""
        self.names = ir.AsmState(module, use_local_scope=True)
        self.values: dict[Any, SSAValue] = {}
        self.blocks: dict[Any, Block] = {}
        self.attributes: dict[Any, Attribute] = {}
        self.locations: dict[str, LocationAttr | None] = {}
        self.file_locations: dict[tuple[str, int, int], FileLineColLoc] = {}
        self.strings: dict[str, StringAttr] = {}
        self.integers: dict[int, IntAttr] = {}
        self.kinds: dict[str, tuple[type[Operation], set[str]]] = {}
        self.seen = Correspondence()
        self.unfaithful: set[int] = set()
        """`seen.unfaithful` by identity (what was read shares the parsed ones)."""

    def holds_unfaithful(self, attributes: Iterable[Attribute]) -> bool:
        return bool(self.unfaithful) and any(
            id(attribute) in self.unfaithful for attribute in attributes
        )

    def attribute(self, upstream: Any) -> Attribute:
        """An upstream type or attribute, parsed once per distinct one."""
        found = self.attributes.get(upstream)
        if found is None:
            text = str(upstream)
            if "dense_resource<" in text:  # the blob lives in the module's text
                raise _Unreadable(text)
            try:
                found = LocatingParser(self.ctx, text, self.name).parse_attribute()
            except ParseError as err:
                raise _Unreadable(text) from err
            self.attributes[upstream] = found
            if self._may_differ(found, text) and not self._reads_back(found, upstream):
                self.seen.unfaithful.add(found)
                self.unfaithful.add(id(found))
        return found

    @staticmethod
    def _may_differ(attribute: Attribute, text: str) -> bool:
        """
        Might `attribute` read back upstream as another than `text`? Only a
        dialect's attribute or type (`#d.x`, `!d.x`) can (opaque upstream,
        known to xDSL); printing a large constant would cost seconds.
        """
        if "#" not in text and "!" not in text:
            return False
        if isinstance(attribute, DenseIntOrFPElementsAttr):
            return False
        return generic_attribute_text(attribute) != text

    def _reads_back(self, attribute: Attribute, upstream: Any) -> bool:
        """Does the xDSL print of `attribute` parse upstream to `upstream`?"""
        kind = self.ir.Type if isinstance(upstream, self.ir.Type) else None
        parse = (kind or self.ir.Attribute).parse
        try:
            return (
                parse(generic_attribute_text(attribute), upstream.context) == upstream
            )
        except self.ir.MLIRError:
            return False

    def location(self, upstream: Any) -> LocationAttr | None:
        if upstream.is_a_file():  # `"file":line:col`, read without printing it
            file: str = upstream.filename
            if '"' not in file and "\\" not in file:
                return self._file_location(
                    self.name if file == "-" else file,
                    upstream.start_line,
                    upstream.start_col,
                )
        text = str(upstream)
        if text not in self.locations:
            match = _FILE_LINE_COL.search(text)
            self.locations[text] = (
                None
                if match is None
                else self._file_location(
                    self.name if match[1] == "-" else match[1],
                    int(match[2]),
                    int(match[3]),
                )
            )
        return self.locations[text]

    def _file_location(self, file: str, line: int, column: int) -> FileLineColLoc:
        """`file:line:col`, built once (its parts too) for each distinct one."""
        key = (file, line, column)
        found = self.file_locations.get(key)
        if found is None:
            found = self.file_locations[key] = FileLineColLoc(
                self._string(file), self._integer(line), self._integer(column)
            )
        return found

    def _string(self, text: str) -> StringAttr:
        found = self.strings.get(text)
        if found is None:
            found = self.strings[text] = StringAttr(text)
        return found

    def _integer(self, value: int) -> IntAttr:
        found = self.integers.get(value)
        if found is None:
            found = self.integers[value] = IntAttr(value)
        return found

    def bind(self, upstream: Any, value: SSAValue) -> None:
        self.values[upstream] = value
        if self.record:
            self.seen.values[value] = upstream
        name = upstream.get_name(self.names)[1:].partition("#")[0]
        if SSAValue.is_valid_name(name):
            value.name_hint = name

    def kind(self, name: str) -> tuple[type[Operation], set[str]]:
        """The op class of `name` and the names it holds as properties."""
        if name not in self.kinds:
            op_type = self.ctx.get_optional_op(name)
            if op_type is None or not issubclass(op_type, IRDLOperation):
                raise _Unreadable(f"operation {name} is not registered")
            properties = set(op_type.get_irdl_definition().properties)
            self.kinds[name] = (op_type, properties)
        return self.kinds[name]

    def region(self, upstream: Any) -> Region:
        blocks: list[tuple[Any, Block]] = []
        for up_block in upstream.blocks:
            arguments = list(up_block.arguments)
            block = Block(arg_types=[self.attribute(a.type) for a in arguments])
            for up_arg, arg in zip(arguments, block.args, strict=True):
                self.bind(up_arg, arg)
                if (location := self.location(up_arg.location)) is not None:
                    arg.location = location
            self.blocks[up_block] = block
            if self.record:
                self.seen.blocks[block] = up_block
            blocks.append((up_block, block))
        for up_block, block in blocks:
            block.add_ops([self.op(op.operation) for op in up_block.operations])
            if not self.record:
                continue
            types = tuple(arg.type for arg in block.args)
            self.seen.block_states[block] = (tuple(block.ops), block.args, types)
            if self.holds_unfaithful(types):
                self.seen.stale.add(block)
        return Region([block for _, block in blocks])

    def op(self, upstream: Any) -> Operation:
        op_type, property_names = self.kind(upstream.name)
        try:
            operands = [self.values[value] for value in upstream.operands]
            successors = [self.blocks[block] for block in upstream.successors]
        except KeyError as err:  # a use before its definition (graph regions)
            raise _Unreadable(upstream.name) from err
        properties: dict[str, Attribute] = {}
        attributes: dict[str, Attribute] = {}
        named = upstream.attributes
        for index in range(len(named)):
            entry = named[index]
            into = properties if entry.name in property_names else attributes
            into[entry.name] = self.attribute(entry.attr)
        results = list(upstream.results)
        regions = [self.region(region) for region in upstream.regions]
        try:
            op = op_type.create(
                operands=operands,
                result_types=[self.attribute(result.type) for result in results],
                properties=properties,
                attributes=attributes,
                location=self.location(upstream.location),
                successors=successors,
                regions=regions,
            )
        except (VerifyException, AssertionError, ValueError, TypeError) as err:
            raise _Unreadable(upstream.name) from err
        for up_result, result in zip(results, op.results, strict=True):
            self.bind(up_result, result)
        if not self.record:
            return op
        self.seen.ops[op] = upstream
        self.seen.op_states[op] = OpState.of(op)
        if self.holds_unfaithful(
            (*op.result_types, *properties.values(), *attributes.values())
        ):
            self.seen.stale.add(op)
        return op

    def module(self, module: Any) -> ModuleOp:
        op = self.op(module)
        if not isinstance(op, ModuleOp):
            raise _Unreadable(module.name)
        return op


def _op_names(module: Any) -> set[str]:
    """The names of the ops in an upstream module op (a walk in C++)."""
    ir: Any = import_module(type(module).__module__)
    names: set[str] = set()

    def note(op: Any) -> Any:
        names.add(op.name)
        return ir.WalkResult.ADVANCE

    module.walk(note, ir.WalkOrder.PRE_ORDER)
    return names


def read_upstream(
    ctx: Context, module: Any, name: str, correspond: bool = True
) -> tuple[ModuleOp, Correspondence | None]:
    """
    xDSL IR of an upstream module op that the bindings hold, as `parse_mlir`
    would give it from the module's generic text: read as it is when xDSL
    knows every op, else with its named linalg ops generalised
    (`linalg-generalize-named-ops`, in place: `module` is the caller's own
    copy). It is read through the bindings in this process, each op once (it
    was parsed already, so nothing in it can trip the upstream parser), with
    the `Correspondence` of what was read to what it came from, for
    `write_back`. What the reader does not handle (`dense_resource` blobs, a
    use before its definition) goes through the module's generic text,
    normalised in this process, and comes with no correspondence; nor does
    any read without `correspond` (faster: no state of each op is noted).
    Raises `ParseError` with `file:line:col` as `parse_mlir` does.
    """
    module = getattr(module, "operation", module)
    if all(ctx.get_optional_op(known) for known in _op_names(module)):
        reader = _UpstreamReader(ctx, module, name, correspond)
        try:
            return reader.module(module), reader.seen if correspond else None
        except _Unreadable:
            pass
        try:  # xDSL reads its text (a `dense_resource` blob)?
            text: str = module.get_asm(print_generic_op_form=True)
            return _parse_text(ctx, text, name, 0, True), None
        except ParseError:
            pass
    generalised = [
        (*where, named)
        for location, named in generalize_named_ops(module)
        if (where := file_line_col(location, name)) is not None
    ]
    admit_upstream_ops(ctx, registered_ops(module))
    reader = _UpstreamReader(ctx, module, name, correspond)
    try:
        read = reader.module(module)
        note_generalised_ops(read, generalised)
        return read, reader.seen if correspond else None
    except _Unreadable:
        pass
    located, plain = generic_texts(module)
    normalized_name = f"{name} (normalised by upstream MLIR)"
    try:
        read = _parse_text(ctx, relocated(located, name), normalized_name, 0, True)
        note_generalised_ops(read, generalised)
        return read, None
    except ParseError:
        return _parse_text(ctx, plain, normalized_name, 0, True), None


def parse_upstream(ctx: Context, module: Any, name: str) -> ModuleOp:
    """
    xDSL IR of an upstream module (an `mlir.ir.Module` or its op) as
    `read_upstream` reads it; `module` is left unchanged.
    """
    op: Any = getattr(module, "operation", module)
    return read_upstream(ctx, op.clone(ip=False), name, correspond=False)[0]
