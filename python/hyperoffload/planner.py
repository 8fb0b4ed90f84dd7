"""
The insertion planner: decides which tensors leave HBM and over which gaps,
on the program graph (`hyperoffload.lifetimes`), never walking IR.

Rules (from the HyperOffload seeds):
- an argument that lives outside HBM (`hyperoffload.tier`: parameters,
  optimizer state, KV cache) is fetched before each cluster of its uses and
  released after the cluster (uses closer than `min_gap`, or than the time
  its fetch takes, form one cluster);
- a result whose `hyperoffload.tier` result attribute names a tier (updated
  optimizer state) is written back after it is produced and released after its
  last use;
- any other tensor (activations, untagged arguments) is a candidate for each
  idle gap of at least `min_gap` seconds and `min_bytes` bytes: stored after
  its producer, released after the use before the gap, fetched before the use
  after it. Candidates are ranked by benefit (bytes x gap time), those whose
  store and fetch hide in the gap first, and taken only until the simulated
  peak meets the target.

```python
plan = plan_offload(graph, hardware, PlanOptions(target=32 * 10**9))
[(p.info.name, [(g.after, g.before) for g in p.gaps]) for p in plan.values]
```
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from xdsl.dialects.builtin import DictionaryAttr

from hyperoffload.dialects.hyperoffload import TIER_ARG_ATTR, RemoteType, TierAttr
from hyperoffload.hardware import Hardware
from hyperoffload.lifetimes import CATEGORIES, Gap, ProgramGraph, ValueInfo
from hyperoffload.policies import Move, apply_moves
from hyperoffload.schedule import Compute
from hyperoffload.simulator import simulate


class PlanError(ValueError):
    """A target no plan can meet."""


@dataclass(frozen=True)
class PlanOptions:
    target: int
    """Peak HBM bytes to meet."""
    min_bytes: int = 0
    min_gap_s: float = 0.0
    categories: tuple[str, ...] = CATEGORIES
    prefetch_distance: int = 1
    """Ops between a fetch and the use it serves, at insertion."""
    optional: bool = True
    """Offload candidates beyond what the rules require (else only the rules)."""


@dataclass
class ValuePlan:
    """The gaps over which one value stays out of HBM."""

    info: ValueInfo
    gaps: list[Gap]
    stored: bool
    """A store copies the value out after its producer (else a copy exists)."""
    initially_out: bool = False
    """The value starts outside HBM (a tagged argument): its first gap starts at entry."""
    write_back: str | None = None
    """The tier a result is written back to (and returned from)."""


@dataclass
class Plan:
    values: list[ValuePlan] = field(default_factory=list[ValuePlan])
    peak_before: int = 0
    peak_after: int = 0
    met: bool = True
    optional: bool = False
    """Whether the plan offloads candidates beyond what the rules require."""


def _result_tiers(graph: ProgramGraph) -> list[str | None]:
    res_attrs = graph.function.res_attrs
    tiers: list[str | None] = []
    for attrs in res_attrs.data if res_attrs else ():
        assert isinstance(attrs, DictionaryAttr)
        tier = attrs.data.get(TIER_ARG_ATTR)
        tiers.append(
            tier.tier.value
            if isinstance(tier, TierAttr) and tier.tier != "hbm"
            else None
        )
    return tiers


class _Planner:
    def __init__(self, graph: ProgramGraph, hardware: Hardware, options: PlanOptions):
        self.graph = graph
        self.hw = hardware
        self.options = options
        starts = sorted(graph.compute_of_op)
        self.compute_ops = starts  # op indices that have a compute step, in order
        self.aliases: dict[int, list[ValueInfo]] = {}
        for info in graph.values:
            if info.buffer is not None:
                self.aliases.setdefault(info.buffer, []).append(info)

    # positions: op index -> compute-step index

    def step_after(self, op: int) -> int:
        """The last compute step at or before op `op` (-1: none)."""
        return bisect_right(self.compute_ops, op) - 1

    def step_before(self, op: int) -> int:
        """The first compute step at or after op `op`."""
        return bisect_left(self.compute_ops, op)

    def moves(self, plan: ValuePlan) -> list[Move]:
        info = plan.info
        assert info.buffer is not None
        moves: list[Move] = []
        store_after = self.step_after(info.producer) if plan.stored else None
        for gap in plan.gaps:
            fetch_op = max(gap.after + 1, gap.before - self.options.prefetch_distance)
            release = (
                None
                if gap.after < 0 and plan.initially_out
                else self.step_after(gap.after)
            )
            moves.append(
                Move(
                    info.buffer,
                    store_after,
                    release,
                    self.step_before(fetch_op),
                    self.step_before(gap.before),
                )
            )
        return moves

    def releases(self, plan: ValuePlan) -> list[tuple[int, int]]:
        """The free after the last use of an argument living outside HBM, brought back."""
        info = plan.info
        if (
            not plan.gaps
            or info.last_use >= len(self.graph.ops) - 1
            or info.buffer is None
        ):
            return []
        if not self.graph.schedule.buffers[info.buffer].pinned or info.tier == "hbm":
            return []  # freed after its last use anyway, or in HBM at return
        return [(info.buffer, self.step_after(info.last_use))]

    def peak(self, plans: list[ValuePlan]) -> int:
        moves = [m for p in plans for m in self.moves(p)]
        releases = [r for p in plans for r in self.releases(p)]
        schedule = apply_moves(self.graph.schedule, moves, self.hw, releases)
        return simulate(schedule, self.hw, None, record=False).peak_hbm_bytes

    # rules

    def mandatory(self) -> list[ValuePlan]:
        plans: list[ValuePlan] = []
        result_tiers = _result_tiers(self.graph)
        returned = self.graph.ops[-1].operands if self.graph.ops else ()
        for info in self.graph.values:
            if info.buffer is None or isinstance(info.value.type, RemoteType):
                continue
            if info.producer < 0 and info.tier != "hbm" and info.uses:
                if info.category in self.options.categories:
                    plans.append(self._clusters(info))
                continue
            for position, value in enumerate(returned):
                tier = result_tiers[position] if position < len(result_tiers) else None
                if value is info.value and tier is not None:
                    plans.append(ValuePlan(info, [], stored=True, write_back=tier))
        return plans

    def _clusters(self, info: ValueInfo) -> ValuePlan:
        """
        Out of HBM from entry to the first use and between clusters of uses:
        uses split into clusters where the gap is at least `min_gap` and long
        enough to hide the fetch of the next cluster.
        """
        fetch = self.hw.link(info.tier).transfer_time(info.bytes, True)
        split = max(self.options.min_gap_s, fetch)
        gaps = [
            g for g in info.gaps() if g.after < 0 or (g.ops > 0 and g.time_s >= split)
        ]
        return ValuePlan(info, gaps, stored=False, initially_out=True)

    def candidates(self, taken: set[int]) -> list[ValuePlan]:
        options = self.options
        link = self.hw.link(self.hw.offload_tier)
        hidden: list[tuple[float, ValuePlan]] = []
        exposed: list[tuple[float, ValuePlan]] = []
        for info in self.graph.values:
            if (
                info.buffer is None
                or info.buffer in taken
                or isinstance(info.value.type, RemoteType)
                or info.tier != "hbm"
                or info.bytes < max(options.min_bytes, 1)
                or self.graph.schedule.buffers[info.buffer].kind == "constant"
                or info.category not in options.categories
            ):
                continue
            if any(
                other is not info for other in self.aliases.get(info.buffer, [info])
            ):
                continue  # views or in-place results share the buffer: keep it
            round_trip = link.transfer_time(info.bytes, False) + link.transfer_time(
                info.bytes, True
            )
            for gap in info.gaps():
                if gap.ops < 1 or gap.time_s < options.min_gap_s:
                    continue
                plan = ValuePlan(info, [gap], stored=True)
                benefit = info.bytes * gap.time_s
                (hidden if round_trip <= gap.time_s else exposed).append(
                    (benefit, plan)
                )
        hidden.sort(key=lambda c: -c[0])
        exposed.sort(key=lambda c: -c[0])
        return [plan for _, plan in hidden + exposed]

    def infeasible(self) -> None:
        sizes = [b.bytes for b in self.graph.schedule.buffers]
        for step in self.graph.schedule.steps:
            if isinstance(step, Compute):
                needed = sum(sizes[b] for b in {*step.reads, *step.allocs})
                if needed > self.options.target:
                    raise PlanError(
                        f"{step.loc}: error: no plan meets the HBM target of "
                        f"{self.options.target} B: '{step.name}' alone needs {needed} B "
                        "(its inputs and outputs)"
                    )

    def run(self) -> Plan:
        self.infeasible()
        plan = Plan(peak_before=self.peak([]))
        chosen = self.mandatory()
        peak = self.peak(chosen)
        if peak > self.options.target and self.options.optional:
            candidates = self.candidates(
                {p.info.buffer for p in chosen if p.info.buffer is not None}
            )
            count, peak = self._smallest_prefix(chosen, candidates, peak)
            chosen = chosen + _merge(candidates[:count])
            plan.optional = count > 0
        plan.values, plan.peak_after = chosen, peak
        plan.met = peak <= self.options.target
        return plan

    def _smallest_prefix(
        self, chosen: list[ValuePlan], candidates: list[ValuePlan], peak: int
    ) -> tuple[int, int]:
        """
        The fewest top candidates whose moves bring the peak to the target (a
        bisection: the peak falls roughly as more are taken); if no prefix
        tried meets it, the tried prefix with the lowest peak.
        """
        best = (0, peak)
        low, high = 1, len(candidates)
        while low <= high:
            middle = (low + high) // 2
            reached = self.peak(chosen + _merge(candidates[:middle]))
            if reached <= self.options.target:
                best, high = (middle, reached), middle - 1
            else:
                if reached < best[1] and best[1] > self.options.target:
                    best = (middle, reached)
                low = middle + 1
        return best


def _merge(plans: list[ValuePlan]) -> list[ValuePlan]:
    """One plan per value, its gaps in order (gaps of one value never overlap)."""
    merged: dict[int, ValuePlan] = {}
    for plan in plans:
        key = id(plan.info)
        if key in merged:
            merged[key].gaps.append(plan.gaps[0])
        else:
            merged[key] = ValuePlan(plan.info, list(plan.gaps), stored=True)
    for plan in merged.values():
        plan.gaps.sort(key=lambda g: g.after)
    return list(merged.values())


def plan_offload(graph: ProgramGraph, hardware: Hardware, options: PlanOptions) -> Plan:
    """Which values leave HBM over which gaps, so that the peak meets the target."""
    return _Planner(graph, hardware, options).run()
