"""
`hyperoffload-insert`: insert `prefetch`, `store` and `detach` so that the
peak HBM of each function meets a target (see `hyperoffload.planning.planner`
for the rules). Ops are placed at their initial positions: a store right
after the producer, a detach right after the use before the gap
(`detach=eager`) or right before the fetch (`detach=lazy`), a prefetch
`prefetch-distance` ops before the use after the gap;
`hyperoffload-move-window` refines them. With `place-arguments=true`, a
tagged argument the plan keeps in HBM for the whole call stays a tensor and
its attribute becomes `#hyperoffload.tier<hbm>`.

```mlir
func.func @f(%w: tensor<64x64xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}, ...)
```
becomes
```mlir
func.func @f(%w: !hyperoffload.remote<tensor<64x64xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>}, ...) {
  ...
  %w_1 = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<64x64xf32>> -> tensor<64x64xf32>
  %y = linalg.matmul ins(%x, %w_1 : ...) ...
  hyperoffload.detach %w_1 : tensor<64x64xf32>
```
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from hyperoffload.ir.diagnostics import Severity, emit, located_message
from hyperoffload.model.hardware import Hardware
from hyperoffload.passes.options import InsertOptions
from hyperoffload.planning.experts import is_routed
from hyperoffload.planning.loop import LoopOptions, PlanningLoop, Trial
from hyperoffload.planning.planner import PlanError
from hyperoffload.sim.simulator import SimResult, simulate
from hyperoffload.support.units import format_bytes, format_seconds


def planning_loops(
    module: ModuleOp, hardware: Hardware, options: LoopOptions
) -> list[PlanningLoop]:
    """
    One planning loop per function with a body, each on its graph (extracted
    once); routed MoE functions are planned by `InsertOptions.place_experts`.
    """
    return [
        PlanningLoop.for_function(f, hardware, options)
        for f in module.walk()
        if isinstance(f, FuncOp) and not f.is_declaration and not is_routed(f)
    ]


def warn_if_unmet(pass_name: str, loop: PlanningLoop, trial: Trial) -> None:
    """
    A warning when the best plan found misses its target, in live bytes or
    in addresses: it gives both figures, the peak and the arena.
    """
    if trial.fits(trial.target):
        return
    peak = trial.result.peak_hbm_bytes
    needs = (
        f"peaks at {format_bytes(peak)}, above the target of "
        f"{format_bytes(trial.target)}, and its layout needs an arena of "
        f"{format_bytes(trial.arena_bytes)}"
        if peak > trial.target
        else f"peaks at {format_bytes(peak)} but its layout needs an arena of "
        f"{format_bytes(trial.arena_bytes)}, above the target of "
        f"{format_bytes(trial.target)}"
    )
    emit(
        pass_name,
        Severity.WARNING,
        f"@{loop.function.sym_name.data}: the best plan found {needs}",
    )


def remark_written(pass_name: str, loop: PlanningLoop) -> tuple[SimResult, SimResult]:
    """
    A remark quoting the function as written, simulated (not the planner's
    estimate): its peak and its slowdown over the program as it came with
    unlimited HBM. Returns both simulations, the written one first.
    """
    written = loop.simulate_written()
    reference = simulate(loop.graph.schedule, loop.hardware, None, record=False)
    ratio = written.makespan_s / reference.makespan_s - 1 if reference.makespan_s else 0
    emit(
        pass_name,
        Severity.REMARK,
        f"@{loop.function.sym_name.data}: as written: peak "
        f"{format_bytes(written.peak_hbm_bytes)}, slowdown {ratio:+.2%} "
        f"({format_seconds(written.makespan_s)}, "
        f"{format_seconds(written.exposed_transfer_s)} of transfers exposed; "
        "simulated)",
    )
    return written, reference


@dataclass(frozen=True)
class InsertPass(InsertOptions, ModulePass):
    """Insert offload ops so that each function's peak HBM meets `hbm-capacity`."""

    name = "hyperoffload-insert"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            hardware = self.load_hardware()
            options = self.loop_options(hardware.hbm_capacity)
            self.place_experts(op, hardware, self.name)
            for loop in planning_loops(op, hardware, options):
                trial = loop.trial(hardware.hbm_capacity)
                trial = loop.write(trial)
                warn_if_unmet(self.name, loop, trial)
                remark_written(self.name, loop)
        except (PlanError, ValueError) as err:
            raise PassFailedException(located_message(err)) from None
