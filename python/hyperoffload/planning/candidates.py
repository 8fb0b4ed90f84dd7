"""
The optional plans beyond the rules, ranked (`candidates`): each idle gap of
an activation or untagged argument (stored, then fetched back, or computed
again), each tagged argument left in its tier or parked between its uses
(`place_arguments`), and each retired after its last use (`retire`).

```
%h = linalg.generic ...      // op 3
...                          // ops 4-40 never read %h: an idle gap
%y = linalg.generic ... %h   // op 41
// candidate: store %h after op 3, detach it after op 3, fetch it before op 41;
// benefit: its bytes x the gap's time, first if the round trip hides there
```
"""

from __future__ import annotations

from dataclasses import replace

from xdsl.dialects import tensor

from hyperoffload.analysis.lifetimes import Gap, ValueInfo
from hyperoffload.dialects.hyperoffload import OFFLOAD_OPS, RemoteType
from hyperoffload.planning.plan_context import PlanContext
from hyperoffload.planning.pricing import (
    lead,
    reducible,
    reserve,
    reserve_update,
    windows,
)
from hyperoffload.planning.required import clusters
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support.positions import OpIndex
from hyperoffload.support.tiers import Tier

_Ranked = tuple[float, float, ValuePlan]
"""A candidate with its benefit, then a tie-breaker (larger first)."""


def candidates(
    ctx: PlanContext, taken: set[int], retire: bool = False
) -> list[ValuePlan]:
    """
    Optional plans, best first: one per idle gap of an activation or an
    untagged argument (stored, then fetched back), and with
    `place_arguments` one per tagged argument (its `clusters` plan);
    with `retire` too, one per tagged argument kept in HBM that may be
    parked (`_retired`: stored at entry, released after its last use).
    Offloads that hide in their gap come first; then, with `recompute`
    (a value whose inputs are resident at the use after the gap),
    recomputations that take less than the transfer would expose, then
    recomputations where the offload hides (for when its store or fetch
    still overlaps the peak); exposed offloads last. A recomputation
    taken replaces the value's offloads (`merge_value_plans`).
    """
    options = ctx.options
    link = ctx.hw.link(ctx.default_tier())
    # an update written back with its argument is not moved otherwise
    taken = taken | {t[1].buffer for t in ctx.updates.values() if t[1].buffer}
    hidden: list[_Ranked] = []
    instead: list[_Ranked] = []  # recomputations instead of exposed transfers
    beyond: list[_Ranked] = []  # recomputations where the offload hides
    exposed: list[_Ranked] = []
    # tagged arguments kept in HBM may be parked between their uses
    parking = ctx.placing() and options.park_arguments
    placing = ctx.tagged_arguments() if parking else []
    placeable = {id(info) for info in placing}
    for info in ctx.graph.values:
        if (
            info.buffer is None
            or info.buffer in taken
            or isinstance(info.value.type, RemoteType)
            or (info.tier != Tier.HBM and id(info) not in placeable)
            or info.bytes < max(options.min_bytes, 1)
            or ctx.graph.schedule.buffers[info.buffer].kind
            in ("constant", "prefetched")
            or info.category not in options.categories
            or any(isinstance(u.operation, OFFLOAD_OPS) for u in info.value.uses)
            or isinstance(info.value.owner, tensor.EmptyOp)  # nothing to store
        ):
            continue  # offload ops already written move it: left as it is
        busy = _aliases_busy_until(ctx, info)
        if busy is None:
            continue
        compress = ctx.compress_of(info)
        round_trip = ctx.transfer_time(link, info, False, compress) + ctx.transfer_time(
            link, info, True, compress
        )
        gaps = [g for g in info.gaps() if options.fused_gaps or not g.fused]
        if id(info) in placeable:  # kept in HBM, parked between its uses
            gaps = [g for g in gaps if g.after >= 0]
        if retire and id(info) in placeable:
            retired = _retired(ctx, info, compress)
            if retired is not None:
                hidden.append(retired)
        for gap in _idle(ctx, gaps, busy):
            benefit = info.bytes * gap.time_s
            offload = ValuePlan(info, [gap], stored=True, compress=compress)
            hides = round_trip <= gap.time_s
            (hidden if hides else exposed).append((benefit, benefit, offload))
        if options.recompute == "none" or id(info) in placeable:
            continue
        for gap in _idle(ctx, ctx.recipes.gaps(info), busy):
            recipe = ctx.recipes.recipe(info, gap)
            hides = round_trip <= gap.time_s
            if (
                gap.after > info.producer  # else the original is never read
                and recipe is not None
                and (hides or recipe.time_s < round_trip - gap.time_s)
            ):
                benefit = info.bytes * gap.time_s
                plan = ValuePlan(
                    info, [gap], stored=False, recompute=True, recipes=[recipe]
                )
                (beyond if hides else instead).append((benefit, benefit, plan))
    if ctx.placing() and options.offload:
        arguments = _argument_candidates(ctx)
        hidden += arguments[0]
        exposed += arguments[1]
    for ranked in (hidden, instead, beyond, exposed):
        ranked.sort(key=lambda c: (-c[0], -c[1]))
    cheap = _cheapest(ctx, instead + beyond)
    first = {id(plan) for plan in cheap}
    recomputes = [c for c in instead + beyond if id(c[2]) not in first]
    if not options.offload:
        return cheap + [plan for *_, plan in recomputes]
    return cheap + [plan for *_, plan in hidden + recomputes + exposed]


def _retired(ctx: PlanContext, info: ValueInfo, compress: str | None) -> _Ranked | None:
    """
    A tagged argument kept in HBM retired after its last use, as a runtime
    cache evicts it: stored once the call starts (on the direction from
    the device, idle then), released after its last use (once the store
    is done), never fetched back; it ends the call in its stored copy, as
    a parked argument does. Benefit: its bytes x the time it is out of
    HBM, from the later of its last use and its store to the end of the
    step. None where that time is nil.
    """
    link = ctx.hw.link(info.tier)
    store = ctx.transfer_time(link, info, False, compress)
    prefix = ctx.graph.prefix
    last = info.last_use_before(len(ctx.graph.ops) - 1)
    out = prefix[-1] - max(prefix[min(last + 1, len(prefix) - 1)], store)
    if out <= 0:
        return None
    retired = ValuePlan(info, [], stored=True, write_back=info.tier, compress=compress)
    return (info.bytes * out, info.bytes * out, retired)


def _cheapest(ctx: PlanContext, recomputes: list[_Ranked]) -> list[ValuePlan]:
    """
    The recomputations that come before any offload: the cheapest per
    byte first (ties: the longer gap), while their time adds up to at
    most `recompute_budget` of the step's compute time.
    """
    if ctx.options.recompute_budget is None:
        return []
    budget = ctx.options.recompute_budget * ctx.graph.prefix[-1]
    chosen: list[ValuePlan] = []
    for *_, plan in sorted(
        recomputes,
        key=lambda c: (c[2].recipes[0].time_s / max(c[2].info.bytes, 1), -c[0]),
    ):
        if plan.recipes[0].time_s <= budget:
            budget -= plan.recipes[0].time_s
            chosen.append(plan)
    return chosen


def _idle(ctx: PlanContext, gaps: list[Gap], busy: int) -> list[Gap]:
    """The parts of `gaps` after op `busy` worth bridging (`min_gap_s`, one op or more)."""
    parts = [_after_aliases(ctx, gap, busy) for gap in gaps]
    return [
        g
        for g in parts
        if g is not None and g.ops >= 1 and g.time_s >= ctx.options.min_gap_s
    ]


def _after_aliases(ctx: PlanContext, gap: Gap, busy: int) -> Gap | None:
    """The part of `gap` after op `busy`, where no alias holds the buffer."""
    if busy <= gap.after:
        return gap
    if busy >= gap.before:
        return None
    return replace(
        gap,
        after=OpIndex(busy),
        ops=gap.before - busy - 1,
        time_s=ctx.graph.time_between(busy, gap.before),
    )


def _aliases_busy_until(ctx: PlanContext, info: ValueInfo) -> int | None:
    """
    The last op producing or reading another value in `info`'s buffer (a
    view, or an in-place result): only a gap after it frees the buffer.
    None: the buffer is not an activation's, so its aliases keep it.
    """
    assert info.buffer is not None
    others = [o for o in ctx.aliases.get(info.buffer, []) if o is not info]
    if not others:
        return -1
    if ctx.graph.schedule.buffers[info.buffer].kind != "activation":
        return None
    return max(max([o.producer, *o.uses]) for o in others)


def _argument_candidates(ctx: PlanContext) -> tuple[list[_Ranked], list[_Ranked]]:
    """
    One candidate per tagged argument (it stays in its tier), split into
    those whose fetches hide and the others. Benefit: the bytes it can take
    off the peak x its time out of HBM, then its bytes x its time before
    its first use (and between clusters).

    Fetches hide if they fit in the link time the better candidates left
    before their uses, at most twice their duration ahead (earlier, the
    copy would hold HBM too long): arguments are taken in order of benefit
    and each one that hides reserves that link time and is fetched from
    there.
    """
    ranked: list[tuple[float, float, float, ValuePlan]] = []
    for info in ctx.tagged_arguments():
        plan = clusters(ctx, info)
        fetch = ctx.transfer_time(ctx.hw.link(info.tier), info, True, plan.compress)
        resident_in = windows(plan, [lead(ctx, gap.before, fetch) for gap in plan.gaps])
        resident = sum(
            ctx.graph.prefix[b + 1] - ctx.graph.prefix[a] for a, b in resident_in
        )
        out = ctx.graph.prefix[-1] - resident
        later = sum(gap.time_s for gap in plan.gaps)
        ranked.append(
            (reducible(ctx, plan, resident_in) * out, info.bytes * later, fetch, plan)
        )
    ranked.sort(key=lambda c: (-c[0], -c[1]))
    free = list(ctx.graph.op_time)  # link time not yet reserved, per op
    free_out = list(ctx.graph.op_time)  # the same, from the device
    hidden: list[_Ranked] = []
    exposed: list[_Ranked] = []
    for benefit, size, fetch, plan in ranked:
        stores = list(free_out)
        starts = (
            reserve(ctx, free, plan, fetch)
            if reserve_update(ctx, stores, plan)
            else None
        )
        if starts is None:
            exposed.append((benefit, size, plan))
        else:
            plan.fetch_ops = starts
            free_out[:] = stores
            hidden.append((benefit, size, plan))
    return hidden, exposed
