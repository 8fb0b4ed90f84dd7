"""
Each policy at its best setting within a slowdown over `none`, recording
every setting tried (the points of the peak-vs-slowdown curves). A policy's
best is its least peak within the limit or, when no setting is, its least
slowdown (`Best.within` says which); either way the table shows it.

Grids scale with the program (n compute steps):
- `reactive-lru`: the smallest capacity within (a bisection, about 10 runs);
- `runtime-prefetch`: that bisection at each horizon of 1, 4, 16, ... up to
  n / 2 ops;
- `distance`: select distances 2, 8, 32, ... up to n / 2 (MindSpore starts
  at n / 3) x prefetch distances 1, 4, 16, ... and release distances 0, 4,
  16, ... up to n / 4 x `select_num` all, 1/8, 1/64 of the candidate
  tensors;
- `activation-pass` (training steps): tag fractions 1, 1/2, 1/4 x the last
  0, 10%, 25% of the forward pass kept x size thresholds 0 and the median
  activation;
- the recomputation peers (training steps,
  `hyperoffload.benchmark.recompute_peers`): their settings on the graph,
  the best written into the IR and judged there;
- ours: `hyperoffload-pipeline`'s smallest target within (a bisection, each
  step a full plan), then the plan at that target; on training steps also
  with one lever alone (`VARIANTS`).

Where ours may keep tagged arguments in HBM (`place_arguments`), every peer
setting is tried both with the tagged arguments in their tier and resident,
and the setting says which. On LLaMA-3-8B's training step (8,107 ops, 1,850
compute steps) that is at most 750 simulations per peer (27 s here), against
ours' 7 full plans.

```python
search = PolicySearch(workload, baseline, limit=0.02, log=print)
best = [search.reactive(), search.prefetching(), search.distance(),
        search.activation(), search.ours()]
```
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import product
from typing import Any

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.analysis.program import Program
from hyperoffload.benchmark.recompute_peers import RecomputePeers
from hyperoffload.benchmark.workloads import Baseline, Log, Workload
from hyperoffload.ir.diagnostics import silence_diagnostics, verify_module
from hyperoffload.model.schedule import Compute
from hyperoffload.passes.pipeline import PipelinePass
from hyperoffload.planning.loop import PlanningLoop
from hyperoffload.planning.planner import Plan
from hyperoffload.planning.search import TargetSearch
from hyperoffload.planning.write_plan import write_plan
from hyperoffload.policies.peers import (
    RUNTIMES,
    PolicyError,
    PolicyOptions,
    offload_candidates,
    resident_arguments,
    simulate_program,
)
from hyperoffload.sim.simulator import SimResult, SimulationError, simulate
from hyperoffload.support.units import format_bytes

SELECT_SHARES = (1, 8, 64)
"""`select_num`: all candidates, an eighth, a sixty-fourth."""
TAG_FRACTIONS = (1.0, 0.5, 0.25)
SKIP_LAST = (0.0, 0.1, 0.25)
SEARCH_STEPS = 7
"""Plans the target search of ours may try."""
OURS = "hyperoffload"
OURS_IN_TIER = "hyperoffload, arguments in tier"
"""Ours without `place_arguments`, beside ours with it."""
VARIANTS: dict[str, dict[str, Any]] = {
    "offload only": {"recompute": "none"},
    "recompute only": {"recompute": "auto", "offload": False},
}
"""Ours with one lever alone (training steps), beside both (the default)."""
CHECKPOINT_BLOCKS = "checkpoint-blocks"
MEGATRON_SELECTIVE = "megatron-selective"
MEMORY_BUDGET = "memory-budget"
RECOMPUTATION_PEERS = (CHECKPOINT_BLOCKS, MEGATRON_SELECTIVE, MEMORY_BUDGET)


def geometric(start: int, stop: int, factor: int) -> tuple[int, ...]:
    """`start`, `start * factor`, ... up to `stop` (at least `start`)."""
    values = [start]
    while values[-1] * factor <= stop:
        values.append(values[-1] * factor)
    return tuple(values)


@dataclass
class Point:
    """One setting tried."""

    policy: str
    setting: str
    peak_hbm_bytes: int
    slowdown: float
    oom: bool


@dataclass
class Best:
    """A policy's best setting, within the limit or not (`result` None: it does not apply)."""

    policy: str
    setting: str
    result: SimResult | None
    within: bool = False
    timings: dict[str, float] = field(default_factory=dict[str, float])


@dataclass
class _Tried:
    setting: str
    result: SimResult
    options: PolicyOptions
    capacity: int | None


class PolicySearch:
    def __init__(
        self,
        workload: Workload,
        baseline: Baseline,
        limit: float,
        log: Log,
        place_arguments: bool = False,
    ):
        self.workload = workload
        self.baseline = baseline
        self.limit = limit
        self.log = log
        self.place_arguments = place_arguments
        self.points: list[Point] = []
        self.rejected: list[str] = []
        """Settings whose schedule the simulator rejected, with its reason."""
        self.steps = sum(isinstance(s, Compute) for s in baseline.stripped.steps)

    def slowdown(self, result: SimResult) -> float:
        return result.makespan_s / self.baseline.none.makespan_s - 1

    def within(self, result: SimResult) -> bool:
        return result.within(self.baseline.none, self.limit)

    def _rank(self, result: SimResult, by_time: bool) -> tuple[float, ...]:
        """Within first, by peak (or time); then no out-of-memory, by slowdown."""
        if self.within(result):
            first = result.makespan_s if by_time else result.peak_hbm_bytes
            return (0, first, result.peak_hbm_bytes)
        oom = 1 if result.oom is not None else 0
        return (1 + oom, self.slowdown(result), result.peak_hbm_bytes)

    def _best(
        self, policy: str, tried: Iterable[_Tried], by_time: bool = False
    ) -> Best:
        """The best setting tried, run again with its timeline recorded for the plots."""
        top = min(tried, key=lambda t: self._rank(t.result, by_time))
        result = simulate_program(
            self.baseline.program, policy, top.capacity, top.options
        )
        return Best(policy, top.setting, result, self.within(result))

    def _placements(self) -> tuple[PolicyOptions, ...]:
        """Tagged arguments in their tier; also resident where ours may place them."""
        if self.place_arguments:
            return (PolicyOptions(), PolicyOptions(resident_arguments=True))
        return (PolicyOptions(),)

    def _run(
        self, policy: str, setting: str, options: PolicyOptions, capacity: int | None
    ) -> _Tried:
        if self.place_arguments:
            setting += f", {options.describe_arguments()}"
        result = simulate_program(
            self.baseline.program, policy, capacity, options, record=False
        )
        self._record(policy, setting, result)
        return _Tried(setting, result, options, capacity)

    def _record(self, policy: str, setting: str, result: SimResult) -> None:
        self.points.append(
            Point(
                policy,
                setting,
                result.peak_hbm_bytes,
                self.slowdown(result),
                result.oom is not None,
            )
        )

    def _smallest_capacity(
        self, policy: str, setting: str, options: PolicyOptions
    ) -> _Tried:
        """A runtime policy at the smallest capacity within (or at the unconstrained peak)."""
        none = self.baseline.none
        low, high = none.bound_peak_bytes, none.peak_hbm_bytes

        def at(capacity: int) -> _Tried:
            prefix = f"capacity {format_bytes(capacity)}"
            return self._run(policy, f"{prefix}{setting}", options, capacity)

        best = at(high)
        if not self.within(best.result):
            return best  # misses even unconstrained: shown at that capacity
        while high - low > max(1, none.peak_hbm_bytes // 1000):
            middle = (low + high) // 2
            tried = at(middle)
            if self.within(tried.result):
                best, high = tried, middle
            else:
                low = middle
        return best

    def reactive(self) -> Best:
        return self._best(
            "reactive-lru",
            [
                self._smallest_capacity("reactive-lru", "", options)
                for options in self._placements()
            ],
        )

    def horizons(self) -> tuple[int, ...]:
        return geometric(1, max(1, self.steps // 2), 4)

    def prefetching(self) -> Best:
        return self._best(
            "runtime-prefetch",
            [
                self._smallest_capacity(
                    "runtime-prefetch",
                    f", horizon {horizon}",
                    replace(options, horizon=horizon),
                )
                for options in self._placements()
                for horizon in self.horizons()
            ],
        )

    def at_capacity(self, policy: str, capacity: int) -> Best:
        """A runtime policy in a fixed HBM: its fastest setting within, else its least slowdown."""
        if policy not in RUNTIMES:
            raise PolicyError(f"'{policy}' does not run at a fixed capacity")
        horizons = self.horizons() if policy == "runtime-prefetch" else (0,)
        tried = [
            self._run(
                policy,
                f"horizon {horizon}" if horizon else "fetch on a miss",
                replace(options, horizon=horizon),
                capacity,
            )
            for options in self._placements()
            for horizon in horizons
        ]
        return self._best(policy, tried, by_time=True)

    def distance(self) -> Best:
        candidates = len(list(offload_candidates(self.baseline.stripped)))
        counts = dict.fromkeys(
            None if share == 1 else candidates // share
            for share in SELECT_SHARES
            if candidates // share > 0
        )
        reach = max(1, self.steps // 4)
        grid = product(
            self._placements(),
            geometric(2, max(2, self.steps // 2), 4),
            geometric(1, reach, 4),
            (0, *geometric(4, reach, 4)) if reach >= 4 else (0,),
            counts,
        )
        return self._best(
            "distance",
            [
                self._run(
                    "distance",
                    f"select {select} ({'all' if count is None else f'at most {count}'}), "
                    f"prefetch {prefetch}, release {release}",
                    replace(
                        options,
                        select_distance=select,
                        prefetch_distance=prefetch,
                        release_distance=release,
                        select_num=count,
                    ),
                    None,
                )
                for options, select, prefetch, release, count in grid
            ],
        )

    def activation(self) -> Best:
        stripped = self.baseline.stripped
        if stripped.forward_end is None:
            return Best("activation-pass", "n/a: not a training step", None)
        sizes = [b.bytes for b in stripped.buffers if b.kind == "activation"]
        thresholds = dict.fromkeys((0, int(statistics.median(sizes)) if sizes else 0))
        grid = product(self._placements(), TAG_FRACTIONS, SKIP_LAST, thresholds)
        return self._best(
            "activation-pass",
            [
                self._run(
                    "activation-pass",
                    f"tag {fraction:.0%} of bytes, keep the last {skip:.0%}, "
                    f"at least {format_bytes(least)}",
                    replace(
                        options, tag_fraction=fraction, skip_last=skip, min_bytes=least
                    ),
                    None,
                )
                for options, fraction, skip, least in grid
            ],
        )

    @cached_property
    def graph(self) -> ProgramGraph:
        """The program graph of the workload on this hardware."""
        hardware = self.baseline.hardware
        return ProgramGraph.build(
            main_function(self.workload.module), CostModel(hardware)
        )

    def recomputation(self, peer: str) -> Best:
        """
        A recomputation peer (`hyperoffload.benchmark.recompute_peers`) at
        each of its settings on the graph; its best setting written into the
        IR and judged from there, as ours is.
        """
        peers = RecomputePeers(self.graph, self.baseline.hardware)
        if peers.loss is None:
            return Best(peer, "n/a: not a training step", None)
        choices = {
            CHECKPOINT_BLOCKS: peers.checkpointing,
            MEGATRON_SELECTIVE: peers.selective,
            MEMORY_BUDGET: peers.budgeted,
        }[peer]()
        hardware = self.baseline.hardware
        tried: list[tuple[str, Plan, SimResult]] = []
        for choice in choices:
            setting, plan = choice[0], peers.plan(choice)
            try:
                result = simulate(peers.schedule(plan), hardware, None, record=False)
            except SimulationError as err:  # the peer's plan breaks the program
                self.rejected.append(f"{peer} {setting}: {err}")
                self.log(f"{peer} {setting}: rejected by the simulator: {err}")
                continue
            self._record(peer, setting, result)
            tried.append((setting, plan, result))
        if not tried:
            return Best(peer, "n/a: nothing it would recompute", None)
        setting, plan, _ = min(tried, key=lambda t: self._rank(t[2], by_time=False))
        module = self.workload.module.clone()
        function = main_function(module)
        write_plan(
            function,
            list(function.body.block.ops),
            plan,
            1,
            hardware.offload_tier,
        )
        verify_module(module)
        planned = Program(module, hardware).planned
        result = simulate(resident_arguments(planned), hardware, None)
        self._record(peer, setting, result)
        return Best(peer, setting, result, self.within(result))

    def ours(
        self, place_arguments: bool | None = None, variant: str | None = None
    ) -> Best:
        """
        The smallest target within the limit, then the plan at that target;
        `place_arguments=False` where the search places them: ours with the
        tagged arguments in their tier (`hyperoffload, arguments in tier`).
        A `variant` of `VARIANTS` plans with recomputation that way.
        """
        workload, hardware = self.workload, self.baseline.hardware
        placing = self.place_arguments if place_arguments is None else place_arguments
        name = OURS if placing or not self.place_arguments else OURS_IN_TIER
        pipeline = PipelinePass(place_arguments=placing, max_slowdown=self.limit)
        if variant is not None:
            name = f"{OURS}, {variant}"
            pipeline = replace(pipeline, **VARIANTS[variant])
        planned_module = workload.module.clone()
        start = time.perf_counter()
        loop = PlanningLoop.for_function(
            main_function(planned_module),
            hardware,
            pipeline.loop_options(hardware.hbm_capacity),
        )
        search = TargetSearch(loop, hardware.hbm_capacity, self.limit)
        with silence_diagnostics():
            best = search.run(SEARCH_STEPS)
        search_s = time.perf_counter() - start
        for tried in search.tried:
            if tried.trial is not None:
                self._record(name, format_bytes(tried.target), tried.trial.result)
                self.log(
                    f"  target {format_bytes(tried.target)}: peak "
                    f"{format_bytes(tried.trial.result.peak_hbm_bytes)}, "
                    f"{self.slowdown(tried.trial.result):+.2%}"
                )
        start = time.perf_counter()
        loop.write(best)
        verify_module(planned_module)
        passes_s = time.perf_counter() - start
        # the figure is the planned IR's, extracted again (not the graph's estimate)
        target = best.target
        result = Program(planned_module, hardware).simulate("plan", target)
        self._record(name, format_bytes(target), result)
        timings = {
            "parse_s": workload.parse_s,
            "passes_s": passes_s,
            "target_search_s": search_s,
        }
        setting = f"target {format_bytes(target)}"
        return Best(name, setting, result, self.within(result), timings)
