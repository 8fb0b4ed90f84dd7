"""
The data of one exact-reference MILP (`hyperoffload.planning.milp`, whose
docstring describes the variables and rows): its options, the candidates
(one choice per candidate and tier), the positions (compute steps), the
unplanned timeline, and the columns `hyperoffload.planning.milp_build` makes.
`milp_decode` reads a plan back from a solution and writes a plan as a start.

```python
formulation = formulate(graph, hardware, PlanOptions(0), MilpOptions(max_slowdown=0.05))
formulation.model  # a SolverModel for HiGHS
plan, exposed = decode(formulation, values)
```
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field, replace
from math import ceil

from hyperoffload.analysis.lifetimes import ProgramGraph, memory_timeline
from hyperoffload.model.hardware import Hardware
from hyperoffload.planning.milp_solver import SolverModel
from hyperoffload.planning.planner import (
    Plan,
    PlanOptions,
    offload_choices,
    plan_schedule,
)
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support.tiers import Tier

MAX_STEPS = 400
"""The most compute steps a function may have for the MILP (a few hundred)."""


@dataclass(frozen=True)
class MilpOptions:
    """How `plan_milp` solves: its time, slowdown, size limit and threads."""

    time_limit_s: float = 10.0
    """
    Wall-clock seconds for the solver: half for the planning model's solves
    and repair rounds, the rest for the relaxed model's (the bound).
    """
    max_slowdown: float | None = None
    """Exposed transfer time at most this fraction of compute time (None: any)."""
    max_steps: int = MAX_STEPS
    """Larger functions (in compute steps) are refused with a `PlanError`."""
    repair_rounds: int = 3
    """Solves again, with less exposure, when the simulator finds a plan too slow."""
    threads: int = 1
    """HiGHS threads (one: the same search on every machine, given the time)."""


@dataclass
class ModelGap:
    """One gap of a choice, in positions (compute steps; K: the end)."""

    choice: int
    index: int
    release: int
    """Out of HBM from position `release + 1` (-1: from entry)."""
    use: int
    """The position whose start the fetch must precede."""
    bytes: int
    duration: float
    direction: tuple[Tier, bool]
    store: int | None
    """The stored value (its index in `Formulation.stores`), or None: a copy exists."""
    fetch: list[int] = field(default_factory=list[int])
    """`S` for positions release+1 .. use."""


@dataclass
class ModelStore:
    """The store of one value in one tier, shared by its gaps."""

    bytes: int
    duration: float
    direction: tuple[Tier, bool]
    after: int
    """Issued after this position (-1: before the first)."""
    column: int = -1
    done: dict[int, int] = field(default_factory=dict[int, int])
    """Position -> `D` (complete before it starts)."""


class Formulation:
    """
    One MILP of a function: the planning model, or with `relaxed` the one
    whose bound is reported (stores also in stalls, a stall holding
    transfers). It holds the choices and positions; `milp_build.formulate`
    makes its columns and rows, `milp_decode` reads its solutions.
    """

    def __init__(
        self,
        graph: ProgramGraph,
        hardware: Hardware,
        options: PlanOptions,
        milp: MilpOptions,
        relaxed: bool = False,
    ):
        self.graph = graph
        self.hw = hardware
        self.options = options
        self.milp = milp
        self.relaxed = relaxed
        """Stores may also run in stalls (the bound's model; see `milp_build`)."""
        self.steps = sorted(graph.compute_of_op)
        self.K = len(self.steps)
        self.compute = graph.prefix[-1] or 1.0
        """The time unit of the model: seconds of compute."""
        self.model = SolverModel()
        self.big = 0.0
        """An upper bound on a useful stall (set by `formulate`)."""
        self.granule = 1
        """Bytes every peak is a multiple of, where the model uses it."""
        self.slowdown_row: int | None = None
        """The row bounding the exposure (with a slowdown)."""
        self._choose()
        base = plan_schedule(graph, Plan(values=list(self.gapless)), hardware)
        timeline = memory_timeline(base, graph.compute_of_op, len(graph.ops))
        self.base = [timeline[op] for op in self.steps] + [timeline[-1]]
        self.peak0 = max(max(self.base, default=0), 1)
        self._declare_columns()

    def _choose(self) -> None:
        """The required plans and the candidates, each stored one once per tier."""
        graph, hardware, options = self.graph, self.hw, self.options
        self.required, candidates = offload_choices(
            graph, hardware, options, check_target=options.target > 0
        )
        self.tiers = [t for t in options.tiers if t in hardware.links] or [
            hardware.offload_tier
        ]
        """Where a stored value's copy may go: each candidate once per tier."""
        self.candidates = [
            replace(p, tier=tier) if len(self.tiers) > 1 else p
            for p in candidates
            if not p.recompute
            for tier in (self.tiers if not p.initially_out else [None])
        ]
        self.recomputes = [p for p in candidates if p.recompute]
        """Recomputation candidates: one gap each, decided by `recompute_take`."""
        # choices with gaps: the required ones first, then the candidates
        fixed = [p for p in self.required if p.gaps]
        self.gapless = [p for p in self.required if not p.gaps]
        self.choices: list[ValuePlan] = fixed + self.candidates
        self.num_required = len(fixed)

    def _declare_columns(self) -> None:
        """The columns and their groups, empty until `formulate` makes them."""
        self.peak = -1
        """`P`, in units of `peak0`."""
        self.stall: list[int] = []
        """`e_j` for positions 0..K."""
        self.take: list[int] = []
        """`x_g` per choice."""
        self.recompute_take: list[int] = []
        """`r` per recomputation candidate."""
        self.stores: list[ModelStore] = []
        self.gaps: list[ModelGap] = []
        self.out: list[list[tuple[int, float]]] = [[] for _ in range(self.K + 1)]
        """Per position, (column, bytes) out of HBM when the column is 1."""
        self.slots: dict[tuple[Tier, bool], list[list[tuple[int, bool]]]] = {}
        """Per link direction and position, its `u` columns (and whether in the stall)."""

    # positions

    def last_at_or_before(self, op: int) -> int:
        """The last position at or before `op` (-1: none)."""
        return bisect_right(self.steps, op) - 1

    def first_at_or_after(self, op: int) -> int:
        """The first position at or after `op` (K: the end)."""
        return bisect_left(self.steps, op)

    def slot_time(self, position: int) -> float:
        """The compute time of slot `position` (0 at the end), in model units."""
        if position >= self.K:
            return 0.0
        return self.graph.op_time[self.steps[position]] / self.compute

    def direction(self, plan: ValuePlan) -> Tier:
        """The tier `plan`'s copy lives in."""
        return plan.copy_tier(self.hw.offload_tier)

    def recompute_time(self) -> list[tuple[int, float]]:
        """The compute time each recomputation adds, in model units."""
        return [
            (r, plan.recipes[0].time_s / self.compute)
            for r, plan in zip(self.recompute_take, self.recomputes, strict=True)
        ]

    # bytes

    def live_peak(self, values: list[float]) -> int:
        """The highest live bytes of a solution, over the positions."""
        return round(
            max(
                base - sum(nbytes * values[column] for column, nbytes in out)
                for base, out in zip(self.base, self.out, strict=True)
            )
        )

    def floor_bytes(self) -> int:
        """The least `P` may be: the target, down to a granule where `P` counts them."""
        return self.options.target // self.granule * self.granule

    def bytes_of(self, peak: float, up: bool = False) -> int:
        """`P` in bytes (`up`: a bound, rounded up to a granule)."""
        value = peak * self.peak0
        if up:
            return ceil(value / self.granule - 1e-6) * self.granule
        return round(value)
