"""
Run a suite: scenarios in worker processes (longest first), progress on
stderr, results as JSON, Markdown and PNG plots in one folder. The plots
are drawn into a staging folder inside it and written with the results
once every scenario has run (`support.outputs`): a run that fails or is
interrupted leaves the folder's files as they were.

```python
results = run_suite("quick", out=Path("bench-out"), work=Path("build/bench"), jobs=1)
run_suite("default", Path("docs/benchmarks"), Path("build/bench"),
          only=["gpt3-175b-layer-train"], merge=True)
```
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from hyperoffload.benchmark.markdown import suite_markdown
from hyperoffload.benchmark.scenarios import Context
from hyperoffload.benchmark.suites import SUITES, Scenario
from hyperoffload.benchmark.workloads import BenchError
from hyperoffload.support.outputs import Outputs
from hyperoffload.support.strict_json import strict_dumps


def _run_one(
    scenario: Scenario, work: Path, out: Path, started: float
) -> dict[str, Any]:
    def log(message: str) -> None:
        elapsed = time.perf_counter() - started
        print(
            f"[bench {elapsed:6.0f} s] {scenario.name}: {message}",
            file=sys.stderr,
            flush=True,
        )

    start = time.perf_counter()
    log("start")
    try:
        result = scenario.run(Context(work, out, log))
    except BenchError as err:
        log(f"failed: {err}")
        result: dict[str, Any] = {
            "name": scenario.name,
            "kind": "failed",
            "title": scenario.title,
            "paper": scenario.paper,
            "error": str(err),
        }
    result["wall_s"] = time.perf_counter() - start
    log(f"done in {result['wall_s']:.0f} s")
    return result


def select(suite: str, only: list[str] | None = None) -> list[Scenario]:
    """The suite's scenarios, or those of them named in `only`."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite '{suite}' (known: {', '.join(SUITES)})")
    scenarios = list(SUITES[suite])
    if only:
        names = {s.name for s in scenarios}
        unknown = [n for n in only if n not in names]
        if unknown:
            raise ValueError(
                f"no scenario {', '.join(unknown)} in suite '{suite}' (known: {', '.join(sorted(names))})"
            )
        scenarios = [s for s in scenarios if s.name in only]
    return scenarios


def run_suite(
    suite: str,
    out: Path,
    work: Path,
    jobs: int = 2,
    only: list[str] | None = None,
    merge: bool = False,
) -> dict[str, Any]:
    """
    Run the scenarios, write results.json, results.md and the plots to `out`;
    with `merge`, the scenarios run replace those of the same name in the
    results.json already in `out` (the others kept, the run recorded in its
    `merged` list) and results.md is written from the whole.
    """
    scenarios = select(suite, only)
    out.mkdir(parents=True, exist_ok=True)
    if merge:  # fail before the run: the results there are another suite's
        _previous(out / "results.json", suite)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=out))
    try:
        summary = _run_staged(suite, scenarios, work, staging, jobs)
        # read once the run is over: another merge may have written meanwhile
        previous = _previous(out / "results.json", suite) if merge else None
        if previous is not None:
            summary = merge_results(previous, summary)
        outputs = Outputs()
        for drawn in sorted(staging.iterdir()):
            outputs.put(out / drawn.name, drawn.read_bytes())
        outputs.put(out / "results.json", strict_dumps(summary, indent=1))
        outputs.put(out / "results.md", suite_markdown(summary))
        outputs.write()
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return summary


def _previous(path: Path, suite: str) -> dict[str, Any] | None:
    """The results a merge goes into (None: none yet); `BenchError` if another suite's."""
    if not path.exists():
        return None
    previous = json.loads(path.read_text())
    if previous.get("suite") != suite:
        raise BenchError(
            f"{path}: holds suite '{previous.get('suite')}', not '{suite}': "
            "nothing merged"
        )
    return previous


def merge_results(previous: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """
    `previous` with the scenarios of `run` in place of those of the same
    name (new ones appended); the run's names and time in `merged`.
    """
    fresh = {s["name"]: s for s in run["scenarios"]}
    scenarios = [fresh.pop(s["name"], s) for s in previous["scenarios"]]
    merged = [
        *previous.get("merged", []),
        {
            "scenarios": [s["name"] for s in run["scenarios"]],
            "jobs": run["jobs"],
            "wall_s": run["wall_s"],
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
        },
    ]
    return previous | {"scenarios": [*scenarios, *fresh.values()], "merged": merged}


def _run_staged(
    suite: str, scenarios: list[Scenario], work: Path, staging: Path, jobs: int
) -> dict[str, Any]:
    """The summary of the scenarios, their plots drawn into `staging`."""
    started = time.perf_counter()
    if jobs <= 1:
        results = [_run_one(s, work, staging, started) for s in scenarios]
    else:
        with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
            futures: list[Future[dict[str, Any]]] = [
                pool.submit(_run_one, s, work, staging, started) for s in scenarios
            ]
            results = [f.result() for f in futures]
    return {
        "suite": suite,
        "jobs": jobs,
        "wall_s": time.perf_counter() - started,
        "scenarios": results,
    }
