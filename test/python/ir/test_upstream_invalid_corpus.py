"""
Verifier parity with upstream MLIR over the whole upstream corpus
(`test/upstream-corpus`: upstream's `invalid.mlir` of the dialects we read,
and its linalg and tensor tests, vendored with their licence notice).

Each file goes once through upstream `mlir-opt --split-input-file`
(`upstream_corpus.upstream_verdicts`, which finds the chunks it aborts on)
and once through `hyperoffload-opt --split-input-file` in this process.
Every chunk upstream rejects (each `expected-error` chunk of the
`invalid.mlir` files, but for the few marked ones, where the `mlir-opt` we
ship does not do what the file says) must be rejected by us with an error
located within its lines (a false accept fails the test); every chunk
upstream accepts must be printed back, with no error in its lines. A chunk
alone goes through `main` for its exit status (a sample: the first rejected
and the first accepted chunk of each file).

All of every `invalid.mlir` is checked; of the other files, every chunk
upstream rejects and a third of the chunks it accepts (every third: a
`hyperoffload-opt` run costs most on text it accepts, which upstream then
verifies in a forked child). `bench/upstream_corpus.py` (run by `make
fuzz`) runs all of every file, through the pipeline and the lowering too.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from upstream_corpus import (
    SPLIT,
    Chunk,
    Upstream,
    split_chunks,
    upstream_verdicts,
)

from hyperoffload.tools.hyperoffload_opt import main as hyperoffload_opt

CORPUS = Path(__file__).resolve().parents[2] / "upstream-corpus"
FILES = sorted(CORPUS.rglob("*.mlir"))
INVALID = [path for path in FILES if path.name == "invalid.mlir"]
DIALECTS = {
    "Arith",
    "Bufferization",
    "ControlFlow",
    "Func",
    "Linalg",
    "MemRef",
    "SCF",
    "Tensor",
}
"""The dialects we read that upstream has an `invalid.mlir` of (math has none)."""
SAMPLE = 3
"""Of the chunks upstream accepts in a file that is not an `invalid.mlir`, every SAMPLE-th."""


@dataclass
class Ours:
    status: int
    out: str
    err: str


def _ours(args: list[str]) -> Ours:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = hyperoffload_opt(args)
    return Ours(status, out.getvalue(), err.getvalue())


@cache
def _read(path: Path) -> tuple[list[Chunk], list[Upstream]]:
    """The chunks of `path` and what upstream `mlir-opt` does with each."""
    chunks = split_chunks(path, CORPUS)
    return chunks, upstream_verdicts(path, chunks)


def _error_lines(stderr: str, path: Path) -> list[int]:
    """The lines of `path` that our `file:line:col: error:` diagnostics point at."""
    prefix = f"{path}:"
    lines: list[int] = []
    for line in stderr.splitlines():
        if line.startswith(prefix) and ": error: " in line:
            lines.append(int(line[len(prefix) :].split(":", 1)[0]))
    return lines


def _in(chunk: Chunk, lines: list[int]) -> bool:
    return any(chunk.first_line <= line <= chunk.last_line for line in lines)


def _checked(path: Path, chunks: list[Chunk], upstream: list[Upstream]) -> list[int]:
    """The chunks the test holds us to: all of an `invalid.mlir`, a sample elsewhere."""
    if path in INVALID:
        return list(range(len(chunks)))
    accepted = [i for i, said in enumerate(upstream) if said.accepts]
    return [
        i
        for i, said in enumerate(upstream)
        if not said.accepts or accepted.index(i) % SAMPLE == 0
    ]


def _file_with(chunks: list[Chunk], keep: list[int]) -> str:
    """The file again, the chunks not in `keep` emptied (their lines kept)."""
    return "// -----\n".join(
        c.text if i in keep else "\n" * c.text.count("\n") for i, c in enumerate(chunks)
    )


def test_the_corpus_holds_the_dialects_we_read() -> None:
    assert {path.parent.name for path in INVALID} >= DIALECTS


def test_few_chunks_are_marked() -> None:
    """
    The vendored files are of other LLVM versions than the `mlir-opt` we
    ship: a chunk it does not treat as its file says is marked, not held to
    the file (the harness counts them). Few may be, or the corpus tests
    little.
    """
    expected = marked = 0
    for path in INVALID:
        chunks, upstream = _read(path)
        expected += sum(c.expects_error for c in chunks)
        marked += sum(bool(u.marked(c)) for c, u in zip(chunks, upstream, strict=True))
    assert expected > 500
    assert marked < 0.05 * expected


@pytest.mark.parametrize(
    "path", FILES, ids=lambda p: str(p.relative_to(CORPUS)).removesuffix(".mlir")
)
def test_we_reject_what_upstream_rejects_and_read_what_it_accepts(
    path: Path, tmp_path: Path
) -> None:
    chunks, upstream = _read(path)
    checked = _checked(path, chunks, upstream)
    source = tmp_path / path.relative_to(CORPUS)
    source.parent.mkdir(parents=True)
    source.write_text(_file_with(chunks, checked))

    run = _ours([str(source), "--split-input-file"])
    assert "Traceback" not in run.err
    assert "internal error" not in run.err
    errors = _error_lines(run.err, source)
    printed = SPLIT.split(run.out)
    false_accepts = [
        chunks[i].first_line
        for i in checked
        if not upstream[i].accepts and not _in(chunks[i], errors)
    ]
    assert false_accepts == [], f"{path.name}: we accept chunks upstream rejects"
    false_rejects = [
        chunks[i].first_line
        for i in checked
        if upstream[i].accepts
        and (_in(chunks[i], errors) or not (i < len(printed) and printed[i].strip()))
    ]
    assert false_rejects == [], f"{path.name}: we reject chunks upstream accepts"
    assert run.status == (0 if all(upstream[i].accepts for i in checked) else 1)


@pytest.mark.parametrize(
    "path", FILES, ids=lambda p: str(p.relative_to(CORPUS)).removesuffix(".mlir")
)
def test_a_chunk_alone_exits_as_upstream_does(path: Path, tmp_path: Path) -> None:
    chunks, upstream = _read(path)
    for accepts in (False, True):
        index = next((i for i, u in enumerate(upstream) if u.accepts == accepts), None)
        if index is None:
            continue
        chunk = chunks[index]
        source = tmp_path / f"chunk{index}.mlir"
        source.write_text("\n" * (chunk.first_line - 1) + chunk.text)
        run = _ours([str(source)])
        assert run.status == (0 if accepts else 1), chunk.where
        assert _in(chunk, _error_lines(run.err, source)) != accepts, chunk.where
