"""
Two ways to read MLIR text into xDSL: xDSL's own parser, or upstream MLIR's
(C++, through the bindings) followed by a walk that builds each xDSL op once.

xDSL's parser is written in Python: on a 32-layer training step exported by
torch-mlir (2 MB of text) it takes tens of seconds, upstream's a fraction of
one. `engine="auto"` reads text of `UPSTREAM_FROM_BYTES` or more with
upstream's parser and the rest with xDSL's, whose diagnostics know our
dialect's custom forms; `"upstream"` and `"xdsl"` force one.

```python
module = parse_with_engine(ctx, text, "step.mlir", engine="auto")
```

Both give the same ops, types, attributes and locations; value names may
differ (upstream's parser keeps no source names, so the upstream engine
names values as `mlir-opt` prints them: `%cst`, `%c0_i64`, ...).
Upstream's parser reads ops and types of our dialect in generic form only
(`"hyperoffload.prefetch"(%w) : (...) -> ...`); our attributes' short form
(`#hyperoffload.tier<remote>`) reads as an opaque attribute, which the walk
reads back as ours. Upstream's parse verifies what it reads: the ops it
knows are noted as accepted (`hyperoffload.ir.accepted`), so that
`verify_module` checks only what upstream did not (the residency, our ops).
"""

from __future__ import annotations

from enum import StrEnum
from importlib import import_module
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr

from hyperoffload.ir.accepted import accepted_by_upstream
from hyperoffload.ir.parsing import parse_mlir, read_upstream
from hyperoffload.ir.upstream import (
    UpstreamParseError,
    unregistered_ops,
    upstream_parse_errors,
)


class Engine(StrEnum):
    AUTO = "auto"
    UPSTREAM = "upstream"
    XDSL = "xdsl"


UPSTREAM_FROM_BYTES = 256 * 1024
"""`Engine.AUTO` reads text at least this long with upstream's parser."""

_GENERIC_ONLY = (
    "the upstream engine reads ops and types of hyperoffload in generic form "
    "only (`--engine xdsl` reads their custom form)"
)


def parse_with_engine(
    ctx: Context,
    text: str,
    name: str,
    line_offset: int = 0,
    implicit_module: bool = True,
    engine: Engine | str = Engine.AUTO,
) -> ModuleOp:
    """
    `text` read by `engine`'s parser (see the module's docstring); raises
    `ParseError` or `UpstreamParseError` with `file:line:col`.
    """
    engine = Engine(engine)
    chosen = engine is Engine.UPSTREAM or (
        engine is Engine.AUTO and implicit_module and len(text) >= UPSTREAM_FROM_BYTES
    )
    if chosen:
        read = _read_with_upstream(ctx, text, name, line_offset, engine)
        if read is not None:
            return read
    return parse_mlir(ctx, text, name, line_offset, implicit_module)


def _read_with_upstream(
    ctx: Context, text: str, name: str, line_offset: int, engine: Engine
) -> ModuleOp | None:
    """
    `text` parsed by upstream MLIR and read into xDSL; `None` where the
    automatic choice leaves it to xDSL (upstream rejects or aborts on it:
    xDSL's parser then gives the diagnostic it always gave).
    """
    shifted = "\n" * line_offset + text  # positions in the file, not the chunk
    errors = upstream_parse_errors(shifted, name)
    if errors is None or errors:
        if engine is Engine.AUTO:
            return None
        said = errors or [f"{name}: error: upstream MLIR aborted parsing this input"]
        if "hyperoffload." in text:
            said.append(f"{name}: note: {_GENERIC_ONLY}")
        raise UpstreamParseError("\n".join(said))
    ir: Any = import_module("mlir.ir")
    context = ir.Context()
    context.allow_unregistered_dialects = True
    module = ir.Module.parse(shifted, context)
    read = read_upstream(ctx, module.operation, name, correspond=False)[0]
    # its parse verified it, but for the ops upstream does not register (ours)
    accepted_by_upstream(read, (op for op, _ in unregistered_ops(module.operation)))
    location = read.location
    if not isinstance(location, FileLineColLoc) or location.line.data < 1:
        # an implicit module: where xDSL's parser puts it
        read.location = FileLineColLoc(StringAttr(name), IntAttr(1), IntAttr(1))
    return read
