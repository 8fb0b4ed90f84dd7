"""
HiGHS plumbing for the exact reference (`hyperoffload.planning.milp`): a
quiet solver, a model built up column by column and row by row and passed at
once, a wall-clock deadline that interrupts the solver, its status in words.

```python
model = SolverModel()
x = model.binary()
model.at_most([(x, 1.0)], 1.0)
solver = new_solver()
model.pass_to(solver)
Deadline(solver).run(time.perf_counter() + 1.0)
status_of(solver), has_solution(solver)
```
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from hyperoffload.planning.planner import PlanError

if TYPE_CHECKING:
    import highspy


def new_solver() -> highspy.Highs:
    """A quiet HiGHS instance; `PlanError` if HiGHS is not installed."""
    try:
        import highspy
    except ImportError:
        raise PlanError(
            "solver=milp needs the HiGHS solver: install the 'milp' extra "
            "(pip install 'hyperoffload[milp]', or pip install highspy)"
        ) from None
    solver = highspy.Highs()
    solver.setOptionValue("output_flag", False)
    solver.setOptionValue("random_seed", 0)
    return solver


@dataclass
class SolverModel:
    """Columns and rows of a MILP, built up and passed to HiGHS at once."""

    lower: list[float] = field(default_factory=list[float])
    upper: list[float] = field(default_factory=list[float])
    integer: list[int] = field(default_factory=list[int])
    row_lower: list[float] = field(default_factory=list[float])
    row_upper: list[float] = field(default_factory=list[float])
    rows: list[int] = field(default_factory=list[int])
    cols: list[int] = field(default_factory=list[int])
    values: list[float] = field(default_factory=list[float])

    def column(self, lower: float, upper: float, integer: bool = False) -> int:
        self.lower.append(lower)
        self.upper.append(upper)
        self.integer.append(1 if integer else 0)
        return len(self.lower) - 1

    def binary(self) -> int:
        return self.column(0.0, 1.0, integer=True)

    def row(self, terms: list[tuple[int, float]], lower: float, upper: float) -> None:
        index = len(self.row_lower)
        self.row_lower.append(lower)
        self.row_upper.append(upper)
        for col, value in terms:
            self.rows.append(index)
            self.cols.append(col)
            self.values.append(value)

    def at_most(self, terms: list[tuple[int, float]], upper: float) -> None:
        self.row(terms, -np.inf, upper)

    def equal(self, terms: list[tuple[int, float]], value: float) -> None:
        self.row(terms, value, value)

    def pass_to(self, solver: highspy.Highs) -> None:
        import highspy as hs

        num_cols, num_rows = len(self.lower), len(self.row_lower)
        order = np.lexsort((np.array(self.cols), np.array(self.rows)))
        rows = np.array(self.rows, dtype=np.int32)[order]
        starts = np.searchsorted(rows, np.arange(num_rows + 1)).astype(np.int32)
        solver.passModel(
            num_cols,
            num_rows,
            len(self.values),
            int(hs.MatrixFormat.kRowwise),
            int(hs.ObjSense.kMinimize),
            0.0,
            np.zeros(num_cols),
            np.array(self.lower),
            np.array(self.upper),
            np.array(self.row_lower),
            np.array(self.row_upper),
            starts,
            np.array(self.cols, dtype=np.int32)[order],
            np.array(self.values)[order],
            np.array(self.integer, dtype=np.int32),
        )


class Deadline:
    """
    Stops the solver at a moment of the wall clock: HiGHS checks its own
    time limit between cut rounds, which on a large model may run for
    seconds; these callbacks also run within its LP solves.
    """

    def __init__(self, solver: highspy.Highs):
        self.solver = solver
        self.at = 0.0
        self.started = 0.0
        self.lag = 0.0
        """The longest a run took to first call back (presolve, a start's check)."""
        self.called = False
        solver.cbSimplexInterrupt.subscribe(self.check)
        solver.cbIpmInterrupt.subscribe(self.check)
        solver.cbMipInterrupt.subscribe(self.check)

    def check(self, event: highspy.HighsCallbackEvent) -> None:
        now = time.perf_counter()
        if not self.called:
            self.called = True
            self.lag = max(self.lag, now - self.started)
        if now > self.at:
            event.interrupt()

    def run(self, at: float) -> None:
        """Run the solver until `at` at the latest."""
        self.at = at
        self.started = time.perf_counter()
        self.called = False
        self.solver.setOptionValue("time_limit", max(at - self.started, 1e-3))
        self.solver.run()
        if not self.called:
            self.lag = max(self.lag, time.perf_counter() - self.started)

    def worth(self, at: float) -> bool:
        """Whether a run until `at` has time to search (beyond its set-up)."""
        return at - time.perf_counter() > 2 * self.lag


def status_of(solver: highspy.Highs) -> str:
    import highspy as hs

    status = solver.getModelStatus()
    names = {
        hs.HighsModelStatus.kOptimal: "optimal",
        hs.HighsModelStatus.kTimeLimit: "time limit",
        hs.HighsModelStatus.kInterrupt: "time limit",  # `_stop_at`
        hs.HighsModelStatus.kInfeasible: "infeasible",
    }
    return names.get(status, solver.modelStatusToString(status))


def has_solution(solver: highspy.Highs) -> bool:
    return bool(solver.getSolution().value_valid)
