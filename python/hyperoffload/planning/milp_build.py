"""
The construction of the exact reference's MILP (`hyperoffload.planning.milp`,
whose docstring names the variables and rows) on a `Formulation`: `x` per
choice, the gaps' `S`, `w` and `u`, the stores' `st`, `D` and `u`, the
recomputations' `r`, then the capacity, memory and slowdown rows.

```python
formulation = formulate(graph, hardware, PlanOptions(0), MilpOptions(max_slowdown=0.05))
formulation.model  # the SolverModel: columns and rows, in a fixed order
```
"""

from __future__ import annotations

from functools import reduce
from itertools import pairwise
from math import gcd

import numpy as np

from hyperoffload.analysis.compression import value_compression
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.model.compression import transfer_time
from hyperoffload.model.hardware import Hardware
from hyperoffload.planning.milp_model import (
    Formulation,
    MilpOptions,
    ModelGap,
    ModelStore,
)
from hyperoffload.planning.planner import PlanOptions
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support.tiers import Tier

StoreKeys = dict[tuple[int, Tier], int]
"""(buffer, tier) -> the index of its store in `Formulation.stores`."""


def formulate(
    graph: ProgramGraph,
    hardware: Hardware,
    options: PlanOptions,
    milp: MilpOptions,
    relaxed: bool = False,
) -> Formulation:
    """The MILP of `graph`, its columns and rows made (`build`)."""
    formulation = Formulation(graph, hardware, options, milp, relaxed)
    build(formulation)
    return formulation


def build(f: Formulation) -> None:
    """Every column and row of `f`, in the order the solver receives them."""
    m = f.model
    f.peak = m.column(0.0, np.inf)
    f.stall = [m.column(0.0, np.inf) for _ in range(f.K + 1)]
    f.take = [
        m.column(1.0, 1.0) if c < f.num_required else m.binary()
        for c in range(len(f.choices))
    ]
    store_of: StoreKeys = {}
    for c, plan in enumerate(f.choices):
        _transfers(f, c, plan, store_of)
    f.big = _big_m(f)
    for gap in f.gaps:
        _gap_columns(f, gap)
    for index, stored in enumerate(f.stores):
        _store_columns(f, index, stored)
    _one_tier_rows(f, store_of)
    _recompute_columns(f)
    _capacity_rows(f)
    _memory_rows(f)
    _slowdown_row(f)


# transfers


def _transfers(f: Formulation, c: int, plan: ValuePlan, store_of: StoreKeys) -> None:
    """The gaps of choice `c`, its store (shared per value and tier), its bytes out after its last use."""
    info = plan.info
    tier = f.direction(plan)
    link = f.hw.link(tier)
    compressed = value_compression(info.value, plan.compress, f.hw)
    duration = transfer_time(link, info.bytes, True, compressed) / f.compute
    store: int | None = None
    if plan.stored:
        assert info.buffer is not None
        if (info.buffer, tier) not in store_of:
            store_of[info.buffer, tier] = len(f.stores)
            seconds = transfer_time(link, info.bytes, False, compressed)
            after = f.last_at_or_before(info.producer)
            f.stores.append(
                ModelStore(info.bytes, seconds / f.compute, (tier, False), after)
            )
        store = store_of[info.buffer, tier]
    for index, gap in enumerate(plan.gaps):
        release = (
            -1
            if gap.after < 0 and plan.initially_out
            else f.last_at_or_before(gap.after)
        )
        use = f.first_at_or_after(gap.before)
        f.gaps.append(
            ModelGap(c, index, release, use, info.bytes, duration, (tier, True), store)
        )
    if plan.initially_out and _released_after_last_use(f, plan):
        last = f.last_at_or_before(info.last_use)
        for j in range(last + 1, f.K + 1):
            f.out[j].append((f.take[c], info.bytes))


def _released_after_last_use(f: Formulation, plan: ValuePlan) -> bool:
    """`planned_schedule._releases`: a tagged argument is freed after its last use."""
    info = plan.info
    if not plan.gaps or info.buffer is None:
        return False
    if info.last_use >= len(f.graph.ops) - 1:
        return False
    pinned = f.graph.schedule.buffers[info.buffer].pinned
    return pinned and info.tier != Tier.HBM


def _big_m(f: Formulation) -> float:
    """An upper bound on a useful stall: every transfer exposed."""
    total = sum(g.duration for g in f.gaps) + sum(s.duration for s in f.stores)
    if f.milp.max_slowdown is not None:
        total = min(total, f.milp.max_slowdown)
    return max(total, 1e-9)


def _use_slot(f: Formulation, direction: tuple[Tier, bool], j: int, stall: bool) -> int:
    """A `u` column in the stall (or compute) part of slot `j`."""
    column = f.model.column(0.0, np.inf)
    slots = f.slots.setdefault(direction, [[] for _ in range(f.K + 1)])
    slots[j].append((column, stall))
    return column


def _done(f: Formulation, store: ModelStore, position: int) -> int:
    """`D` of `store` at `position` (created on first use)."""
    if position not in store.done:
        store.done[position] = f.model.binary()
    return store.done[position]


# gaps


def _gap_columns(f: Formulation, gap: ModelGap) -> None:
    """`S`, `w` and the fetch's `u` of one gap, position by position to its use."""
    m = f.model
    take = f.take[gap.choice]
    store = None if gap.store is None else f.stores[gap.store]
    previous: int | None = None
    used: list[tuple[int, float]] = []
    for j in range(gap.release + 1, gap.use + 1):
        issued = take if j == gap.use else m.binary()
        gap.fetch.append(issued)
        if previous is not None:
            m.at_most([(previous, 1.0), (issued, -1.0)], 0.0)
        previous = issued
        done = None if store is None else _done(f, store, j)
        used += _fetch_slot_columns(f, gap, j, issued, store)
        if j == gap.use:
            break
        _out_in_gap(f, gap, j, issued, done)
    m.equal([*used, (take, -gap.duration)], 0.0)


def _fetch_slot_columns(
    f: Formulation, gap: ModelGap, j: int, issued: int, store: ModelStore | None
) -> list[tuple[int, float]]:
    """
    The fetch's `u` in the stall before position `j` and within its compute:
    only once issued and, for a stored value, once its store is complete.
    """
    m = f.model
    used: list[tuple[int, float]] = []
    for stall in (True, False):
        if not stall and (j == gap.use or f.slot_time(j) <= 0):
            continue
        bound = f.big if stall else f.slot_time(j)
        u = _use_slot(f, gap.direction, j, stall)
        m.at_most([(u, 1.0), (issued, -bound)], 0.0)
        if store is not None:
            # the fetch starts once its store is complete: before compute j
            # starts for the stall before it, before compute j ends (compute
            # j + 1 starts) within it
            ready = _done(f, store, j if stall else j + 1)
            m.at_most([(u, 1.0), (ready, -bound)], 0.0)
        used.append((u, 1.0))
    return used


def _out_in_gap(
    f: Formulation, gap: ModelGap, j: int, issued: int, done: int | None
) -> None:
    """The gap's bytes out of HBM at position `j`: `x - S`, or `w` for a stored value."""
    m = f.model
    take = f.take[gap.choice]
    if done is None:  # x - S
        f.out[j].append((take, gap.bytes))
        f.out[j].append((issued, -gap.bytes))
        return
    w = m.column(0.0, 1.0)
    m.at_most([(w, 1.0), (take, -1.0), (issued, 1.0)], 0.0)
    m.at_most([(w, 1.0), (done, -1.0)], 0.0)
    f.out[j].append((w, gap.bytes))


# stores


def _store_columns(f: Formulation, index: int, store: ModelStore) -> None:
    """
    `st`, the store's `u` from its producer on, and the rows defining `D`.
    In the planning model a store runs in compute slots only: the compute
    stream never waits for one, and a stall the model places (free to place
    it anywhere) must not finish a store, and free its copy, earlier than it
    would. The relaxed model (`relaxed`, the one whose bound is reported)
    lets stores run in stalls too, as the simulator's do while the compute
    stream waits for a fetch.
    """
    m = f.model
    store.column = m.binary()
    takes = {f.take[g.choice] for g in f.gaps if g.store == index}
    m.at_most([(store.column, 1.0)] + [(t, -1.0) for t in takes], 0.0)
    for t in takes:
        m.at_most([(t, 1.0), (store.column, -1.0)], 0.0)
    used = _store_slot_columns(f, store)
    m.equal([*used, (store.column, -store.duration)], 0.0)
    for a, b in pairwise(sorted(store.done)):
        m.at_most([(store.done[a], 1.0), (store.done[b], -1.0)], 0.0)


def _store_slot_columns(f: Formulation, store: ModelStore) -> list[tuple[int, float]]:
    """
    The store's `u` per slot up to its last `D`: `D_j' = 1` (complete
    before compute j' starts) leaves no link time in compute j' or later,
    nor in a stall after j'.
    """
    m = f.model
    last = max(store.done, default=store.after + 1)
    used: list[tuple[int, float]] = []
    latest: int | None = None  # `D` at the last position with one, so far
    for j in range(store.after + 1, last + 1):
        before = latest
        if j in store.done:
            latest = store.done[j]
        if f.relaxed:
            u = _use_slot(f, store.direction, j, True)
            used.append((u, 1.0))
            if before is not None:
                m.at_most([(u, 1.0), (before, f.big)], f.big)
        if j == last or f.slot_time(j) <= 0:
            continue
        u = _use_slot(f, store.direction, j, False)
        used.append((u, 1.0))
        if latest is not None:
            m.at_most([(u, 1.0), (latest, f.slot_time(j))], f.slot_time(j))
    return used


def _one_tier_rows(f: Formulation, store_of: StoreKeys) -> None:
    """A value is stored in one tier at most."""
    by_buffer: dict[int, list[int]] = {}
    for (buffer, _), index in store_of.items():
        by_buffer.setdefault(buffer, []).append(f.stores[index].column)
    for columns in by_buffer.values():
        if len(columns) > 1:
            f.model.at_most([(c, 1.0) for c in columns], 1.0)


# recomputation


def _recompute_columns(f: Formulation) -> None:
    """
    `r` per recomputation candidate: the value is out of HBM from after the
    use before its gap to the step its clones run before; it takes the
    clones' compute time (`Formulation.recompute_time`). A value is
    recomputed or offloaded, not both, and what the clones read stays where
    it is: no choice that moves it is taken with `r`.
    """
    m = f.model
    f.recompute_take = [m.binary() for _ in f.recomputes]
    movers = _movers(f)
    for r, plan in zip(f.recompute_take, f.recomputes, strict=True):
        (gap,), (recipe,) = plan.gaps, plan.recipes
        for j in range(
            f.last_at_or_before(gap.after) + 1, f.first_at_or_after(recipe.at)
        ):
            f.out[j].append((r, plan.info.bytes))
        own = plan.info.buffer
        for other in movers.get(own, []) if own is not None else []:
            if other != r and other not in f.recompute_take:
                m.at_most([(r, 1.0), (other, 1.0)], 1.0)
        for buffer in recipe.reads:
            for other in movers.get(buffer, []):
                m.at_most([(r, 1.0), (other, 1.0)], 1.0)


def _movers(f: Formulation) -> dict[int, list[int]]:
    """Buffer -> the columns of the choices and recomputations that move it."""
    movers: dict[int, list[int]] = {}
    for c, plan in enumerate(f.choices):
        if plan.info.buffer is not None:
            movers.setdefault(plan.info.buffer, []).append(f.take[c])
    for r, plan in zip(f.recompute_take, f.recomputes, strict=True):
        if plan.info.buffer is not None:
            movers.setdefault(plan.info.buffer, []).append(r)
    return movers


# rows


def _capacity_rows(f: Formulation) -> None:
    """
    Per slot and direction, the transfers fit; in the relaxed model, a stall
    holds transfers for all its length (the compute stream waits for a
    fetch, itself in its stream or waiting for its store); on a link whose
    `duplex_efficiency` is below 1, both directions together fit in
    `max(1, 2 x efficiency)` of the slot (while both run, each moves at that
    efficiency: a relaxation of the simulator's rule).
    """
    for slots in f.slots.values():
        for j, columns in enumerate(slots):
            stalls = [(u, 1.0) for u, stall in columns if stall]
            computes = [(u, 1.0) for u, stall in columns if not stall]
            if stalls:
                f.model.at_most([*stalls, (f.stall[j], -1.0)], 0.0)
            if computes:
                f.model.at_most(computes, f.slot_time(j))
    if f.relaxed:
        _busy_stall_rows(f)
    for tier in {tier for tier, _ in f.slots}:
        _duplex_rows(f, tier)


def _busy_stall_rows(f: Formulation) -> None:
    """The relaxed model: a stall waits for a transfer, so one runs all along."""
    for j in range(f.K + 1):
        moving = [
            (u, -1.0) for slots in f.slots.values() for u, stall in slots[j] if stall
        ]
        f.model.at_most([(f.stall[j], 1.0), *moving], 0.0)


def _duplex_rows(f: Formulation, tier: Tier) -> None:
    """Both directions of `tier`'s link share `max(1, 2 x duplex_efficiency)` of a slot."""
    share = max(1.0, 2 * f.hw.link(tier).duplex_efficiency)
    to, back = f.slots.get((tier, True)), f.slots.get((tier, False))
    if share >= 2 or to is None or back is None:
        return
    for j in range(f.K + 1):
        for stall in (True, False):
            terms = [(u, 1.0) for u, s in to[j] + back[j] if s == stall]
            if not terms:
                continue
            if stall:
                f.model.at_most([*terms, (f.stall[j], -share)], 0.0)
            else:
                f.model.at_most(terms, share * f.slot_time(j))


def _memory_rows(f: Formulation) -> None:
    """
    The live bytes at each position are at most `P`. When every size is a
    multiple of some granule (at most a millionth of the peak), `P` is an
    integer number of granules (the peak of any plan is one), which tightens
    the bound: `P` at least the target rounded down to a granule.
    """
    sizes = [*f.base, *(nbytes for out in f.out for _, nbytes in out)]
    granule = reduce(gcd, (int(abs(n)) for n in sizes), 0) or 1
    if f.peak0 / granule <= 1e6:
        f.granule = granule
        units = f.model.column(f.options.target // granule, np.inf, integer=True)
        f.model.equal([(f.peak, 1.0), (units, -granule / f.peak0)], 0.0)
    else:
        f.model.lower[f.peak] = f.options.target / f.peak0
    for j in range(f.K + 1):
        terms: dict[int, float] = {}
        for column, nbytes in f.out[j]:
            terms[column] = terms.get(column, 0.0) + nbytes / f.peak0
        # base - out <= P  <=>  -P - out <= -base
        f.model.at_most(
            [(f.peak, -1.0), *[(c, -v) for c, v in terms.items()]],
            -f.base[j] / f.peak0,
        )


def _slowdown_row(f: Formulation) -> None:
    """`E` plus recomputation time at most `max_slowdown` (with one)."""
    if f.milp.max_slowdown is None:
        return
    f.slowdown_row = len(f.model.row_lower)
    f.model.at_most(
        [(e, 1.0) for e in f.stall] + f.recompute_time(), f.milp.max_slowdown
    )
