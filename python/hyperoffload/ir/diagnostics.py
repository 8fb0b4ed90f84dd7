"""
Located diagnostics and the one channel they travel through.

Errors are reported at the `file:line:col` of the op (see
`hyperoffload.ir.parsing`) instead of as a dump of the IR; every message has
the form `where: severity: text`, built by `format_diagnostic` alone.
Warnings and progress remarks of passes go through `emit`: to stderr by
default, into a list under `collect_diagnostics()`, nowhere under
`silence_diagnostics()`.

```
input.mlir:7:3: error: 'arith.addf' reads %h, a remote copy (...); prefetch it first
hyperoffload-insert: warning: @step: the best plan found peaks at 31.2 GB, above the target of 30 GB
```

```python
with collect_diagnostics() as diagnostics:
    PipelinePass(max_slowdown=0.02).apply(ctx, module)
for d in diagnostics:
    print(d.severity, d.message)
```
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Generator, Iterable
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from enum import StrEnum

from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException

from hyperoffload.dialects.hyperoffload import DetachOp, PrefetchOp, StoreOp
from hyperoffload.dialects.provenance import written_as
from hyperoffload.dialects.residency import describe, verify_residency
from hyperoffload.ir.accepted import AcceptedOps, accepted_ops
from hyperoffload.ir.upstream_check import (
    verify_with_upstream,
    verify_with_upstream_once,
)


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    REMARK = "remark"
    """Progress of a long run (e.g. each trial of a target search)."""


@dataclass(frozen=True)
class Diagnostic:
    """One message: where (a `file:line:col` or a tool or pass name), how bad, what."""

    where: str
    severity: Severity
    message: str

    def __str__(self) -> str:
        return format_diagnostic(self.where, self.severity, self.message)


def format_diagnostic(where: str, severity: Severity | str, message: str) -> str:
    """`where: severity: message`, the form compilers and FileCheck expect."""
    return f"{where}: {severity}: {message}"


LEADING_LOC = re.compile(r"^(?P<loc>[^\s:]+:\d+:\d+): (?P<message>.*)$", re.DOTALL)
"""A message that starts with its place: `input.mlir:7:3: 'arith.addf' reads ...`."""


def located_message(err: BaseException) -> str:
    """
    The text of `err` as a diagnostic, located at its `where` (`file:line:col`,
    set by an error that knows the op it is about) or at the place its text
    starts with, when it is not one already:
    `input.mlir:7:3: error: 'scf.if' is not supported here: ...`.
    """
    text = str(err)
    where = getattr(err, "where", None)
    if ": error: " in text:
        return text
    if isinstance(where, str) and where != "<unknown>":
        return format_diagnostic(where, Severity.ERROR, text)
    if match := LEADING_LOC.match(text):
        return format_diagnostic(match["loc"], Severity.ERROR, match["message"])
    return text


def _to_stderr(diagnostic: Diagnostic) -> None:
    print(diagnostic, file=sys.stderr, flush=True)


_handler: ContextVar[Callable[[Diagnostic], None]] = ContextVar(
    "hyperoffload_diagnostics", default=_to_stderr
)


def emit(where: str, severity: Severity, message: str) -> None:
    """Send a diagnostic to the current handler (stderr unless redirected)."""
    _handler.get()(Diagnostic(where, severity, message))


@contextmanager
def handle_diagnostics(handler: Callable[[Diagnostic], None]) -> Generator[None]:
    """Send the diagnostics emitted inside the block to `handler`."""
    token = _handler.set(handler)
    try:
        yield
    finally:
        _handler.reset(token)


@contextmanager
def collect_diagnostics() -> Generator[list[Diagnostic]]:
    """Collect the diagnostics emitted inside the block instead of printing them."""
    collected: list[Diagnostic] = []
    with handle_diagnostics(collected.append):
        yield collected


@contextmanager
def silence_diagnostics() -> Generator[None]:
    """Drop the diagnostics emitted inside the block."""
    with handle_diagnostics(lambda _: None):
        yield


def location_of(op: Operation) -> str:
    """`file:line:col` of an op (or of its closest located ancestor)."""
    current: Operation | None = op
    while current is not None:
        loc = current.location
        if isinstance(loc, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        current = current.parent_op()
    return "<unknown>"


def diagnostic_at(op: Operation, message: str) -> str:
    """An error message located at `op`: `file:line:col: error: message`."""
    return format_diagnostic(location_of(op), Severity.ERROR, message)


def error_at(op: Operation, message: str) -> VerifyException:
    """An exception whose text is a compiler-style diagnostic at `op`."""
    return VerifyException(diagnostic_at(op, message))


def verify_module(module: ModuleOp) -> None:
    """
    Check the residency invariants (their messages are the most specific for
    a remote operand), then every op's verifier and the blocks' structure
    (what xDSL's `module.verify()` checks, located), then, for a module xDSL
    read from text, upstream MLIR's verifier
    (`hyperoffload.ir.upstream_check`); raise a located `VerifyException` at
    the first failure. An op accepted before, unchanged since, is not
    verified again (`hyperoffload.ir.accepted`): of a module read from one
    upstream verified (`hyperoffload.ir.engines`), only what upstream did
    not verify is checked: the residency, the ops it does not register
    (ours), calls and symbol tables, and the order of definitions.
    """
    verify_residency(module, error_at)
    accepted = accepted_ops(module)
    _verify_ops(module, accepted.changed(module.walk()), accepted)
    _check_definitions_first(module.body.block, set())
    verify_with_upstream_once(module)


def _verify_ops(
    module: ModuleOp, ops: Iterable[Operation], accepted: AcceptedOps
) -> None:
    """
    Run the xDSL verifier of each op of `ops` (in `module`), noting those it
    accepts; where one fails on its op instead of judging it, upstream MLIR
    judges the module.
    """
    judged_upstream = False
    for op in ops:
        if _verify_op(op):
            accepted.accept(op)
        elif not judged_upstream:
            _judge_with_upstream(module)
            judged_upstream = True


def _judge_with_upstream(module: ModuleOp) -> None:
    """
    Where xDSL's verifier of an op failed on it (instead of judging it),
    upstream MLIR's verifier judges the module: it raises, in upstream's
    words and located, where upstream rejects it (the text read, or the
    module's generic print where it was not read from text).
    """
    if not verify_with_upstream_once(module):
        verify_with_upstream(module)


def _check_definitions_first(block: Block, visible: set[SSAValue]) -> None:
    """
    Each operand is defined before its use: in this block, or in an enclosing
    one before the op holding this block (xDSL does not check dominance).
    Each op and block is held by its parent, and a single-block region that
    needs a terminator holds an op (as xDSL's `Region.verify`, located).
    """
    local: list[SSAValue] = [*block.args]
    visible.update(local)
    for op in block.ops:
        if op.parent is not block:
            raise error_at(op, f"'{op.name}' is not held by the block it is in")
        _check_regions_held(op)
        for operand in op.operands:
            if operand not in visible:
                raise error_at(
                    op,
                    f"'{op.name}' uses {describe(operand)} before its definition",
                )
        for region in op.regions:
            # across the blocks of a CFG region order is the branches', not
            # the text's: there, any value of the region counts as defined
            shared: list[SSAValue] = []
            if len(region.blocks) > 1:
                for inner in region.blocks:
                    shared += [*inner.args, *(r for o in inner.ops for r in o.results)]
            for inner in region.blocks:
                visible.update(shared)
                _check_definitions_first(inner, visible)
            visible.difference_update(shared)
        visible.update(op.results)
        local.extend(op.results)
    visible.difference_update(local)


def _check_regions_held(op: Operation) -> None:
    """
    The blocks of `op`'s regions are held by them, and none that needs a
    terminator is empty.
    """
    for region in op.regions:
        for inner in region.blocks:
            if inner.parent is not region:
                raise error_at(op, f"'{op.name}' holds a block of another region")
        blocks = region.blocks
        if (
            len(blocks) == 1
            and blocks.first is not None
            and blocks.first.first_op is None
            and not op.has_trait(NoTerminator)
        ):
            raise error_at(
                op,
                f"'{op.name}' contains an empty block in a single-block region "
                "that expects at least a terminator",
            )


def verify_offload(module: ModuleOp) -> None:
    """
    What a pass that only adds, moves or retypes offload ops must check: the
    residency invariants, the offload ops and the function signatures (the
    other ops are unchanged and were verified when read).
    """
    verify_residency(module, error_at)
    accepted = accepted_ops(module)
    offload = (
        op
        for op in module.walk()
        if isinstance(op, FuncOp | PrefetchOp | StoreOp | DetachOp)
    )
    _verify_ops(module, accepted.changed(offload), accepted)


_VERIFIER_FAILURES = (IndexError, KeyError, ValueError, TypeError, AssertionError)
"""What an xDSL verifier raises where it fails on an input instead of judging it
(e.g. `linalg.reduce` with `dimensions = [1, 1]`: an `IndexError`)."""


def _verify_op(op: Operation) -> bool:
    """
    Run `op`'s xDSL verifier; raise a located `VerifyException` where it
    rejects the op; `False` where the verifier itself failed on it.
    """
    try:
        op.verify(verify_nested_ops=False)
    except VerifyException as err:
        raise error_at(op, f"{written_as(op)}: {_first_line(err)}") from None
    except _VERIFIER_FAILURES:
        return False
    return True


def _first_line(err: Exception) -> str:
    text = str(err).removeprefix("Operation does not verify: ")
    return text.splitlines()[0] if text else type(err).__name__
