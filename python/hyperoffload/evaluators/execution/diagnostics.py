"""
Errors of the ExecutionEngine runner, located as `file:line:col` from the
locations upstream MLIR keeps.

```python
location(op.location, "model.mlir")   # 'model.mlir:12:5' for loc("-":12:5)
```
"""

import re
from typing import Any

from xdsl.utils.exceptions import DiagnosticException

_UPSTREAM_LOC = re.compile(r'loc\("([^"]*)":(\d+):(\d+)\)')


class ExecutionError(DiagnosticException):
    """A program that cannot be lowered or run, or a failed `cf.assert`."""


def location(location: Any, file_name: str) -> str:
    """`file:line:col` of an upstream location; `-` (the parsed text) is `file_name`."""
    match = _UPSTREAM_LOC.search(str(location))
    if match is None:
        return file_name
    source = file_name if match[1] == "-" else match[1]
    return f"{source}:{match[2]}:{match[3]}"


def from_mlir_error(err: Any, file_name: str, what: str) -> ExecutionError:
    """An `ExecutionError` with a line per diagnostic of an `mlir.ir.MLIRError`."""
    lines: list[str] = []
    for diagnostic in err.error_diagnostics:
        where = location(diagnostic.location, file_name)
        lines.append(f"{where}: error: {what}: {diagnostic.message}")
        for note in diagnostic.notes:
            lines.append(f"{where}: note: {note.message}")
    return ExecutionError("\n".join(lines) or f"{file_name}: error: {what}: {err}")
