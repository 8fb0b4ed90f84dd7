"""
Each policy at its best setting within a slowdown over `none`, recording
every setting tried (the points of the peak-vs-slowdown curves).

- `reactive-lru`: the smallest capacity that stays within (a bisection);
- `distance`: the grid point of select/prefetch/release distances with the
  least peak;
- `activation-pass`: its one setting (training steps only);
- ours: `hyperoffload-pipeline`'s smallest target within (a bisection, each
  step a full plan), then the plan at that target.

```python
search = PolicySearch(workload, baseline, limit=0.02)
best = [search.reactive(), search.distance(), search.activation(), search.ours()]
```
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import product

from hyperoffload.benchmark.workloads import Baseline, Log, Workload
from hyperoffload.extract import program_schedules
from hyperoffload.passes.pipeline import PipelinePass
from hyperoffload.policies import PolicyError, PolicyOptions, run_policy
from hyperoffload.simulator import SimResult
from hyperoffload.units import format_bytes

DISTANCE_GRID = ((2, 4, 8, 16, 32, 64), (1, 2, 4, 8, 16), (0, 1, 2))
"""select, prefetch and release distances tried for `distance`."""
SEARCH_STEPS = 7
"""Plans the target search of ours may try."""


@dataclass
class Point:
    """One setting tried."""

    policy: str
    setting: str
    peak_hbm_bytes: int
    slowdown: float
    oom: bool


@dataclass
class Best:
    """A policy's best setting within the limit (`result` None: none found)."""

    policy: str
    setting: str
    result: SimResult | None
    timings: dict[str, float] = field(default_factory=dict[str, float])


class PolicySearch:
    def __init__(
        self,
        workload: Workload,
        baseline: Baseline,
        limit: float,
        log: Log,
        place_arguments: bool = False,
    ):
        self.workload = workload
        self.baseline = baseline
        self.limit = limit
        self.log = log
        self.place_arguments = place_arguments
        self.points: list[Point] = []

    def slowdown(self, result: SimResult) -> float:
        return result.makespan_s / self.baseline.none.makespan_s - 1

    def within(self, result: SimResult) -> bool:
        return result.within(self.baseline.none, self.limit)

    def _run(
        self, policy: str, setting: str, capacity: int | None, options: PolicyOptions
    ) -> SimResult:
        stripped, hardware = self.baseline.stripped, self.baseline.hardware
        result = run_policy(policy, stripped, stripped, hardware, capacity, options)
        self._record(policy, setting, result)
        return result

    def _record(self, policy: str, setting: str, result: SimResult) -> None:
        self.points.append(
            Point(
                policy,
                setting,
                result.peak_hbm_bytes,
                self.slowdown(result),
                result.oom is not None,
            )
        )

    def reactive(self) -> Best:
        none = self.baseline.none
        low, high = none.bound_peak_bytes, none.peak_hbm_bytes
        options = PolicyOptions()
        best = self._run("reactive-lru", format_bytes(high), high, options)
        if not self.within(best):  # tagged arguments start remote: misses at any size
            return Best(
                "reactive-lru",
                f"{self.slowdown(best):+.1%} at the unconstrained peak",
                None,
            )
        while high - low > max(1, none.peak_hbm_bytes // 1000):
            middle = (low + high) // 2
            result = self._run("reactive-lru", format_bytes(middle), middle, options)
            if self.within(result):
                best, high = result, middle
            else:
                low = middle
        return Best("reactive-lru", f"capacity {format_bytes(high)}", best)

    def distance(self) -> Best:
        best = Best(
            "distance",
            f"none of {len(list(product(*DISTANCE_GRID)))} grid points",
            None,
        )
        for select, prefetch, release in product(*DISTANCE_GRID):
            setting = f"select {select}, prefetch {prefetch}, release {release}"
            result = self._run(
                "distance", setting, None, PolicyOptions(select, prefetch, release)
            )
            if self.within(result) and (
                best.result is None
                or result.peak_hbm_bytes < best.result.peak_hbm_bytes
            ):
                best = Best("distance", setting, result)
        return best

    def activation(self) -> Best:
        try:
            result = self._run("activation-pass", "-", None, PolicyOptions())
        except PolicyError:
            return Best("activation-pass", "n/a: not a training step", None)
        if self.within(result):
            return Best("activation-pass", "-", result)
        return Best(
            "activation-pass", f"{self.slowdown(result):+.1%} at its one setting", None
        )

    def ours(self) -> Best:
        """The smallest target within the limit, then the plan at that target."""
        workload, hardware = self.workload, self.baseline.hardware
        pipeline = PipelinePass(
            hardware=hardware.name,
            hbm_capacity=hardware.hbm_capacity,
            place_arguments=self.place_arguments,
        )

        def trial(target: int, result: SimResult | None) -> None:
            if result is not None:
                self._record("hyperoffload", format_bytes(target), result)
                self.log(
                    f"  target {format_bytes(target)}: peak {format_bytes(result.peak_hbm_bytes)}, {self.slowdown(result):+.2%}"
                )

        start = time.perf_counter()
        target = pipeline.smallest_target(
            workload.ctx, workload.module, self.limit, SEARCH_STEPS, trial
        )
        search_s = time.perf_counter() - start
        planned_module = workload.module.clone()
        start = time.perf_counter()
        pipeline.plan(workload.ctx, planned_module, target)
        passes_s = time.perf_counter() - start
        planned, _, _ = program_schedules(planned_module, hardware)
        result = run_policy(
            "plan", planned, self.baseline.stripped, hardware, target, PolicyOptions()
        )
        self._record("hyperoffload", format_bytes(target), result)
        setting = f"target {format_bytes(target)}"
        if not self.within(result):
            setting += " (the least slowdown found)"
        timings = {
            "parse_s": workload.parse_s,
            "passes_s": passes_s,
            "target_search_s": search_s,
        }
        return Best("hyperoffload", setting, result, timings)
