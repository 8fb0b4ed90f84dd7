"""
Located diagnostics: verification errors are reported at the `file:line:col`
of the op (see `hyperoffload.ir.parsing`) instead of as a dump of the IR.

```
input.mlir:7:3: error: 'arith.addf' reads %h, a remote copy (...); prefetch it first
```
"""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from hyperoffload.dialects.residency import verify_residency


def location_of(op: Operation) -> str:
    """`file:line:col` of an op (or of its closest located ancestor)."""
    current: Operation | None = op
    while current is not None:
        loc = current.location
        if isinstance(loc, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        current = current.parent_op()
    return "<unknown>"


def error_at(op: Operation, message: str) -> VerifyException:
    """An exception whose text is a compiler-style diagnostic at `op`."""
    return VerifyException(f"{location_of(op)}: error: {message}")


def verify_module(module: ModuleOp) -> None:
    """
    Check the residency invariants (their messages are the most specific for
    a remote operand), then every op's verifier; raise a located
    `VerifyException` at the first failure.
    """
    verify_residency(module, error_at)
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as err:
            raise error_at(op, f"'{op.name}': {_first_line(err)}") from None


def _first_line(err: Exception) -> str:
    text = str(err).removeprefix("Operation does not verify: ")
    return text.splitlines()[0] if text else type(err).__name__
