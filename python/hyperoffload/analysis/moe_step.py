"""
The routed-expert model of a MoE decode step (`hyperoffload.model.moe.
MoEStep`) read from a routed export (`hyperoffload-gen ... --experts
routed`): each `scf.if` tagged `hyperoffload.expert = array<i64: layer,
expert>` is that expert's work, each argument with the same tag its weights.

```mlir
func.func @decode(..., %w1: tensor<32x64xf32> {hyperoffload.expert = array<i64: 0, 1>}, ...)
    attributes {hyperoffload.moe = {experts = 4 : i64, top_k = 2 : i64, ...}} {
  ...                                                     // layer 0 before its router
  %f1 = linalg.generic ... -> tensor<i1>                  // dispatch: expert 1 chosen?
  %p1 = tensor.extract %f1[] : tensor<i1>
  %e1 = scf.if %p1 -> (tensor<1x64xf32>) {...}            // {hyperoffload.expert = array<i64: 0, 1>}
  %o1 = arith.addf %o0, %e1                               // expert 1's combine
```

Times come from the schedule of the path where every expert runs (the
cost model's kernels, located at the ops of the branches), priced as
grouped-GEMM MoE kernels run a layer (vLLM's `fused_moe`, MegaBlocks,
DeepGEMM's grouped GEMM), not one launch per expert:

- an expert's *kernels* are those of its branch; the k-th kernel of every
  chosen expert of a layer is one grouped launch. An expert's share
  (`MoELayer.expert_s`) is its kernels' roofline time without launch
  overhead, so the chosen experts' shares sum to the grouped kernels'
  roofline over their summed FLOPs and bytes (exactly for experts of one
  shape, as exported; an upper bound otherwise); `launch_s` is one
  launch per kernel of an expert;
- its *combine* is the ops outside the branches reading its result (the
  weighted sum into the layer's output): its share joins the expert's, and
  the layer pays one combine launch per such op of an expert (`post_s`);
- its *dispatch* is the ops only its branch's condition needs (whether any
  token chose it): the routing kernels compute it for every expert at
  once, one launch per such op of an expert, priced with every expert's
  share, before the experts (`pre_s`);
- the other kernels between a layer's first and last expert kernel are
  its `post_s`; those before its first, back to the previous layer's last,
  run before its router (`pre_s`); the tail after the last layer is the
  last layer's `post_s`.

`routed_kernels` counts the launches of a token with every chosen expert
held, grouped and one per expert, and the bytes the step must read.
Approximations: a token is one call of the step (its batch routes as one
token), and only the routed experts' weights are offloaded (everything
else stays resident).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import SSAValue

from hyperoffload.analysis.branches import taken_path
from hyperoffload.analysis.cost import CostModel, tensor_bytes
from hyperoffload.analysis.expert_roles import (
    Key,
    Role,
    expert_branches,
    expert_key,
    expert_roles,
)
from hyperoffload.analysis.extract import extract_schedule, main_function
from hyperoffload.dialects.hyperoffload import EXPERT_ATTR, MOE_ATTR
from hyperoffload.dialects.views import VIEW_OPS
from hyperoffload.ir.diagnostics import diagnostic_at
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.moe import ExpertError, MoELayer, MoEStep
from hyperoffload.model.schedule import Compute, Schedule

__all__ = [
    "RoutedKernels",
    "expert_arguments",
    "expert_branches",
    "expert_key",
    "moe_step",
    "routed_kernels",
    "routed_step",
]


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


@dataclass(frozen=True)
class RoutedKernels:
    """
    One token through a routed step, every chosen expert held: its kernel
    launches grouped (as priced) and one per expert (as the unfused text
    reads), and the bytes of arguments it must read.
    """

    grouped: int
    """Launches with each layer's experts, dispatch and combine grouped."""
    per_expert: int
    """
    Launches with one per expert: every expert's dispatch and combine, the
    `top_k` chosen experts' kernels, and the rest.
    """
    per_expert_s: float
    """The token's time priced that way (`per_expert` launches)."""
    read_bytes: int
    """
    Every argument a linalg op reads whole, but the routed experts' weights,
    and `top_k` experts' weights per layer (the largest): what the token
    cannot avoid reading (a table read by index, the embedding, is not
    counted: a gather reads its rows).
    """


@dataclass
class _Layer:
    """The kernels of one MoE layer, sorted by role: (time without launch) each."""

    pre: list[float] = field(default_factory=list[float])
    post: list[float] = field(default_factory=list[float])
    roles: dict[tuple[Role, int], list[float]] = field(
        default_factory=dict[tuple[Role, int], list[float]]
    )

    def kernels(self, role: Role, expert: int) -> list[float]:
        return self.roles.get((role, expert), [])

    def groups(self, role: Role, experts: int) -> int:
        """Grouped launches of `role`: one per kernel of an expert."""
        return max(len(self.kernels(role, e)) for e in range(experts))


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
    step, schedule, _ = _read(module, hardware, function)
    return step, schedule


def routed_kernels(
    module: ModuleOp, hardware: Hardware, function: str | None = None
) -> tuple[MoEStep, RoutedKernels]:
    """The MoE step of a routed export and its token's launches and bytes."""
    step, _, kernels = _read(module, hardware, function)
    return step, kernels


def _read(
    module: ModuleOp, hardware: Hardware, function: str | None
) -> tuple[MoEStep, Schedule, RoutedKernels]:
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
    arguments = expert_arguments(func_op)
    weights = {
        key: sum(tensor_bytes(func_op.args[i], func_op) for i in indices)
        for key, indices in arguments.items()
    }
    if not expert_branches(func_op):
        raise ExpertError(
            diagnostic_at(
                func_op,
                f"no scf.if tagged '{EXPERT_ATTR}': export with --experts routed",
            )
        )
    roles = expert_roles(func_op)
    layers = sorted(
        {layer for layer, _ in weights}
        | {key[0] for role, key in roles.values() if role is Role.WORK}
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
    if not 1 <= top_k.value.data <= experts:
        raise ExpertError(
            diagnostic_at(
                func_op,
                f"'{MOE_ATTR}' top_k {top_k.value.data} must be in [1, {experts}] "
                f"(the experts of @{func_op.sym_name.data})",
            )
        )
    path = main_function(taken_path(module), function)  # every expert runs
    schedule = extract_schedule(path, CostModel(hardware))
    launch = hardware.op_overhead_s
    kernels = [
        (roles.get(step.loc), max(0.0, step.time_s - launch))
        for step in schedule.steps
        if isinstance(step, Compute) and step.time_s > 0
    ]
    parts = _sorted(kernels, layers)
    k = top_k.value.data
    moe_layers = tuple(
        _layer(part, layer, experts, weights, launch)
        for layer, part in zip(layers, parts, strict=True)
    )
    step = MoEStep(moe_layers, k)
    experts_of = {i for indices in arguments.values() for i in indices}
    others = sum(
        tensor_bytes(arg, func_op)
        for i, arg in enumerate(func_op.args)
        if i not in experts_of and _read_whole(arg)
    )
    counted = RoutedKernels(
        sum(_grouped_launches(part, experts) for part in parts),
        sum(_per_expert_launches(part, experts, k) for part in parts),
        sum(_per_expert_s(part, experts, k, launch) for part in parts),
        others + sum(k * max(layer.expert_bytes) for layer in moe_layers),
    )
    return step, schedule, counted


def _read_whole(value: SSAValue) -> bool:
    """Whether a linalg op takes `value` (through views) as an operand."""
    pending = [value]
    while pending:
        for use in pending.pop().uses:
            user = use.operation
            if isinstance(user, VIEW_OPS):
                pending.extend(user.results)
            elif isinstance(user, LinalgStructuredOperation):
                return True
    return False


def _sorted(
    kernels: list[tuple[tuple[Role, Key] | None, float]], layers: list[int]
) -> list[_Layer]:
    """Each layer's kernels by role; the others before its first expert kernel or after."""
    first: dict[int, int] = {}  # layer -> index of its first and last expert kernel
    last: dict[int, int] = {}
    for i, (role, _) in enumerate(kernels):
        if role is not None:
            last[role[1][0]] = i
            if role[0] is Role.WORK:
                first.setdefault(role[1][0], i)
    idle = [layer for layer in layers if layer not in first]
    if idle:
        raise ExpertError(f"MoE layers whose experts compute nothing: {idle}")
    parts = {layer: _Layer() for layer in layers}
    start = 0
    for n, layer in enumerate(layers):
        end = last[layer] if n + 1 < len(layers) else len(kernels) - 1
        for i in range(start, end + 1):
            role, time_s = kernels[i]
            if role is not None:
                (kind, (owner, expert)) = role
                parts[owner].roles.setdefault((kind, expert), []).append(time_s)
            elif i < first[layer]:
                parts[layer].pre.append(time_s)
            else:
                parts[layer].post.append(time_s)
        start = end + 1
    return [parts[layer] for layer in layers]


def _layer(
    part: _Layer, layer: int, experts: int, weights: dict[Key, int], launch: float
) -> MoELayer:
    """
    One layer as grouped kernels: each expert's work and combine its share,
    one launch per kernel of an expert; every expert's dispatch at once.
    """
    dispatch = sum(sum(part.kernels(Role.DISPATCH, e)) for e in range(experts))
    return MoELayer(
        sum(part.pre)
        + dispatch
        + launch * (len(part.pre) + part.groups(Role.DISPATCH, experts)),
        sum(part.post) + launch * (len(part.post) + part.groups(Role.COMBINE, experts)),
        tuple(weights[layer, e] for e in range(experts)),
        tuple(
            sum(part.kernels(Role.WORK, e)) + sum(part.kernels(Role.COMBINE, e))
            for e in range(experts)
        ),
        launch * part.groups(Role.WORK, experts),
    )


def _grouped_launches(part: _Layer, experts: int) -> int:
    return len(part.pre) + len(part.post) + sum(part.groups(r, experts) for r in Role)


def _per_expert_launches(part: _Layer, experts: int, top_k: int) -> int:
    every = sum(
        len(part.kernels(r, e))
        for r in (Role.DISPATCH, Role.COMBINE)
        for e in range(experts)
    )
    work = sum(len(part.kernels(Role.WORK, e)) for e in range(experts)) / experts
    return len(part.pre) + len(part.post) + every + round(top_k * work)


def _per_expert_s(part: _Layer, experts: int, top_k: int, launch: float) -> float:
    def priced(times: list[float]) -> float:
        return sum(times) + launch * len(times)

    every = sum(
        priced(part.kernels(r, e))
        for r in (Role.DISPATCH, Role.COMBINE)
        for e in range(experts)
    )
    work = sum(priced(part.kernels(Role.WORK, e)) for e in range(experts)) / experts
    return priced(part.pre) + priced(part.post) + every + top_k * work
