"""
The routed-expert model of a MoE decode step (`hyperoffload.sim.moe.
MoEStep`) read from a routed export (`hyperoffload-gen ... --experts
routed`): each `scf.if` tagged `hyperoffload.expert = array<i64: layer,
expert>` is that expert's work, each argument with the same tag its weights.

```mlir
func.func @decode(..., %w1: tensor<32x64xf32> {hyperoffload.expert = array<i64: 0, 1>}, ...)
    attributes {hyperoffload.moe = {experts = 4 : i64, top_k = 2 : i64, ...}} {
  ...                                                     // layer 0 before its router
  %e1 = scf.if %routed_l0e1 -> (tensor<1x64xf32>) {...}   // {hyperoffload.expert = array<i64: 0, 1>}
  %o1 = arith.addf %o0, %e1                               // the combine: after the experts
```

Times come from the schedule of the path where every expert runs (the
cost model's kernels, located at the ops of the branches): a kernel of a
branch is its expert's; the other kernels between a layer's first and last
expert kernel are its combine (`post_s`); those before its first, back to
the previous layer's last, run before its router (`pre_s`); the tail after
the last layer is the last layer's `post_s`. Approximations: a token is one
call of the step (its batch routes as one token), dispatch work between
the router and the experts counts as before the router, and only the
routed experts' weights are offloaded (everything else stays resident).
"""

from __future__ import annotations

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, IntegerAttr, ModuleOp
from xdsl.ir import Attribute

from hyperoffload.analysis.branches import taken_path
from hyperoffload.analysis.cost import CostModel, tensor_bytes
from hyperoffload.analysis.extract import extract_schedule, main_function
from hyperoffload.dialects.hyperoffload import EXPERT_ATTR, MOE_ATTR
from hyperoffload.ir.diagnostics import diagnostic_at, location_of
from hyperoffload.sim.hardware import Hardware
from hyperoffload.sim.moe import ExpertError, MoELayer, MoEStep
from hyperoffload.sim.schedule import Compute, Schedule

Key = tuple[int, int]
"""(MoE layer, expert)."""


def expert_key(tag: Attribute | None) -> Key | None:
    """The (layer, expert) of a `hyperoffload.expert` tag."""
    if not isinstance(tag, DenseArrayBase):
        return None
    layer, expert = (int(v) for v in tag.get_values())
    return layer, expert


def expert_arguments(function: func.FuncOp) -> dict[Key, list[int]]:
    """Each expert's weight arguments (their indices), from their tags."""
    found: dict[Key, list[int]] = {}
    for index, attrs in enumerate(
        function.arg_attrs.data if function.arg_attrs else ()
    ):
        key = expert_key(attrs.data.get(EXPERT_ATTR))
        if key is not None:
            found.setdefault(key, []).append(index)
    return found


def expert_branches(function: func.FuncOp) -> dict[Key, scf.IfOp]:
    """Each expert's `scf.if` (tagged `hyperoffload.expert`)."""
    return {
        key: op
        for op in function.walk()
        if isinstance(op, scf.IfOp)
        and (key := expert_key(op.attributes.get(EXPERT_ATTR))) is not None
    }


def moe_step(
    module: ModuleOp, hardware: Hardware, function: str | None = None
) -> MoEStep:
    """The MoE step of a routed export; `ExpertError` naming what is missing."""
    return routed_step(module, hardware, function)[0]


def routed_step(
    module: ModuleOp, hardware: Hardware, function: str | None = None
) -> tuple[MoEStep, Schedule]:
    """
    The MoE step of a routed export and the schedule of its path where
    every expert runs (what the step's times are read from).
    """
    func_op = main_function(module, function)
    moe = func_op.attributes.get(MOE_ATTR)
    top_k = moe.data.get("top_k") if isinstance(moe, DictionaryAttr) else None
    if not isinstance(top_k, IntegerAttr):
        raise ExpertError(
            diagnostic_at(
                func_op,
                f"@{func_op.sym_name.data} has no '{MOE_ATTR}' with top_k: "
                "not a MoE export (hyperoffload-gen MODEL --experts routed)",
            )
        )
    weights = {
        key: sum(tensor_bytes(func_op.args[i], func_op) for i in indices)
        for key, indices in expert_arguments(func_op).items()
    }
    owner: dict[str, Key] = {}  # location of an op in a branch -> its expert
    for key, branch in expert_branches(func_op).items():
        for inner in branch.true_region.walk():
            owner[location_of(inner)] = key
    if not owner:
        raise ExpertError(
            diagnostic_at(
                func_op,
                f"no scf.if tagged '{EXPERT_ATTR}': export with --experts routed",
            )
        )
    layers = sorted(
        {layer for layer, _ in weights} | {layer for layer, _ in owner.values()}
    )
    experts = 1 + max(expert for _, expert in weights)
    missing = [
        f"{layer}.{e}"
        for layer in layers
        for e in range(experts)
        if (layer, e) not in weights
    ]
    if missing:
        raise ExpertError(
            diagnostic_at(
                func_op, f"experts without tagged weights: {', '.join(missing)}"
            )
        )
    path = main_function(taken_path(module), function)  # every expert runs
    schedule = extract_schedule(path, CostModel(hardware))
    kernels = [
        (owner.get(step.loc), step.time_s)
        for step in schedule.steps
        if isinstance(step, Compute)
    ]
    step = MoEStep(tuple(_layers(kernels, layers, experts, weights)), top_k.value.data)
    return step, schedule


def _layers(
    kernels: list[tuple[Key | None, float]],
    layers: list[int],
    experts: int,
    weights: dict[Key, int],
) -> list[MoELayer]:
    first: dict[int, int] = {}  # layer -> index of its first and last expert kernel
    last: dict[int, int] = {}
    for i, (key, _) in enumerate(kernels):
        if key is not None:
            first.setdefault(key[0], i)
            last[key[0]] = i
    idle = [layer for layer in layers if layer not in first]
    if idle:
        raise ExpertError(f"MoE layers whose experts compute nothing: {idle}")
    result: list[MoELayer] = []
    start = 0
    for n, layer in enumerate(layers):
        end = last[layer] if n + 1 < len(layers) else len(kernels) - 1
        pre = post = 0.0
        expert_s = [0.0] * experts
        for i in range(start, end + 1):
            key, time_s = kernels[i]
            if key is not None:
                expert_s[key[1]] += time_s
            elif i < first[layer]:
                pre += time_s
            else:
                post += time_s
        result.append(
            MoELayer(
                pre,
                post,
                tuple(weights[layer, e] for e in range(experts)),
                tuple(expert_s),
            )
        )
        start = end + 1
    return result
