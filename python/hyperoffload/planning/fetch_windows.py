"""
Move-window on a plan, before any IR exists: each fetch of a plan moves
within its legal window (`hyperoffload.planning.placement`), on the program
graph's op times and the memory timeline of the plan's schedule.

A fetch may start once the copy it reads exists (after the producer for a
stored value, at entry for an argument) and no earlier than the use before
its gap (the copy it replaces is still resident until then), and must end
before the use after the gap. If the placed plan costs more than the plan as
inserted (`alpha * T_exposed + beta * M_peak`: `placement.keeps`), or passes
a target that one met while memory has a weight, the inserted positions stay
(two simulations, not one per candidate).

```python
placed = place_fetches(graph, plan, hardware, target, MoveOptions())
placed.plan.values[0].fetch_ops  # the op before which each gap's fetch is issued
```
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hyperoffload.analysis.compression import value_compression
from hyperoffload.analysis.lifetimes import ProgramGraph, memory_timeline
from hyperoffload.planning.annotated import annotated_prefetch_distance
from hyperoffload.planning.placement import (
    MoveOptions,
    PrefetchWindow,
    keeps,
    place_prefetches,
)
from hyperoffload.planning.planner import Plan, plan_schedule
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.sim.compression import transfer_time
from hyperoffload.sim.hardware import Hardware
from hyperoffload.sim.schedule import Schedule
from hyperoffload.sim.simulator import SimResult, simulate


@dataclass(frozen=True)
class PlacedPlan:
    plan: Plan
    """The plan, its fetch positions set if they moved."""
    schedule: Schedule
    result: SimResult
    """Its simulation (no capacity enforced, nothing recorded)."""
    moved: bool
    """Whether the placed positions were kept (else the inserted ones)."""


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
        duration = transfer_time(hardware.link(tier), info.bytes, True, compressed)
        exists = info.producer + 1 if value_plan.stored else 0
        for index, gap in enumerate(value_plan.gaps):
            earliest = max(exists, gap.after + 1)
            current = value_plan.fetch_op(index, distance)
            annotated = annotated_prefetch_distance(info.value)
            latest = max(gap.before - annotated, earliest)
            window = PrefetchWindow(
                earliest, latest, info.bytes, duration, tier, current
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
