"""
The options of the planning passes, declared once. Each pass inherits the
groups it reads, and `hyperoffload-pipeline` inherits all of them, so an
option is spelled, typed, defaulted and documented in one place.

```
hyperoffload-opt model.mlir -p 'hyperoffload-insert{hbm-capacity=32GB categories=params,kv detach=lazy}'
hyperoffload-opt model.mlir -p 'hyperoffload-pipeline{hbm-capacity=32GB alpha=0 max-slowdown=0.02}'
```
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from hyperoffload.analysis.lifetimes import CATEGORIES, Category
from hyperoffload.ir.diagnostics import Severity, emit
from hyperoffload.model.hardware import Hardware, load_hardware
from hyperoffload.model.layout import DEFAULT_ALIGNMENT
from hyperoffload.model.routing import parse_routing
from hyperoffload.planning.experts import (
    ExpertBudgetError,
    is_routed,
    place_experts,
    write_placement,
)
from hyperoffload.planning.loop import LoopOptions
from hyperoffload.planning.placement import MoveOptions
from hyperoffload.planning.planner import PlanOptions
from hyperoffload.planning.routed import plan_routed
from hyperoffload.support.tiers import Tier
from hyperoffload.support.units import parse_duration, parse_size


@dataclass(frozen=True)
class HardwareOptions:
    hardware: str = "ascend-910c"
    """A preset name or a TOML file (docs/simulator.md)."""
    hbm_capacity: str | int | None = None
    """The HBM target (e.g. `32GB`); default: the device's capacity."""

    def load_hardware(self) -> Hardware:
        return load_hardware(self.hardware, self.hbm_capacity)


@dataclass(frozen=True)
class LayoutOptions(HardwareOptions):
    layout: Literal["auto", "best-fit", "hill-climb"] = "auto"
    """How buffers get arena offsets (`auto`: the smallest arena of the strategies)."""
    alignment: int = DEFAULT_ALIGNMENT
    """Offsets and sizes are multiples of this many bytes."""

    def layout_alignment(self) -> int:
        """`alignment`, checked (raises `ValueError`)."""
        if self.alignment < 1:
            raise ValueError(f"alignment must be 1 or more, not {self.alignment}")
        return self.alignment


@dataclass(frozen=True)
class AssignOffsetsOptions(LayoutOptions):
    solver: Literal["heuristic", "exact"] = "heuristic"
    """`exact`: search on from `auto`'s layout for the smallest arena (`hyperoffload.model.exact_layout`)."""
    time_limit: int | float = 10.0
    """Seconds `solver=exact` may search per function; it keeps the best layout found."""

    def layout_strategy(self) -> str:
        """The `static_layout` strategy these options ask for."""
        return "exact" if self.solver == "exact" else self.layout

    def layout_time_limit(self) -> float:
        """`time_limit`, checked (raises `ValueError`)."""
        if self.time_limit <= 0:
            raise ValueError(f"time-limit must be positive, not {self.time_limit}")
        return float(self.time_limit)


@dataclass(frozen=True)
class InsertOptions(LayoutOptions):
    min_bytes: str | int = 0
    """Smallest value worth offloading (e.g. `1MB`)."""
    min_gap: str | int | float = 0
    """Shortest idle gap worth offloading, as a duration (e.g. `50us`)."""
    categories: tuple[Category, ...] = CATEGORIES
    """What may move: `params`, `activations`, `optimizer`, `kv`."""
    prefetch_distance: int = 1
    """Ops between a fetch and the use it serves, at insertion (the pipeline: at least)."""
    detach: Literal["eager", "lazy"] = "eager"
    """Detach after the use before a gap, or right before the fetch."""
    place_arguments: bool = False
    """Decide where tagged arguments live: in their tier, or in HBM all call."""
    tiers: tuple[Literal["remote", "host", "ssd"], ...] = ("remote", "host", "ssd")
    """Where offloaded values may go, of the tiers the hardware offers (the slowest that hides)."""
    recompute: Literal["none", "selective", "auto"] = "auto"
    """Compute a value again where its transfer would be exposed (see the planner)."""
    max_recompute_depth: int = 2
    """Kernels one recomputation may run again, back from the value."""
    offload: bool = True
    """Offload beyond what the tags require (false: only recompute, with `recompute`)."""
    solver: Literal["heuristic", "milp"] = "heuristic"
    """`milp`: the exact reference, a MILP solved with HiGHS (small programs)."""
    milp_time_limit: int | float = 10.0
    """Seconds the MILP may take per plan; it reports the MIP gap it reached."""
    milp_max_steps: int = 400
    """Functions with more compute steps (kernels) are refused by `solver=milp`."""
    compress_kv: Literal["none", "int8"] = "none"
    """Compress every move of KV state (`int8`: lossy, half the bytes of bf16)."""
    routing: str = "uniform"
    """Routed MoE programs: the routers' profile, `uniform`, `zipf:S` or `trace:FILE`."""
    routing_seed: int = 0
    """The seed of the profile's expert permutation (`zipf:S`)."""
    speculate: bool = True
    """Routed MoE programs: fetch cold experts chosen at least half the time ahead of the router."""

    def place_experts(
        self, module: ModuleOp, hardware: Hardware, pass_name: str
    ) -> None:
        """
        Plan each routed function of `module` in place: its experts alone
        (`hyperoffload.planning.experts`) where the rest of the program fits
        beside them, else as a whole (`hyperoffload.planning.routed`).
        """
        routing = parse_routing(self.routing)
        routed = [f for f in module.walk() if isinstance(f, FuncOp) and is_routed(f)]
        for function in routed:
            try:
                placement = place_experts(
                    module,
                    function,
                    hardware,
                    routing,
                    self.routing_seed,
                    self.speculate,
                )
            except ExpertBudgetError:
                options = self.loop_options(hardware.hbm_capacity)
                whole = plan_routed(
                    module, function, hardware, routing, options, self.routing_seed
                )
                emit(
                    pass_name,
                    Severity.REMARK,
                    f"@{function.sym_name.data}: {whole.summary()}",
                )
                continue
            write_placement(function, placement, routing, hardware.offload_tier)
            emit(
                pass_name,
                Severity.REMARK,
                f"@{function.sym_name.data}: {placement.summary()}",
            )

    def loop_options(
        self, capacity: int, move: MoveOptions | None = None
    ) -> LoopOptions:
        """How the planning loop plans for `capacity` (fetches moved with `move`)."""
        return LoopOptions(
            self.plan_options(capacity),
            move,
            lazy_detach=self.detach == "lazy",
            layout=self.layout,
            alignment=self.layout_alignment(),
        )

    def plan_options(self, target: int) -> PlanOptions:
        if self.prefetch_distance < 0:
            raise ValueError(
                f"prefetch-distance must be 0 or more, not {self.prefetch_distance}"
            )
        if self.max_recompute_depth < 1:
            raise ValueError(
                f"max-recompute-depth must be 1 or more, not {self.max_recompute_depth}"
            )
        return PlanOptions(
            target=target,
            min_bytes=_option("min-bytes", parse_size, self.min_bytes, bare_bytes=True),
            min_gap_s=_option("min-gap", parse_duration, self.min_gap),
            categories=self.categories,
            prefetch_distance=self.prefetch_distance,
            place_arguments=self.place_arguments,
            recompute=self.recompute,
            max_recompute_depth=self.max_recompute_depth,
            offload=self.offload,
            solver=self.solver,
            milp_time_limit_s=float(self.milp_time_limit),
            milp_max_steps=self.milp_max_steps,
            compress_kv=None if self.compress_kv == "none" else self.compress_kv,
            tiers=tuple(Tier(t) for t in self.tiers),
        )


def _option(name: str, parse: Callable[..., Any], value: Any, **kwargs: Any) -> Any:
    """`parse(value)`, its error naming the option `name`."""
    try:
        return parse(value, **kwargs)
    except ValueError as err:
        raise ValueError(f"{name}={value}: {err}") from None


@dataclass(frozen=True)
class MoveWindowOptions(HardwareOptions):
    alpha: int | float = 1.0
    """
    Weight of exposed transfer time, relative to the compute time (0: every
    prefetch right before its user, or `prefetch-distance` ops ahead in the pipeline).
    """
    beta: int | float = 1.0
    """
    Weight of peak memory, relative to the input's peak (0: the least exposure,
    even above the target).
    """
    max_inflight: int = 8
    """Prefetches in flight at once."""

    def move_options(self) -> MoveOptions:
        if min(self.alpha, self.beta) < 0 or self.max_inflight < 1:
            raise ValueError(
                "alpha and beta must be 0 or more and max-inflight 1 or more "
                f"(got {self.alpha}, {self.beta}, {self.max_inflight})"
            )
        return MoveOptions(float(self.alpha), float(self.beta), self.max_inflight)
