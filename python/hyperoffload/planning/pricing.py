"""
What a value's plan costs on the link, and the tier each copy takes: store
and fetch times (`timing`), the link time its gaps cannot hide (`exposure`),
link time reserved per op for an argument's fetches and its update's
write-back (`reserve`, `reserve_update`), where it is resident meanwhile
(`windows`, `reducible`), and each copy's tier (`tiered`).

Link time is reserved per op: while an op computes, each direction of the
link can move data for as long as the op runs. A 3 ms fetch before op 10,
whose ops 7-9 take 1 ms each with nothing reserved yet:

```python
free = list(graph.op_time)          # [..., 1e-3, 1e-3, 1e-3, ...] at ops 7-9
reserve(ctx, free, plan, 3e-3)      # [7]: issued before op 7
free[7:10]                          # [0.0, 0.0, 0.0]
```
"""

from __future__ import annotations

from collections.abc import Iterable

from hyperoffload.planning.plan_context import PlanContext
from hyperoffload.planning.tiers import choose_tiers
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support import serial_link
from hyperoffload.support.tiers import Tier


def timing(ctx: PlanContext, plan: ValuePlan) -> tuple[float, float]:
    """`plan`'s store and fetch seconds on the link of its copy's tier (by default)."""
    tier = plan.write_back or (
        plan.info.tier if plan.initially_out else ctx.default_tier()
    )
    link = ctx.hw.link(tier)
    store = ctx.transfer_time(link, plan.info, False, plan.compress)
    return store, ctx.transfer_time(link, plan.info, True, plan.compress)


def exposure(ctx: PlanContext, plan: ValuePlan) -> float:
    """
    Link time `plan`'s moves cannot hide in its gaps (on the default
    tier's link; a recomputation: its kernels' time).
    """
    if plan.recompute:
        return sum(r.time_s for r in plan.recipes)
    link = ctx.hw.link(ctx.default_tier())
    info, scheme = plan.info, plan.compress
    fetch = ctx.transfer_time(link, info, True, scheme)
    store = 0.0 if plan.initially_out else ctx.transfer_time(link, info, False, scheme)
    return sum(max(0.0, store + fetch - gap.time_s) for gap in plan.gaps)


def tiered(ctx: PlanContext, plans: list[ValuePlan]) -> list[ValuePlan]:
    """`plans` with the tier of each copy chosen (`hyperoffload.planning.tiers`)."""
    planned = {p.info.value for p in plans}
    if ctx.placing():  # a tagged argument no plan takes lives in HBM
        planned |= {info.value for info in ctx.tagged_arguments()}
    stay = [
        info
        for info in ctx.graph.values
        if info.producer < 0
        and info.tier != Tier.HBM
        and info.buffer is not None
        and info.value not in planned
    ]
    return choose_tiers(plans, ctx.graph, ctx.hw, ctx.options.tiers, stay)


def _take(
    free: list[float], ops: Iterable[int], need: float, enough: float
) -> tuple[float, int | None, float]:
    """
    `need` seconds of link time taken greedily from `free` at `ops`, in
    their order, until at most `enough` is left: what is left, the last op
    taken from (None: none) and what that op gave.
    """
    op: int | None = None
    taken = 0.0
    for op in ops:
        taken = min(free[op], need)
        free[op] -= taken
        need -= taken
        if need <= enough:
            break
    return need, op, taken


def reserve_update(ctx: PlanContext, free: list[float], plan: ValuePlan) -> bool:
    """
    Reserve link time in `free` for the write-back of the update of
    `plan`'s argument (`updates`), from the op after the update is made
    on; whether it fits before the step ends (True, nothing reserved,
    for an argument without one). An update made at the end of the step
    (the first layer's, with the optimizer in the backward pass) has no
    compute left to hide its store behind.
    """
    update = ctx.updates.get(id(plan.info))
    if update is None:
        return True
    _, info, tier = update
    need = ctx.transfer_time(ctx.hw.link(tier), info, False, None)
    trial = list(free)
    left, _, _ = _take(trial, range(info.producer + 1, len(trial)), need, 1e-12)
    if left > 1e-12:
        return False
    free[:] = trial
    return True


def lead(ctx: PlanContext, before: int, fetch: float) -> int:
    """The last op starting `fetch` seconds of compute or more before op `before` (or 0)."""
    return serial_link.lead(ctx.graph.prefix, before, fetch)


def reserve(
    ctx: PlanContext, free: list[float], plan: ValuePlan, fetch: float
) -> list[int] | None:
    """
    Reserve link time in `free` for each fetch of `plan`, as late as
    possible before its use and within twice the fetch time; the op before
    which each fetch is issued (after the op where only the first sliver
    of it would run, less than half that op), or None (nothing reserved)
    if one does not fit.
    """
    trial = list(free)
    starts: list[int] = []
    for gap in plan.gaps:
        # the ops before the use, the latest first, back to the last one
        # starting twice the fetch time or more before it
        ops = range(gap.before - 1, lead(ctx, gap.before, 2 * fetch) - 1, -1)
        need, op, taken = _take(trial, ops, fetch, 0.0)
        if need > 1e-12:
            return None
        if op is None:
            op = gap.before
        sliver = op < gap.before and taken < ctx.graph.op_time[op] / 2
        starts.append(op + 1 if sliver else op)
    free[:] = trial
    return starts


def windows(plan: ValuePlan, starts: list[int]) -> list[tuple[int, int]]:
    """Where the value is resident: each fetch's start to its cluster's last use."""
    ends = [gap.after for gap in plan.gaps[1:]] + [plan.info.last_use]
    return list(zip(starts, ends, strict=True))


def reducible(ctx: PlanContext, plan: ValuePlan, windows: list[tuple[int, int]]) -> int:
    """
    The bytes keeping an argument in its tier can take off the peak: it is
    still resident in its `windows`, so the peak falls at most to the
    highest point of the timeline there (an argument used right after the
    peak cannot lower it without exposing its fetch).
    """
    timeline = ctx.graph.timeline
    highest = max(max(timeline[a : b + 1]) for a, b in windows)
    return max(0, min(plan.info.bytes, ctx.graph.peak - highest))
