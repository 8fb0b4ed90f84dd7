"""
The routed-expert scenario: a routed MoE decode step (`hyperoffload-gen
MODEL --experts routed`) run for `tokens` tokens under each expert-cache
policy (`hyperoffload.policies.experts`), for each routing and each expert
budget (a fraction of the routed experts' weights), and for each policy the
least budget keeping `1 - limit` of `all-resident`'s tokens/s. A routing
may be a recorded one, `trace:FILE` (a path relative to the repository, as
`bench/routing/`); `profiles` names the profile ours plans from for a
routing (default: the routing itself, another sample of it), e.g. a trace
recorded on other inputs.

```python
scenario = ExpertGeneration("moe", "tiny MoE", Export("tiny-moe", "decode", kv_len=16,
                            dtype="f32", experts="routed"), ("ascend-910c",),
                            routings=("uniform", "zipf:1.0"), budgets=(0.5, 1.0),
                            fixed=0.5, tokens=32, paper="-")
result = scenario.run(Context(work=Path("build/bench"), out=Path("out"), log=print))
```
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hyperoffload.analysis.moe_step import RoutedKernels, routed_kernels
from hyperoffload.benchmark.plots import write_budget_throughput_plot
from hyperoffload.benchmark.scenarios import Context
from hyperoffload.benchmark.workloads import Export, preset_workloads
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.moe import MoEStep
from hyperoffload.model.routing import parse_routing
from hyperoffload.policies.experts import (
    ALL_RESIDENT,
    EXPERT_POLICIES,
    simulate_experts,
)


@dataclass(frozen=True)
class ExpertGeneration:
    name: str
    title: str
    export: Export
    presets: tuple[str, ...]
    routings: tuple[str, ...]
    """`--routing` specs (`hyperoffload.model.routing`)."""
    budgets: tuple[float, ...]
    """Expert budgets as fractions of the routed experts' weights, ascending."""
    fixed: float
    """The budget of the table (one of `budgets`)."""
    tokens: int
    paper: str
    limit: float = 0.05
    warmup: int = 8
    """Tokens run before the measured ones (the caches start warm)."""
    seed: int = 0
    profiles: tuple[tuple[str, str], ...] = ()
    """(routing, profile): the profile ours plans from for that routing."""

    def run(self, ctx: Context) -> dict[str, Any]:
        ctx.out.mkdir(parents=True, exist_ok=True)
        presets: list[dict[str, Any]] = []
        workload = None
        for hardware, workload in preset_workloads(
            self.export, self.presets, None, ctx.work, ctx.log
        ):
            step, kernels = routed_kernels(workload.module, hardware)
            presets.append(
                self._preset(step, hardware, ctx) | _token(step, kernels, hardware)
            )
        assert workload is not None
        return {
            "name": self.name,
            "kind": "experts",
            "title": self.title,
            "paper": self.paper,
            "limit": self.limit,
            "tokens": self.tokens,
            "fixed": self.fixed,
            "command": workload.spec.command,
            "ops": workload.ops,
            "export_s": workload.export_s,
            "parse_s": workload.parse_s,
            "presets": presets,
        }

    def _preset(
        self, step: MoEStep, hardware: Hardware, ctx: Context
    ) -> dict[str, Any]:
        weights = step.expert_weight_bytes()
        smallest = sum(max(layer.expert_bytes) for layer in step.layers)
        budgets = [b for b in self.budgets if b * weights >= smallest]
        routings: list[dict[str, Any]] = []
        plots: list[str] = []
        for spec in self.routings:
            routing = parse_routing(in_repository(spec))
            profile = dict(self.profiles).get(spec)
            planned_from = (
                None if profile is None else parse_routing(in_repository(profile))
            )
            curves: dict[str, list[tuple[int, float]]] = {}
            runs: list[dict[str, Any]] = []
            for fraction in budgets:
                budget = int(fraction * weights)
                for policy in EXPERT_POLICIES:
                    result = simulate_experts(
                        step,
                        routing,
                        self.tokens,
                        policy,
                        hardware,
                        budget,
                        self.seed,
                        self.warmup,
                        profile=planned_from,
                    )
                    runs.append(
                        result.report() | {"budget": fraction, "budget_bytes": budget}
                    )
                    curves.setdefault(policy, []).append((budget, result.tokens_per_s))
            reference = next(r for r in runs if r["policy"] == ALL_RESIDENT)
            floor = reference["tokens_per_s"] * (1 - self.limit)
            least = {
                policy: next(
                    (
                        r["budget_bytes"]
                        for r in runs
                        if r["policy"] == policy and r["tokens_per_s"] >= floor
                    ),
                    None,
                )
                for policy in EXPERT_POLICIES
            } | {ALL_RESIDENT: weights}  # it holds every expert, whatever the budget
            plot = f"{self.name}-{hardware.name}-{_file_label(spec)}.png"
            write_budget_throughput_plot(
                curves, ctx.out / plot, f"{self.title}, {spec}, on {hardware.name}"
            )
            plots.append(plot)
            ctx.log(
                f"{hardware.name} {spec}: at {self.fixed:.0%} "
                + ", ".join(
                    f"{r['policy']} {r['tokens_per_s']:.2f}"
                    for r in runs
                    if r["budget"] == self.fixed
                )
            )
            routings.append(
                {
                    "routing": spec,
                    "profile": profile or spec,
                    "runs": runs,
                    "least_within": least,
                    "plot": plot,
                }
            )
        return {
            "hardware": hardware.name,
            "expert_weight_bytes": weights,
            "routings": routings,
            "plots": plots,
        }


def _token(step: MoEStep, kernels: RoutedKernels, hardware: Hardware) -> dict[str, Any]:
    """
    One token with every chosen expert held (experts chosen alike): its
    time and launches, grouped and one per expert, and its floors.
    """
    share = step.top_k / step.experts
    return {
        "token_s": step.compute_per_token_s(
            [[share] * step.experts] * len(step.layers)
        ),
        "launches": kernels.grouped,
        "per_expert_token_s": kernels.per_expert_s,
        "per_expert_launches": kernels.per_expert,
        "read_bytes": kernels.read_bytes,
        "bandwidth_floor_s": kernels.read_bytes / hardware.hbm_bandwidth,
        "launch_floor_s": kernels.grouped * hardware.op_overhead_s,
    }


REPOSITORY = Path(__file__).resolve().parents[3]
"""The checkout the benchmark runs from (its `bench/routing/` traces)."""


def in_repository(spec: str) -> str:
    """A routing spec with a relative trace path made absolute in the repository."""
    path = _trace_path(spec)
    if path is None or path.is_absolute():
        return spec
    return f"trace:{REPOSITORY / path}"


def _file_label(spec: str) -> str:
    """`zipf:1.0` -> `zipf1.0`; a trace by its file's stem."""
    path = _trace_path(spec)
    return spec.replace(":", "") if path is None else f"trace-{path.stem}"


def _trace_path(spec: str) -> Path | None:
    """The file of a `trace:FILE` spec; None for a synthetic routing."""
    return Path(spec.removeprefix("trace:")) if spec.startswith("trace:") else None
