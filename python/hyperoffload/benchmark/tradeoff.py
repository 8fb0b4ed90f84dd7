"""
The trade-off curve of a training step: at each HBM target from the
unconstrained peak down to the largest single-op working set, each policy's
least slowdown over `none` among the runs that meet the target (peak within
it, no out-of-memory).

- ours: `hyperoffload-pipeline` planned for the target (the planning loop's
  trial, priced as the IR it writes), as the row places the arguments and,
  where it leaves them in their tier, with `place_arguments` too (the peers
  run with the arguments resident and in their tier alike);
- the runtimes (`reactive-lru`, `runtime-prefetch`): run in an HBM of the
  target, at every setting `PolicySearch.at_capacity` tries;
- the compiled peers (`distance`, `activation-pass`, the recomputation
  peers): every setting of their grid (`PolicySearch`), the fastest that
  meets the target.

```python
sweep = TradeoffSweep(workload, baseline, place_arguments=True, log=print)
curves = sweep.run(targets(baseline.none, 6))  # `none` recorded
losses = curves.losses(tolerance=0.005)   # where ours is slower than a peer
```
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hyperoffload.analysis.extract import main_function
from hyperoffload.benchmark.peers import (
    OURS,
    RECOMPUTATION_PEERS,
    PolicySearch,
)
from hyperoffload.benchmark.workloads import Baseline, Log, Workload
from hyperoffload.ir.diagnostics import silence_diagnostics
from hyperoffload.model.schedule import Schedule
from hyperoffload.passes.pipeline import PipelinePass
from hyperoffload.planning.loop import PlanningLoop
from hyperoffload.planning.planner import PlanError
from hyperoffload.sim.arena import planned_arena, runtime_arena
from hyperoffload.sim.simulator import SimResult, SimulationError
from hyperoffload.support.tiers import Tier
from hyperoffload.support.units import format_bytes

RUNTIME_PEERS = ("reactive-lru", "runtime-prefetch")
COMPILED_PEERS = ("distance", "activation-pass", *RECOMPUTATION_PEERS)


def targets(none: SimResult, count: int) -> list[int]:
    """
    `count` targets evenly spaced from the unconstrained peak (in addresses:
    its static layout's arena, a few aligned bytes above the live peak) down
    to just above the largest single-op working set (which no plan goes
    below).
    """
    high = max(none.peak_hbm_bytes, planned_arena(none).arena_bytes)
    low = none.bound_peak_bytes
    return [low + (high - low) * k // count for k in range(count, 0, -1)]


def return_floor(schedule: Schedule) -> int:
    """
    The bytes the program must hold in HBM when it returns: its results
    (one tagged for a tier is counted too: the training steps here tag
    none), and the caller's arguments and constants in HBM. No plan that keeps the calling contract peaks below
    it; the runtimes meet lower targets by ending results in the pool (a
    relaxation in their favour, `hyperoffload.sim.simulator`).
    """
    return sum(
        b.bytes
        for b in schedule.buffers
        if b.pinned and b.tier == Tier.HBM and b.home == Tier.HBM
    )


@dataclass(frozen=True)
class CurvePoint:
    """A policy's best run that meets `target`, or None where none does."""

    policy: str
    target: int
    setting: str | None = None
    peak_hbm_bytes: int | None = None
    slowdown: float | None = None
    arena_bytes: int | None = None
    """
    A runtime's: the arena its best-fit allocator reaches (above the target,
    it meets the target in live bytes only, its allocator compacting).
    """

    @property
    def meets(self) -> bool:
        return self.slowdown is not None

    def cell(self) -> str:
        """Its table cell: slowdown and peak, and an arena above the target."""
        if self.slowdown is None:
            return "-"
        peak = format_bytes(self.peak_hbm_bytes or 0)
        if self.arena_bytes is not None and self.arena_bytes > self.target:
            return (
                f"{self.slowdown:+.2%} ({peak}; arena {format_bytes(self.arena_bytes)})"
            )
        return f"{self.slowdown:+.2%} ({peak})"


@dataclass(frozen=True)
class Loss:
    """A target where ours is slower than a peer (or meets it where ours does not)."""

    target: int
    peer: str
    ours: CurvePoint
    theirs: CurvePoint

    def describe(self) -> str:
        ours = (
            f"{self.ours.slowdown:+.2%} at {format_bytes(self.ours.peak_hbm_bytes or 0)}"
            if self.ours.slowdown is not None
            else "misses it"
        )
        assert self.theirs.slowdown is not None
        return (
            f"target {format_bytes(self.target)}: ours {ours}, {self.peer} "
            f"{self.theirs.slowdown:+.2%} at "
            f"{format_bytes(self.theirs.peak_hbm_bytes or 0)} ({self.theirs.setting})"
        )


@dataclass
class Curves:
    """Each policy's point at each target."""

    targets: list[int]
    floor: int = 0
    """`return_floor`: a peer meeting a target below it ends results in the pool."""
    points: dict[str, list[CurvePoint]] = field(
        default_factory=dict[str, list[CurvePoint]]
    )

    def losses(self, tolerance: float) -> list[Loss]:
        """
        Every (target, peer) where ours is slower by more than `tolerance`
        (0.005: half a point), or misses a target the peer meets; targets
        below the return floor left out (a peer meets them only by breaking
        the calling contract).
        """
        ours = self.points[OURS]
        found: list[Loss] = []
        for peer, curve in self.points.items():
            if peer == OURS:
                continue
            for mine, theirs in zip(ours, curve, strict=True):
                if theirs.slowdown is None or mine.target < self.floor:
                    continue
                if mine.slowdown is None or mine.slowdown > theirs.slowdown + tolerance:
                    found.append(Loss(mine.target, peer, mine, theirs))
        return found

    def series(self) -> dict[str, list[tuple[float, int]]]:
        """Per policy, (slowdown, peak) at each target it meets (for `write_curves_plot`)."""
        return {
            policy: [
                (p.slowdown, p.peak_hbm_bytes)
                for p in points
                if p.slowdown is not None and p.peak_hbm_bytes is not None
            ]
            for policy, points in self.points.items()
        }

    def table(self) -> str:
        """A Markdown table: one row per target, a column per policy."""
        policies = list(self.points)
        lines = [
            "| target | " + " | ".join(policies) + " |",
            "| --- |" + " --- |" * len(policies),
        ]
        for k, target in enumerate(self.targets):
            cells = [self.points[policy][k].cell() for policy in policies]
            below = " (below the return floor)" if target < self.floor else ""
            lines.append(
                f"| {format_bytes(target)}{below} | " + " | ".join(cells) + " |"
            )
        return "\n".join(lines)


class TradeoffSweep:
    """Every policy of a training step at a sweep of HBM targets."""

    def __init__(
        self,
        workload: Workload,
        baseline: Baseline,
        place_arguments: bool,
        log: Log,
        peers: tuple[str, ...] = (*RUNTIME_PEERS, *COMPILED_PEERS),
    ):
        self.workload = workload
        self.baseline = baseline
        self.place_arguments = place_arguments
        self.log = log
        self.peers = peers
        self.search = PolicySearch(
            workload, baseline, 0.0, lambda _: None, place_arguments
        )

    def run(self, sweep: list[int]) -> Curves:
        curves = Curves(sweep, return_floor(self.baseline.stripped))
        curves.points[OURS] = self.ours(sweep)
        for peer in self.peers:
            if peer in RUNTIME_PEERS:
                curves.points[peer] = [self.runtime(peer, t) for t in sweep]
            else:
                curves.points[peer] = self.compiled(peer, sweep)
        return curves

    def _slowdown(self, result: SimResult) -> float:
        return self.search.slowdown(result)

    def ours(self, sweep: list[int]) -> list[CurvePoint]:
        """
        Ours planned for each target as the row plans it, and where the row
        leaves the arguments in their tier, with `place_arguments` too: the
        faster that meets each target (the peers run both ways, arguments
        resident and in their tier, `PolicySearch`).
        """
        points = self._ours(sweep, self.place_arguments)
        if self.place_arguments:
            return points
        placed = self._ours(sweep, True)
        return [
            min(
                (p for p in pair if p.slowdown is not None),
                key=lambda p: float("inf") if p.slowdown is None else p.slowdown,
                default=pair[0],
            )
            for pair in zip(points, placed, strict=True)
        ]

    def _ours(self, sweep: list[int], place_arguments: bool) -> list[CurvePoint]:
        """Ours planned for each target (one planning loop, its graph extracted once)."""
        hardware = self.baseline.hardware
        pipeline = PipelinePass(place_arguments=place_arguments)
        module = self.workload.module.clone()
        loop = PlanningLoop.for_function(
            main_function(module), hardware, pipeline.loop_options(max(sweep))
        )
        points: list[CurvePoint] = []
        for target in sweep:
            try:
                with silence_diagnostics():
                    trial = loop.trial(target)
            except (PlanError, SimulationError):
                points.append(CurvePoint(OURS, target))
                continue
            result = trial.result
            self.log(
                f"ours at {format_bytes(target)}: {format_bytes(result.peak_hbm_bytes)}, "
                f"{self._slowdown(result):+.2%}"
                f"{'' if trial.fits(target) else ' (misses it)'}"
            )
            if trial.fits(target):
                points.append(
                    CurvePoint(
                        OURS,
                        target,
                        f"target {format_bytes(target)}"
                        + (", place-arguments" if place_arguments else ""),
                        result.peak_hbm_bytes,
                        self._slowdown(result),
                    )
                )
            else:
                points.append(CurvePoint(OURS, target))
        return points

    def runtime(self, peer: str, target: int) -> CurvePoint:
        """A runtime in an HBM of `target`: its fastest setting that does not run out."""
        best = self.search.at_capacity(peer, target)
        result = best.result
        assert result is not None
        if result.oom is not None or result.peak_hbm_bytes > target:
            return CurvePoint(peer, target)
        return CurvePoint(
            peer,
            target,
            best.setting,
            result.peak_hbm_bytes,
            self._slowdown(result),
            runtime_arena(result).arena_bytes,
        )

    def compiled(self, peer: str, sweep: list[int]) -> list[CurvePoint]:
        """A compiled peer's grid, run once: at each target its fastest setting within it."""
        search = self.search
        before = len(search.points)
        if peer == "distance":
            search.distance()
        elif peer == "activation-pass":
            search.activation()
        else:
            search.recomputation(peer)
        tried = [p for p in search.points[before:] if p.policy == peer and not p.oom]
        points: list[CurvePoint] = []
        for target in sweep:
            meeting = [p for p in tried if p.peak_hbm_bytes <= target]
            best = min(
                meeting, key=lambda p: (p.slowdown, p.peak_hbm_bytes), default=None
            )
            points.append(
                CurvePoint(peer, target)
                if best is None
                else CurvePoint(
                    peer, target, best.setting, best.peak_hbm_bytes, best.slowdown
                )
            )
        return points
