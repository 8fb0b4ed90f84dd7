"""
Fetch windows, the one home of the rule: where a fetch (a prefetch) may be
issued (`fetch_window`), for a plan before any IR exists (`place_fetches`)
and for the `hyperoffload.prefetch` ops of a function
(`prefetch_windows`, which `hyperoffload-move-window` places).

A fetch may start once the copy it reads exists (after the producer for a
stored value, after the `store` that makes it, at entry for an argument) and
no earlier than the use before its gap (the copy it replaces is still
resident until then), and must end before its first consumer (the use after
the gap), at least an annotated `prefetch_distance` of ops ahead. Each
window moves within its bounds (`hyperoffload.planning.placement`), on the
program graph's op times and the memory timeline. If the placed plan costs
more than the plan as inserted (`alpha * T_exposed + beta * M_peak`:
`placement.keeps`), or passes a target that one met while memory has a
weight, the inserted positions stay (two simulations, not one per
candidate).

```mlir
%h = hyperoffload.store %a : ...        // the copy exists after %a's producer
%w = hyperoffload.prefetch %h : ...     // window: after that, up to its first user
```

```python
placed = place_fetches(graph, plan, hardware, target, MoveOptions())
placed.plan.values[0].fetch_ops  # the op before which each gap's fetch is issued
```
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from xdsl.ir import SSAValue

from hyperoffload.analysis.compression import value_compression
from hyperoffload.analysis.cost import tensor_bytes
from hyperoffload.analysis.fusion import Fusion
from hyperoffload.analysis.lifetimes import ProgramGraph, memory_timeline
from hyperoffload.dialects.hyperoffload import PrefetchOp, RemoteType, StoreOp
from hyperoffload.model.compression import Compressed, transfer_time
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.schedule import Schedule
from hyperoffload.planning.annotated import annotated_prefetch_distance
from hyperoffload.planning.arrange import Skeleton
from hyperoffload.planning.placement import (
    MoveOptions,
    PrefetchWindow,
    keeps,
    place_prefetches,
)
from hyperoffload.planning.planner import Plan, plan_schedule
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.sim.simulator import SimResult, simulate
from hyperoffload.support.tiers import Tier


@dataclass(frozen=True)
class PlacedPlan:
    plan: Plan
    """The plan, its fetch positions set if they moved."""
    schedule: Schedule
    result: SimResult
    """Its simulation (no capacity enforced, nothing recorded)."""
    moved: bool
    """Whether the placed positions were kept (else the inserted ones)."""


def fetch_window(
    hardware: Hardware,
    fetch: tuple[Tier, int, Compressed | None],
    exists: int,
    before: int,
    current: int,
    after: int = -1,
    lead: int = 0,
) -> PrefetchWindow:
    """
    The window of a `fetch` (its tier, bytes, whether compressed) over the
    tier's link: from op `exists` (the copy it reads exists) and after op
    `after` (the use before its gap) to op `before - lead` (its consumer,
    `lead` ops ahead), never before its earliest position.
    """
    tier, nbytes, compressed = fetch
    duration = transfer_time(hardware.link(tier), nbytes, True, compressed)
    earliest = max(exists, after + 1)
    latest = max(before - lead, earliest)
    return PrefetchWindow(earliest, latest, nbytes, duration, tier, current)


def prefetch_windows(
    skeleton: Skeleton,
    prefetches: list[PrefetchOp],
    hardware: Hardware,
    fusion: Fusion,
    start: npt.NDArray[np.float64],
) -> list[PrefetchWindow]:
    """
    The window of each `hyperoffload.prefetch` of `prefetches` (in skeleton
    positions; `start[i]`: the compute time skeleton op i starts); one with
    no user stays where it is. It opens once the copy it replaces is
    released: after the last read, before its first user, of another HBM
    copy of the value (the `store`'s operand, another fetch of the same
    remote copy), and not before the store reading the operand ends (its
    detach waits for it; a fetch issued earlier holds both copies).
    """
    stored = _store_ends(skeleton, hardware, start)
    windows: list[PrefetchWindow] = []
    for prefetch in prefetches:
        users = [skeleton.holder(use.operation) for use in prefetch.result.uses]
        users = [u for u in users if u is not None]
        current = skeleton.position_of(prefetch)
        if not users:
            windows.append(PrefetchWindow(current, current, 0, 0.0, "", current))
            continue
        source = prefetch.source
        exists = 0
        if isinstance(source.owner, StoreOp):
            exists = skeleton.producer_of_operand(source.owner) + 1
        assert isinstance(source.type, RemoteType)
        first = min(users)
        reads = [r for c in _copies(prefetch) for r in skeleton.readers(c, fusion)]
        after = max((r for r in reads if r < first), default=-1)
        if isinstance(source.owner, StoreOp):  # once the store has read it all
            ends = int(np.searchsorted(start, stored.get(source.owner, 0.0) - 1e-12))
            after = max(after, min(ends, first) - 1)
        nbytes = tensor_bytes(prefetch.result, prefetch)
        compressed = value_compression(prefetch.result, prefetch.compress, hardware)
        fetch = (source.type.tier, nbytes, compressed)
        windows.append(
            fetch_window(hardware, fetch, exists, first, current, after=after)
        )
    return windows


def _store_ends(
    skeleton: Skeleton, hardware: Hardware, start: npt.NDArray[np.float64]
) -> dict[StoreOp, float]:
    """
    When each `store` of the body ends: issued when its operand's producer
    ends, after the stores before it on its link's copy stream.
    """
    free: dict[str, float] = {}
    ends: dict[StoreOp, float] = {}
    for store in (o for o in skeleton.body if isinstance(o, StoreOp)):
        remote = store.results[0].type
        assert isinstance(remote, RemoteType)
        tier = remote.tier
        if tier not in hardware.links:  # the simulator names the missing tier
            continue
        nbytes = tensor_bytes(store.operands[0], store)
        compressed = value_compression(store.operands[0], store.compress, hardware)
        duration = transfer_time(hardware.link(tier), nbytes, False, compressed)
        issue = float(start[skeleton.producer_of_operand(store) + 1])
        ends[store] = max(issue, free.get(tier, 0.0)) + duration
        free[tier] = ends[store]
    return ends


def _copies(prefetch: PrefetchOp) -> list[SSAValue]:
    """The other HBM copies of the value `prefetch` fetches."""
    source = prefetch.source
    copies: list[SSAValue] = []
    if isinstance(source.owner, StoreOp):
        copies.append(source.owner.operands[0])
    for use in source.uses:
        other = use.operation
        if isinstance(other, PrefetchOp) and other is not prefetch:
            copies.append(other.result)
    return copies


def _windows(
    plan: Plan, hardware: Hardware, distance: int
) -> list[tuple[ValuePlan, int, PrefetchWindow]]:
    """(value plan, gap index, window) of each fetch, in the order they stand in the IR."""
    windows: list[tuple[ValuePlan, int, PrefetchWindow]] = []
    for value_plan in plan.values:
        if value_plan.write_back is not None or value_plan.recompute:
            continue
        info = value_plan.info
        tier = value_plan.copy_tier(hardware.offload_tier)
        compressed = value_compression(info.value, value_plan.compress, hardware)
        exists = info.producer + 1 if value_plan.stored else 0
        lead = annotated_prefetch_distance(info.value)
        for index, gap in enumerate(value_plan.gaps):
            current = value_plan.fetch_op(index, distance)
            window = fetch_window(
                hardware,
                (tier, info.bytes, compressed),
                exists,
                gap.before,
                current,
                after=gap.after,
                lead=lead,
            )
            windows.append((value_plan, index, window))
    windows.sort(key=lambda w: w[2].current)  # stable: plan order at one position
    return windows


def _with_fetches(plan: Plan, positions: dict[int, list[int]]) -> Plan:
    """`plan` with the fetch positions of each value plan (by id) replaced."""
    values = [
        replace(v, fetch_ops=positions[id(v)]) if id(v) in positions else v
        for v in plan.values
    ]
    return replace(plan, values=values)


def place_fetches(
    graph: ProgramGraph,
    plan: Plan,
    hardware: Hardware,
    target: int | None,
    options: MoveOptions,
    prefetch_distance: int = 1,
) -> PlacedPlan:
    """Move the fetches of `plan` within their windows; keep them if that does not pay."""
    schedule = plan_schedule(graph, plan, hardware, prefetch_distance)
    before = simulate(schedule, hardware, None, record=False)
    inserted = PlacedPlan(plan, schedule, before, moved=False)
    windows = _windows(plan, hardware, prefetch_distance)
    if not windows:
        return inserted
    live = np.array(
        memory_timeline(schedule, graph.compute_of_op, len(graph.ops), graph.schedule),
        dtype=np.int64,
    )
    start = np.array(graph.prefix, dtype=np.float64)
    placed = place_prefetches([w for *_, w in windows], start, live, target, options)
    positions = {id(v): [0] * len(v.gaps) for v, *_ in windows}
    for (value_plan, index, _), position in zip(windows, placed, strict=True):
        positions[id(value_plan)][index] = position
    moved_plan = _with_fetches(plan, positions)
    moved_schedule = plan_schedule(graph, moved_plan, hardware, prefetch_distance)
    after = simulate(moved_schedule, hardware, None, record=False)
    if not keeps(before, after, target, options):
        return inserted
    return PlacedPlan(moved_plan, moved_schedule, after, moved=True)
