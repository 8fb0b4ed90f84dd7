"""
`hyperoffload-pipeline`: insertion, move-window and verification in one
pass, with the options of both (`hyperoffload.passes.options`).

Each function's program graph is extracted once; the plan is made, its
fetches moved within their windows and the result checked on that graph, and
the IR is written once. With `max-slowdown` (e.g. `0.02`) it answers the
question users ask: the smallest HBM target whose plan stays within that
slowdown over running with unlimited HBM (`hyperoffload.planning.search`:
a bisection on the graph, each trial reported as a remark). With
`place-arguments=true` the insertion also decides which tagged arguments
live in HBM between calls (see `hyperoffload-insert`).

```
hyperoffload-opt model.mlir -p 'hyperoffload-pipeline{hardware=ascend-910c max-slowdown=0.02}'
hyperoffload-opt decode.mlir -p 'hyperoffload-pipeline{place-arguments=true max-slowdown=0.01}'
```
"""

from dataclasses import dataclass, replace
from functools import cached_property

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from hyperoffload.analysis.program import Program
from hyperoffload.ir.diagnostics import located_message, verify_offload
from hyperoffload.passes.insert import planning_loops, remark_written, warn_if_unmet
from hyperoffload.passes.move_window import move_window
from hyperoffload.passes.options import InsertOptions, MoveWindowOptions
from hyperoffload.planning.experts import is_routed
from hyperoffload.planning.loop import LoopOptions, PlanningLoop, Trial
from hyperoffload.planning.placement import MoveOptions
from hyperoffload.planning.planner import PlanError
from hyperoffload.planning.search import smallest_target
from hyperoffload.sim.simulator import SimResult
from hyperoffload.support.collector import fewer_collections


@dataclass(frozen=True)
class PlannedFunction:
    """
    One function the pipeline planned, and the figures that describe it
    (each simulated once, in unlimited HBM):

    ```python
    (done,) = PipelinePass(hbm_capacity="32GB").planned_functions(module)
    done.before.peak_hbm_bytes, done.after.makespan_s, done.trial.target
    ```
    """

    loop: PlanningLoop
    trial: Trial
    """The trial written."""
    written: SimResult
    """The function as it stands after the pass, extracted and simulated."""
    reference: SimResult
    """The function as it came (its graph), simulated."""
    program: Program
    """The module after the pass, read at this function."""

    @property
    def moved_on_ir(self) -> bool:
        """It came with offload ops, unseen by its graph, moved again on the IR."""
        return self.loop.graph.has_offload_ops

    @cached_property
    def before(self) -> SimResult:
        """The function as it came, stripped of offload ops."""
        if self.moved_on_ir:
            return self.program.simulate("none", record=False)
        return self.reference

    @property
    def after(self) -> SimResult:
        """
        The function as written: its trial's simulation, where its graph
        describes the program before; otherwise the IR's.
        """
        return self.written if self.moved_on_ir else self.trial.result


@dataclass(frozen=True)
class PipelinePass(InsertOptions, MoveWindowOptions, ModulePass):
    """Insert offload ops, move them within their windows, verify."""

    name = "hyperoffload-pipeline"

    max_slowdown: int | float | None = None
    """Plan for the smallest target within this slowdown (e.g. `0.02`)."""

    def loop_options(
        self, capacity: int, move: MoveOptions | None = None
    ) -> LoopOptions:
        """
        As `hyperoffload-insert`'s, with fetches moved (the move-window
        options; each at least `prefetch-distance` ops before its use) and,
        within a slowdown, recomputations up to it tried first.
        """
        placement = replace(self.move_options(), distance=self.prefetch_distance)
        options = super().loop_options(capacity, move or placement)
        if self.max_slowdown is None:
            return options
        plan = replace(options.plan, recompute_budget=float(self.max_slowdown))
        return replace(options, plan=plan)

    def plan(self, op: ModuleOp) -> list[tuple[PlanningLoop, Trial]]:
        """Plan every function of `op` in place; each loop with the trial written."""
        return [(done.loop, done.trial) for done in self.planned_functions(op)]

    def planned_functions(self, op: ModuleOp) -> list[PlannedFunction]:
        """Plan every function of `op` in place; each with its figures."""
        with fewer_collections():
            return self._planned_functions(op)

    def _planned_functions(self, op: ModuleOp) -> list[PlannedFunction]:
        planned: list[PlannedFunction] = []
        try:
            hardware = self.load_hardware()
            capacity = hardware.hbm_capacity
            options = self.loop_options(capacity)
            if self.max_slowdown is not None and any(
                isinstance(f, FuncOp) and is_routed(f) for f in op.walk()
            ):
                raise ValueError(
                    "max-slowdown plans dense programs; a routed MoE program "
                    "takes an hbm-capacity and a routing profile (routing=...)"
                )
            self.place_experts(op, hardware, self.name)
            for loop in planning_loops(op, hardware, options):
                if self.max_slowdown is None:
                    trial = loop.trial(capacity)
                else:
                    trial = smallest_target(loop, capacity, self.max_slowdown)
                trial = loop.write(trial)
                if (
                    loop.graph.has_offload_ops
                ):  # unseen by the graph: move all on the IR
                    move = options.move
                    assert move is not None
                    move_window(loop.function, hardware, move)
                # a search's answer is its own remark, unless it misses the HBM
                if self.max_slowdown is None or not trial.fits(capacity):
                    warn_if_unmet(self.name, loop, trial)
                written, reference = remark_written(self.name, loop)
                program = Program(op, hardware, loop.function.sym_name.data)
                planned.append(
                    PlannedFunction(loop, trial, written, reference, program)
                )
        except (PlanError, ValueError) as err:
            raise PassFailedException(located_message(err)) from None
        verify_offload(op)
        return planned

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.plan(op)
