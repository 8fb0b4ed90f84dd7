"""
The seeds' training claims at their own setting (DESIGN.md §1): one
training step with its optimizer, judged by the seeds' metrics.

- the peak at each slowdown limit (+1.3%, +2%): ours (`hyperoffload-pipeline`'s
  target search, the plan written into the IR and extracted again), the
  best peer's point of its search within the limit and the LP bound that
  counts the link;
- the share of the peak the optimizer states hold (AdamW's float32 master
  weights, `exp_avg` and `exp_avg_sq`, named in the export's argument list)
  for `none` and ours;
- the iteration at a fixed HBM against the fitting baseline: each runtime
  peer at its fastest setting in that HBM, each recomputation peer at its
  least peak (it fits or it does not), ours planned at the capacity;
- optionally a sweep of the remote link's bandwidth: ours at the largest
  limit and at the fixed HBM at each point, beside the link's bound.

```python
scenario = SeedTraining("tiny", "tiny step", Export("tiny-llama", "train",
                        optimizer="adamw"), "ascend-910c", paper="-", choice="-")
result = scenario.run(Context(work=Path("build/bench"), out=Path("out"), log=print))
```
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.link_bound import link_lower_bound
from hyperoffload.analysis.program import Program
from hyperoffload.benchmark.peers import RECOMPUTATION_PEERS, PolicySearch
from hyperoffload.benchmark.scenarios import (
    LP_TIME_LIMIT_S,
    Context,
    lp_bound_fields,
)
from hyperoffload.benchmark.workloads import Baseline, Export, Workload, load_workload
from hyperoffload.ir.diagnostics import silence_diagnostics, verify_module
from hyperoffload.model.hardware import Hardware, load_hardware
from hyperoffload.model.schedule import Compute
from hyperoffload.passes.pipeline import PipelinePass
from hyperoffload.planning.loop import PlanningLoop, Trial
from hyperoffload.planning.planner import PlanError
from hyperoffload.planning.search import TargetSearch
from hyperoffload.policies.peers import RUNTIMES
from hyperoffload.sim.arena import fragmentation, planned_arena, runtime_arena
from hyperoffload.sim.simulator import SimResult, SimulationError, simulate
from hyperoffload.support.tiers import Tier

UNLIMITED = "4TB"
"""HBM of the peak-at-a-slowdown searches: every policy unconstrained."""
STATE_PREFIXES = ("master.", "exp_avg.", "exp_avg_sq.")
"""The export's names of the optimizer's arguments (`frontend.train_step`)."""
_ARGUMENT = re.compile(r"^//\s+%arg(\d+): (\S+)$", re.MULTILINE)


def state_arguments(text: str) -> frozenset[int]:
    """
    The positions of the optimizer-state arguments in an export, from the
    argument list `hyperoffload-gen` writes at its top.

    >>> sorted(state_arguments("//   %arg3: w\\n//   %arg4: exp_avg.w\\n"))
    [4]
    """
    return frozenset(
        int(index)
        for index, name in _ARGUMENT.findall(text)
        if name.startswith(STATE_PREFIXES)
    )


_RETURN = re.compile(r"^\s*(?:func\.)?return (%.*?) : (.*)$", re.MULTILINE)
_DEFINED = re.compile(r"^\s*(%[\w.$-]+)(?::\d+)? = ", re.MULTILINE)
_MATMUL = re.compile(r"\blinalg\.(?:batch_)?matmul\b")
_TENSOR = re.compile(r"tensor<((?:\d+x)*)(\w+)>")
_ELEMENT_BYTES = {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "bf16": 2, "f16": 2}


def returned_after_last_matmul(text: str) -> int:
    """
    Bytes of the results after the first (a training step's loss: then its
    updated weights and states, which it returns to the pool) that the
    step's last function defines after its last matmul: what a plan must
    store once the backward pass is over (every update when the step updates
    after the backward pass; with the optimizer step in the backward pass,
    the updates whose gradients complete last).

    >>> returned_after_last_matmul(
    ...     "%a = linalg.matmul\\n%b = arith.addf\\n"
    ...     "return %l, %a, %b : tensor<f32>, tensor<2xf32>, tensor<4x2xbf16>\\n"
    ... )
    16
    """
    found = list(_RETURN.finditer(text))
    if not found:
        return 0
    ret = found[-1]
    defined = {m.group(1): m.start() for m in _DEFINED.finditer(text[: ret.start()])}
    matmuls = [m.start() for m in _MATMUL.finditer(text[: ret.start()])]
    last = matmuls[-1] if matmuls else -1
    names = [n.strip().split("#")[0] for n in ret.group(1).split(",")]
    types = _TENSOR.findall(ret.group(2))
    total = 0
    for name, (dims, element) in list(zip(names, types, strict=True))[1:]:
        if defined.get(name, -1) > last:
            count = math.prod(int(d) for d in dims.split("x") if d)
            total += count * _ELEMENT_BYTES.get(element, 4)
    return total


def bytes_at_peak(result: SimResult, buffers: frozenset[int]) -> int:
    """Bytes of `buffers` in HBM when `result`'s live bytes peak (a recorded run)."""
    changes: dict[int, int] = {}
    for a in result.allocations:
        changes[a.start] = changes.get(a.start, 0) + a.bytes
        changes[a.end] = changes.get(a.end, 0) - a.bytes
    live, peak, at = 0, -1, 0
    for event in sorted(changes):
        live += changes[event]
        if live > peak:
            peak, at = live, event
    return sum(
        a.bytes
        for a in result.allocations
        if a.buffer in buffers and a.start <= at < a.end
    )


def with_remote_bandwidth(hardware: Hardware, gb_per_s: float) -> Hardware:
    """`hardware` with its remote link at `gb_per_s` each way."""
    link = hardware.links[Tier.REMOTE]
    bandwidth = gb_per_s * 1e9
    faster = replace(
        link, bandwidth_to_device=bandwidth, bandwidth_from_device=bandwidth
    )
    return replace(hardware, links={**hardware.links, Tier.REMOTE: faster})


@dataclass(frozen=True)
class Step:
    """A seed step loaded once: its program, `none`'s run and what it returns."""

    workload: Workload
    baseline: Baseline
    states: frozenset[int]
    """The optimizer states' argument positions."""
    tail_bytes: int
    """What it returns to the pool after its last matmul."""
    capacity: int
    """The fixed HBM of the iteration comparison, in bytes."""


@dataclass(frozen=True)
class SeedTraining:
    name: str
    title: str
    export: Export
    preset: str
    paper: str
    """The seeds' figures for this scenario, as published."""
    choice: str
    """Why this configuration is the seeds' setting."""
    limits: tuple[float, ...] = (0.013, 0.02)
    capacity: str = "64GB"
    """The fixed HBM of the iteration comparison."""
    bandwidths: tuple[float, ...] = ()
    """Remote link bandwidths (GB/s) of the sweep (none: no sweep)."""
    search_steps: int = 7
    """Plans ours' target search may try at each limit."""
    sweep_steps: int = 4
    """The same at each point of the sweep."""
    place_arguments: bool = True
    parts: tuple[str, ...] = ("peak", "fixed", "sweep")
    """What to run: the peaks at the limits (with the peers), the fixed HBM
    (`fixed` reads the recomputation peers' points from `peak`), the sweep."""

    def load(self, ctx: Context) -> Step:
        """The step exported, parsed and run by `none` (unlimited HBM)."""
        unlimited = load_hardware(self.preset, UNLIMITED)
        spec = self.export.on(unlimited)
        workload = load_workload(spec, ctx.work, ctx.log)
        text = (ctx.work / spec.file_name()).read_text()
        states = state_arguments(text[:1_000_000])
        tail_bytes = returned_after_last_matmul(text)
        del text
        baseline = workload.baseline(unlimited)
        none = baseline.none
        ctx.log(
            f"none: {none.makespan_s:.3f} s, peak {none.peak_hbm_bytes / 1e9:.2f} GB"
        )
        capacity = load_hardware(self.preset, self.capacity).hbm_capacity
        return Step(workload, baseline, states, tail_bytes, capacity)

    def figures(self, step: Step) -> dict[str, Any]:
        """The step's own figures in the results (no policy's but `none`'s)."""
        spec, unlimited = step.workload.spec, step.baseline.hardware
        none = step.baseline.none
        return {
            "name": self.name,
            "kind": "seed-training",
            "title": self.title,
            "paper": self.paper,
            "choice": self.choice,
            "command": spec.command,
            "hardware": self.preset,
            "ops": step.workload.ops,
            "parse_s": step.workload.parse_s,
            "tokens": spec.tokens,
            "none": run_figures(none, none, step.states),
            "flops": total_flops(step.baseline),
            "peak_flops": unlimited.peak("bf16"),
            "remote_gb_per_s": unlimited.links[Tier.REMOTE].bandwidth_to_device / 1e9,
            "state_bytes": state_total(step.baseline, step.states),
            "returned_after_backward_bytes": step.tail_bytes,
            "capacity_bytes": step.capacity,
        }

    def run(self, ctx: Context) -> dict[str, Any]:
        ctx.out.mkdir(parents=True, exist_ok=True)
        step = self.load(ctx)
        workload, baseline, states = step.workload, step.baseline, step.states
        unlimited, none, capacity = baseline.hardware, baseline.none, step.capacity
        updates_after = self.updates_after(unlimited, states, ctx)
        search = PolicySearch(
            workload, baseline, max(self.limits), ctx.log, self.place_arguments
        )
        fixed: dict[str, Any] = {}
        at_limits: list[dict[str, Any]] = []
        if "peak" in self.parts:
            ctx.log("peers")
            peers = search_peers(search, self.limits)
            at_limits = [
                {
                    "limit": limit,
                    **self.lp_bound(search, limit, ctx),
                    "ours": self.ours_at_limit(workload, baseline, limit, states, ctx),
                    "peer": peer,
                }
                for limit, peer in peers.items()
            ]
        if "fixed" in self.parts:
            ctx.log(f"runtimes and ours at {self.capacity}")
            fixed |= runtimes_at(search, capacity) | recomputing_at(search, capacity)
            fixed["hyperoffload"] = self.ours_at_capacity(
                workload, unlimited, capacity, none, states
            )
        sweep = [
            self._sweep_point(workload, baseline, gb, capacity, states, ctx)
            for gb in (self.bandwidths if "sweep" in self.parts else ())
        ]
        return self.figures(step) | {
            "none_updates_after": updates_after,
            "limits": at_limits,
            "rejected": search.rejected,
            "fixed": fixed,
            "sweep": sweep,
        }

    def lp_bound(
        self, search: PolicySearch, limit: float, ctx: Context
    ) -> dict[str, Any]:
        """The LP bound that counts the link on the step's peak within `limit`."""
        link = link_lower_bound(
            search.graph, search.baseline.hardware, limit, time_limit_s=LP_TIME_LIMIT_S
        )
        ctx.log(
            f"LP bound within {limit:.1%}: {link.bytes / 1e9:.2f} GB "
            f"({link.status}, {link.seconds:.1f} s)"
        )
        return lp_bound_fields(link)

    def updates_after(
        self, hardware: Hardware, states: frozenset[int], ctx: Context
    ) -> dict[str, Any] | None:
        """
        With the optimizer step in the backward pass, `none` on the same step
        updating after the backward pass (None without the option). An SSA
        step cannot update in place, so the option raises `none`'s peak (the
        new states of the layers already updated live beside the rest of the
        backward pass): reductions are judged against the lower of the two.
        """
        if not self.export.optimizer_in_backward:
            return None
        twin = replace(self.export, optimizer_in_backward=False).on(hardware)
        other = load_workload(twin, ctx.work, ctx.log).baseline(hardware).none
        ctx.log(
            f"none, updates after the backward pass: {other.makespan_s:.3f} s, "
            f"peak {other.peak_hbm_bytes / 1e9:.2f} GB"
        )
        return run_figures(other, other, states)

    def ours_at_limit(
        self,
        workload: Workload,
        baseline: Baseline,
        limit: float,
        states: frozenset[int],
        ctx: Context,
    ) -> dict[str, Any]:
        """Ours' smallest target within `limit`, written into the IR and judged there."""
        hardware = baseline.hardware
        module = workload.module.clone()
        loop = _loop(module, hardware, self.place_arguments, limit)
        search = TargetSearch(loop, hardware.hbm_capacity, limit)
        with silence_diagnostics():
            best = search.run(self.search_steps)
        ctx.log(f"ours within {limit:.1%}: target {best.target / 1e9:.2f} GB")
        loop.write(best)
        verify_module(module)
        planned = Program(module, hardware).planned
        written = simulate(planned, hardware, None)
        figures = run_figures(written, baseline.none, frozenset())
        estimate = simulate(best.schedule, hardware, None)
        figures["state_bytes_at_peak"] = bytes_at_peak(estimate, states)
        figures["arena_bytes"] = planned_arena(written).arena_bytes
        figures["target_bytes"] = best.target
        return figures

    def ours_at_capacity(
        self,
        workload: Workload,
        hardware: Hardware,
        capacity: int,
        none: SimResult,
        states: frozenset[int],
        place_arguments: bool | None = None,
    ) -> dict[str, Any]:
        """Ours planned at `capacity` (on the graph) and run in it."""
        placing = self.place_arguments if place_arguments is None else place_arguments
        loop = _loop(workload.module, hardware, placing, None, capacity)
        try:
            with silence_diagnostics():
                trial: Trial = loop.trial(capacity)
            result = simulate(trial.schedule, hardware, capacity)
        except (PlanError, SimulationError) as err:
            return {"fits": False, "setting": f"no plan: {err}"}
        figures = run_figures(result, none, states)
        figures["fits"] = result.oom is None and trial.fits(capacity)
        figures["arena_bytes"] = trial.arena_bytes
        figures["setting"] = "planned at the capacity"
        return figures

    def _sweep_point(
        self,
        workload: Workload,
        baseline: Baseline,
        gb_per_s: float,
        capacity: int,
        states: frozenset[int],
        ctx: Context,
    ) -> dict[str, Any]:
        ctx.log(f"sweep: {gb_per_s:g} GB/s")
        return {
            "gb_per_s": gb_per_s,
            "fixed": self.sweep_fixed(workload, baseline, gb_per_s, capacity, states),
            "peak": self.sweep_peak(workload, baseline, gb_per_s),
        }

    def sweep_fixed(
        self,
        workload: Workload,
        baseline: Baseline,
        gb_per_s: float,
        capacity: int,
        states: frozenset[int],
    ) -> dict[str, Any]:
        """Ours in the fixed HBM with the remote link at `gb_per_s`."""
        hardware = with_remote_bandwidth(baseline.hardware, gb_per_s)
        return self.ours_at_capacity(
            workload, hardware, capacity, baseline.none, states
        )

    def sweep_peak(
        self, workload: Workload, baseline: Baseline, gb_per_s: float
    ) -> dict[str, Any]:
        """Ours' least peak within the largest limit with the link at `gb_per_s`."""
        hardware = with_remote_bandwidth(baseline.hardware, gb_per_s)
        limit = max(self.limits)
        loop = _loop(workload.module, hardware, self.place_arguments, limit)
        search = TargetSearch(loop, hardware.hbm_capacity, limit)
        with silence_diagnostics():
            best = search.run(self.sweep_steps)
        peak = run_figures(best.result, baseline.none, frozenset())
        return peak | {"target_bytes": best.target}


def _loop(
    module: Any,
    hardware: Hardware,
    place_arguments: bool,
    limit: float | None,
    capacity: int | None = None,
) -> PlanningLoop:
    pipeline = PipelinePass(place_arguments=place_arguments, max_slowdown=limit)
    options = pipeline.loop_options(capacity or hardware.hbm_capacity)
    return PlanningLoop.for_function(main_function(module), hardware, options)


def run_figures(
    result: SimResult, none: SimResult, states: frozenset[int]
) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "peak_hbm_bytes": result.peak_hbm_bytes,
        "makespan_s": result.makespan_s,
        "compute_s": result.compute_s,
        "exposed_transfer_s": result.exposed_transfer_s,
        "bytes_to_device": result.bytes_to_device,
        "bytes_to_remote": result.bytes_to_remote,
        "slowdown": result.makespan_s / none.makespan_s - 1,
        "peak_reduction": 1 - result.peak_hbm_bytes / none.peak_hbm_bytes,
        "oom": result.oom is not None,
    }
    if states and result.allocations:
        figures["state_bytes_at_peak"] = bytes_at_peak(result, states)
    return figures


def runtime_at(result: SimResult | None, none: SimResult) -> dict[str, Any]:
    """A runtime's fastest run in the fixed HBM, with the arena its allocator needs."""
    if result is None:
        return {"fits": False, "setting": "no run"}
    arena = runtime_arena(result).arena_bytes
    return run_figures(result, none, frozenset()) | {
        "fits": result.oom is None,
        "arena_bytes": arena,
        "fragmentation": fragmentation(arena, result.peak_hbm_bytes),
    }


def runtimes_at(search: PolicySearch, capacity: int) -> dict[str, Any]:
    """Each runtime peer's fastest setting in `capacity`."""
    return {
        runtime: runtime_at(best.result, search.baseline.none)
        | {"setting": best.setting}
        for runtime in RUNTIMES
        for best in (search.at_capacity(runtime, capacity),)
    }


def search_peers(
    search: PolicySearch, limits: Iterable[float]
) -> dict[float, dict[str, Any] | None]:
    """
    The compiled peers searched on the step (activation offloading and each
    recomputation peer over its grid): their least peak within each limit.
    """
    search.activation()
    for peer in RECOMPUTATION_PEERS:
        search.recomputation(peer)
    return {limit: _best_point(search, limit) for limit in limits}


def recomputing_at(search: PolicySearch, capacity: int) -> dict[str, Any]:
    """Each recomputation peer's fastest setting within `capacity` (after `search_peers`)."""
    return {
        peer: _recomputing_at(search, peer, capacity) for peer in RECOMPUTATION_PEERS
    }


def _recomputing_at(search: PolicySearch, peer: str, capacity: int) -> dict[str, Any]:
    """A recomputation peer's fastest setting within `capacity`, or its least peak."""
    points = [p for p in search.points if p.policy == peer and not p.oom]
    if not points:
        return {"fits": False, "setting": "n/a"}
    fitting = [p for p in points if p.peak_hbm_bytes <= capacity]
    if fitting:
        best = min(fitting, key=lambda p: p.slowdown)
        none = search.baseline.none
        return {
            "fits": True,
            "setting": best.setting,
            "peak_hbm_bytes": best.peak_hbm_bytes,
            "makespan_s": none.makespan_s * (1 + best.slowdown),
            "slowdown": best.slowdown,
        }
    least = min(points, key=lambda p: p.peak_hbm_bytes)
    return {
        "fits": False,
        "setting": f"least peak: {least.setting}",
        "peak_hbm_bytes": least.peak_hbm_bytes,
    }


def _best_point(search: PolicySearch, limit: float) -> dict[str, Any] | None:
    """The peers' least peak within `limit` over every setting they tried."""
    within = [p for p in search.points if not p.oom and p.slowdown <= limit]
    if not within:
        return None
    best = min(within, key=lambda p: p.peak_hbm_bytes)
    none = search.baseline.none
    return {
        "policy": best.policy,
        "setting": best.setting,
        "peak_hbm_bytes": best.peak_hbm_bytes,
        "slowdown": best.slowdown,
        "peak_reduction": 1 - best.peak_hbm_bytes / none.peak_hbm_bytes,
    }


def state_total(baseline: Baseline, states: Iterable[int]) -> int:
    """Bytes of the optimizer states (argument buffers come first, in order)."""
    buffers = baseline.stripped.buffers
    if any(buffers[i].kind != "argument" for i in states):
        raise ValueError("the optimizer states are not the arguments named")
    return sum(buffers[i].bytes for i in states)


def total_flops(baseline: Baseline) -> float:
    return sum(s.flops for s in baseline.stripped.steps if isinstance(s, Compute))


def order_comparison(
    scenario: SeedTraining, capacities: Iterable[str], ctx: Context
) -> list[dict[str, Any]]:
    """
    `scenario`'s step updating after the backward pass and with the
    optimizer step in the backward pass: `none`, what each returns to the
    pool after its last matmul, and ours planned at each of `capacities`
    (the planner's estimate on the graph, as the fixed-HBM rows).
    """
    unlimited = load_hardware(scenario.preset, UNLIMITED)
    rows: list[dict[str, Any]] = []
    for in_backward in (False, True):
        step = replace(
            scenario, export=replace(scenario.export, optimizer_in_backward=in_backward)
        )
        spec = step.export.on(unlimited)
        workload = load_workload(spec, ctx.work, ctx.log)
        text = (ctx.work / spec.file_name()).read_text()
        states = state_arguments(text[:1_000_000])
        after = returned_after_last_matmul(text)
        del text
        baseline = workload.baseline(unlimited)
        none = baseline.none
        row: dict[str, Any] = {
            "in_backward": in_backward,
            "command": spec.command,
            "none": run_figures(none, none, states),
            "flops": total_flops(baseline),
            "peak_flops": unlimited.peak("bf16"),
            "remote_gb_per_s": unlimited.links[Tier.REMOTE].bandwidth_to_device / 1e9,
            "returned_after_backward_bytes": after,
            "state_bytes": state_total(baseline, states),
            "ours": {},
        }
        for capacity in capacities:
            at = load_hardware(scenario.preset, capacity).hbm_capacity
            ctx.log(f"{spec.command}: ours at {capacity}")
            row["ours"][capacity] = step.ours_at_capacity(
                workload, unlimited, at, none, states
            ) | {"capacity_bytes": at}
        rows.append(row)
        del workload, baseline
    return rows
