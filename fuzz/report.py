"""
What the fuzzers share: outcomes, signatures of failures (to group a bug's
many cases), reproducer folders and the summary printed at the end.

A reproducer is a folder `OUT/<outcome>/<signature>-<case>/` with the input
files, `cmd.sh` (the command that reproduces it, run from that folder),
`stderr.txt`, `traceback.txt` where there is one and `case.json` (how the
case was made). At most `keep` reproducers are saved per signature.
"""

from __future__ import annotations

import re
import shlex
import sys
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hyperoffload.support.outputs import write_output
from hyperoffload.support.strict_json import strict_dumps

GOOD = ("ok", "diagnosed")
"""Outcomes that are not bugs: the tool succeeded, or said what is wrong."""

BAD = (
    "traceback", "crash", "hang", "undiagnosed", "unlocated", "mismatch", "invariant",
    "execution-error",
)  # fmt: skip


MARKS = ("internal error", "Traceback (most recent call last)")
"""Texts counted in every case's output (`Tally.marks`): none should appear."""


def innermost_frame(error: BaseException) -> str:
    """`file:line (function)` of the deepest frame in our code (else the deepest)."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if "hyperoffload" in f.filename or "/fuzz/" in f.filename]
    frame = (ours or frames or [None])[-1]
    if frame is None:
        return "?"
    return f"{Path(frame.filename).name}:{frame.lineno} ({frame.name})"


def error_signature(error: BaseException) -> str:
    return f"{type(error).__name__} at {innermost_frame(error)}"


def slug(text: str, length: int = 60) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:length] or "case"


@dataclass
class Tally:
    """Counts by outcome (and by group), and the failures by signature."""

    out: Path
    keep: int = 3
    counts: Counter[str] = field(default_factory=Counter[str])
    by_group: Counter[tuple[str, str]] = field(default_factory=Counter[tuple[str, str]])
    signatures: Counter[tuple[str, str]] = field(
        default_factory=Counter[tuple[str, str]]
    )
    saved: dict[tuple[str, str], list[str]] = field(
        default_factory=dict[tuple[str, str], list[str]]
    )
    seconds: dict[str, float] = field(default_factory=dict[str, float])
    """Time spent in each group's cases (in the workers)."""
    marks: Counter[str] = field(default_factory=Counter[str])
    """Cases by what their output shows, whatever their outcome (`internal error`)."""

    def add(
        self,
        group: str,
        outcome: str,
        signature: str,
        save: dict[str, str] | None = None,
        case_name: str = "",
        seconds: float = 0.0,
        output: str = "",
    ) -> None:
        """Count a case; save its files (name -> content) if it is a new enough failure."""
        self.seconds[group] = self.seconds.get(group, 0.0) + seconds
        for mark in MARKS:
            self.marks[mark] += mark in output
        self.counts[outcome] += 1
        self.by_group[group, outcome] += 1
        if outcome in GOOD:
            return
        key = (outcome, signature)
        self.signatures[key] += 1
        paths = self.saved.setdefault(key, [])
        if save is None or len(paths) >= self.keep:
            return
        folder = self.out / outcome / f"{slug(signature)}-{case_name}"
        folder.mkdir(parents=True, exist_ok=True)
        for name, content in save.items():
            (folder / name).write_text(content)
        if "cmd.sh" in save:
            (folder / "cmd.sh").chmod(0o755)
        paths.append(str(folder))

    def bad(self) -> int:
        return sum(self.counts[o] for o in BAD)

    def print_summary(self, title: str, seconds: float, file: Any = None) -> None:
        file = file or sys.stdout
        total = sum(self.counts.values())
        print(f"\n== {title}: {total} cases in {seconds:.0f} s", file=file)
        for outcome, count in sorted(self.counts.items(), key=lambda kv: -kv[1]):
            print(f"  {outcome:12} {count}", file=file)
        marks = ", ".join(f"{self.marks[m]} with {m!r}" for m in MARKS)
        print(f"  output: {marks}", file=file)
        groups = sorted({g for g, _ in self.by_group})
        if len(groups) > 1:
            print("  by group:", file=file)
            for group in groups:
                parts = ", ".join(
                    f"{o} {c}"
                    for (g, o), c in sorted(self.by_group.items())
                    if g == group
                )
                spent = self.seconds.get(group, 0.0)
                spent = f" ({spent:.0f} s)" if spent else ""
                print(f"    {group:22} {parts}{spent}", file=file)
        if self.signatures:
            print("  failures by signature:", file=file)
            for (outcome, signature), count in self.signatures.most_common():
                where = self.saved.get((outcome, signature), [])
                print(f"    [{outcome}] x{count} {signature}", file=file)
                for path in where:
                    print(f"        {path}", file=file)

    def write_json(
        self, path: Path, seconds: float, stopped: tuple[int, int] | None = None
    ) -> None:
        """`stopped`: (cases run, cases asked for) of a run stopped before its end."""
        path.parent.mkdir(parents=True, exist_ok=True)
        write_output(
            path,
            strict_dumps(
                {
                    "seconds": round(seconds, 1),
                    **({"stopped": list(stopped)} if stopped else {}),
                    "counts": dict(self.counts),
                    "marks": {m: self.marks[m] for m in MARKS},
                    "by_group": {f"{g}/{o}": c for (g, o), c in self.by_group.items()},
                    "failures": [
                        {
                            "outcome": o,
                            "signature": s,
                            "count": c,
                            "reproducers": self.saved.get((o, s), []),
                        }
                        for (o, s), c in self.signatures.most_common()
                    ],
                },
                indent=1,
            ),
        )


def command_script(tool: str, args: list[str]) -> str:
    """A shell script running `tool args` from the reproducer's folder."""
    return (
        "#!/bin/sh\n"
        '# Run from this folder with the project\'s tools on PATH (source .venv/bin/activate).\ncd "$(dirname "$0")"\n'
        f"{shlex.join([tool, *args])}\n"
    )


def preload() -> None:
    """
    Import, in the driver, every module the cases may import lazily, so that
    the forked workers all run the code as it was when the run started (a
    file edited during a run must not change the code half of the cases run).
    """
    import importlib

    from hyperoffload.passes import get_all_passes

    for factory in get_all_passes().values():
        factory()
    for name in (
        "hyperoffload.tools.hyperoffload_opt",
        "hyperoffload.tools.hyperoffload_sim",
        "hyperoffload.tools.hyperoffload_check",
        "hyperoffload.targets",
        "hyperoffload.analysis.extract",
        "hyperoffload.policies.peers",
        "hyperoffload.sim.trace",
        "hyperoffload.sim.plot",
        "hyperoffload.evaluators.numeric",
        "hyperoffload.evaluators.execution",
        "hyperoffload.ir.upstream",
        "xdsl.xdsl_opt_main",
    ):
        importlib.import_module(name)
