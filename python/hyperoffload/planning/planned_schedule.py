"""
The schedule a plan runs as (`schedule`): the graph's schedule with each
value's moves, frees and recomputations applied (`hyperoffload.model.moves`),
as the IR with the plan written in extracts to; what the planner simulates.

```python
schedule(ctx, [ValuePlan(h, [gap], stored=True)])
# %h: stored after its producer's step, freed after the step before the gap,
# fetched `prefetch_distance` ops before the use after it
```
"""

from __future__ import annotations

from dataclasses import replace

from hyperoffload.analysis.lifetimes import Gap, ProgramGraph
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.moves import Move, Recompute, apply_moves
from hyperoffload.model.schedule import Schedule
from hyperoffload.planning.plan import Plan, PlanOptions
from hyperoffload.planning.plan_context import PlanContext
from hyperoffload.planning.recipes import Recipe, recomputation_steps
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support.tiers import Tier


def plan_schedule(
    graph: ProgramGraph, plan: Plan, hardware: Hardware, prefetch_distance: int = 1
) -> Schedule:
    """The schedule `plan` runs as: what the IR with the plan written in extracts to."""
    options = PlanOptions(target=0, prefetch_distance=prefetch_distance)
    return schedule(PlanContext(graph, hardware, options), plan.values)


def schedule(ctx: PlanContext, plans: list[ValuePlan]) -> Schedule:
    """
    The graph's schedule with the moves of `plans` applied, as the IR
    written orders them: stores in plan order, fetches in their
    `issue_order`.
    """
    distance = ctx.options.prefetch_distance
    stores: list[Move] = []
    fetches: list[tuple[tuple[int, int], Move]] = []
    for plan in plans:
        moves = _moves(ctx, plan)
        if moves and moves[0].store_after is not None:
            stores.append(replace(moves[0], release=None, fetch=None, use=None))
        if plan.write_back is None:
            orders = [plan.issue_order(i, distance) for i in range(len(moves))]
            fetches += zip(orders, moves, strict=True)
    fetches.sort(key=lambda e: e[0])
    moves = stores + [move for _, move in fetches]
    releases = [r for p in plans for r in _releases(ctx, p)]
    recomputes = _recomputes(ctx, plans)
    scheduled = apply_moves(
        _kept_in_hbm(ctx.graph.schedule, plans),
        moves,
        ctx.hw,
        releases,
        recomputes,
    )
    for plan in plans:  # an argument never read is never fetched
        if plan.initially_out and not plan.gaps and plan.info.buffer is not None:
            scheduled.buffers[plan.info.buffer].initial = False
    return scheduled


def _moves(ctx: PlanContext, plan: ValuePlan) -> list[Move]:
    """`plan`'s store and, for each gap, its free and fetch (none for a recomputation)."""
    info = plan.info
    assert info.buffer is not None
    moves: list[Move] = []
    if plan.recompute:
        return moves
    store_after = ctx.last_step_at_or_before(info.producer) if plan.stored else None
    if plan.write_back is not None:  # stored once, never fetched back
        tier = plan.copy_tier(ctx.hw.offload_tier)
        compressed = ctx.compressed(plan)
        return [
            Move(info.buffer, store_after, None, None, None, None, compressed, tier)
        ]
    for index, gap in enumerate(plan.gaps):
        fetch_op = plan.fetch_op(index, ctx.options.prefetch_distance)
        release = (
            None
            if gap.after < 0 and plan.initially_out
            else ctx.last_step_at_or_before(gap.after)
        )
        moves.append(
            Move(
                info.buffer,
                store_after,
                release,
                ctx.first_step_at_or_after(fetch_op),
                ctx.first_step_at_or_after(gap.before),
                compressed=ctx.compressed(plan),
                tier=plan.copy_tier(ctx.hw.offload_tier),
            )
        )
    return moves


def _recomputes(ctx: PlanContext, plans: list[ValuePlan]) -> list[Recompute]:
    """
    A free after the use before each gap of a recomputed value, and its
    recipe's kernels before the use after it, once per position however
    many values share them.
    """
    groups: dict[int, list[tuple[ValuePlan, Gap, Recipe]]] = {}
    for plan in plans:
        if plan.recompute:
            for gap, recipe in zip(plan.gaps, plan.recipes, strict=True):
                groups.setdefault(recipe.at, []).append((plan, gap, recipe))
    recomputes: list[Recompute] = []
    for at, group in groups.items():
        targets = {p.info.buffer for p, _, _ in group if p.info.buffer is not None}
        recipes = [recipe for *_, recipe in group]
        steps = recomputation_steps(ctx.computes, recipes, targets)
        for index, (plan, gap, _) in enumerate(group):
            assert plan.info.buffer is not None
            recomputes.append(
                Recompute(
                    plan.info.buffer,
                    ctx.last_step_at_or_before(gap.after),
                    ctx.first_step_at_or_after(at),
                    tuple(steps) if index == 0 else (),
                )
            )
    return recomputes


def _releases(ctx: PlanContext, plan: ValuePlan) -> list[tuple[int, int]]:
    """
    The free after the last use of an argument living outside HBM, brought
    back, or of a written-back result (the caller gets its copy).
    """
    info = plan.info
    if plan.recompute:
        return []
    if plan.write_back is not None and info.buffer is not None:
        last = info.last_use_before(len(ctx.graph.ops) - 1)  # the return
        return [(info.buffer, ctx.last_step_at_or_before(last))]
    if not plan.gaps or info.last_use >= len(ctx.graph.ops) - 1 or info.buffer is None:
        return []
    if not ctx.graph.schedule.buffers[info.buffer].pinned or info.tier == Tier.HBM:
        return []  # freed after its last use anyway, or in HBM at return
    # never before the step that waits for the last fetch (uses that run
    # no kernel of their own, such as views, map to an earlier step)
    fetched = ctx.first_step_at_or_after(plan.gaps[-1].before)
    return [(info.buffer, max(ctx.last_step_at_or_before(info.last_use), fetched))]


def _kept_in_hbm(schedule: Schedule, plans: list[ValuePlan]) -> Schedule:
    """
    `schedule` with each tagged argument that `plans` park between uses (kept
    in HBM by the caller, so no copy exists outside it) at home in HBM: its
    store is priced, as the IR written (the argument tagged `hbm`) runs it.
    """
    parked = {
        p.info.buffer
        for p in plans
        if p.info.producer < 0
        and p.stored
        and not p.initially_out
        and p.info.buffer is not None
        and schedule.buffers[p.info.buffer].home != Tier.HBM
    }
    if not parked:
        return schedule
    buffers = [
        replace(b, home=Tier.HBM) if b.id in parked else b for b in schedule.buffers
    ]
    return replace(schedule, buffers=buffers)
