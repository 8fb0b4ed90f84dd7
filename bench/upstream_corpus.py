"""
Upstream MLIR's own linalg and tensor tests as a differential test of
`hyperoffload-opt` against `mlir-opt`.

    .venv/bin/python bench/upstream_corpus.py [--corpus test/upstream-corpus] [--json out.json]

Each vendored test file (`test/upstream-corpus`, from llvm/llvm-project;
see its README) is split on `// -----` as `--split-input-file` splits it,
and each chunk goes

1. through upstream `mlir-opt` (parse and verify, generic print): does
   upstream accept it?
2. through `hyperoffload-opt` (in this process, `main([...])`): parse;
   `hyperoffload-pipeline{hbm-capacity=1MB}`; that pipeline and
   `convert-hyperoffload-to-linalg` with the generic print piped back into
   `mlir-opt`, which must accept the lowered program. A program one of whose
   ops alone needs more than 1 MB gets a located error saying so; it is
   then planned at 1 TB (the verdict notes it).

Each chunk is written alone to a file whose lines are the original file's
(the chunk preceded by blank lines), so every diagnostic carries the line
it has in the vendored file. A chunk is

- `agree-accept`: upstream accepts it, and so do we at every stage;
- `agree-reject`: upstream rejects it, and so do we, with a diagnostic
  located in the chunk (`file:line:col: error: ...`);
- `unsupported`: upstream accepts it; we stop at some stage with a located
  diagnostic that says what is not supported and why;
- `disagree`: anything else (we accept what upstream rejects, we reject
  what upstream accepts without saying it is unsupported, a diagnostic
  with no location, a lowered program upstream rejects).

The whole file then goes through `hyperoffload-opt --split-input-file`
once: every chunk must be reported (its output, or a located error within
its lines). The agreement rate is the share of chunks that do not
disagree. Exit status 1 when a chunk disagrees or goes unreported.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hyperoffload.ir.upstream import mlir_tools_dir
from hyperoffload.support.outputs import Outputs
from hyperoffload.support.strict_json import strict_dumps
from hyperoffload.tools.hyperoffload_opt import main as hyperoffload_opt

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "test" / "upstream-corpus"
CAPACITY = "1MB"
ROOMY = "1TB"
"""A target a program larger than `CAPACITY` is planned at instead."""
INFEASIBLE = "no plan meets the HBM target"
SPLIT = re.compile(r"^// -----[ \t]*(?:\n|$)", re.MULTILINE)
LOCATED = re.compile(
    r"^(?P<file>[^\n]+?):(?P<line>\d+):(?P<col>\d+): error: (?P<what>.*)$"
)
OUTCOMES = ("agree-accept", "agree-reject", "unsupported", "disagree")


@dataclass
class Chunk:
    path: Path
    """The vendored file, relative to the corpus."""
    index: int
    first_line: int
    """Line of the file the chunk starts on (1-based)."""
    last_line: int
    text: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.first_line}"


@dataclass
class Run:
    ok: bool
    stderr: str = ""
    output: str = ""


@dataclass
class Verdict:
    chunk: str
    outcome: str
    upstream: str
    """`accept`, or upstream's first error line."""
    stage: str = ""
    """Our stage that stopped (`parse`, `pipeline`, `lowering`, `lowered-upstream`)."""
    message: str = ""
    reported: bool = True
    """Reported by the `--split-input-file` run of the whole file."""


@dataclass
class FileSummary:
    path: str
    counts: Counter[str] = field(default_factory=Counter[str])
    unreported: int = 0


def split_chunks(path: Path, corpus: Path) -> list[Chunk]:
    """The chunks of `path` as `--split-input-file` cuts them, with their lines."""
    text = path.read_text()
    chunks: list[Chunk] = []
    start, line = 0, 1
    pieces = [*SPLIT.finditer(text), None]
    for index, marker in enumerate(pieces):
        end = len(text) if marker is None else marker.start()
        body = text[start:end]
        last = line + body.count("\n")
        chunks.append(Chunk(path.relative_to(corpus), index, line, last, body))
        if marker is not None:
            line = last + text[marker.start() : marker.end()].count("\n")
            start = marker.end()
    return chunks


def mlir_opt(text: str) -> Run:
    """Upstream `mlir-opt` on `text` (parse, verify, generic print)."""
    done = subprocess.run(
        [str(mlir_tools_dir() / "mlir-opt"), "--mlir-print-op-generic", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    return Run(done.returncode == 0, done.stderr, done.stdout)


def ours(args: Sequence[str]) -> Run:
    """`hyperoffload-opt args` in this process, stdout and stderr captured."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        status = hyperoffload_opt(list(args))
    return Run(status == 0, err.getvalue(), out.getvalue())


def first_error(stderr: str) -> str:
    """The first line of `stderr` that says `error` (else its first line)."""
    for line in stderr.splitlines():
        if "error" in line:
            return line.strip()
    lines = [line for line in stderr.splitlines() if line.strip()]
    return lines[0].strip() if lines else "(no message)"


def located_errors(stderr: str, chunk: Chunk) -> list[str]:
    """The `file:line:col: error:` lines of `stderr` that point into `chunk`."""
    found: list[str] = []
    for line in stderr.splitlines():
        match = LOCATED.match(line)
        if match and chunk.first_line <= int(match["line"]) <= chunk.last_line:
            found.append(line)
    return found


def _pipelines(capacity: str) -> tuple[str, str]:
    """The pipeline and the pipeline with the lowering, at `capacity`."""
    pipeline = f"hyperoffload-pipeline{{hbm-capacity={capacity}}}"
    return pipeline, f"{pipeline},convert-hyperoffload-to-linalg"


def _stages(source: Path, capacity: str) -> list[tuple[str, list[str]]]:
    pipeline, lowering = _pipelines(capacity)
    return [
        ("parse", [str(source)]),
        ("pipeline", [str(source), "-p", pipeline]),
        ("lowering", [str(source), "-p", lowering, "--print-op-generic"]),
    ]


def judge(chunk: Chunk, work: Path, capacity: str = CAPACITY) -> Verdict:
    upstream = mlir_opt(chunk.text)
    said = "accept" if upstream.ok else first_error(upstream.stderr)
    source = work / chunk.path
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text("\n" * (chunk.first_line - 1) + chunk.text)
    stages = _stages(source, capacity)
    note = ""
    lowered_text = ""
    while stages:
        stage, args = stages.pop(0)
        run = ours(args)
        if run.ok:
            lowered_text = run.output
            continue
        errors = located_errors(run.stderr.replace(str(work) + "/", ""), chunk)
        message = errors[0] if errors else first_error(run.stderr)
        if errors and INFEASIBLE in message and not note:
            # The program is larger than the target: plan it at one it fits.
            note = f" (planned at {ROOMY}: {message})"
            stages = _stages(source, ROOMY)[1:]
            continue
        if not upstream.ok and stage == "parse" and errors:
            return Verdict(chunk.where, "agree-reject", said, stage, message)
        if upstream.ok and errors and "not supported" in message:
            return Verdict(chunk.where, "unsupported", said, stage, message)
        why = "" if errors else " (not located in the chunk)"
        return Verdict(chunk.where, "disagree", said, stage, message + why)
    if not upstream.ok:
        return Verdict(chunk.where, "disagree", said, "parse", "accepted by us")
    lowered = mlir_opt(lowered_text)
    if not lowered.ok:
        message = first_error(lowered.stderr)
        return Verdict(chunk.where, "disagree", said, "lowered-upstream", message)
    return Verdict(chunk.where, "agree-accept", said, "", note.strip())


def unreported(path: Path, chunks: list[Chunk]) -> list[int]:
    """Chunks the `--split-input-file` run of the whole file says nothing about."""
    run = ours([str(path), "--split-input-file"])
    outputs = SPLIT.split(run.output) if run.output else []
    missing: list[int] = []
    for chunk in chunks:
        printed = chunk.index < len(outputs) and outputs[chunk.index].strip()
        if not printed and not located_errors(run.stderr, chunk):
            missing.append(chunk.index)
    return missing


def run_corpus(
    corpus: Path,
    only: str | None = None,
    verbose: bool = False,
    capacity: str = CAPACITY,
) -> tuple[list[Verdict], list[FileSummary]]:
    verdicts: list[Verdict] = []
    summaries: list[FileSummary] = []
    files = sorted(corpus.rglob("*.mlir"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for path in files:
            if only and only not in str(path):
                continue
            chunks = split_chunks(path, corpus)
            summary = FileSummary(str(path.relative_to(corpus)))
            for chunk in chunks:
                verdict = judge(chunk, work, capacity)
                verdicts.append(verdict)
                summary.counts[verdict.outcome] += 1
                if verbose:
                    print(f"{verdict.outcome:13} {verdict.chunk}", file=sys.stderr)
            for index in unreported(path, chunks):
                summary.unreported += 1
                where = chunks[index].where
                for verdict in verdicts:
                    if verdict.chunk == where:
                        verdict.reported = False
            summaries.append(summary)
    return verdicts, summaries


def agreement(verdicts: Sequence[Verdict]) -> float:
    agreeing = sum(v.outcome != "disagree" for v in verdicts)
    return agreeing / len(verdicts) if verdicts else 1.0


def table(verdicts: Sequence[Verdict], summaries: Sequence[FileSummary]) -> str:
    header = ["file", "chunks", *OUTCOMES, "unreported"]
    rows: list[list[str]] = []
    total: Counter[str] = Counter()
    for summary in summaries:
        chunks = sum(summary.counts.values())
        total.update(summary.counts)
        total["unreported"] += summary.unreported
        rows.append(
            [
                summary.path,
                str(chunks),
                *(str(summary.counts[o]) for o in OUTCOMES),
                str(summary.unreported),
            ]
        )
    rows.append(
        [
            "total",
            str(len(verdicts)),
            *(str(total[o]) for o in OUTCOMES),
            str(total["unreported"]),
        ]
    )
    lines = [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(["---"] + ["---:"] * (len(header) - 1)) + " |",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines.append("")
    lines.append(
        f"agreement: {agreement(verdicts):.1%} "
        f"({sum(v.outcome != 'disagree' for v in verdicts)} of {len(verdicts)} chunks)"
    )
    for verdict in verdicts:
        if verdict.outcome in ("disagree", "unsupported") or not verdict.reported:
            note = "" if verdict.reported else " [not reported by --split-input-file]"
            lines.append(
                f"  {verdict.outcome}: {verdict.chunk} ({verdict.stage}): "
                f"{verdict.message}{note}"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").strip().splitlines()[0]
    )
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--only", help="only the files whose path contains this")
    parser.add_argument("--json", type=Path, help="write every verdict here")
    parser.add_argument("--hbm-capacity", default=CAPACITY, help="the target")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    outputs = Outputs({"--json": args.json})  # checked before the run
    corpus: Path = args.corpus.resolve()
    verdicts, summaries = run_corpus(corpus, args.only, args.verbose, args.hbm_capacity)
    print(table(verdicts, summaries))
    if args.json is not None:
        outputs.put(
            args.json,
            strict_dumps(
                {
                    "agreement": agreement(verdicts),
                    "verdicts": [asdict(v) for v in verdicts],
                },
                indent=1,
            ),
        )
        outputs.write()
    failed = any(v.outcome == "disagree" or not v.reported for v in verdicts)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
