"""
Routed MoE programs planned as a whole: the dense weights, the KV cache,
the activations and the routed experts under one HBM target.

`hyperoffload.planning.experts` alone offloads only routed experts, so a
target below the peak of everything else is out of its reach. Here the
target is split: the experts get a budget (the hot set the routing profile
ranks first, beside one fetch buffer for a cold expert's branch), and the
rest of the program, the hot experts' weights included as arguments it
sees, is planned by the dense planner for the target less the fetch buffer
(where that fails, for the whole target: the buffer is held only in a cold
branch, and the written program's simulated peak judges). The dense planner does not plan conditional regions, so each
expert's `scf.if` stands in for the planning as one opaque op that reads
what the branch reads from outside (its condition, the activations, a hot
expert's weights) and yields what it yields, costed as the branch's kernels
run on the path where every expert runs:
```mlir
%y0 = scf.if %r0 -> (tensor<1x64xf32>) { ... %w0 ... %a ... } else { ... %z ... }
```
is planned as `%y0 = "test.op"(%r0, %w0, %a, %z) : (...) -> tensor<1x64xf32>`,
and after the plan is written the `scf.if` takes its place again, each value
it captured read as the plan left it at that position (a prefetched copy
where the plan fetched it before the branch). Several splits are tried,
from no hot expert to every expert the budget allows; of the written
programs whose simulated peak (on the path where every expert runs) meets
the target, the fastest is kept.

Approximations: cold experts are fetched in their branches, none ahead of
the router; the branches' own intermediates are not offloaded, and the rest
is offloaded, not recomputed (a recomputation would run a stand-in again).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from xdsl.dialects import scf, tensor
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.dialects.test import TestOp
from xdsl.ir import Operation, SSAValue

from hyperoffload.analysis.branches import taken_path
from hyperoffload.analysis.cost import CostModel, OpWork, tensor_type
from hyperoffload.analysis.extract import extract_schedule, main_function
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.analysis.moe_step import expert_branches, routed_step
from hyperoffload.dialects.hyperoffload import RemoteType
from hyperoffload.ir.diagnostics import diagnostic_at
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.moe import ExpertError
from hyperoffload.model.routing import Routing
from hyperoffload.planning.experts import ExpertPlacement, write_placement
from hyperoffload.planning.hot_set import choose_hot_set
from hyperoffload.planning.loop import LoopOptions, PlanningLoop
from hyperoffload.planning.planner import PlanError
from hyperoffload.sim.simulator import SimResult, simulate
from hyperoffload.support.units import format_bytes, format_seconds

HOT_FRACTIONS = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The expert budgets tried, as fractions of all routed experts' weights."""


@dataclass(frozen=True)
class RoutedPlan:
    """A routed program planned as a whole, as written and simulated."""

    placement: ExpertPlacement
    peak_bytes: int
    """The written program's peak on the path where every expert runs."""
    makespan_s: float
    """Its step time on that path."""
    reference_s: float
    """The step time of the program as it came, with unlimited HBM."""

    def summary(self) -> str:
        """One line: the split, then the written program's figures."""
        slowdown = self.makespan_s / self.reference_s - 1 if self.reference_s else 0.0
        return (
            f"planned as a whole: {self.placement.summary()}; as written: peak "
            f"{format_bytes(self.peak_bytes)}, slowdown {slowdown:+.2%} "
            f"({format_seconds(self.makespan_s)}, every expert run; simulated)"
        )


def plan_routed(
    module: ModuleOp,
    function: FuncOp,
    hardware: Hardware,
    routing: Routing,
    options: LoopOptions,
    seed: int = 0,
) -> RoutedPlan:
    """
    Plan `function` (routed) of `module` for `hardware.hbm_capacity`, experts
    and everything else together: the function is replaced in its block by
    its planned copy; `PlanError` if no split fits.
    """
    name = function.sym_name.data
    try:
        step, every_expert = routed_step(module, hardware, name)
    except ExpertError as err:
        raise PlanError(str(err)) from None
    target = hardware.hbm_capacity
    reference = simulate(every_expert, hardware, record=False).makespan_s
    layers = tuple(sorted({n for n, _ in expert_branches(function)}))
    frequencies = routing.frequencies(len(layers), step.experts, step.top_k, seed)
    fetch = max(max(layer.expert_bytes) for layer in step.layers)
    best: tuple[float, int, ExpertPlacement, FuncOp, SimResult] | None = None
    for fraction in HOT_FRACTIONS:
        hot = choose_hot_set(
            step, frequencies, int(fraction * step.expert_weight_bytes())
        )
        kept = sum(
            step.layers[n].expert_bytes[e] for n, row in enumerate(hot) for e in row
        )
        cold = any(len(row) < step.experts for row in hot)
        budget = kept + (fetch if cold else 0)
        placement = ExpertPlacement(
            layers,
            tuple(tuple(row) for row in hot),
            tuple(() for _ in layers),
            budget,
            target - budget,
        )
        # the hot experts are arguments the rest's plan sees; the fetch
        # buffer is held only in a cold branch: where the rest planned
        # beside it all call does not fit, the written program's peak judges
        # the rest planned for the whole target
        for rest_target in dict.fromkeys((target - budget + kept, target)):
            probe = function.clone()
            try:
                _write(probe, rest_target, placement, hardware, routing, options)
            except PlanError:
                continue
            written = _simulate_written(probe, hardware)
            if written.peak_hbm_bytes > target:
                continue
            if best is None or (written.makespan_s, -kept) < best[:2]:
                best = (written.makespan_s, -kept, placement, probe, written)
            break
    if best is None:
        raise PlanError(
            diagnostic_at(
                function,
                f"@{name}: no split of the {format_bytes(target)} target between "
                f"the routed experts (the largest: {format_bytes(fetch)}) and the "
                "rest of the program meets it",
            )
        )
    *_, placement, planned, written = best
    block = function.parent_block()
    assert block is not None
    block.insert_op_before(planned, function)
    block.detach_op(function)
    return RoutedPlan(placement, written.peak_hbm_bytes, written.makespan_s, reference)


def _simulate_written(function: FuncOp, hardware: Hardware) -> SimResult:
    """`function` (unparented) as written, on the path where every expert runs."""
    holder = ModuleOp([function])
    path = taken_path(holder)
    schedule = extract_schedule(main_function(path), CostModel(hardware))
    holder.body.block.detach_op(function)
    return simulate(schedule, hardware, record=False)


def _write(
    function: FuncOp,
    rest_target: int,
    placement: ExpertPlacement,
    hardware: Hardware,
    routing: Routing,
    options: LoopOptions,
) -> None:
    """
    The experts' placement, then the rest planned for `rest_target` (the hot
    experts' weights are arguments the rest's plan sees, and may fetch
    before a branch).
    """
    write_placement(function, placement, routing, hardware.offload_tier)
    branches = list(expert_branches(function).values())
    stand_ins = [_StandIn(branch) for branch in branches]
    try:
        plain = CostModel(hardware)
        costs = _BranchCosts(hardware, {s.op: s.work(plain) for s in stand_ins})
        offload_only = replace(options.plan, recompute="none")
        loop = PlanningLoop(
            function,
            ProgramGraph.build(function, costs),
            hardware,
            replace(options, plan=offload_only),
        )
        loop.write(loop.trial(rest_target))
    finally:
        for stand_in in stand_ins:
            stand_in.restore()


class _StandIn:
    """An expert's `scf.if`, replaced by one opaque op while the rest is planned."""

    def __init__(self, branch: scf.IfOp):
        self.branch = branch
        walked = [op for region in branch.regions for op in region.walk()]
        inner = set(walked)
        self.captured: list[SSAValue] = list(
            dict.fromkeys(
                operand
                for op in walked
                for operand in op.operands
                if not (isinstance(operand.owner, Operation) and operand.owner in inner)
                and not _defined_in(operand, branch)
                and not isinstance(operand.type, RemoteType)  # fetched inside
                and not isinstance(operand.owner, tensor.EmptyOp)  # no memory
            )
        )
        self.op = TestOp(
            [branch.cond, *self.captured], [r.type for r in branch.results]
        )
        self.op.attributes.update(branch.attributes)
        block = branch.parent_block()
        assert block is not None
        block.insert_op_before(self.op, branch)
        for old, new in zip(branch.results, self.op.results, strict=True):
            old.replace_all_uses_with(new)
        block.detach_op(branch)

    def work(self, costs: CostModel) -> OpWork:
        """
        The branch's work where it runs: the FLOPs of its `then` region's ops
        (at the rate of its contractions, if any), reading the tensors it
        captured and writing its results.
        """
        works = [
            work
            for op in self.branch.true_region.walk()
            if (work := costs.work(op)) is not None
        ]
        contractions = [w for w in works if w.contraction]
        return OpWork(
            sum(w.flops for w in works),
            contractions[0].dtype if contractions else "f32",
            bool(contractions),
            tuple(v for v in self.op.operands if tensor_type(v) is not None),
            tuple(r for r in self.op.results if tensor_type(r) is not None),
        )

    def restore(self) -> None:
        """The `scf.if` back in place, reading the values the plan left at its position."""
        block = self.op.parent_block()
        assert block is not None
        for value, now in zip(self.captured, self.op.operands[1:], strict=True):
            if now is value:
                continue
            for use in list(value.uses):
                if self.branch.is_ancestor(use.operation):
                    use.operation.operands[use.index] = now
        block.insert_op_before(self.branch, self.op)
        for new, old in zip(self.op.results, self.branch.results, strict=True):
            new.replace_all_uses_with(old)
        block.erase_op(self.op)


def _defined_in(value: SSAValue, branch: scf.IfOp) -> bool:
    """Is `value` a block argument of a region of `branch`?"""
    owner = value.owner
    if isinstance(owner, Operation):
        return branch.is_ancestor(owner)
    parent = owner.parent_op()
    return parent is not None and branch.is_ancestor(parent)


class _BranchCosts(CostModel):
    """A cost model that prices each stand-in as the branch it stands for."""

    def __init__(self, hardware: Hardware, works: dict[Operation, OpWork]):
        super().__init__(hardware)
        self._stand_ins = works

    def work(self, op: Operation) -> OpWork | None:
        """The branch's work for a stand-in, else `CostModel.work`."""
        found = self._stand_ins.get(op)
        return found if found is not None else super().work(op)
