"""
Whether a plan meets its target, and the fewest candidates that do: a
target below one op's working set is refused (`infeasible`); plans are
simulated (`simulated`, once per plan where simulations are kept); the
ranked candidates are taken as the shortest prefix that meets the target
(`smallest_prefix`) or just in time (`just_in_time`); a plan that meets it
does without what it does not need (`pruned`) and keeps arguments in HBM
across gaps where it leaves room (`joined`).

```python
count, peak = smallest_prefix(ctx, chosen, ranked, peak)  # e.g. 12 of 80
taken, peak = pruned(ctx, chosen, ranked[:count], peak)   # 11: one overshot
```
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from hyperoffload.ir.diagnostics import Severity, format_diagnostic
from hyperoffload.planning.merge import merge
from hyperoffload.planning.next_use import select_by_next_use
from hyperoffload.planning.plan import PlanError
from hyperoffload.planning.plan_context import PlanContext
from hyperoffload.planning.planned_schedule import schedule
from hyperoffload.planning.pricing import exposure, tiered, timing
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.sim.simulator import SimResult, simulate

JIT_ROUNDS = 3
"""Selections tried for lower targets when the just-in-time plan misses (`just_in_time`)."""

PRUNE_TRIES = 24
"""Candidates a plan that meets its target tries to do without (`pruned`, `joined`)."""


def infeasible(ctx: PlanContext) -> None:
    """Raise `PlanError` at the first op whose inputs and outputs alone exceed the target."""
    for step, needed in ctx.graph.schedule.working_sets():
        if needed > ctx.options.target:
            raise PlanError(
                format_diagnostic(
                    step.loc,
                    Severity.ERROR,
                    f"no plan meets the HBM target of {ctx.options.target} B: "
                    f"'{step.name}' alone needs {needed} B (its inputs and outputs)",
                )
            )


def peak_of(ctx: PlanContext, plans: list[ValuePlan]) -> int:
    """The simulated peak HBM of `plans`."""
    return simulated(ctx, plans).peak_hbm_bytes


def simulated(ctx: PlanContext, plans: list[ValuePlan]) -> SimResult:
    """
    `plans` simulated (no capacity, nothing recorded); once, where the
    planner keeps `simulations` (plans for other targets try the same).
    """
    if ctx.simulations is None:
        return simulate(schedule(ctx, plans), ctx.hw, None, record=False)
    results = ctx.simulations.results
    key = (ctx.options.prefetch_distance, tuple(p.key() for p in plans))
    if key not in results:
        result = simulate(schedule(ctx, plans), ctx.hw, None, record=False)
        results[key] = (list(plans), result)
    return results[key][1]


def combined(
    ctx: PlanContext, chosen: list[ValuePlan], taken: list[ValuePlan]
) -> list[ValuePlan]:
    """
    The plans `chosen` and the candidates `taken` make together (`merge`),
    each copy's tier chosen (`tiered`): what is judged (`kept`).
    """
    return ctx.kept(
        ("combined", tuple(p.key() for p in chosen), tuple(p.key() for p in taken)),
        lambda: tiered(ctx, chosen + merge(ctx, chosen, taken)),
    )


def smallest_prefix(
    ctx: PlanContext, chosen: list[ValuePlan], candidates: list[ValuePlan], peak: int
) -> tuple[int, int]:
    """
    The fewest top candidates whose moves bring the peak to the target (a
    bisection: the peak falls roughly as more are taken); if no prefix
    tried meets it, the tried prefix with the lowest peak.
    """
    target = ctx.options.target
    best = (0, peak)
    low, high = 1, len(candidates)
    while low <= high:
        middle = (low + high) // 2
        reached = peak_of(ctx, combined(ctx, chosen, candidates[:middle]))
        if reached <= target:
            best, high = (middle, reached), middle - 1
        else:
            if reached < best[1] and best[1] > target:
                best = (middle, reached)
            low = middle + 1
    return best


def just_in_time(
    ctx: PlanContext, chosen: list[ValuePlan], candidates: list[ValuePlan]
) -> tuple[list[ValuePlan], int]:
    """
    The candidates `select_by_next_use` takes (offloads and retired
    arguments; no argument left in its tier, no recomputation), for the
    target, then for a target lower by what the simulated peak exceeds
    it (up to `JIT_ROUNDS` times): stores that end late hold their bytes
    longer than the timeline says. The plan with the lowest peak if none
    meets the target.
    """
    pool = [c for c in candidates if not c.recompute]
    target = ctx.options.target
    returned = {update.value for _, update, _ in ctx.updates.values()}
    updates = {  # each update out of HBM once its last use before the return ran
        argument: (gap.after + 1, update.bytes)
        for argument, (_, update, _) in ctx.updates.items()
        if (gap := ctx.graph.written_back_gap(update, returned)) is not None
    }
    best: tuple[list[ValuePlan], int] | None = None
    goal = target
    waiting = ctx.options.wait_for_stores  # judged in an HBM of the target
    for _ in range(1 if waiting else JIT_ROUNDS):
        taken = select_by_next_use(
            pool,
            ctx.graph.timeline,
            ctx.graph.prefix,
            goal,
            partial(timing, ctx),
            updates,
            waiting,
        )
        peak = peak_of(ctx, combined(ctx, chosen, taken))
        if best is None or peak < best[1]:
            best = (taken, peak)
        if peak <= target:
            break
        goal -= peak - target
    assert best is not None
    return best


def pruned(
    ctx: PlanContext, chosen: list[ValuePlan], taken: list[ValuePlan], peak: int
) -> tuple[list[ValuePlan], int]:
    """
    `taken` less the candidates the target does not need, the most
    exposed tried first (up to `PRUNE_TRIES`): a prefix of the ranking
    that meets the target can overshoot it by a large candidate taken
    last, and what it no longer needs only costs link time.
    """
    ranked = sorted(
        (c for c in taken if exposure(ctx, c) > 0),
        key=lambda c: -exposure(ctx, c),
    )
    if not ranked:
        return taken, peak
    makespan = simulated(ctx, combined(ctx, chosen, taken)).makespan_s
    for candidate in ranked[:PRUNE_TRIES]:
        fewer = [c for c in taken if c is not candidate]
        result = simulated(ctx, combined(ctx, chosen, fewer))
        if (
            result.peak_hbm_bytes <= ctx.options.target
            and result.makespan_s <= makespan
        ):
            taken, peak, makespan = fewer, result.peak_hbm_bytes, result.makespan_s
    return taken, peak


def joined(
    ctx: PlanContext, chosen: list[ValuePlan], peak: int
) -> tuple[list[ValuePlan], int]:
    """
    `chosen` with an argument left in its tier kept in HBM across some of
    the gaps between its clusters of uses, where the target leaves room:
    the largest first (each join saves a fetch of its bytes), up to
    `PRUNE_TRIES`, each kept where the peak still meets the target and
    the step is no slower. A split at every gap that hides a fetch
    spends link time the target does not ask for.
    """
    joins = sorted(
        (
            (plan.info.bytes, index, position, plan.gaps[position])
            for index, plan in enumerate(chosen)
            if plan.initially_out
            for position in range(1, len(plan.gaps))
        ),
        key=lambda j: (-j[0], j[1], j[2]),
    )
    if not joins:
        return chosen, peak
    makespan = simulated(ctx, chosen).makespan_s
    for _, index, _, gap in joins[:PRUNE_TRIES]:
        plan = chosen[index]
        at = next(k for k, g in enumerate(plan.gaps) if g is gap)
        fetch_ops = plan.fetch_ops
        one_fetch = replace(
            plan,
            gaps=plan.gaps[:at] + plan.gaps[at + 1 :],
            fetch_ops=None
            if fetch_ops is None
            else fetch_ops[:at] + fetch_ops[at + 1 :],
        )
        trial = [*chosen[:index], one_fetch, *chosen[index + 1 :]]
        result = simulated(ctx, trial)
        if (
            result.peak_hbm_bytes <= ctx.options.target
            and result.makespan_s <= makespan
        ):
            chosen, peak, makespan = trial, result.peak_hbm_bytes, result.makespan_s
    return chosen, peak
