"""
The plans the rules require (`hyperoffload.planning.planner`, first two
rules): an argument living outside HBM is fetched before each cluster of its
uses (`clusters`), a result tagged with a tier is written back after it is
produced (`write_back`).

```
func.func @step(%w: tensor<...> {hyperoffload.tier = "remote"}, ...)
    -> (tensor<...> {hyperoffload.tier = "remote"})
// %w: out of HBM from entry to its first use and between clusters of uses;
// the result: stored after its producer, released after its last use
```
"""

from __future__ import annotations

from dataclasses import replace

from hyperoffload.analysis.lifetimes import Gap, ValueInfo
from hyperoffload.dialects.hyperoffload import RemoteType
from hyperoffload.planning.plan_context import PlanContext
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support.positions import OpIndex
from hyperoffload.support.tiers import Tier


def mandatory(ctx: PlanContext) -> list[ValuePlan]:
    """
    The plans the rules require: each tagged argument's `clusters` (unless
    the arguments are placed), each tagged result's `write_back` (unless it
    goes back with its argument's plan, `ctx.updates`).
    """
    plans: list[ValuePlan] = []
    results: dict[int, list[tuple[int, ValueInfo, Tier]]] = {}
    follow = {position for position, _, _ in ctx.updates.values()}
    for tagged in ctx.tagged_results:
        if tagged[0] not in follow:  # else written back with its argument (`merge`)
            results.setdefault(id(tagged[1]), []).append(tagged)
    for info in ctx.graph.values:
        if info.buffer is None or isinstance(info.value.type, RemoteType):
            continue
        if info.producer < 0 and info.tier != Tier.HBM:
            if info.category not in ctx.options.categories:
                continue
            if not info.uses:  # never read: it stays in its tier
                plans.append(ValuePlan(info, [], stored=False, initially_out=True))
            elif not ctx.placing():
                plans.append(clusters(ctx, info))
            continue
        plans += [result_write_back(ctx, *t) for t in results.get(id(info), [])]
    return plans


def result_write_back(
    ctx: PlanContext, position: int, info: ValueInfo, tier: Tier
) -> ValuePlan:
    """The write-back of the result at `position` (compressed if it holds KV state)."""
    kv = position < len(ctx.kv_results) and ctx.kv_results[position]
    return write_back(ctx, info, tier, ctx.compress_of(info, kv))


def write_back(
    ctx: PlanContext, info: ValueInfo, tier: Tier, compress: str | None = None
) -> ValuePlan:
    """
    Stored after its producer, released after its last use or that of a
    value sharing its buffer (a view read later), returned as the copy.
    """
    assert info.buffer is not None
    aliases = ctx.aliases.get(info.buffer, [])
    uses = sorted({use for alias in (info, *aliases) for use in alias.uses})
    return ValuePlan(
        replace(info, uses=uses),
        [],
        stored=True,
        write_back=tier,
        compress=compress,
    )


def clusters(ctx: PlanContext, info: ValueInfo) -> ValuePlan:
    """
    Out of HBM from entry to the first use and between clusters of uses:
    uses split into clusters where the gap is at least `min_gap` and long
    enough to hide the fetch of the next cluster. An argument read through
    views (a reshaped KV cache) is one cluster, from the first use of it
    or its views to the last: the views read the copy fetched first.
    """
    aliases = [] if info.buffer is None else ctx.aliases.get(info.buffer, [])
    views = [v for v in aliases if v is not info]
    compress = ctx.compress_of(info)
    if views:
        uses = sorted({use for v in (info, *views) for use in v.uses})
        entry = Gap(OpIndex(-1), uses[0], uses[0], ctx.graph.time_between(-1, uses[0]))
        info = replace(info, uses=uses, gap_list=[entry])
        return ValuePlan(
            info, [entry], stored=False, initially_out=True, compress=compress
        )
    fetch = ctx.transfer_time(ctx.hw.link(info.tier), info, True, compress)
    split = max(ctx.options.min_gap_s, fetch)
    gaps = [
        g
        for g in info.gaps()
        if (g.after < 0 or (g.ops > 0 and g.time_s >= split))
        and (ctx.options.fused_gaps or not g.fused)
    ]
    return ValuePlan(info, gaps, stored=False, initially_out=True, compress=compress)
