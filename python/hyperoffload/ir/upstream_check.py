"""
Upstream MLIR's verifier on what xDSL read.

xDSL's verifiers are weaker than upstream's for some ops (slice and reshape
sizes, `linalg.fill` results, `tensor.pad` bodies, `scf.if` terminators,
...), so a program xDSL reads is verified by upstream MLIR too, once our own
verifier has accepted it (its residency messages are the more specific):
the text read is parsed by the upstream bindings, which verify it. Text with
ops of ours (custom forms upstream cannot read) goes as xDSL's generic print
of the module instead, every op with its `file:line:col`; ops of dialects
upstream does not know (ours) pass through unregistered. The first error
upstream reports becomes a `VerifyException` located in the input:

```
model.mlir:3:8: error: expected type to be 'tensor<4xf32>' or a rank-reduced version. (size mismatch)
```

```python
module = parse_mlir(ctx, text, "model.mlir")  # xDSL read it: marked for the check
verify_module(module)  # ours, then `verify_with_upstream_once(module)`
```

A module upstream read was verified there already (the bindings' parse
verifies): `hyperoffload.ir.engines` notes every op upstream registers as
accepted, so that `verify_module` checks only what upstream could not
(`hyperoffload.ir.accepted.accepted_by_upstream`).

The bindings are an assertions build: the check runs in a forked child, so
an assertion that upstream trips aborts the child, not the tool, and is
reported as an error at the module. A generic
print that upstream cannot read back (a syntax the two print differently) is
not a verdict on the program: the check then says nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from io import StringIO
from typing import Any
from weakref import WeakKeyDictionary

from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from hyperoffload.ir.upstream import file_line_col, run_forked

_PRINTED = "hyperoffload generic print"
"""The name the generic print is parsed under: an error located there is a
disagreement of the printers, not a verdict on the program."""

_OURS = "hyperoffload."
"""Text with this holds ops or types of ours: upstream reads their generic print."""


@dataclass(frozen=True)
class _Source:
    """The text a module was read from, where it sits in its file."""

    text: str
    name: str
    line_offset: int


_UNCHECKED: WeakKeyDictionary[ModuleOp, _Source] = WeakKeyDictionary()
"""Modules xDSL read from text that upstream MLIR has not verified yet."""


def check_with_upstream_later(
    module: ModuleOp, text: str, name: str, line_offset: int = 0
) -> None:
    """
    Mark `module`, read by xDSL from `text` (lines `line_offset` on in the
    file `name`), for `verify_with_upstream_once`.
    """
    _UNCHECKED[module] = _Source(text, name, line_offset)


def verify_with_upstream_once(module: ModuleOp) -> bool:
    """
    `verify_with_upstream(module)` if it is marked, and unmark it; whether it
    was marked.
    """
    source = _UNCHECKED.pop(module, None)
    if source is not None:
        verify_with_upstream(module, source)
    return source is not None


def verify_with_upstream(module: ModuleOp, source: _Source | None = None) -> None:
    """
    Verify `module` (read from `source`, if given) with upstream MLIR; raise a
    `VerifyException` whose text is `file:line:col: error: message`
    (upstream's words) at the first error.
    """
    where = _module_location(module)
    if source is not None and _OURS not in source.text:
        errors = _upstream_errors(source.text, printed=False)
        name, line_offset = source.name, source.line_offset
    else:
        printed = StringIO()
        Printer(
            stream=printed, print_generic_format=True, print_debuginfo=True
        ).print_op(module)
        errors = _upstream_errors(printed.getvalue(), printed=True)
        name, line_offset = where[0], 0
    if not errors:
        return
    location, message = errors[0]
    found = file_line_col(location, name, line_offset)
    if found is not None:
        where = found
    file, line, column = where
    raise VerifyException(f"{file}:{line}:{column}: error: {message}")


def _module_location(module: ModuleOp) -> tuple[str, int, int]:
    loc = module.location
    if isinstance(loc, FileLineColLoc):
        return loc.filename.data, loc.line.data, loc.column.data
    return "<input>", 1, 1


def _upstream_errors(text: str, printed: bool) -> list[tuple[str, str]]:
    """
    Upstream's errors on `text` (location as upstream prints it, message), in
    a forked child (`run_forked`); none when it verifies or, for a generic
    print (`printed`), when the errors are in the print itself (a syntax the
    printers disagree on).
    """
    errors, _ = run_forked(lambda: _errors_here(text, printed))
    if errors is None:
        return [("", "upstream MLIR aborted verifying this program")]
    return [(str(where), str(what)) for where, what in errors]


def _errors_here(text: str, printed: bool) -> list[tuple[str, str]]:
    """`_upstream_errors`' work, in this process."""
    ir: Any = import_module("mlir.ir")
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        ctx.enable_multithreading(False)
        try:
            if printed:
                ir.Operation.parse(text, source_name=_PRINTED)
            else:
                ir.Module.parse(text)
        except ir.MLIRError as err:
            errors = [(str(d.location), str(d.message)) for d in err.error_diagnostics]
            errors = errors or [("", str(err.message))]
            if printed and any(_PRINTED in where for where, _ in errors):
                return []
            return errors
    return []
