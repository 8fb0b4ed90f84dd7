"""
Verifier parity with upstream MLIR on upstream's own `invalid.mlir` tests
(`test/upstream-corpus/*/invalid.mlir`, vendored with their licence notice).

Each file is run once through upstream `mlir-opt --split-input-file` and
once through `hyperoffload-opt --split-input-file` (in this process). Every
chunk that upstream rejects must be rejected by us too, with an error
located within the chunk's lines (a false accept fails the test), and every
chunk must be reported. `bench/upstream_corpus.py` (run by `make fuzz`) runs
the same chunks through the pipeline and the lowering as well.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from hyperoffload.ir.upstream import mlir_tools_dir
from hyperoffload.tools.hyperoffload_opt import main as hyperoffload_opt

CORPUS = Path(__file__).resolve().parents[2] / "upstream-corpus"
INVALID = sorted(CORPUS.glob("*/invalid.mlir"))
SPLIT = re.compile(r"^// -----[ \t]*(?:\n|$)", re.MULTILINE)


@dataclass(frozen=True)
class Chunk:
    first_line: int
    last_line: int


def _chunks(text: str) -> list[Chunk]:
    """The chunks of `text` as `--split-input-file` cuts them, with their lines."""
    chunks: list[Chunk] = []
    start, line = 0, 1
    for marker in [*SPLIT.finditer(text), None]:
        end = len(text) if marker is None else marker.start()
        body = text[start:end]
        last = line + body.count("\n")
        chunks.append(Chunk(line, last))
        if marker is not None:
            line = last + text[marker.start() : marker.end()].count("\n")
            start = marker.end()
    return chunks


def _error_lines(stderr: str, path: Path) -> list[int]:
    """
    The lines of `path` that `file:line:col: error:` diagnostics point at
    (not `mlir-opt`'s remarks on an `expected-error` it did not see).
    """
    located = re.compile(
        rf"^{re.escape(str(path))}:(\d+):\d+: error: (?!expected error \")",
        re.MULTILINE,
    )
    return [int(match[1]) for match in located.finditer(stderr)]


def _in(chunk: Chunk, lines: list[int]) -> bool:
    return any(chunk.first_line <= line <= chunk.last_line for line in lines)


def test_the_corpus_holds_the_dialects_we_read() -> None:
    dialects = {path.parent.name for path in INVALID}
    assert {"Tensor", "SCF", "Func", "ControlFlow", "Bufferization"} <= dialects


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.parent.name)
def test_every_chunk_upstream_rejects_we_reject_where_it_is(path: Path) -> None:
    chunks = _chunks(path.read_text())
    upstream = subprocess.run(
        [str(mlir_tools_dir() / "mlir-opt"), "--split-input-file", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    upstream_errors = _error_lines(upstream.stderr, path)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        hyperoffload_opt([str(path), "--split-input-file"])
    ours = _error_lines(err.getvalue(), path)
    printed = SPLIT.split(out.getvalue())
    rejected = [c for c in chunks if _in(c, upstream_errors)]
    assert rejected, "upstream rejects none of the file's chunks"
    false_accepts = [c.first_line for c in rejected if not _in(c, ours)]
    assert false_accepts == [], f"{path.name}: accepted chunks upstream rejects"
    unreported = [
        c.first_line
        for index, c in enumerate(chunks)
        if not _in(c, ours) and not (index < len(printed) and printed[index].strip())
    ]
    assert unreported == []
    assert "Traceback" not in err.getvalue()
    assert "internal error" not in err.getvalue()
