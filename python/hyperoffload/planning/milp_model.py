"""
The formulation of the exact reference (`hyperoffload.planning.milp`, whose
docstring describes the variables and rows): the candidates, one column per
choice (and per tier), the fetch, store and stall columns, the capacity and
memory rows; a start from a given plan; a solution decoded into a `Plan`.

```python
formulation = Formulation(graph, hardware, PlanOptions(0), MilpOptions(max_slowdown=0.05))
formulation.build()
formulation.model  # a SolverModel for HiGHS
plan, exposed = formulation.plan(values)
```
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field, replace
from functools import reduce
from itertools import pairwise
from math import ceil, gcd

import numpy as np

from hyperoffload.analysis.compression import value_compression
from hyperoffload.analysis.lifetimes import ProgramGraph, memory_timeline
from hyperoffload.planning.milp_solver import SolverModel
from hyperoffload.planning.planner import (
    Plan,
    PlanOptions,
    merge_value_plans,
    offload_choices,
    plan_schedule,
)
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.sim.compression import transfer_time
from hyperoffload.sim.hardware import Hardware
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
    transfers); `build` makes its columns and rows, `start` the columns of a
    given plan, `plan` the plan of a solution.
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
        """Stores may also run in stalls (the bound's model; see `store_columns`)."""
        self.steps = sorted(graph.compute_of_op)
        self.K = len(self.steps)
        self.compute = graph.prefix[-1] or 1.0
        """The time unit of the model: seconds of compute."""
        self.model = SolverModel()
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
        self.stores: list[ModelStore] = []
        store_of: dict[tuple[int, Tier], int] = {}
        self.gaps: list[ModelGap] = []
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
                        ModelStore(
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
                    ModelGap(
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

    def gap_columns(self, gap: ModelGap) -> None:
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

    def done(self, store: ModelStore, position: int) -> int:
        """`D` of `store` at `position` (created on first use)."""
        if position not in store.done:
            store.done[position] = self.model.binary()
        return store.done[position]

    def store_columns(self, index: int, store: ModelStore) -> None:
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
