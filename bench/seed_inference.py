"""
The seeds' inference claims at their own setting, one row each, into
docs/benchmarks.md (between `<!-- seed-inference:begin/end -->`), from the
results under docs/benchmarks/seeds-inference/:

- `results.json`: `hyperoffload-bench --suite seeds-inference` (LLaMA-65B:
  longest prompt, the long-prefill and short-decode costs);
- `topk-decode.json`: the 123K top-k decode and the longest cache at 64 GB
  (`hyperoffload.benchmark.seeds_inference.TopkDecode`, over the rankings
  of `bench/topk/selections.json`);
- `routed-moe.json`: the routed MoE decode rows, where present;
- the top-k accuracy on the trained model: the table `bench/topk_accuracy.py`
  writes into docs/benchmarks.md.

    .venv/bin/python bench/seed_inference.py --run-topk --run-suite --write-docs
    .venv/bin/python bench/seed_inference.py --write-docs     # the table alone
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from hyperoffload.benchmark.seeds_inference import TopkDecode
from hyperoffload.benchmark.seeds_inference_markdown import (
    ResultsError,
    claims_table,
    read_accuracy,
    replace_between,
)
from hyperoffload.support.outputs import Outputs, write_output
from hyperoffload.support.strict_json import strict_dumps

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "docs" / "benchmarks.md"
RESULTS = ROOT / "docs" / "benchmarks" / "seeds-inference"
SELECTIONS = ROOT / "bench" / "topk" / "selections.json"
WORK = ROOT / "build" / "bench"


def _read(path: Path) -> dict[str, Any] | None:
    """The JSON object in `path`, or None where there is no file."""
    if not path.exists():
        return None
    try:
        found = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ResultsError(f"{path}:{err.lineno}:{err.colno}: {err.msg}") from None
    if not isinstance(found, dict):
        raise ResultsError(f"{path}: not a JSON object")
    return cast(dict[str, Any], found)


def _ran(results: Path) -> str:
    """A line on what ran and how long it took, from the results' `wall_s`."""
    parts: list[str] = []
    for name, what in (
        ("results.json", "the suite `seeds-inference`"),
        ("topk-decode.json", "the top-k replay"),
    ):
        found = _read(results / name)
        if found is not None and isinstance(found.get("wall_s"), (int, float)):
            parts.append(f"{what} in {found['wall_s'] / 60:.0f} min")
    if not parts:
        return ""
    return f"Ran: {' and '.join(parts)} (2 shared cores).\n\n"


def main(argv: Sequence[str] | None = None, log: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(
        description="The seeds' inference claims into docs/benchmarks.md."
    )
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("-o", "--output", type=Path, default=DOCUMENT)
    parser.add_argument("--run-topk", action="store_true")
    parser.add_argument("--run-suite", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--write-docs", action="store_true")
    options = parser.parse_args(argv)
    results: Path = options.results
    if options.run_topk:
        start = time.perf_counter()
        topk = TopkDecode().run(WORK, SELECTIONS, lambda m: log(f"[topk] {m}"))
        topk["wall_s"] = time.perf_counter() - start
        results.mkdir(parents=True, exist_ok=True)
        write_output(results / "topk-decode.json", strict_dumps(topk, indent=1))
    if options.run_suite:
        from hyperoffload.benchmark.suite import run_suite

        run_suite("seeds-inference", results, WORK, options.jobs)
    document = options.output.read_text()
    try:
        table = claims_table(
            _read(results / "results.json"),
            _read(results / "topk-decode.json"),
            _read(results / "routed-moe.json"),
            read_accuracy(document),
        )
    except (ResultsError, KeyError, TypeError) as err:
        print(f"bench/seed_inference.py: error: {results}: {err}", file=sys.stderr)
        return 1
    table = _ran(results) + table
    if options.write_docs:
        outputs = Outputs({"--output": options.output})
        outputs.put(options.output, replace_between(document, table))
        outputs.write()
    log(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
