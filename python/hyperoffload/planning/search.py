"""
The smallest HBM target whose plan stays within a slowdown of running with
unlimited HBM, searched on one function's planning loop: every trial plans,
places and simulates on the graph extracted once; none touches the IR.

The criterion is monotone by construction: a target is met when some plan
tried so far fits it (live bytes and arena) within the slowdown, so a larger target is
met whenever a smaller one is. The bisection runs between the largest
single-op working set and the unconstrained peak; while no plan is within
the slowdown, the highest target is tried too, and where even its plan is
too slow the search stops there (every lower target would be too). The
answer is the tried plan within the slowdown with the smallest arena; with
none, the fastest tried plan that fits the capacity (a lower target's plan
can be faster than the highest's: the bisection assumes nothing of single
plans). Each trial is reported as a remark (target, planned peak and arena,
slowdown, seconds).

```python
trial = smallest_target(loop, capacity=32 * 10**9, slowdown=0.02)
loop.write(trial)
```
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from hyperoffload.ir.diagnostics import Severity, emit
from hyperoffload.planning.loop import PlanningLoop, Trial
from hyperoffload.planning.planner import PlanError
from hyperoffload.sim.simulator import SimResult, SimulationError, simulate
from hyperoffload.support.units import format_bytes

SEARCH_STEPS = 12
SOURCE = "hyperoffload-pipeline"


@dataclass(frozen=True)
class Tried:
    target: int
    trial: Trial | None
    """None: no plan meets the target."""
    seconds: float


def slowdown(result: SimResult, reference: SimResult) -> float:
    return result.makespan_s / reference.makespan_s - 1 if reference.makespan_s else 0.0


class TargetSearch:
    """Bisect the HBM target of one function; `tried` keeps every trial."""

    def __init__(self, loop: PlanningLoop, capacity: int, max_slowdown: float):
        self.loop = loop
        self.capacity = capacity
        self.max_slowdown = max_slowdown
        self.reference = simulate(
            loop.graph.schedule, loop.hardware, None, record=False
        )
        self.tried: list[Tried] = []

    def within(self, trial: Trial) -> bool:
        return (
            trial.fits(self.capacity)
            and slowdown(trial.result, self.reference) <= self.max_slowdown
        )

    def best(self) -> Trial | None:
        """
        The tried plan within the slowdown with the smallest arena (of equal
        ones, the one planned for the highest target: a target it meets).
        """
        fitting = [t.trial for t in self.tried if t.trial and self.within(t.trial)]
        return min(fitting, key=lambda t: (t.arena_bytes, -t.target), default=None)

    def fastest(self) -> Trial | None:
        """
        The fastest tried plan that fits the capacity (of equal ones, the one
        with the smallest arena); None where none does.
        """
        fitting = [
            t.trial for t in self.tried if t.trial and t.trial.fits(self.capacity)
        ]
        return min(
            fitting,
            key=lambda t: (t.result.makespan_s, t.arena_bytes),
            default=None,
        )

    def met(self, target: int) -> bool:
        best = self.best()
        return best is not None and best.fits(target)

    def attempt(self, target: int) -> Trial | None:
        start = time.perf_counter()
        try:
            trial = self.loop.trial(target)
        except (PlanError, SimulationError):  # no plan, or none the simulator runs
            trial = None
        self.tried.append(Tried(target, trial, time.perf_counter() - start))
        self.report(self.tried[-1])
        return trial

    def report(self, tried: Tried) -> None:
        name = self.loop.function.sym_name.data
        outcome = "no plan meets it"
        if tried.trial is not None:
            result = tried.trial.result
            missed = not tried.trial.fits(tried.target)
            outcome = (
                f"planned peak {format_bytes(result.peak_hbm_bytes)}, "
                f"arena {format_bytes(tried.trial.arena_bytes)}"
                f"{' (target missed)' if missed else ''}, "
                f"slowdown {slowdown(result, self.reference):+.2%}"
            )
        emit(
            SOURCE,
            Severity.REMARK,
            f"@{name}: target {format_bytes(tried.target)}: {outcome} "
            f"({tried.seconds:.2f} s)",
        )

    def _highest_met(self, high: int) -> bool:
        """Whether `high` is met, tried first where it was not."""
        if not any(t.target == high for t in self.tried):
            self.attempt(high)
        return self.met(high)

    def run(self, steps: int = SEARCH_STEPS) -> Trial:
        reference = self.reference
        low = reference.bound_peak_bytes
        high = min(reference.peak_hbm_bytes, self.capacity)
        for _ in range(steps):
            if high - low <= max(1, reference.peak_hbm_bytes // 1000):
                break
            middle = (low + high) // 2
            self.attempt(middle)
            if self.met(middle):
                high = middle
            elif self.best() is None and not self._highest_met(high):
                break  # too slow at the highest target: so at every one below
            else:  # infeasible or too slow: search above
                low = middle
        best = self.best()
        chosen = "the fastest plan tried"
        if best is None:
            # every target tried is too slow: the highest tried too, the fastest
            at_high = [t.trial for t in self.tried if t.target == high and t.trial]
            best = at_high[0] if at_high else self.attempt(high)
            fastest = self.fastest()
            if fastest is None:
                chosen = "the highest target: no plan fits the capacity"
            best = fastest or best
        if best is None:
            raise PlanError(
                f"@{self.loop.function.sym_name.data}: no plan meets "
                f"{format_bytes(high)}"
            )
        answer = (
            f"smallest target within {self.max_slowdown:.1%} slowdown: "
            f"{format_bytes(best.arena_bytes)}"
            if self.within(best)
            else f"no target within {self.max_slowdown:.1%} slowdown: planned for "
            f"{format_bytes(best.target)}, {chosen} "
            f"({slowdown(best.result, self.reference):+.2%})"
        )
        emit(
            SOURCE,
            Severity.REMARK,
            f"{answer} (unconstrained peak {format_bytes(reference.peak_hbm_bytes)})",
        )
        return best


def smallest_target(loop: PlanningLoop, capacity: int, slowdown: float) -> Trial:
    """The plan with the smallest peak within `slowdown` (see the module docstring)."""
    return TargetSearch(loop, capacity, slowdown).run()
