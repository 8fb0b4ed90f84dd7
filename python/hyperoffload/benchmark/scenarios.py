"""
The two kinds of benchmark scenario.

- `PeakAtSlowdown`: one program; on each preset, every policy at its best
  setting (peak, makespan, exposed transfer, bytes moved, and whether it is
  within a slowdown over `none`), the bounds, compile time, and every
  setting tried.
- `LongestSequence`: one program at growing lengths (prompt or KV cache) on
  a fixed HBM; for each policy the longest length that fits (and, with a
  limit, stays within it) and the throughput there, or, when none fits, its
  best run at the shortest length it tried.

```python
scenario = PeakAtSlowdown("tiny", "tiny LLaMA step", Export("tiny-llama", "train"),
                          ("ascend-910c",), limit=0.02, paper="-")
result = scenario.run(Context(work=Path("build/bench"), out=Path("out"), log=print))
```
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hyperoffload.analysis.bounds import memory_lower_bound
from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.analysis.link_bound import LinkBound, link_lower_bound
from hyperoffload.benchmark.peers import (
    OURS,
    RECOMPUTATION_PEERS,
    VARIANTS,
    Best,
    PolicySearch,
)
from hyperoffload.benchmark.plots import write_longest_plot, write_tradeoff_plot
from hyperoffload.benchmark.workloads import (
    Export,
    Log,
    Workload,
    load_workload,
    preset_workloads,
)
from hyperoffload.model.hardware import Hardware, load_hardware
from hyperoffload.passes.pipeline import PipelinePass
from hyperoffload.planning.loop import PlanningLoop
from hyperoffload.planning.planner import PlanError
from hyperoffload.policies.peers import RUNTIMES
from hyperoffload.sim.arena import fragmentation, planned_arena, runtime_arena
from hyperoffload.sim.plot import plot_image
from hyperoffload.sim.simulator import SimResult, simulate
from hyperoffload.support.outputs import write_output


@dataclass(frozen=True)
class Context:
    work: Path
    """Where exported programs are cached."""
    out: Path
    """Where plots are written."""
    log: Log


def _arena_fields(policy: str, result: SimResult) -> dict[str, Any]:
    """
    The arena each run needs: ours is compiled, so its buffers get a static
    layout; every peer allocates at run time with a best-fit allocator. Both
    figures for every run, so the allocators compare on one plan too.
    """
    dynamic = runtime_arena(result).arena_bytes
    arena = planned_arena(result).arena_bytes if policy.startswith(OURS) else dynamic
    return {
        "arena_bytes": arena,
        "fragmentation": fragmentation(arena, result.peak_hbm_bytes),
        "dynamic_arena_bytes": dynamic,
    }


def _row(best: Best, none: SimResult, tokens: int) -> dict[str, Any]:
    row: dict[str, Any] = {
        "policy": best.policy,
        "setting": best.setting,
        "within": best.within,
        **best.timings,
    }
    result = best.result
    if result is None:
        return row
    return row | {
        "peak_hbm_bytes": result.peak_hbm_bytes,
        **_arena_fields(best.policy, result),
        "makespan_s": result.makespan_s,
        "compute_s": result.compute_s,
        "exposed_transfer_s": result.exposed_transfer_s,
        "bytes_moved": result.bytes_to_device + result.bytes_to_remote,
        "slowdown": result.makespan_s / none.makespan_s - 1,
        "peak_reduction": 1 - result.peak_hbm_bytes / none.peak_hbm_bytes,
        "tokens_per_s": tokens / result.makespan_s,
        "oom": result.oom is not None,
    }


def _workload_fields(workload: Workload) -> dict[str, Any]:
    return {
        "command": workload.spec.command,
        "ops": workload.ops,
        "export_s": workload.export_s,
        "parse_s": workload.parse_s,
    }


LP_TIME_LIMIT_S = 900.0
"""HiGHS's time for the LP bound of one preset (the 32-layer steps' take minutes)."""


def lp_bound_fields(link: LinkBound) -> dict[str, Any]:
    """
    A peak result's fields for the LP bound that counts the link, as the
    tables read them (`bound_words.lp_bound_words`): `lp_bound_bytes` and how
    it was solved (`lp_bound`).
    """
    return {
        "lp_bound_bytes": link.bytes,
        "lp_bound": {
            "status": link.status,
            "windows": link.windows,
            "columns": link.columns,
            "rows": link.rows,
            "seconds": link.seconds,
        },
    }


@dataclass(frozen=True)
class PeakAtSlowdown:
    name: str
    title: str
    export: Export
    presets: tuple[str, ...]
    limit: float
    paper: str
    """The seeds' figure for this scenario, as published."""
    place_arguments: bool = False
    """Let ours choose which tagged arguments live in HBM between calls."""
    hbm_capacity: str | None = None
    """HBM of every preset (default: each preset's own)."""

    def run(self, ctx: Context) -> dict[str, Any]:
        ctx.out.mkdir(parents=True, exist_ok=True)
        first: Workload | None = None
        presets: list[dict[str, Any]] = []
        for hardware, workload in preset_workloads(
            self.export, self.presets, self.hbm_capacity, ctx.work, ctx.log
        ):
            first = first or workload
            presets.append(self._preset(workload, hardware, ctx))
        assert first is not None
        return {
            "name": self.name,
            "kind": "peak-at-slowdown",
            "title": self.title,
            "paper": self.paper,
            "limit": self.limit,
            **_workload_fields(first),
            "presets": presets,
        }

    def lp_bounds(self, ctx: Context) -> Iterator[tuple[str, int, LinkBound]]:
        """
        Each preset's name, `none`'s peak and the LP bound at the limit, as
        `run` computes them first, without planning or the peers (for
        results from before the bound: the same program gives the same
        bound).
        """
        for hardware, workload in preset_workloads(
            self.export, self.presets, self.hbm_capacity, ctx.work, ctx.log
        ):
            none = workload.baseline(hardware).none
            graph = ProgramGraph.build(
                main_function(workload.module), CostModel(hardware)
            )
            link = link_lower_bound(
                graph, hardware, self.limit, time_limit_s=LP_TIME_LIMIT_S
            )
            yield hardware.name, none.peak_hbm_bytes, link

    def _preset(
        self, workload: Workload, hardware: Hardware, ctx: Context
    ) -> dict[str, Any]:
        name = hardware.name
        baseline = workload.baseline(hardware)
        none = baseline.none
        log = ctx.log
        search = PolicySearch(workload, baseline, self.limit, log, self.place_arguments)
        # first: the bound fails fast where the rest takes long
        link = link_lower_bound(
            search.graph, hardware, self.limit, time_limit_s=LP_TIME_LIMIT_S
        )
        log(
            f"{name}: none peaks at {none.peak_hbm_bytes / 1e9:.2f} GB; LP bound at "
            f"{self.limit:.0%}: {link.bytes / 1e9:.2f} GB ({link.status}, "
            f"{link.seconds:.1f} s); ours: target search"
        )
        ours = search.ours()
        in_tier = [search.ours(place_arguments=False)] if self.place_arguments else []
        training = baseline.stripped.forward_end is not None
        levers = [search.ours(variant=v) for v in VARIANTS] if training else []
        log(f"{name}: peers")
        recomputing = (
            [search.recomputation(p) for p in RECOMPUTATION_PEERS] if training else []
        )
        bests = [
            Best("none", "unlimited HBM", none, within=True),
            search.reactive(),
            search.prefetching(),
            search.distance(),
            search.activation(),
            *recomputing,
            *in_tier,
            *levers,
            ours,
        ]
        bound = memory_lower_bound(search.graph, hardware)
        saving = none.peak_hbm_bytes - link.bytes
        achieved = none.peak_hbm_bytes - (ours.result or none).peak_hbm_bytes
        stem = f"{self.name}-{name}"
        runs = [(b.policy, b.result) for b in bests if b.result is not None]
        timeline = ctx.out / f"{stem}-timeline.png"
        write_output(timeline, plot_image(runs, timeline, f"{self.title} on {name}"))
        write_tradeoff_plot(
            search.points,
            ctx.out / f"{stem}-tradeoff.png",
            f"{self.title} on {name}",
            self.limit,
        )
        tokens = self.export.tokens
        return {
            "hardware": name,
            "hbm_capacity_bytes": hardware.hbm_capacity,
            "command": workload.spec.command,
            "rows": [_row(b, none, tokens) for b in bests],
            "bound_peak_bytes": bound,
            **lp_bound_fields(link),
            "bound_time_s": none.bound_time_s,
            "fraction_of_possible_saving": achieved / saving if saving > 0 else None,
            "points": [vars(p) for p in search.points],
            "plots": [f"{stem}-timeline.png", f"{stem}-tradeoff.png"],
        }


@dataclass
class _Probe:
    fits: bool
    result: SimResult | None
    setting: str
    slowdown: float
    """Over `none` at the same length."""


@dataclass
class _Lengths:
    """Workloads by length, parsed on first use."""

    scenario: LongestSequence
    ctx: Context
    loaded: dict[Export, Workload] = field(default_factory=dict[Export, Workload])

    def get(self, length: int, hardware: Hardware) -> Workload:
        spec = replace(self.scenario.export, **{self.scenario.vary: length}).on(
            hardware
        )
        if spec not in self.loaded:
            self.loaded[spec] = load_workload(spec, self.ctx.work, self.ctx.log)
        return self.loaded[spec]


@dataclass(frozen=True)
class LongestSequence:
    name: str
    title: str
    export: Export
    vary: str
    """The `Export` field that grows: `seq` or `kv_len`."""
    lengths: tuple[int, ...]
    start: int
    """The length the search starts from."""
    presets: tuple[str, ...]
    paper: str
    limit: float | None = None
    """A slowdown over `none` a fitting run must also stay within (None: any)."""
    hbm_capacity: str | None = None
    """Fixed HBM (default: each preset's)."""
    place_arguments: bool = False
    policies: tuple[str, ...] = (
        "none",
        "reactive-lru",
        "runtime-prefetch",
        "hyperoffload",
    )

    def run(self, ctx: Context) -> dict[str, Any]:
        ctx.out.mkdir(parents=True, exist_ok=True)
        lengths = _Lengths(self, ctx)
        presets = [self._preset(lengths, name, ctx) for name in self.presets]
        flag = "--" + self.vary.replace("_", "-")
        return {
            "name": self.name,
            "kind": "longest-sequence",
            "title": self.title,
            "paper": self.paper,
            "limit": self.limit,
            "command": replace(self.export, **{self.vary: 0}).command.replace(
                f"{flag} 0", f"{flag} N"
            ),
            "vary": self.vary,
            "workloads": [
                {
                    "length": getattr(spec, self.vary),
                    "tier": spec.tier,
                    **_workload_fields(w),
                }
                for spec, w in lengths.loaded.items()
            ],
            "presets": presets,
        }

    def _preset(self, lengths: _Lengths, name: str, ctx: Context) -> dict[str, Any]:
        hardware = load_hardware(name, self.hbm_capacity)
        capacity = hardware.hbm_capacity
        probes: dict[tuple[str, int], _Probe] = {}

        def probe(policy: str, length: int) -> bool:
            key = (policy, length)
            if key not in probes:
                probes[key] = self._probe(
                    policy, lengths.get(length, hardware), hardware
                )
                found = probes[key]
                ctx.log(
                    f"{name}: {policy} at {length}: {'fits' if found.fits else 'does not fit'}"
                )
            return probes[key].fits

        longest: dict[str, dict[str, Any]] = {}
        index = self.lengths.index(self.start)
        for policy in self.policies:
            best = _gallop(self.lengths, index, lambda n, p=policy: probe(p, n))
            longest[policy] = self._entry(policy, best, probes)
            if best is not None:
                index = self.lengths.index(best)
        for length in sorted({n for _, n in probes}):
            probe("none", length)  # the reference at every length tried
        tried = [
            {
                "policy": policy,
                "length": length,
                "fits": probe_.fits,
                "setting": probe_.setting,
                **_figures(policy, probe_),
            }
            for (policy, length), probe_ in sorted(
                probes.items(), key=lambda kv: kv[0][1]
            )
        ]
        plot = f"{self.name}-{name}.png"
        write_longest_plot(tried, capacity, ctx.out / plot, f"{self.title} on {name}")
        return {
            "hardware": name,
            "hbm_capacity_bytes": capacity,
            "longest": longest,
            "tried": tried,
            "plots": [plot],
        }

    def _entry(
        self, policy: str, best: int | None, probes: dict[tuple[str, int], _Probe]
    ) -> dict[str, Any]:
        """The longest length that fits, or the best run at the shortest length tried."""
        mine = {n: p for (q, n), p in probes.items() if q == policy}
        at = best if best is not None else min(mine)
        found = mine[at]
        entry: dict[str, Any] = {
            "length": best,
            "fits": found.fits,
            "at": at,
            "setting": found.setting,
            **_figures(policy, found),
        }
        if found.result is not None:
            tokens = replace(self.export, **{self.vary: at}).tokens
            entry["tokens_per_s"] = tokens / found.result.makespan_s
        return entry

    def _probe(self, policy: str, workload: Workload, hardware: Hardware) -> _Probe:
        capacity = hardware.hbm_capacity
        baseline = workload.baseline(hardware)
        none = baseline.none
        limit = float("inf") if self.limit is None else self.limit

        def verdict(result: SimResult | None, setting: str) -> _Probe:
            if result is None:
                return _Probe(False, None, setting, 0.0)
            slowdown = result.makespan_s / none.makespan_s - 1
            return _Probe(result.within(none, limit), result, setting, slowdown)

        if policy == "none":
            probe = verdict(none, "unlimited HBM")
            return replace(probe, fits=none.peak_hbm_bytes <= capacity)
        if none.bound_peak_bytes > capacity:
            return verdict(None, "one op's inputs and outputs exceed HBM")
        if policy in RUNTIMES:
            search = PolicySearch(
                workload, baseline, limit, lambda _: None, self.place_arguments
            )
            best = search.at_capacity(policy, capacity)
            return verdict(best.result, best.setting)
        pipeline = PipelinePass(place_arguments=self.place_arguments)
        loop = PlanningLoop.for_function(
            main_function(workload.module), hardware, pipeline.loop_options(capacity)
        )
        try:
            trial = loop.trial(capacity)
        except PlanError:
            return verdict(None, "no plan fits")
        result = simulate(trial.schedule, hardware, capacity)
        return verdict(result, "planned at the capacity")


def _figures(policy: str, probe: _Probe) -> dict[str, Any]:
    if probe.result is None:
        return {}
    return {
        "peak_hbm_bytes": probe.result.peak_hbm_bytes,
        **_arena_fields(policy, probe.result),
        "makespan_s": probe.result.makespan_s,
        "slowdown": probe.slowdown,
        "oom": probe.result.oom is not None,
    }


def _gallop(
    lengths: tuple[int, ...], start: int, fits: Callable[[int], bool]
) -> int | None:
    """The longest length that fits, walking from `lengths[start]` (fitting is monotone)."""
    index = start
    if fits(lengths[index]):
        while index + 1 < len(lengths) and fits(lengths[index + 1]):
            index += 1
        return lengths[index]
    while index > 0:
        index -= 1
        if fits(lengths[index]):
            return lengths[index]
    return None
