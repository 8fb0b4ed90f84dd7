"""
One plan per value from the candidates taken (`merge_value_plans`), and the
plans a planner judges from them (`merge`): a recomputation replaces the
value's offloads, an argument left in its tier takes its update along.

```python
merge_value_plans([gap_a, gap_b])  # two offloads of %h: one plan, both gaps in order
```
"""

from __future__ import annotations

from dataclasses import replace

from hyperoffload.planning.plan_context import PlanContext
from hyperoffload.planning.required import result_write_back
from hyperoffload.planning.value_plan import ValuePlan


def merge(
    ctx: PlanContext, chosen: list[ValuePlan], plans: list[ValuePlan]
) -> list[ValuePlan]:
    """
    `merge_value_plans(plans)`, less the recomputations that would read a
    buffer some plan moves (what their clones read must stay where it is).
    Where values may move over fused gaps (`PlanOptions.fused_gaps`), of a
    recomputation and a move of a buffer it reads, the one `plans` ranks
    first is kept (a plan the rules require always): the MLP's gate becomes
    movable there, and a move of it ranked after the cheap recomputation of
    its sigmoid would undo that (the seeds' 4-layer step at 17 GB: +130%
    against +178%); elsewhere the recomputation gives way (measured faster
    on the LLaMA-3-8B 2-layer steps' curves). A value
    recomputed through a chain of kernels keeps its longest gap only:
    chains cloned again over several gaps of one value are where the
    program written has been seen to fuse otherwise than the recipes say
    (on the LLaMA-3-8B step's loss), and `PlanningLoop.write` would then
    fall back to offloading alone.
    """
    ranked = _by_rank(chosen, plans) if ctx.options.fused_gaps else plans
    merged = [_one_gap_per_chain(p) for p in merge_value_plans(ranked)]
    updates = ctx.updates
    merged += [  # the update of an argument left in its tier goes back there
        result_write_back(ctx, *updates[id(p.info)])
        for p in merged
        if p.initially_out and id(p.info) in updates
    ]
    moved = {p.info.buffer for p in (*chosen, *merged)}
    return [
        p for p in merged if not any(b in moved for r in p.recipes for b in r.reads)
    ]


def _by_rank(chosen: list[ValuePlan], plans: list[ValuePlan]) -> list[ValuePlan]:
    """
    `plans` less each move of a buffer that a recomputation ranked before it
    reads, and each recomputation reading a buffer `chosen` or a move
    ranked before it moves.
    """
    moved = {p.info.buffer for p in chosen if not p.recompute}
    read: set[int] = set()
    kept: list[ValuePlan] = []
    for plan in plans:
        if plan.recompute:
            reads = {b for r in plan.recipes for b in r.reads}
            if reads & moved:
                continue
            read |= reads
        elif plan.info.buffer in read:
            continue
        else:
            moved.add(plan.info.buffer)
        kept.append(plan)
    return kept


def _one_gap_per_chain(plan: ValuePlan) -> ValuePlan:
    """`plan` over its longest gap alone if it recomputes through a chain over several."""
    if len(plan.gaps) < 2 or all(len(r.steps) < 2 for r in plan.recipes):
        return plan
    longest = max(range(len(plan.gaps)), key=lambda i: plan.gaps[i].time_s)
    return replace(plan, gaps=[plan.gaps[longest]], recipes=[plan.recipes[longest]])


def merge_value_plans(plans: list[ValuePlan]) -> list[ValuePlan]:
    """One plan per value, its gaps in order (gaps of one value never overlap)."""
    merged: dict[int, ValuePlan] = {}
    for plan in plans:
        key = id(plan.info)
        if key in merged and merged[key].recompute != plan.recompute:
            if not plan.recompute:
                continue  # an offload never replaces a recomputation
            del merged[key]  # a recomputation replaces the offload: one way per value
        if key in merged and merged[key].initially_out and not plan.initially_out:
            continue  # an argument left in its tier is not parked as well
        retiring = plan.write_back is not None and plan.info.producer < 0
        if retiring and key in merged:
            continue  # parked, it is retired after its last use anyway
        if key in merged and merged[key].write_back is not None and plan.gaps:
            del merged[key]  # parked instead of retired: the gaps decide
        if retiring:
            merged[key] = replace(plan, gaps=[])
        elif plan.initially_out:  # an argument left in its tier: one plan, kept whole
            merged[key] = ValuePlan(
                plan.info,
                list(plan.gaps),
                stored=False,
                initially_out=True,
                fetch_ops=plan.fetch_ops,
                compress=plan.compress,
            )
        elif key in merged:
            into = merged[key]
            into.fetch_ops = (
                None
                if into.fetch_ops is None or plan.fetch_ops is None
                else into.fetch_ops + plan.fetch_ops
            )
            into.gaps += plan.gaps
            into.recipes += plan.recipes
        else:
            merged[key] = ValuePlan(
                plan.info,
                list(plan.gaps),
                stored=not plan.recompute,
                recompute=plan.recompute,
                recipes=list(plan.recipes),
                compress=None if plan.recompute else plan.compress,
                fetch_ops=None if plan.fetch_ops is None else list(plan.fetch_ops),
            )
    for plan in merged.values():
        if plan.recipes:
            pairs = sorted(
                zip(plan.gaps, plan.recipes, strict=True), key=lambda e: e[0].after
            )
            plan.gaps, plan.recipes = [g for g, _ in pairs], [r for _, r in pairs]
        elif plan.fetch_ops is not None and not plan.initially_out:
            moved = sorted(
                zip(plan.gaps, plan.fetch_ops, strict=True), key=lambda e: e[0].after
            )
            plan.gaps, plan.fetch_ops = [g for g, _ in moved], [f for _, f in moved]
        else:
            plan.gaps.sort(key=lambda g: g.after)
    return list(merged.values())
