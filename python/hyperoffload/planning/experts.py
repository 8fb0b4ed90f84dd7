"""
Placement of routed experts: which experts of a routed MoE program
(`hyperoffload-gen ... --experts routed`) stay resident in HBM, and how the
others reach it, chosen from a routing profile (`hyperoffload.model.routing`)
under the HBM target.

Everything but the routed experts' weights keeps the HBM it needs at its
peak (measured on the path where every expert runs); what is left is the
expert budget. The hot set takes the most expected hits per byte
(`hyperoffload.planning.hot_set.choose_hot_set`) beside one fetch buffer: a
branch's fetch is detached at the branch's end, so one buffer serves every
cold branch in turn. A cold expert is fetched at the top of its
branch, after the router chose it, and detached at the branch's end; a
cold expert chosen at least half the time is fetched speculatively ahead
of its layer's router instead, where the budget holds it beside the
fetches of the branches before its own: its prefetch is marked `speculative`,
placed after the previous MoE layer's last expert (at the function's entry
for the first), and detached after its own branch.

```mlir
func.func @decode(%x: tensor<1x64xf32>, %r0: i1, %r1: i1,
    %w0: tensor<64x64xf32> {hyperoffload.expert = array<i64: 0, 0>, hyperoffload.tier = #hyperoffload.tier<remote>},
    %w1: tensor<64x64xf32> {hyperoffload.expert = array<i64: 0, 1>, hyperoffload.tier = #hyperoffload.tier<remote>}) ...
  %y1 = scf.if %r1 -> (tensor<1x64xf32>) {
    %m1 = linalg.matmul ins(%a, %w1 : ...) ...
```
with expert 0 hot becomes
```mlir
func.func @decode(..., %w0: tensor<64x64xf32> {..., hyperoffload.tier = #hyperoffload.tier<hbm>},
    %w1: !hyperoffload.remote<tensor<64x64xf32>> {..., hyperoffload.tier = #hyperoffload.tier<remote>}) ...
  %y1 = scf.if %r1 -> (tensor<1x64xf32>) {
    %w1_1 = hyperoffload.prefetch %w1 : !hyperoffload.remote<tensor<64x64xf32>> -> tensor<64x64xf32>
    %m1 = linalg.matmul ins(%a, %w1_1 : ...) ...
    hyperoffload.detach %w1_1 : tensor<64x64xf32>
```
The function records the plan as `hyperoffload.expert_plan = {budget, routing}`
(the expert budget in bytes and the profile's spec). Approximations: the
rest of the program is not offloaded (a target below its peak is an error),
and the hot set does not change between calls (`ours` in the simulator may
keep what it fetched in the buffer at run time).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import scf
from xdsl.dialects.builtin import (
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.dialects.func import FuncOp

from hyperoffload.analysis.moe_step import (
    Key,
    expert_arguments,
    expert_branches,
    routed_step,
)
from hyperoffload.dialects.hyperoffload import (
    EXPERT_ATTR,
    EXPERT_PLAN_ATTR,
    RemoteType,
)
from hyperoffload.ir.diagnostics import diagnostic_at
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.moe import ExpertError, MoEStep
from hyperoffload.model.routing import Routing
from hyperoffload.planning.hot_set import choose_hot_set
from hyperoffload.planning.planner import PlanError
from hyperoffload.planning.write_plan import write_expert_fetches
from hyperoffload.sim.simulator import simulate
from hyperoffload.support.tiers import Tier
from hyperoffload.support.units import format_bytes

SPECULATE_FROM = 0.5
"""A cold expert chosen at least this often is fetched ahead of its router."""


class ExpertBudgetError(PlanError):
    """The rest of a routed program leaves the experts less than one expert per layer."""


@dataclass(frozen=True)
class ExpertPlacement:
    """Where each routed expert's weights come from, per MoE layer (in order)."""

    layers: tuple[int, ...]
    """The MoE layers' indices (the first entry of each expert's tag)."""
    hot: tuple[tuple[int, ...], ...]
    """Resident experts."""
    speculative: tuple[tuple[int, ...], ...]
    """Cold experts fetched ahead of the router."""
    budget_bytes: int
    """HBM for expert weights: the target less the peak of everything else."""
    others_bytes: int
    """The peak of everything but the routed experts' weights."""

    def summary(self) -> str:
        """One line: what stays, what is fetched, against the budget."""
        hot = sum(len(row) for row in self.hot)
        ahead = sum(len(row) for row in self.speculative)
        return (
            f"{hot} routed experts resident, {ahead} fetched ahead of their "
            f"router, the rest in their branches; {format_bytes(self.budget_bytes)} "
            f"for experts beside {format_bytes(self.others_bytes)} for the rest"
        )


def is_routed(function: FuncOp) -> bool:
    """Does `function` hold an expert's branch (`scf.if` tagged `hyperoffload.expert`)?"""
    return any(
        isinstance(op, scf.IfOp) and EXPERT_ATTR in op.attributes
        for op in function.walk()
    )


def place_experts(
    module: ModuleOp,
    function: FuncOp,
    hardware: Hardware,
    routing: Routing,
    seed: int = 0,
    speculate: bool = True,
) -> ExpertPlacement:
    """The placement of `function`'s experts for `hardware.hbm_capacity`; `PlanError` if none fits."""
    name = function.sym_name.data
    if EXPERT_PLAN_ATTR in function.attributes:
        raise PlanError(
            diagnostic_at(
                function,
                f"@{name} is planned already ('{EXPERT_PLAN_ATTR}'): plan the "
                "program it came from (hyperoffload-strip gives it back)",
            )
        )
    try:
        step, every_expert = routed_step(module, hardware, name)
    except ExpertError as err:
        raise PlanError(str(err)) from None
    layers = tuple(sorted({key[0] for key in expert_arguments(function)}))
    # expert weights are arguments, live all call: the rest is the peak less them
    peak = simulate(every_expert, hardware, record=False).peak_hbm_bytes
    others = peak - step.expert_weight_bytes()
    budget = hardware.hbm_capacity - others
    least = sum(max(layer.expert_bytes) for layer in step.layers)
    if budget < least:
        raise ExpertBudgetError(
            diagnostic_at(
                function,
                f"@{name}: everything but the routed experts peaks at "
                f"{format_bytes(others)}, leaving {format_bytes(max(budget, 0))} of the "
                f"{format_bytes(hardware.hbm_capacity)} target for experts; one expert "
                f"per layer needs {format_bytes(least)} (offloading only the routed "
                "experts; hyperoffload.planning.routed plans the whole program)",
            )
        )
    frequencies = routing.frequencies(len(layers), step.experts, step.top_k, seed)
    hot = _static_hot_set(step, frequencies, budget)
    ahead: list[list[int]] = (
        _speculative(step, frequencies, hot, budget, _branch_order(function, layers))
        if speculate
        else [[] for _ in layers]
    )
    return ExpertPlacement(
        layers,
        tuple(tuple(row) for row in hot),
        tuple(tuple(row) for row in ahead),
        budget,
        others,
    )


def write_placement(
    function: FuncOp, placement: ExpertPlacement, routing: Routing, tier: Tier
) -> None:
    """
    Write `placement` into `function` (`write_plan.write_expert_fetches`):
    tiers, retyped cold weights, prefetches, detaches, and the plan's record.
    """
    record = DictionaryAttr(
        {
            "budget": IntegerAttr(placement.budget_bytes, i64),
            "routing": StringAttr(routing.spec),
        }
    )
    write_expert_fetches(
        function,
        expert_arguments(function),
        _expert_branches(function),
        _keys(placement.layers, placement.hot),
        _keys(placement.layers, placement.speculative),
        tier,
        record,
    )


def planned_hot_set(function: FuncOp) -> tuple[list[list[int]], int] | None:
    """The hot set (per MoE layer, in order) and budget a planned program records; None if unplanned."""
    plan = function.attributes.get(EXPERT_PLAN_ATTR)
    if not isinstance(plan, DictionaryAttr):
        return None
    budget = plan.data.get("budget")
    assert isinstance(budget, IntegerAttr)
    arguments = expert_arguments(function)
    layers = sorted({layer for layer, _ in arguments})
    hot: list[list[int]] = [[] for _ in layers]
    for (layer, expert), indices in sorted(arguments.items()):
        if not any(isinstance(function.args[i].type, RemoteType) for i in indices):
            hot[layers.index(layer)].append(expert)
    return hot, budget.value.data


def _expert_branches(function: FuncOp) -> dict[Key, scf.IfOp]:
    """Each expert's `scf.if`, which must sit in the function's body."""
    branches = expert_branches(function)
    for op in branches.values():
        if op.parent_block() is not function.body.block:
            raise PlanError(
                diagnostic_at(
                    op,
                    "an expert's scf.if must sit in the function's body, "
                    "not in another region",
                )
            )
    return branches


def _branch_order(function: FuncOp, layers: tuple[int, ...]) -> list[list[int]]:
    """Per MoE layer, its experts in the order their branches run."""
    branches = _expert_branches(function)
    body = function.body.block
    return [
        sorted(
            (e for (n, e) in branches if n == layer),
            key=lambda e: body.get_operation_index(branches[layer, e]),
        )
        for layer in layers
    ]


def _keys(layers: tuple[int, ...], rows: tuple[tuple[int, ...], ...]) -> set[Key]:
    return {(layer, e) for layer, row in zip(layers, rows, strict=True) for e in row}


def _static_hot_set(
    step: MoEStep, frequencies: list[list[float]], budget: int
) -> list[list[int]]:
    """
    Every expert where all fit; else the most expected hits per byte beside
    one fetch buffer (the largest expert): in the IR a branch's fetch is
    detached at its end, so no two cold experts' copies live at once.
    """
    if step.expert_weight_bytes() <= budget:
        return [list(range(step.experts)) for _ in step.layers]
    largest = max(max(layer.expert_bytes) for layer in step.layers)
    return choose_hot_set(step, frequencies, budget - largest)


def _speculative(
    step: MoEStep,
    frequencies: list[list[float]],
    hot: list[list[int]],
    budget: int,
    order: list[list[int]],
) -> list[list[int]]:
    """
    Per layer, the cold experts worth fetching ahead (chosen at least half
    the time, the likeliest first) that the budget holds: a speculative
    copy lives from the layer's start to the end of its own branch, beside
    the copy a cold expert's branch fetches, so at a branch the copies of
    the later speculative experts and the branch's own fetch must fit.
    """
    kept = sum(step.layers[n].expert_bytes[e] for n, row in enumerate(hot) for e in row)
    ahead: list[list[int]] = []
    for n, (layer, row) in enumerate(zip(step.layers, frequencies, strict=True)):
        likely = sorted(
            (e for e, p in enumerate(row) if p >= SPECULATE_FROM and e not in hot[n]),
            key=lambda e: (-row[e], e),
        )
        chosen: list[int] = []
        for e in likely:
            if _layer_peak(layer.expert_bytes, hot[n], [*chosen, e], order[n]) <= (
                budget - kept
            ):
                chosen.append(e)
        ahead.append(sorted(chosen))
    return ahead


def _layer_peak(
    sizes: tuple[int, ...], hot: list[int], ahead: list[int], order: list[int]
) -> int:
    """The most fetched bytes one layer holds at once (branches run in `order`)."""
    peak = 0
    for i, e in enumerate(order):
        later = sum(sizes[a] for a in ahead if order.index(a) >= i)
        own = 0 if e in hot or e in ahead else sizes[e]
        peak = max(peak, later + own)
    return peak
