"""
`hyperoffload-bench`: zoo workloads x memory policies x hardware presets,
with the seeds' published figures beside ours.

```
hyperoffload-bench --suite default -o docs/benchmarks --jobs 2
hyperoffload-bench --suite quick --only tiny-llama-train -o /tmp/bench
hyperoffload-bench --only gpt3-175b-layer-train -o docs/benchmarks --merge
```
"""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from hyperoffload.benchmark.suites import SUITES
from hyperoffload.ir.diagnostics import Severity, emit
from hyperoffload.tools.command_line import run_reporting_errors


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hyperoffload-bench",
        description=(
            "Export zoo programs, plan them with hyperoffload-pipeline and simulate "
            "them beside none, reactive-lru, runtime-prefetch, distance and "
            "activation-pass; write "
            "results.json, results.md and plots."
        ),
    )
    parser.add_argument(
        "--suite", default="default", help=f"one of: {', '.join(SUITES)}"
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="SCENARIO",
        help="run only this scenario (repeatable)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("bench-results"),
        help="results folder (default: %(default)s)",
    )
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=Path("build/bench"),
        help="cache of exported programs (default: %(default)s); delete it for a cold run",
    )
    parser.add_argument(
        "--jobs", type=int, default=2, help="worker processes (default: %(default)s)"
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="put the scenarios run in place of their earlier results in the "
        "output folder's results.json, keep the others, write results.md from all",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the suite's scenarios and exit"
    )
    return parser


def _run(argv: Sequence[str] | None) -> int:
    options = _arguments().parse_args(argv)
    from hyperoffload.benchmark.suite import run_suite, select

    scenarios = select(options.suite, options.only)
    if options.list:
        for scenario in scenarios:
            print(f"{scenario.name}: {scenario.title}")
        return 0
    if options.jobs < 1:
        raise ValueError("--jobs must be at least 1")
    results = run_suite(
        options.suite,
        options.output,
        options.work_dir,
        options.jobs,
        options.only,
        options.merge,
    )
    print((options.output / "results.md").read_text())
    failed = [s["name"] for s in results["scenarios"] if "error" in s]
    if failed:
        message = f"scenarios failed: {', '.join(failed)}"
        emit("hyperoffload-bench", Severity.ERROR, message)
        return 1
    return 0


def main(args: Sequence[str] | None = None) -> int:
    return run_reporting_errors("hyperoffload-bench", lambda: _run(args))


if __name__ == "__main__":
    sys.exit(main())
