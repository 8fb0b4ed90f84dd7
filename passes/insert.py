"""
`hyperoffload-insert`: insert `prefetch`, `store` and `detach` so that the
peak HBM of each function meets a target (see `hyperoffload.planning.planner` for the
rules). Ops are placed at their initial positions: a store right after the
producer, a detach right after the use before the gap (`detach=eager`) or
right before the fetch (`detach=lazy`), a prefetch `prefetch-distance` ops
before the use after the gap; `hyperoffload-move-window` refines them.
With `place-arguments=true`, a tagged argument the plan keeps in HBM for the
whole call stays a tensor and its attribute becomes `#hyperoffload.tier<hbm>`.

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

import sys
from dataclasses import dataclass, replace
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import extract_schedule
from hyperoffload.analysis.lifetimes import CATEGORIES, ProgramGraph, ValueInfo
from hyperoffload.dialects.hyperoffload import (
    TIER_ARG_ATTR,
    DetachOp,
    PrefetchOp,
    RemoteType,
    StoreOp,
    Tier,
    TierAttr,
)
from hyperoffload.planning.planner import (
    Plan,
    PlanError,
    PlanOptions,
    ValuePlan,
    plan_offload,
)
from hyperoffload.sim.hardware import Hardware, load_hardware
from hyperoffload.sim.simulator import simulate
from hyperoffload.support.units import parse_duration, parse_size


class _Placement:
    """Ops to insert around the original ops of a function body, then apply."""

    def __init__(self, ops: list[Operation], lazy: bool):
        self.ops = ops
        self.lazy = lazy
        self.position = {op: i for i, op in enumerate(ops)}
        self.before: dict[int, list[Operation]] = {}
        self.after: dict[int, list[Operation]] = {}
        self.at_entry: list[Operation] = []

    def place_after(self, index: int, op: Operation, first: bool = False) -> None:
        if index < 0:
            self.at_entry.insert(0, op) if first else self.at_entry.append(op)
        else:
            ops = self.after.setdefault(index, [])
            ops.insert(0, op) if first else ops.append(op)

    def place_before(self, index: int, op: Operation) -> None:
        self.before.setdefault(index, []).append(op)

    def holder(self, op: Operation) -> int | None:
        """Position of the original top-level op holding `op` (None for inserted ops)."""
        current: Operation | None = op
        while current is not None and current not in self.position:
            current = current.parent_op()
        return None if current is None else self.position[current]

    def replace_uses(self, old: SSAValue, new: SSAValue, start: int, end: int) -> None:
        """Uses of `old` in original ops at positions [start, end) read `new`."""
        for use in list(old.uses):
            at = self.holder(use.operation)
            if at is not None and start <= at < end:
                use.operation.operands[use.index] = new

    def apply(self, rewriter: Rewriter) -> None:
        first = self.ops[0]
        for op in self.at_entry:
            rewriter.insert_op(op, InsertPoint.before(first))
        for index, op in enumerate(self.ops):
            for new in self.before.get(index, ()):
                rewriter.insert_op(new, InsertPoint.before(op))
            anchor = op
            for new in self.after.get(index, ()):
                rewriter.insert_op(new, InsertPoint.after(anchor))
                anchor = new


def _apply_value(
    plan: ValuePlan,
    function: FuncOp,
    placement: _Placement,
    distance: int,
    offload_tier: str,
) -> None:
    """
    Insert the store, detaches and prefetches of one value's plan; stores go
    to `offload_tier`, or to the tier a written-back result names.
    """
    info = plan.info
    end = len(placement.ops)
    current: SSAValue | None
    if plan.initially_out:  # a tagged argument becomes a remote copy
        index = function.args.index(info.value)  # type: ignore[arg-type]
        tensor = info.value.type
        assert isinstance(tensor, TensorType)
        remote = RemoteType(cast(TensorType[Attribute], tensor), Tier(info.tier))
        function.replace_argument_type(index, remote, Rewriter())
        handle: SSAValue = function.args[index]
        reader, current = handle, None
    else:
        store = StoreOp(info.value, Tier(plan.write_back or offload_tier))
        if info.value.name_hint:
            store.handle.name_hint = f"{info.value.name_hint}_remote"
        placement.place_after(info.producer, store, first=True)
        handle, reader, current = store.handle, info.value, info.value
    if plan.write_back is not None:  # the caller gets the remote copy
        last = info.last_use_before(end - 1)  # the return
        placement.place_after(last, DetachOp(info.value))
        returned = placement.ops[-1]
        assert isinstance(returned, ReturnOp)
        placement.replace_uses(info.value, handle, end - 1, end)
        return
    for index, gap in enumerate(plan.gaps):
        fetch_at = plan.fetch_op(index, distance)
        prefetch = PrefetchOp(handle)
        if info.value.name_hint:
            prefetch.result.name_hint = info.value.name_hint
        if current is not None:
            detach = DetachOp(current)
            if placement.lazy:
                placement.place_before(fetch_at, detach)
            else:
                placement.place_after(gap.after, detach)
        placement.place_before(fetch_at, prefetch)
        placement.replace_uses(reader, prefetch.result, gap.before, end)
        reader = current = prefetch.result
    # a copy brought back for the last time is released after its last use,
    # unless it stands for an untagged argument (in HBM at return for the caller)
    untagged_argument = info.producer < 0 and not plan.initially_out
    if (
        current is not None
        and plan.gaps
        and info.last_use < end - 1
        and not untagged_argument
    ):
        placement.place_after(info.last_use, DetachOp(current))


def _place_in_hbm(function: FuncOp, placed: list[ValueInfo]) -> None:
    """Tag each argument of `placed` as living in HBM (the caller keeps it there)."""
    if not placed or function.arg_attrs is None:
        return
    arg_attrs = list(function.arg_attrs.data)
    for info in placed:
        index = function.args.index(info.value)  # type: ignore[arg-type]
        attrs = arg_attrs[index]
        assert isinstance(attrs, DictionaryAttr)
        arg_attrs[index] = DictionaryAttr(
            {**attrs.data, TIER_ARG_ATTR: TierAttr(Tier.HBM)}
        )
    function.arg_attrs = ArrayAttr(arg_attrs)


@dataclass(frozen=True)
class InsertPass(ModulePass):
    """Insert offload ops so that each function's peak HBM meets `hbm-capacity`."""

    name = "hyperoffload-insert"

    hardware: str = "ascend-910c"
    hbm_capacity: str | int | None = None
    """The target peak (e.g. `32GB`); default: the device capacity."""
    min_bytes: str | int = 0
    min_gap: str | int | float = 0
    """Shortest idle gap worth offloading, as a duration (e.g. `50us`)."""
    categories: str = ",".join(CATEGORIES)
    prefetch_distance: int = 1
    detach: str = "eager"
    place_arguments: bool = False
    """Decide where tagged arguments live: in their tier, or in HBM all call."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            hardware = load_hardware(self.hardware, self.hbm_capacity)
            categories = tuple(
                c.strip() for c in self.categories.split(",") if c.strip()
            )
            unknown = set(categories) - set(CATEGORIES)
            if unknown or self.detach not in ("eager", "lazy"):
                raise ValueError(
                    f"bad option: categories must be among {', '.join(CATEGORIES)} "
                    f"and detach 'eager' or 'lazy' (got {self.categories!r}, {self.detach!r})"
                )
            options = PlanOptions(
                target=hardware.hbm_capacity,
                min_bytes=parse_size(self.min_bytes),
                min_gap_s=parse_duration(self.min_gap),
                categories=categories,
                prefetch_distance=self.prefetch_distance,
                place_arguments=self.place_arguments,
            )
            for function in [f for f in op.walk() if isinstance(f, FuncOp)]:
                if not function.is_declaration:
                    self._function(function, hardware, options)
        except (PlanError, ValueError) as err:
            raise PassFailedException(str(err)) from None

    def _function(
        self, function: FuncOp, hardware: Hardware, options: PlanOptions
    ) -> None:
        """
        Plan and insert; if the result peaks above the function as it was (the
        planner's estimate and the IR can disagree, e.g. on in-place writes),
        keep only the moves the rules require.
        """
        costs = CostModel(hardware)
        before = simulate(
            extract_schedule(function, costs), hardware, None, record=False
        )
        backup = function.clone()
        plan = self._insert(function, hardware, options, costs)
        after = simulate(
            extract_schedule(function, costs), hardware, None, record=False
        )
        if after.peak_hbm_bytes > before.peak_hbm_bytes and plan.optional:
            Rewriter.replace_op(function, backup)
            plan = self._insert(
                backup, hardware, replace(options, optional=False), costs
            )
        if not plan.met:
            print(
                f"hyperoffload-insert: warning: @{function.sym_name.data}: the best "
                f"plan found peaks at {plan.peak_after} B, above the target of "
                f"{options.target} B",
                file=sys.stderr,
            )

    def _insert(
        self,
        function: FuncOp,
        hardware: Hardware,
        options: PlanOptions,
        costs: CostModel,
    ) -> Plan:
        graph = ProgramGraph.build(function, costs)
        plan = plan_offload(graph, hardware, options)
        placement = _Placement(graph.ops, lazy=self.detach == "lazy")
        for value_plan in plan.values:
            _apply_value(
                value_plan,
                function,
                placement,
                self.prefetch_distance,
                hardware.offload_tier,
            )
        placement.apply(Rewriter())
        _place_in_hbm(function, plan.placed)
        function.update_function_type()
        return plan
