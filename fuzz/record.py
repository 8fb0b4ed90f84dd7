"""
Write a fuzzing campaign's counts into docs/fuzzing.md (between its
markers), from the `summary.json` files the fuzzers wrote.

```
python -m fuzz.record --seed 1            # build/fuzz/{mutation,differential}-seed1
```

Per fuzzer: the cases, tracebacks (an internal error, an exception escaping
a tool or a pass, a crash), outputs with `internal error`, unlocated
diagnostics, cross-tool residency disagreements, and every other failure by
outcome, with the signatures of what failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hyperoffload.support.outputs import write_output

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "fuzzing.md"
BEGIN = "<!-- fuzz.record: begin -->"
END = "<!-- fuzz.record: end -->"
DISAGREE = "the tools disagree"


def row(name: str, summary: dict[str, Any]) -> str:
    """One table row of a fuzzer's summary."""
    counts: dict[str, int] = summary["counts"]
    failures: list[dict[str, Any]] = summary["failures"]
    disagree = sum(f["count"] for f in failures if DISAGREE in f["signature"])
    counted = {"ok", "diagnosed", "traceback", "crash", "unlocated"}
    others = {o: c for o, c in counts.items() if o not in counted}
    if disagree:
        others["invariant"] = others.get("invariant", 0) - disagree
    other = ", ".join(f"{c} {o}" for o, c in sorted(others.items()) if c) or "0"
    run = f"{sum(counts.values()):,}"
    if stopped := summary.get("stopped"):
        run = f"{stopped[0]:,} of {stopped[1]:,} (stopped)"
    cells = [
        name,
        run,
        f"{counts.get('ok', 0):,} ok, {counts.get('diagnosed', 0):,} diagnosed",
        str(counts.get("traceback", 0) + counts.get("crash", 0)),
        str(summary.get("marks", {}).get("internal error", 0)),
        str(counts.get("unlocated", 0)),
        str(disagree),
        other,
        f"{summary['seconds']:,.0f} s",
    ]
    return "| " + " | ".join(cells) + " |"


def failures(name: str, summary: dict[str, Any]) -> list[str]:
    return [
        f"- {name}: [{f['outcome']}] x{f['count']} {f['signature'][:140]}"
        for f in summary["failures"]
    ]


def render(summaries: Sequence[tuple[str, dict[str, Any]]]) -> str:
    lines = [
        BEGIN,
        "",
        "| fuzzer | cases | good | tracebacks | `internal error` | unlocated | "
        "cross-tool disagreements | other failures | time |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | --- | ---: |",
        *(row(n, s) for n, s in summaries),
        "",
    ]
    listed = [line for n, s in summaries for line in failures(n, s)]
    if listed:
        lines += ["What failed, by signature:", "", *listed, ""]
    lines.append(END)
    return "\n".join(lines)


def write(page: Path, text: str) -> None:
    doc = page.read_text()
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"{page}: no {BEGIN} ... {END} markers")
    begin, end = doc.index(BEGIN), doc.index(END) + len(END)
    write_output(page, doc[:begin] + text + doc[end:])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m fuzz.record", description=(__doc__ or "").split("\n\n")[1]
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "fuzz")
    parser.add_argument("--page", type=Path, default=PAGE)
    options = parser.parse_args(argv)
    summaries: list[tuple[str, dict[str, Any]]] = []
    for name, folder in (
        ("mutation (`fuzz.run`)", "mutation"),
        ("differential (`fuzz.differential`)", "differential"),
    ):
        path = options.out / f"{folder}-seed{options.seed}" / "summary.json"
        if path.is_file():
            summaries.append((name, json.loads(path.read_text())))
    if not summaries:
        print(f"no summary.json under {options.out}", file=sys.stderr)
        return 1
    text = render(summaries)
    write(options.page, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
