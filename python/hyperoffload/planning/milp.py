"""
The exact reference: offload (and recomputation) planning as a
mixed-integer linear program, solved with HiGHS (`highspy`, the `milp`
extra), for programs of up to a few hundred compute steps (`solver=milp` on
`hyperoffload-insert` and `hyperoffload-pipeline`; `bench/milp_gap.py`
measures the heuristic against it).

It chooses from every candidate the heuristic planner ranks
(`hyperoffload.planning.planner.offload_choices`, all of them, not the
prefix the heuristic keeps): the plans the rules require (tagged arguments
fetched per cluster of uses, written-back results) and the optional
candidates (an activation or untagged argument out of HBM over one idle
gap, by a store and a fetch, its copy in any tier of `PlanOptions.tiers` the
hardware has, or, with `recompute`, by computing it again; with
`place_arguments`, a tagged argument left in its tier). It decides which
candidates to take and, for every gap taken, before which compute step its
fetch is issued, so as to minimise the peak of the memory timeline subject
to the exposed transfer time; its answer is a `Plan` that `plan_schedule`
and `simulate` judge exactly as they judge the heuristic's.

Never worse than its start: `plan_milp` judges the start plan it is given
(the heuristic's) and every plan it solves for in the simulator, and returns
the best (within the slowdown, then the least `max(peak, target)`, then the
least makespan). The planning loop does the same with whole trials.

Time is discretised at compute steps: positions 0..K-1 are the compute steps
(the ops with a compute step, in order) and K the end of the function. Slot
`j` of a link direction is the stall of the compute stream before position
`j` (a variable, `e_j`) followed by compute step `j` (its fixed time).

Variables (a gap `i` of a choice `g`, of a value `v`):
- `x_g` binary: the choice is taken (fixed to 1 for a required plan); the
  copies of one candidate in several tiers are several choices, and a value
  is stored in one tier at most;
- `S_ij` binary, non-decreasing in `j`, `S_i,b = x_g` at the use `b`: the
  fetch has been issued by position `j` (issued at the first `j` with 1);
- `st_v` binary: the value is stored (after its producer; once, whatever
  the number of its gaps), `D_vj` binary, non-decreasing: the store is
  complete before compute step `j` starts;
- `w_ij` in [0, 1]: the value is out of HBM at position `j` of its gap:
  `w_ij <= x_g - S_ij` and, for a stored value, `w_ij <= D_vj` (the copy is
  freed once the store completes; `x_g - S_ij` for a copy that exists, a
  tagged argument's); a tagged argument is also out after its last use;
- `u` >= 0: link time each transfer uses in each slot of its direction, at
  most the slot's length, only once it is issued (`S_ij`; after the
  producer for a store) and, for a fetch, once its store is complete (`D`
  before the stall, `D` of the next step within the step); a fetch's `u`
  add up to its transfer time by its use (it completes before its use), a
  store's to its transfer time;
- `e_j` >= 0 the stall before position `j` (`E`: their sum), `P` the peak.

Constraints: per slot and link direction, the transfers' `u` fit in the
slot (transfers on one direction do not overlap in time); where a link's
`duplex_efficiency` is below 1, both directions together fit in
`max(1, 2 x efficiency)` of the slot; the live bytes of the unplanned
timeline less the bytes out of HBM are at most `P` at every position (the
simulator's peak is taken at allocations, which happen at step starts and at
fetches, so this is its memory at every event); `E` plus recomputation time
at most `max_slowdown x compute time` when a slowdown is given.

Two models, one to plan and one to bound. In the planning model stores run
in compute slots only: a stall is a variable the model may place before any
step, where the simulator stalls only to wait for a fetch, and a stall
placed for nothing must not finish a store early (and free its copy). The
relaxed model lets stores run in stalls too, and asks that a stall hold
transfers all along: every plan of the model's form within the slowdown,
as the simulator runs it, is a solution of it (transfers fluid, any order,
the latency inside each transfer's time), so its bound is a lower bound on
the peak of every such plan. With a slowdown the LP bound that counts the
link (`hyperoffload.analysis.link_bound`), valid for every plan within it,
is taken where higher. A plan is `proven` optimal where its simulated
`max(peak, target)` meets that bound.

Objective, in two solves: first the least `max(P, target)` (with a target of
0: the least peak within the slowdown; `P` is a whole number of granules when
every size is a multiple of one, which tightens the bound); then, with `P`
held there, the least exposure plus a thousandth of the transfer time (no
move that does not pay). The first solve starts from a given plan (the
heuristic's, where it fits the model; else from the required gaps alone,
each fetched as early as it may be). The planning model gets half the time
limit (two thirds of a round's time to the first solve, the second no
longer than the first took, the rest for repair rounds: where the simulator
finds a plan slower than the limit, the exposure budget is cut and the MILP
solved again, `MilpOptions.repair_rounds`); the relaxed model the rest, its
first solve only, started from the best plan so far. HiGHS is interrupted
at the deadline.

Recomputation (with `recompute`, as the planner's candidates): a binary
`r` per candidate gap takes the value out of HBM from after the use before
the gap to the step its clones run before, adds the clones' compute time to
the slowdown (and to the second objective), and excludes every choice that
moves the value or anything the clones read. The clones' own memory while
they run is not in the model (the simulator judges it).

```python
result = plan_milp(graph, hardware, PlanOptions(target=0), MilpOptions(max_slowdown=0.05))
result.plan, result.proven, result.bound_bytes  # a Plan, judged by the simulator
```
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field, replace
from functools import reduce
from itertools import pairwise
from math import ceil, gcd, isfinite
from typing import TYPE_CHECKING, Literal

import numpy as np

from hyperoffload.analysis.compression import value_compression
from hyperoffload.analysis.lifetimes import ProgramGraph, memory_timeline
from hyperoffload.analysis.link_bound import link_lower_bound
from hyperoffload.ir.diagnostics import Severity, emit
from hyperoffload.planning.planner import (
    Plan,
    PlanError,
    PlanOptions,
    ValuePlan,
    merge_value_plans,
    offload_choices,
    plan_offload,
    plan_schedule,
)
from hyperoffload.sim.compression import transfer_time
from hyperoffload.sim.hardware import Hardware
from hyperoffload.sim.simulator import simulate
from hyperoffload.support.tiers import Tier
from hyperoffload.support.units import format_bytes

if TYPE_CHECKING:
    import highspy

SOURCE = "hyperoffload-milp"
"""Where the remarks of `plan_exact` come from."""

MAX_STEPS = 400
"""The most compute steps a function may have for the MILP (a few hundred)."""

_PLANNING_SHARE = 1 / 2
"""The share of the time limit the planning model's solves get (the rest: the bound's)."""
_PHASE_ONE_SHARE = 2 / 3
"""The share of the time limit the first solve (the peak) gets."""
_TRAFFIC_WEIGHT = 1e-3
"""Weight of transfer time against exposure in the second solve."""


@dataclass(frozen=True)
class MilpOptions:
    time_limit_s: float = 10.0
    """Wall-clock seconds for the solver (both solves together)."""
    max_slowdown: float | None = None
    """Exposed transfer time at most this fraction of compute time (None: any)."""
    max_steps: int = MAX_STEPS
    """Larger functions (in compute steps) are refused with a `PlanError`."""
    repair_rounds: int = 3
    """Solves again, with less exposure, when the simulator finds a plan too slow."""
    threads: int = 1


@dataclass(frozen=True)
class MilpResult:
    plan: Plan
    """The plan, its `peak_after` simulated as the heuristic's is."""
    status: str
    """
    `optimal` (`proven`); `none within the limit` (no plan found, the start
    plan included, runs within the slowdown in the simulator);
    `relaxation below` (the relaxed model's optimum, its bound, lies below
    every plan found: a plan of its fluid link the simulator does not run);
    or the bound's solve's (`time limit`, ...).
    """
    peak_bytes: int
    """The live peak of the plan in the model (the simulated one for the start plan)."""
    bound_bytes: int
    """
    A lower bound on `max(peak, target)` over the plans of the model's form
    (its candidates, windows and stores) within the slowdown: the relaxed
    model's, or with a slowdown `hyperoffload.analysis.link_bound`'s where
    higher (that one holds for every plan); a start plan of another form
    may lie below the former.
    """
    gap: float
    """
    (objective - bound) / objective, the objective the plan returned's
    simulated `max(peak, target)`: 0 when proven, negative when the plan is
    of another form and below the bound.
    """
    exposed_s: float
    """The exposure the model planned (the simulated one for the start plan)."""
    slowdown: float
    """The plan's slowdown as the simulator measures it."""
    rounds: int
    """Solves made (more than one: the simulator found a plan too slow)."""
    peak_seconds: float
    """The first solve's time (to the peak and its bound)."""
    seconds: float
    """Wall-clock time of the solves."""
    columns: int
    rows: int
    proven: bool = False
    """
    The plan is optimal among plans of the model's form: within the
    slowdown in the simulator, its `max(peak, target)` meets `bound_bytes`.
    """
    source: Literal["milp", "start"] = "milp"
    """Whose plan is returned: a solve's, or the start plan (it was better)."""


def _solver() -> highspy.Highs:
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
class _Model:
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


@dataclass
class _Gap:
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
    """The stored value (its index in `_Builder.stores`), or None: a copy exists."""
    fetch: list[int] = field(default_factory=list[int])
    """`S` for positions release+1 .. use."""


@dataclass
class _Store:
    bytes: int
    duration: float
    direction: tuple[Tier, bool]
    after: int
    """Issued after this position (-1: before the first)."""
    column: int = -1
    done: dict[int, int] = field(default_factory=dict[int, int])
    """Position -> `D` (complete before it starts)."""


class _Builder:
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
        """Stores may also run in stalls (the bound's model; see `store_columns`)."""
        self.steps = sorted(graph.compute_of_op)
        self.K = len(self.steps)
        self.compute = graph.prefix[-1] or 1.0
        """The time unit of the model: seconds of compute."""
        self.model = _Model()
        self.big = 0.0
        """An upper bound on a useful stall (set by `build`)."""
        self.granule = 1
        """Bytes every peak is a multiple of, where the model uses it."""
        self.slowdown_row: int | None = None
        """The row bounding the exposure (with a slowdown)."""
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
        base = plan_schedule(graph, Plan(values=list(self.gapless)), hardware)
        timeline = memory_timeline(base, graph.compute_of_op, len(graph.ops))
        self.base = [timeline[op] for op in self.steps] + [timeline[-1]]
        self.peak0 = max(max(self.base, default=0), 1)

    # positions

    def last_at_or_before(self, op: int) -> int:
        return bisect_right(self.steps, op) - 1

    def first_at_or_after(self, op: int) -> int:
        return bisect_left(self.steps, op)

    def slot_time(self, position: int) -> float:
        """The compute time of slot `position` (0 at the end), in model units."""
        if position >= self.K:
            return 0.0
        return self.graph.op_time[self.steps[position]] / self.compute

    def direction(self, plan: ValuePlan) -> Tier:
        return plan.copy_tier(self.hw.offload_tier)

    # the model

    def build(self) -> None:
        m = self.model
        K = self.K
        self.peak = m.column(0.0, np.inf)
        self.stall = [m.column(0.0, np.inf) for _ in range(K + 1)]
        self.take = [
            m.column(1.0, 1.0) if c < self.num_required else m.binary()
            for c in range(len(self.choices))
        ]
        self.stores: list[_Store] = []
        store_of: dict[tuple[int, Tier], int] = {}
        self.gaps: list[_Gap] = []
        # bytes out of HBM at each position: (column, bytes)
        self.out: list[list[tuple[int, float]]] = [[] for _ in range(K + 1)]
        for c, plan in enumerate(self.choices):
            info = plan.info
            tier = self.direction(plan)
            link = self.hw.link(tier)
            compressed = value_compression(info.value, plan.compress, self.hw)
            duration = transfer_time(link, info.bytes, True, compressed) / self.compute
            store: int | None = None
            if plan.stored:
                assert info.buffer is not None
                if (info.buffer, tier) not in store_of:
                    store_of[info.buffer, tier] = len(self.stores)
                    self.stores.append(
                        _Store(
                            info.bytes,
                            transfer_time(link, info.bytes, False, compressed)
                            / self.compute,
                            (tier, False),
                            self.last_at_or_before(info.producer),
                        )
                    )
                store = store_of[info.buffer, tier]
            for index, gap in enumerate(plan.gaps):
                release = (
                    -1
                    if gap.after < 0 and plan.initially_out
                    else self.last_at_or_before(gap.after)
                )
                use = self.first_at_or_after(gap.before)
                self.gaps.append(
                    _Gap(
                        c,
                        index,
                        release,
                        use,
                        info.bytes,
                        duration,
                        (tier, True),
                        store,
                    )
                )
            if plan.initially_out and self.released_after_last_use(plan):
                last = self.last_at_or_before(info.last_use)
                for j in range(last + 1, K + 1):
                    self.out[j].append((self.take[c], info.bytes))
        self.slots: dict[tuple[Tier, bool], list[list[tuple[int, bool]]]] = {}
        self.big = self.big_m()
        for gap in self.gaps:
            self.gap_columns(gap)
        for index, stored in enumerate(self.stores):
            self.store_columns(index, stored)
        by_buffer: dict[int, list[int]] = {}
        for (buffer, _), index in store_of.items():
            by_buffer.setdefault(buffer, []).append(self.stores[index].column)
        for columns in by_buffer.values():  # one tier per value
            if len(columns) > 1:
                m.at_most([(c, 1.0) for c in columns], 1.0)
        self.recompute_columns()
        self.capacity_rows()
        self.memory_rows()
        if self.milp.max_slowdown is not None:
            self.slowdown_row = len(m.row_lower)
            m.at_most(
                [(e, 1.0) for e in self.stall] + self.recompute_time(),
                self.milp.max_slowdown,
            )

    def recompute_columns(self) -> None:
        """
        `r` per recomputation candidate: the value is out of HBM from after
        the use before its gap to the step its clones run before; it takes
        the clones' compute time (`recompute_time`). A value is recomputed or
        offloaded, not both, and what the clones read stays where it is: no
        choice that moves it is taken with `r`.
        """
        m = self.model
        self.recompute_take = [m.binary() for _ in self.recomputes]
        movers: dict[int, list[int]] = {}  # buffer -> columns of choices moving it
        for c, plan in enumerate(self.choices):
            if plan.info.buffer is not None:
                movers.setdefault(plan.info.buffer, []).append(self.take[c])
        for r, plan in zip(self.recompute_take, self.recomputes, strict=True):
            if plan.info.buffer is not None:
                movers.setdefault(plan.info.buffer, []).append(r)
        for r, plan in zip(self.recompute_take, self.recomputes, strict=True):
            (gap,), (recipe,) = plan.gaps, plan.recipes
            for j in range(
                self.last_at_or_before(gap.after) + 1, self.first_at_or_after(recipe.at)
            ):
                self.out[j].append((r, plan.info.bytes))
            own = plan.info.buffer
            for other in movers.get(own, []) if own is not None else []:
                if other != r and other not in self.recompute_take:
                    m.at_most([(r, 1.0), (other, 1.0)], 1.0)
            for buffer in recipe.reads:
                for other in movers.get(buffer, []):
                    m.at_most([(r, 1.0), (other, 1.0)], 1.0)

    def recompute_time(self) -> list[tuple[int, float]]:
        """The compute time each recomputation adds, in model units."""
        return [
            (r, plan.recipes[0].time_s / self.compute)
            for r, plan in zip(self.recompute_take, self.recomputes, strict=True)
        ]

    def released_after_last_use(self, plan: ValuePlan) -> bool:
        """`_Planner.releases`: a tagged argument is freed after its last use."""
        info = plan.info
        if not plan.gaps or info.buffer is None:
            return False
        if info.last_use >= len(self.graph.ops) - 1:
            return False
        pinned = self.graph.schedule.buffers[info.buffer].pinned
        return pinned and info.tier != Tier.HBM

    def use_slot(self, direction: tuple[Tier, bool], position: int, stall: bool) -> int:
        """A `u` column in the stall (or compute) part of slot `position`."""
        column = self.model.column(0.0, np.inf)
        slots = self.slots.setdefault(direction, [[] for _ in range(self.K + 1)])
        slots[position].append((column, stall))
        return column

    def big_m(self) -> float:
        """An upper bound on a useful stall: every transfer exposed."""
        total = sum(g.duration for g in self.gaps) + sum(
            s.duration for s in self.stores
        )
        if self.milp.max_slowdown is not None:
            total = min(total, self.milp.max_slowdown)
        return max(total, 1e-9)

    def gap_columns(self, gap: _Gap) -> None:
        """`S`, `w` and the fetch's `u` of one gap (recomputation would go here)."""
        m = self.model
        take = self.take[gap.choice]
        store = None if gap.store is None else self.stores[gap.store]
        big = self.big
        first = gap.release + 1
        previous: int | None = None
        used: list[tuple[int, float]] = []
        for j in range(first, gap.use + 1):
            issued = take if j == gap.use else m.binary()
            gap.fetch.append(issued)
            if previous is not None:
                m.at_most([(previous, 1.0), (issued, -1.0)], 0.0)
            previous = issued
            done = None if store is None else self.done(store, j)
            for stall in (True, False):
                if not stall and (j == gap.use or self.slot_time(j) <= 0):
                    continue
                bound = big if stall else self.slot_time(j)
                u = self.use_slot(gap.direction, j, stall)
                m.at_most([(u, 1.0), (issued, -bound)], 0.0)
                if store is not None:
                    # the fetch starts once its store is complete: before
                    # compute j starts for the stall before it, before
                    # compute j ends (compute j + 1 starts) within it
                    ready = self.done(store, j if stall else j + 1)
                    m.at_most([(u, 1.0), (ready, -bound)], 0.0)
                used.append((u, 1.0))
            if j == gap.use:
                break
            # out of HBM at position j
            if store is None:  # x - S
                self.out[j].append((take, gap.bytes))
                self.out[j].append((issued, -gap.bytes))
            else:
                assert done is not None
                w = m.column(0.0, 1.0)
                m.at_most([(w, 1.0), (take, -1.0), (issued, 1.0)], 0.0)
                m.at_most([(w, 1.0), (done, -1.0)], 0.0)
                self.out[j].append((w, gap.bytes))
        m.equal([*used, (take, -gap.duration)], 0.0)

    def done(self, store: _Store, position: int) -> int:
        """`D` of `store` at `position` (created on first use)."""
        if position not in store.done:
            store.done[position] = self.model.binary()
        return store.done[position]

    def store_columns(self, index: int, store: _Store) -> None:
        """
        `st`, the store's `u` from its producer on, and the rows defining `D`.
        In the planning model a store runs in compute slots only: the
        compute stream never waits for one, and a stall the model places
        (free to place it anywhere) must not finish a store, and free its
        copy, earlier than it would. The relaxed model (`relaxed`, the one
        whose bound is reported) lets stores run in stalls too, as the
        simulator's do while the compute stream waits for a fetch.
        """
        m = self.model
        store.column = m.binary()
        takes = {self.take[g.choice] for g in self.gaps if g.store == index}
        m.at_most([(store.column, 1.0)] + [(t, -1.0) for t in takes], 0.0)
        for t in takes:
            m.at_most([(t, 1.0), (store.column, -1.0)], 0.0)
        last = max(store.done, default=store.after + 1)
        used: list[tuple[int, float]] = []
        latest: int | None = None  # `D` at the last position with one, so far
        for j in range(store.after + 1, last + 1):
            # D_j' = 1 (complete before compute j' starts): no link time in
            # compute j' or later, nor in a stall after j'
            before = latest
            if j in store.done:
                latest = store.done[j]
            if self.relaxed:
                u = self.use_slot(store.direction, j, True)
                used.append((u, 1.0))
                if before is not None:
                    m.at_most([(u, 1.0), (before, self.big)], self.big)
            if j == last or self.slot_time(j) <= 0:
                continue
            u = self.use_slot(store.direction, j, False)
            used.append((u, 1.0))
            if latest is not None:
                m.at_most([(u, 1.0), (latest, self.slot_time(j))], self.slot_time(j))
        m.equal([*used, (store.column, -store.duration)], 0.0)
        ordered = sorted(store.done)
        for a, b in pairwise(ordered):
            m.at_most([(store.done[a], 1.0), (store.done[b], -1.0)], 0.0)

    def capacity_rows(self) -> None:
        """
        Per slot and direction, the transfers fit; in the relaxed model, a
        stall holds transfers for all its length (the compute stream waits
        for a fetch, itself in its stream or waiting for its store); on a link whose
        `duplex_efficiency` is below 1, both directions together fit in
        `max(1, 2 x efficiency)` of the slot (while both run, each moves at
        that efficiency: a relaxation of the simulator's rule).
        """
        for slots in self.slots.values():
            for j, columns in enumerate(slots):
                stalls = [(u, 1.0) for u, stall in columns if stall]
                computes = [(u, 1.0) for u, stall in columns if not stall]
                if stalls:
                    self.model.at_most([*stalls, (self.stall[j], -1.0)], 0.0)
                if computes:
                    self.model.at_most(computes, self.slot_time(j))
        if self.relaxed:  # a stall waits for a transfer: one runs all along
            for j in range(self.K + 1):
                moving = [
                    (u, -1.0)
                    for slots in self.slots.values()
                    for u, stall in slots[j]
                    if stall
                ]
                self.model.at_most([(self.stall[j], 1.0), *moving], 0.0)
        for tier in {tier for tier, _ in self.slots}:
            share = max(1.0, 2 * self.hw.link(tier).duplex_efficiency)
            to, back = self.slots.get((tier, True)), self.slots.get((tier, False))
            if share >= 2 or to is None or back is None:
                continue
            for j in range(self.K + 1):
                for stall in (True, False):
                    terms = [(u, 1.0) for u, s in to[j] + back[j] if s == stall]
                    if not terms:
                        continue
                    if stall:
                        self.model.at_most([*terms, (self.stall[j], -share)], 0.0)
                    else:
                        self.model.at_most(terms, share * self.slot_time(j))

    def memory_rows(self) -> None:
        """
        The live bytes at each position are at most `P`. When every size is a
        multiple of some granule (at most a millionth of the peak), `P` is an
        integer number of granules (the peak of any plan is one), which
        tightens the bound: `P` at least the target rounded down to a granule.
        """
        sizes = [*self.base, *(nbytes for out in self.out for _, nbytes in out)]
        granule = reduce(gcd, (int(abs(n)) for n in sizes), 0) or 1
        target = self.options.target / self.peak0
        if self.peak0 / granule <= 1e6:
            self.granule = granule
            units = self.model.column(
                self.options.target // granule, np.inf, integer=True
            )
            self.model.equal([(self.peak, 1.0), (units, -granule / self.peak0)], 0.0)
        else:
            self.model.lower[self.peak] = target
        for j in range(self.K + 1):
            terms: dict[int, float] = {}
            for column, nbytes in self.out[j]:
                terms[column] = terms.get(column, 0.0) + nbytes / self.peak0
            # base - out <= P  <=>  -P - out <= -base
            self.model.at_most(
                [(self.peak, -1.0), *[(c, -v) for c, v in terms.items()]],
                -self.base[j] / self.peak0,
            )

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

    # a start

    def start(self, plan: Plan | None, distance: int) -> tuple[list[int], list[float]]:
        """
        The integer columns of a plan the solver starts from (it completes the
        rest): `plan`'s choices and fetch positions where its gaps are
        candidates here, else only the required gaps, each fetched as early
        as its window allows.
        """
        fetches: dict[tuple[object, int, int, Tier], int] = {}
        recomputed: set[tuple[object, int, int]] = set()
        for value_plan in plan.values if plan else ():
            if value_plan.recompute:
                recomputed.update(
                    (value_plan.info.value, g.after, g.before) for g in value_plan.gaps
                )
                continue
            tier = value_plan.copy_tier(self.hw.offload_tier)
            for index, gap in enumerate(value_plan.gaps):
                op = value_plan.fetch_op(index, distance)
                key = (value_plan.info.value, gap.after, gap.before, tier)
                fetches[key] = self.first_at_or_after(op)
        columns: list[int] = []
        values: list[float] = []
        taken: set[int] = set(range(self.num_required))
        positions: list[int | None] = []
        for gap in self.gaps:
            choice = self.choices[gap.choice]
            original = choice.gaps[gap.index]
            tier = choice.copy_tier(self.hw.offload_tier)
            key = (choice.info.value, original.after, original.before, tier)
            position = fetches.get(key)
            if gap.choice < self.num_required and position is None:
                position = gap.release + 1
            if position is not None:
                taken.add(gap.choice)
            positions.append(position)
        for gap, position in zip(self.gaps, positions, strict=True):
            issued = position if gap.choice in taken else None
            if issued is not None:
                issued = min(max(issued, gap.release + 1), gap.use)
            for k, column in enumerate(gap.fetch[:-1]):  # the last is `x`
                at = gap.release + 1 + k
                columns.append(column)
                values.append(1.0 if issued is not None and at >= issued else 0.0)
        for c in range(self.num_required, len(self.choices)):
            columns.append(self.take[c])
            values.append(1.0 if c in taken else 0.0)
        for index, store in enumerate(self.stores):
            columns.append(store.column)
            stored = any(g.store == index and g.choice in taken for g in self.gaps)
            values.append(1.0 if stored else 0.0)
        for r, candidate in zip(self.recompute_take, self.recomputes, strict=True):
            (gap,) = candidate.gaps
            columns.append(r)
            key = (candidate.info.value, gap.after, gap.before)
            values.append(1.0 if key in recomputed else 0.0)
        return columns, values

    # the answer

    def plan(self, values: list[float]) -> tuple[Plan, float]:
        """The plan of a solution and its exposure (in seconds)."""
        chosen: dict[int, list[int]] = {}  # choice -> fetch op of each gap
        for gap in self.gaps:
            if values[self.take[gap.choice]] < 0.5:
                continue
            position = next(
                (
                    gap.release + 1 + k
                    for k, s in enumerate(gap.fetch)
                    if values[s] > 0.5
                ),
                gap.use,
            )
            plan = self.choices[gap.choice]
            op = (
                plan.gaps[gap.index].before
                if position >= gap.use
                else self.steps[position]
            )
            chosen.setdefault(gap.choice, [0] * len(plan.gaps))[gap.index] = op
        merged: dict[int, ValuePlan] = {}
        for c, fetches in chosen.items():
            plan = self.choices[c]
            key = id(plan.info)
            if key in merged and not plan.initially_out:
                current = merged[key]
                pairs = sorted(
                    zip(
                        current.gaps + plan.gaps,
                        (current.fetch_ops or []) + fetches,
                        strict=True,
                    ),
                    key=lambda pair: pair[0].after,
                )
                current.gaps = [g for g, _ in pairs]
                current.fetch_ops = [f for _, f in pairs]
            else:
                merged[key] = replace(plan, gaps=list(plan.gaps), fetch_ops=fetches)
        # fetches issued before one step run first come, first served: the
        # one needed first is issued first
        ordered = sorted(
            merged.values(),
            key=lambda p: min(
                (f, g.before) for f, g in zip(p.fetch_ops or [], p.gaps, strict=True)
            ),
        )
        values_plans = (
            list(self.gapless)
            + ordered
            + merge_value_plans(
                [
                    plan
                    for r, plan in zip(
                        self.recompute_take, self.recomputes, strict=True
                    )
                    if values[r] > 0.5
                ]
            )
        )
        result = Plan(values=values_plans)
        result.optional = any(c >= self.num_required for c in chosen)
        if self.options.place_arguments and self.options.optional:
            remote = {p.info.value for p in values_plans}
            result.placed = [
                p.info
                for p in self.candidates
                if p.initially_out and p.info.value not in remote
            ]
        exposed = sum(values[e] for e in self.stall) * self.compute
        return result, exposed


class _Deadline:
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


def _status(solver: highspy.Highs) -> str:
    import highspy as hs

    status = solver.getModelStatus()
    names = {
        hs.HighsModelStatus.kOptimal: "optimal",
        hs.HighsModelStatus.kTimeLimit: "time limit",
        hs.HighsModelStatus.kInterrupt: "time limit",  # `_stop_at`
        hs.HighsModelStatus.kInfeasible: "infeasible",
    }
    return names.get(status, solver.modelStatusToString(status))


def _has_solution(solver: highspy.Highs) -> bool:
    return bool(solver.getSolution().value_valid)


def _check_size(graph: ProgramGraph, milp: MilpOptions) -> None:
    steps = len(graph.compute_of_op)
    if steps > milp.max_steps:
        raise PlanError(
            f"solver=milp: @{graph.function.sym_name.data} has {steps} compute "
            f"steps, more than the {milp.max_steps} the exact reference takes "
            "(milp-max-steps); use solver=heuristic"
        )


def plan_exact(
    graph: ProgramGraph,
    hardware: Hardware,
    options: PlanOptions,
    start: Plan | None = None,
) -> Plan:
    """
    `solver=milp` in the planning loop: the MILP plan for `options.target`
    (least peak down to the target, then least exposure), started from
    `start` (the heuristic's plan; by default `plan_offload`'s) and never
    worse than it in the simulator, within `options.milp_time_limit_s`; a
    remark reports the model's peak and bound, the gap, the time and the
    simulated peak of the plan returned (and whose it is).
    """
    milp = MilpOptions(
        time_limit_s=options.milp_time_limit_s, max_steps=options.milp_max_steps
    )
    _solver()
    _check_size(graph, milp)
    start = start or plan_offload(graph, hardware, options)
    result = plan_milp(graph, hardware, options, milp, start_plan=start)
    whose = "" if result.source == "milp" else " (the start plan's: better)"
    emit(
        SOURCE,
        Severity.REMARK,
        f"@{graph.function.sym_name.data}: target {format_bytes(options.target)}: "
        f"model peak {format_bytes(result.peak_bytes)}, model bound "
        f"{format_bytes(result.bound_bytes)}, gap {result.gap:.2%} "
        f"({result.status}, {result.seconds:.2f} s); simulated peak "
        f"{format_bytes(result.plan.peak_after)}{whose}",
    )
    return result.plan


@dataclass
class _Solved:
    values: list[float]
    status: str
    peak: float
    bound: float
    """Of the first solve, in units of the unplanned peak."""
    seconds: float
    """The first solve's."""
    live: int
    """The highest live bytes of the solution returned (after both solves)."""


def _solve(
    builder: _Builder,
    budget: float | None,
    start_plan: Plan | None,
    deadline: float,
    second: bool = True,
) -> _Solved:
    """
    Both solves (`second`: the least exposure at the peak found too) with
    exposure at most `budget` (x compute), by `deadline`.
    """
    model = builder.model
    if builder.slowdown_row is not None and budget is not None:
        model.row_upper[builder.slowdown_row] = budget
    solver = _solver()
    solver.setOptionValue("threads", builder.milp.threads)
    started = time.perf_counter()
    model.pass_to(solver)
    solver.changeColCost(builder.peak, 1.0)
    stop = _Deadline(solver)
    distance = builder.options.prefetch_distance
    for candidate in [start_plan, None] if start_plan else [None]:
        columns, values = builder.start(candidate, distance)
        solver.setSolution(
            len(columns), np.array(columns, dtype=np.int32), np.array(values)
        )
        now = time.perf_counter()
        stop.run(now + (deadline - now) * _PHASE_ONE_SHARE)
        if _has_solution(solver) or deadline - time.perf_counter() <= 1e-3:
            break
        # the plan given does not fit the model: from the plain start
    status = _status(solver)
    seconds = solver.getRunTime()
    if not _has_solution(solver):
        return _Solved([], status, 0.0, 0.0, seconds, 0)
    incumbent = solver.getSolution()
    values = list(incumbent.col_value)
    peak = values[builder.peak]
    bound = solver.getInfo().mip_dual_bound  # -inf before the first LP
    bound = min(bound, peak) if isfinite(bound) else 0.0
    if second and stop.worth(deadline):  # the least exposure and traffic at that peak
        _second_objective(solver, builder, peak)
        solver.setSolution(incumbent)
        # no longer than the first took: what is left is for repair rounds
        now = time.perf_counter()
        stop.run(min(deadline, now + max(1.0, now - started)))
        if _has_solution(solver):
            values = list(solver.getSolution().col_value)
    return _Solved(values, status, peak, bound, seconds, builder.live_peak(values))


def plan_milp(
    graph: ProgramGraph,
    hardware: Hardware,
    options: PlanOptions,
    milp: MilpOptions | None = None,
    start_plan: Plan | None = None,
) -> MilpResult:
    """
    The plan with the least peak (at least `options.target`) within the
    slowdown, then the least exposure at that peak (see the module
    docstring), starting from `start_plan` (e.g. the heuristic's) where it
    fits the model.

    The simulator judges each plan: where it finds one slower than
    `max_slowdown` (the model's link is fluid), the model's exposure budget is
    cut in proportion and the MILP solved again, up to `repair_rounds` times
    within the same time limit (the second solve of a round takes no longer
    than its first, to leave them time). The plan returned is the best the
    simulator saw (`_rank`) of the solves' and `start_plan` itself: never
    worse than the start. The bound and the gap are the first solve's, at
    `max_slowdown` itself.

    Raises `PlanError` when HiGHS is missing, the function has more than
    `max_steps` compute steps, or no plan is found in time (and no start
    plan is given).
    """
    milp = milp or MilpOptions()
    _solver()
    _check_size(graph, milp)
    name = graph.function.sym_name.data
    start = time.perf_counter()
    deadline = start + milp.time_limit_s
    planning = start + milp.time_limit_s * _PLANNING_SHARE
    builder = _Builder(graph, hardware, options, milp)
    builder.build()
    judge = _Judge(graph, hardware, options, milp.max_slowdown)
    budget = milp.max_slowdown
    kept: _Judged | None = None
    rounds = 0
    while True:
        solved = _solve(builder, budget, start_plan, planning)
        rounds += 1
        if not solved.values:
            if kept is not None or start_plan is not None:
                break
            seconds = time.perf_counter() - start
            why = f"no plan ({solved.status})"
            if solved.status == "time limit":
                why = f"no plan within the time limit of {milp.time_limit_s:g} s"
            elif solved.status == "infeasible" and milp.max_slowdown is not None:
                why = f"no plan within a slowdown of {milp.max_slowdown:.2%}"
            raise PlanError(f"solver=milp: @{name}: {why} ({seconds:.2f} s)")
        plan, exposed = builder.plan(solved.values)
        judged = judge(plan, exposed, solved.live, "milp")
        if kept is None or judged.rank < kept.rank:
            kept = judged
        limit = milp.max_slowdown
        if (
            judged.within
            or budget is None
            or limit is None
            or rounds > milp.repair_rounds
            or planning - time.perf_counter() <= 1e-3
        ):
            break
        budget = budget * limit / judged.slowdown
    if start_plan is not None:
        started = judge(start_plan, None, None, "start")
        if kept is None or started.rank < kept.rank:
            kept = started
    assert kept is not None
    # the bound: the relaxed model, at the slowdown itself, from the plan kept
    relaxed = _Builder(graph, hardware, options, milp, relaxed=True)
    relaxed.build()
    bounded = _solve(relaxed, milp.max_slowdown, kept.plan, deadline, second=False)
    if bounded.values:
        plan, exposed = relaxed.plan(bounded.values)
        judged = judge(plan, exposed, bounded.live, "milp")
        if judged.rank < kept.rank:
            kept = judged
    objective = max(kept.plan.peak_after, builder.floor_bytes())  # max(peak, target)
    bound = relaxed.bytes_of(bounded.bound, up=True) if bounded.values else 0
    if milp.max_slowdown is not None:  # the LP bound holds for every plan too
        link = link_lower_bound(graph, hardware, milp.max_slowdown)
        bound = max(bound, link.bytes, builder.floor_bytes())
    proven = kept.within and objective == bound
    if proven:
        status = "optimal"
    elif not kept.within:
        status = "none within the limit"
    elif bounded.status == "optimal":
        status = "relaxation below"  # its optimum is a plan the simulator does not run
    else:
        status = bounded.status  # `time limit`, ...
    gap = (objective - bound) / objective if objective > 0 else 0.0
    return MilpResult(
        kept.plan,
        status,
        kept.model_peak if kept.model_peak is not None else kept.plan.peak_after,
        bound,
        gap,
        kept.exposed,
        kept.slowdown,
        rounds,
        bounded.seconds,
        time.perf_counter() - start,
        len(relaxed.model.lower),
        len(relaxed.model.row_lower),
        proven,
        kept.source,
    )


@dataclass(frozen=True)
class _Judged:
    """A plan as the simulator runs it."""

    plan: Plan
    exposed: float
    slowdown: float
    within: bool
    rank: tuple[int, float, float]
    model_peak: int | None
    source: Literal["milp", "start"]


class _Judge:
    """
    Simulates plans of one graph and ranks them: within the slowdown first,
    then the least `max(peak, target)`, then the least makespan (outside the
    slowdown: the least slowdown).
    """

    def __init__(
        self,
        graph: ProgramGraph,
        hardware: Hardware,
        options: PlanOptions,
        max_slowdown: float | None,
    ):
        self.graph, self.hardware, self.options = graph, hardware, options
        self.max_slowdown = max_slowdown
        self.reference = simulate(graph.schedule, hardware, None, record=False)

    def __call__(
        self,
        plan: Plan,
        exposed: float | None,
        model_peak: int | None,
        source: Literal["milp", "start"],
    ) -> _Judged:
        distance = self.options.prefetch_distance
        schedule = plan_schedule(self.graph, plan, self.hardware, distance)
        run = simulate(schedule, self.hardware, None, record=False)
        plan = replace(
            plan,
            peak_before=self.reference.peak_hbm_bytes,
            peak_after=run.peak_hbm_bytes,
            met=run.peak_hbm_bytes <= self.options.target,
        )
        base = self.reference.makespan_s
        slowdown = run.makespan_s / base - 1 if base else 0.0
        within = self.max_slowdown is None or slowdown <= self.max_slowdown + 1e-9
        objective = float(max(run.peak_hbm_bytes, self.options.target))
        rank = (0, objective, run.makespan_s) if within else (1, slowdown, 0.0)
        if exposed is None:
            exposed = max(0.0, run.makespan_s - base)
        return _Judged(plan, exposed, slowdown, within, rank, model_peak, source)


def _second_objective(solver: highspy.Highs, builder: _Builder, peak: float) -> None:
    """Hold the peak at `peak`; minimise exposure, then transfer time."""
    solver.changeColCost(builder.peak, 0.0)
    solver.changeColBounds(builder.peak, builder.model.lower[builder.peak], peak + 1e-7)
    for stall in builder.stall:
        solver.changeColCost(stall, 1.0)
    for c in range(builder.num_required, len(builder.choices)):
        fetches = sum(g.duration for g in builder.gaps if g.choice == c)
        solver.changeColCost(builder.take[c], _TRAFFIC_WEIGHT * fetches)
    for store in builder.stores:
        solver.changeColCost(store.column, _TRAFFIC_WEIGHT * store.duration)
    for column, time_s in builder.recompute_time():
        solver.changeColCost(column, time_s)
