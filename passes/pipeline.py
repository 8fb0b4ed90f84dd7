"""
`hyperoffload-pipeline`: insertion, move-window and verification in one pass,
with the union of their options.

With `max-slowdown` (e.g. `0.02`) it answers the question users ask: the
smallest HBM target whose plan stays within that slowdown over running with
unlimited HBM. It searches the target between the largest single-op working
set and the unconstrained peak (a bisection, each step planning a copy of the
module and simulating it), then plans the module for the target found. With
`place-arguments=true` the insertion also decides which tagged arguments
live in HBM between calls (see `hyperoffload-insert`).

```
hyperoffload-opt model.mlir -p 'hyperoffload-pipeline{hardware=ascend-910c max-slowdown=0.02}'
hyperoffload-opt decode.mlir -p 'hyperoffload-pipeline{place-arguments=true max-slowdown=0.01}'
```
"""

import sys
from collections.abc import Callable
from contextlib import redirect_stderr
from dataclasses import dataclass
from io import StringIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException, VerifyException

from hyperoffload.analysis.extract import program_schedules
from hyperoffload.analysis.lifetimes import CATEGORIES
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.passes.insert import InsertPass
from hyperoffload.passes.move_window import MoveWindowPass
from hyperoffload.sim.hardware import Hardware, load_hardware
from hyperoffload.sim.policies import PolicyOptions, run_policy
from hyperoffload.sim.schedule import Schedule
from hyperoffload.sim.simulator import SimResult
from hyperoffload.support.units import format_bytes

_SEARCH_STEPS = 12


@dataclass(frozen=True)
class PipelinePass(ModulePass):
    """Insert offload ops, move them within their windows, verify."""

    name = "hyperoffload-pipeline"

    hardware: str = "ascend-910c"
    hbm_capacity: str | int | None = None
    min_bytes: str | int = 0
    min_gap: str | int | float = 0
    categories: str = ",".join(CATEGORIES)
    prefetch_distance: int = 1
    detach: str = "eager"
    place_arguments: bool = False
    alpha: float = 1.0
    beta: float = 1.0
    max_inflight: int = 8
    max_slowdown: float | None = None

    def plan(self, ctx: Context, op: ModuleOp, capacity: str | int | None) -> None:
        """Insert, move-window and verify for one HBM target."""
        InsertPass(
            hardware=self.hardware,
            hbm_capacity=capacity,
            min_bytes=self.min_bytes,
            min_gap=self.min_gap,
            categories=self.categories,
            prefetch_distance=self.prefetch_distance,
            detach=self.detach,
            place_arguments=self.place_arguments,
        ).apply(ctx, op)
        MoveWindowPass(
            hardware=self.hardware,
            hbm_capacity=capacity,
            alpha=self.alpha,
            beta=self.beta,
            max_inflight=self.max_inflight,
        ).apply(ctx, op)
        verify_module(op)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        capacity = self.hbm_capacity
        if self.max_slowdown is not None:
            capacity = self.smallest_target(ctx, op, self.max_slowdown)
        self.plan(ctx, op, capacity)

    def simulated_plan(
        self,
        ctx: Context,
        op: ModuleOp,
        capacity: int,
        hardware: Hardware,
        stripped: Schedule,
    ) -> SimResult | None:
        """
        Plan a copy of `op` for `capacity` and simulate it on `hardware` beside
        `stripped` (the program without offload ops); None if no plan meets it.
        """
        trial = op.clone()
        try:
            with redirect_stderr(StringIO()):  # unmet-target warnings of trials
                self.plan(ctx, trial, capacity)
        except (PassFailedException, VerifyException):
            return None
        planned, _, _ = program_schedules(trial, hardware)
        return run_policy(
            "plan", planned, stripped, hardware, capacity, PolicyOptions()
        )

    def smallest_target(
        self,
        ctx: Context,
        op: ModuleOp,
        slowdown: float,
        steps: int = _SEARCH_STEPS,
        on_trial: Callable[[int, SimResult | None], None] | None = None,
    ) -> int:
        """
        The smallest HBM target whose plan runs within `slowdown` of unlimited
        HBM, planning at most `steps` targets; `on_trial` sees each target
        tried and its simulated plan (None: no plan meets it).
        """
        hardware = load_hardware(self.hardware, self.hbm_capacity)
        options = PolicyOptions()
        _, stripped, _ = program_schedules(op, hardware)
        none = run_policy("none", stripped, stripped, hardware, None, options)
        low, high = (
            none.bound_peak_bytes,
            min(none.peak_hbm_bytes, hardware.hbm_capacity),
        )
        best = high
        for _ in range(steps):
            if high - low <= max(1, none.peak_hbm_bytes // 1000):
                break
            middle = (low + high) // 2
            result = self.simulated_plan(ctx, op, middle, hardware, stripped)
            if on_trial is not None:
                on_trial(middle, result)
            if result is not None and result.within(none, slowdown):
                best = high = middle
            else:  # infeasible or too slow: search above
                low = middle
        print(
            f"hyperoffload-pipeline: smallest target within {slowdown:.1%} slowdown: "
            f"{format_bytes(best)} (unconstrained peak {format_bytes(none.peak_hbm_bytes)})",
            file=sys.stderr,
        )
        return best
