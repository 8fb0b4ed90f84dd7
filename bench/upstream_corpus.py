"""
Upstream MLIR's own tests (its `invalid.mlir` of the dialects we read, and
linalg and tensor tests) as a differential test of `hyperoffload-opt`
against `mlir-opt`.

    .venv/bin/python bench/upstream_corpus.py [--corpus test/upstream-corpus] [--json out.json]
    .venv/bin/python bench/upstream_corpus.py --write-docs  # docs/fuzzing.md, docs/benchmarks.md
    .venv/bin/python bench/upstream_corpus.py --recorded out.json [--write-docs]  # a run --json wrote

Each vendored test file (`test/upstream-corpus`, from llvm/llvm-project;
see its README) is split on `// -----` as `--split-input-file` splits it,
and each chunk goes

1. through upstream `mlir-opt` (parse and verify; the whole file at once,
   `--split-input-file`, with the flags of its `RUN:` line; where
   `mlir-opt` aborts, an assertion of its build, the chunk that aborts is
   found and the rest of the file run again): does upstream accept it?
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

A chunk is held to what upstream MLIR does with it. Where that is not what
the file says, the chunk is `marked` and counted (the versions differ, see
the README): it carries an `expected-error` that the `mlir-opt` we ship
does not report (it accepts the chunk), or `mlir-opt` aborts on it (it is
then held as a rejection: we must reject it with a located error), or it
carries none and `mlir-opt` rejects it (a dialect or pass its build lacks).

The whole file then goes through `hyperoffload-opt --split-input-file`
once: every chunk must be reported (its output, or a located error within
its lines). The agreement rate is the share of chunks that do not
disagree. Exit status 1 when a chunk disagrees or goes unreported.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import subprocess
import sys
import tempfile
import textwrap
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hyperoffload.ir.upstream import mlir_tools_dir
from hyperoffload.support.markers import write_between
from hyperoffload.support.outputs import Outputs
from hyperoffload.support.strict_json import strict_dumps
from hyperoffload.tools.hyperoffload_opt import main as hyperoffload_opt

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "test" / "upstream-corpus"
DOCS = {
    "fuzzing": ROOT / "docs" / "fuzzing.md",
    "benchmarks": ROOT / "docs" / "benchmarks.md",
}
"""The pages `--write-docs` writes: the summary, and the table by file."""
BEGIN = "<!-- bench/upstream_corpus.py: begin -->"
END = "<!-- bench/upstream_corpus.py: end -->"
CAPACITY = "1MB"
ROOMY = "1TB"
"""A target a program larger than `CAPACITY` is planned at instead."""
INFEASIBLE = "no plan meets the HBM target"
SPLIT = re.compile(r"^// -----[ \t]*(?:\n|$)", re.MULTILINE)
LOCATED = re.compile(
    r"^(?P<file>[^\n]+?):(?P<line>\d+):(?P<col>\d+): error: (?P<what>.*)$"
)
OUTCOMES = ("agree-accept", "agree-reject", "unsupported", "disagree")
RUN_FLAGS = ("-allow-unregistered-dialect",)
"""Flags of a file's `RUN:` line that `mlir-opt` is given too."""
ABORTED = ("PLEASE submit a bug report", "Stack dump")
STDIN_ERROR = re.compile(
    r'^<stdin>:(\d+):\d+: error: (?!expected error ")(.*)$', re.MULTILINE
)
"""An error of `mlir-opt` on its input (not its remark on an `expected-error`
it did not see)."""


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

    @property
    def expects_error(self) -> bool:
        """The file says upstream rejects it (an `expected-error` line)."""
        return "expected-error" in self.text


@dataclass(frozen=True)
class Upstream:
    """What upstream `mlir-opt` does with a chunk."""

    verdict: str
    """`accept`, `reject` or `abort` (an assertion of its build)."""
    message: str = ""
    """Its first error (or what the abort printed first)."""

    @property
    def accepts(self) -> bool:
        return self.verdict == "accept"

    def marked(self, chunk: Chunk) -> str:
        """Why upstream does not do what the file says with `chunk` ("" if it does)."""
        if self.verdict == "abort":
            return "mlir-opt aborts on it"
        if chunk.expects_error and self.accepts:
            return "mlir-opt accepts it (the file expects an error)"
        if not chunk.expects_error and not self.accepts:
            return "mlir-opt rejects it (the file expects none)"
        return ""


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
    marked: str = ""
    """Why upstream does not do what the file says with the chunk (`Upstream.marked`)."""


@dataclass
class FileSummary:
    path: str
    counts: Counter[str] = field(default_factory=Counter[str])
    unreported: int = 0
    marked: int = 0


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


def run_flags(text: str) -> list[str]:
    """The flags of `RUN_FLAGS` that the file's first `RUN:` line gives `mlir-opt`."""
    for line in text.splitlines():
        if "RUN:" in line:
            return [flag for flag in RUN_FLAGS if flag in line.replace("--", "-")]
    return []


def _keeping(chunks: Sequence[Chunk], first: int, last: int | None) -> str:
    """
    The file again, the chunks but those from `first` to `last` (or the end)
    emptied, their lines kept.
    """
    end = len(chunks) - 1 if last is None else last
    bodies = [
        chunk.text if first <= i <= end else "\n" * chunk.text.count("\n")
        for i, chunk in enumerate(chunks)
    ]
    return "// -----\n".join(bodies)


def _mlir_opt_split(text: str, flags: Sequence[str]) -> tuple[bool, dict[int, str]]:
    """
    `mlir-opt --split-input-file` on `text`: whether it aborted, and its
    first error on each line that has one.
    """
    done = subprocess.run(
        [str(mlir_tools_dir() / "mlir-opt"), "--split-input-file", *flags, "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    errors: dict[int, str] = {}
    for match in STDIN_ERROR.finditer(done.stderr):
        errors.setdefault(int(match[1]), match[0].removeprefix("<stdin>"))
    aborted = done.returncode < 0 or any(said in done.stderr for said in ABORTED)
    return aborted, errors


def upstream_verdicts(path: Path, chunks: Sequence[Chunk]) -> list[Upstream]:
    """
    What upstream `mlir-opt` does with each chunk of `path`: the whole file
    in one run; where it aborts, the chunks after the last one it reported
    go one at a time until the one that aborts, and the rest in one run again.
    """
    flags = run_flags(path.read_text())
    found: list[Upstream | None] = [None] * len(chunks)

    def record(index: int, errors: dict[int, str]) -> None:
        chunk = chunks[index]
        lines = [n for n in errors if chunk.first_line <= n <= chunk.last_line]
        found[index] = (
            Upstream("reject", errors[min(lines)]) if lines else Upstream("accept")
        )

    start = 0
    while start < len(chunks):
        aborted, errors = _mlir_opt_split(_keeping(chunks, start, None), flags)
        if not aborted:
            for index in range(start, len(chunks)):
                record(index, errors)
            break
        reported = [
            i
            for i in range(start, len(chunks))
            if any(chunks[i].first_line <= n <= chunks[i].last_line for n in errors)
        ]
        resume = reported[-1] if reported else start
        for index in range(start, resume):
            record(index, errors)
        start = len(chunks)
        for index in range(resume, len(chunks)):
            alone, errors = _mlir_opt_split(_keeping(chunks, index, index), flags)
            if alone:
                found[index] = Upstream("abort", "mlir-opt aborted")
                start = index + 1
                break
            record(index, errors)
    return [verdict or Upstream("abort", "mlir-opt aborted") for verdict in found]


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


def judge(
    chunk: Chunk, upstream: Upstream, work: Path, capacity: str = CAPACITY
) -> Verdict:
    said = "accept" if upstream.accepts else upstream.message
    verdict = _judge(chunk, upstream, said, work, capacity)
    verdict.marked = upstream.marked(chunk)
    return verdict


def _judge(
    chunk: Chunk, upstream: Upstream, said: str, work: Path, capacity: str
) -> Verdict:
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
        if not upstream.accepts and stage == "parse" and errors:
            return Verdict(chunk.where, "agree-reject", said, stage, message)
        if upstream.accepts and errors and "not supported" in message:
            return Verdict(chunk.where, "unsupported", said, stage, message)
        why = "" if errors else " (not located in the chunk)"
        return Verdict(chunk.where, "disagree", said, stage, message + why)
    if not upstream.accepts:
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
            upstream = upstream_verdicts(path, chunks)
            for chunk, said in zip(chunks, upstream, strict=True):
                verdict = judge(chunk, said, work, capacity)
                verdicts.append(verdict)
                summary.counts[verdict.outcome] += 1
                summary.marked += bool(verdict.marked)
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


def false_accepts(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """Chunks upstream rejects that we read with no error located in them."""
    return [
        v
        for v in verdicts
        if v.upstream != "accept" and v.outcome == "disagree" and v.stage == "parse"
    ]


def agreement(verdicts: Sequence[Verdict]) -> float:
    agreeing = sum(v.outcome != "disagree" for v in verdicts)
    return agreeing / len(verdicts) if verdicts else 1.0


def table(verdicts: Sequence[Verdict], summaries: Sequence[FileSummary]) -> str:
    header = ["file", "chunks", *OUTCOMES, "unreported", "marked"]
    rows: list[list[str]] = []
    total: Counter[str] = Counter()
    for summary in summaries:
        chunks = sum(summary.counts.values())
        total.update(summary.counts)
        total["unreported"] += summary.unreported
        total["marked"] += summary.marked
        rows.append(
            [
                summary.path,
                str(chunks),
                *(str(summary.counts[o]) for o in OUTCOMES),
                str(summary.unreported),
                str(summary.marked),
            ]
        )
    rows.append(
        [
            "total",
            str(len(verdicts)),
            *(str(total[o]) for o in OUTCOMES),
            str(total["unreported"]),
            str(total["marked"]),
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
    rejected = [v for v in verdicts if v.upstream != "accept"]
    lines.append(
        f"false accepts: {len(false_accepts(verdicts))} of the {len(rejected)} "
        "chunks upstream rejects"
    )
    marked = [v for v in verdicts if v.marked]
    reasons = Counter(v.marked for v in marked)
    lines.append(
        f"marked: {len(marked)}"
        + "".join(f"; {count} {reason}" for reason, count in sorted(reasons.items()))
    )
    for verdict in verdicts:
        if verdict.marked:
            lines.append(f"  marked: {verdict.chunk}: {verdict.marked}")
    for verdict in verdicts:
        if verdict.outcome in ("disagree", "unsupported") or not verdict.reported:
            note = "" if verdict.reported else " [not reported by --split-input-file]"
            lines.append(
                f"  {verdict.outcome}: {verdict.chunk} ({verdict.stage}): "
                f"{verdict.message}{note}"
            )
    return "\n".join(lines)


def summary(verdicts: Sequence[Verdict]) -> str:
    """The run in a paragraph (markdown): what agrees, the false accepts, the marked."""
    counts = Counter(v.outcome for v in verdicts)
    rejected = [v for v in verdicts if v.upstream != "accept"]
    invalid = [v for v in verdicts if "/invalid.mlir:" in v.chunk]
    marked = Counter(v.marked for v in verdicts if v.marked)
    files = len({v.chunk.rsplit(":", 1)[0] for v in verdicts})
    agreeing = len(verdicts) - counts["disagree"]
    return (
        f"{len(verdicts):,} chunks of {files} files: {agreeing:,} agree "
        f"({counts['agree-accept']} both accept, {counts['agree-reject']} both "
        f'reject, {counts["unsupported"]} a located "not supported"), '
        f"{counts['disagree']} disagree, "
        f"{sum(not v.reported for v in verdicts)} unreported by "
        "`--split-input-file`. False accepts: "
        f"{len(false_accepts(verdicts))} of the {len(rejected)} chunks upstream "
        f"rejects ({len(invalid)} chunks of the `invalid.mlir` files, "
        f"{sum(v.upstream != 'accept' for v in invalid)} of them rejected by "
        f"upstream). Marked: {sum(marked.values())} ("
        + "; ".join(f"{why}: {n}" for why, n in sorted(marked.items()))
        + ")."
    )


def docs_text(
    page: str, verdicts: Sequence[Verdict], summaries: Sequence[FileSummary]
) -> str:
    """What `--write-docs` writes between the markers of `page`."""
    command = "`.venv/bin/python bench/upstream_corpus.py --write-docs`"
    said = textwrap.fill(
        f"{command}: {summary(verdicts)}", width=76, break_on_hyphens=False
    )
    if page != "fuzzing":
        rows = table(verdicts, summaries).split("\n\n", 1)[0]
        said = f"{rows}\n\n{said}"
    return f"\n{said}\n"


def recorded(path: Path) -> tuple[list[Verdict], list[FileSummary]]:
    """The verdicts and the summaries by file of a run that `--json` wrote."""
    verdicts = [Verdict(**v) for v in json.loads(path.read_text())["verdicts"]]
    summaries: dict[str, FileSummary] = {}
    for verdict in verdicts:
        name = verdict.chunk.rsplit(":", 1)[0]
        of_file = summaries.setdefault(name, FileSummary(name))
        of_file.counts[verdict.outcome] += 1
        of_file.unreported += not verdict.reported
        of_file.marked += bool(verdict.marked)
    return verdicts, list(summaries.values())


def write_docs(verdicts: Sequence[Verdict], summaries: Sequence[FileSummary]) -> None:
    """Write the run into each page of `DOCS`, between its markers."""
    for page, path in DOCS.items():
        write_between(path, docs_text(page, verdicts, summaries), BEGIN, END)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").strip().splitlines()[0]
    )
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--only", help="only the files whose path contains this")
    parser.add_argument("--json", type=Path, help="write every verdict here")
    parser.add_argument("--hbm-capacity", default=CAPACITY, help="the target")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument(
        "--recorded",
        type=Path,
        help="report (and --write-docs) the run a previous --json wrote, not a new one",
    )
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="write the run into docs/fuzzing.md and docs/benchmarks.md",
    )
    args = parser.parse_args(argv)
    whole = not args.only and args.corpus.resolve() == CORPUS
    if args.write_docs and not (whole and args.hbm_capacity == CAPACITY):
        parser.error(
            "--write-docs records a run of the whole corpus at the default target"
        )
    outputs = Outputs({"--json": args.json})  # checked before the run
    corpus: Path = args.corpus.resolve()
    if args.recorded is not None:
        verdicts, summaries = recorded(args.recorded)
    else:
        verdicts, summaries = run_corpus(
            corpus, args.only, args.verbose, args.hbm_capacity
        )
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
    if args.write_docs:
        write_docs(verdicts, summaries)
    failed = any(v.outcome == "disagree" or not v.reported for v in verdicts)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
