"""
Tensor lifetime analysis: the compact program graph the planner works on.

For one function: its top-level ops in order with their estimated times,
every tensor value (block arguments included) with its bytes, producer, uses
and last use, the idle gaps between consecutive uses (in ops and in compute
time), and the memory timeline (live HBM bytes after each op in the current
order) with its peak. Positions are indices of top-level ops (the last is the
`func.return`); a use inside a nested region counts at the top-level op that
holds it.

```python
graph = ProgramGraph.build(function, CostModel(load_hardware("ascend-910c")))
[(gap.after, gap.before, gap.time_s) for gap in graph.values[0].gaps()]
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import accumulate, pairwise
from typing import Literal

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, StringAttr
from xdsl.ir import Operation, SSAValue

from hyperoffload.analysis.cost import CostModel, tensor_bytes, tensor_type
from hyperoffload.analysis.extract import extract
from hyperoffload.analysis.fusion import Fusion
from hyperoffload.dialects.hyperoffload import (
    OFFLOAD_OPS,
    TIER_ARG_ATTR,
    RemoteType,
    TierAttr,
)
from hyperoffload.dialects.residency import ancestor_in, describe
from hyperoffload.dialects.views import VIEW_OPS
from hyperoffload.model.schedule import Compute, Free, Schedule, Transfer
from hyperoffload.support.positions import ComputeStep, OpIndex
from hyperoffload.support.tiers import Tier

CATEGORY_ATTR = "hyperoffload.category"
"""Argument attribute naming what an argument holds: `params`, `optimizer` or `kv`."""

Category = Literal["params", "activations", "optimizer", "kv"]
"""What a value holds; arguments say it with `hyperoffload.category`."""

CATEGORIES: tuple[Category, ...] = ("params", "activations", "optimizer", "kv")


@dataclass(frozen=True)
class Gap:
    """An idle interval of a value between its uses at ops `after` and `before`."""

    after: OpIndex
    before: OpIndex
    ops: int
    time_s: float
    fused: bool = False
    """
    Whether an op before it that reads the value runs fused into a kernel
    from `before` on (a plan moving the value over it clones that op there).
    """


@dataclass
class ValueInfo:
    value: SSAValue
    name: str
    bytes: int
    producer: OpIndex
    """Index of the producing op; -1 for a function argument."""
    uses: list[OpIndex]
    category: str
    tier: Tier
    """Where the value lives when produced: `hbm`, or the tier of an argument."""
    buffer: int | None
    returned: bool = False
    gap_list: list[Gap] = field(default_factory=list[Gap])

    @property
    def last_use(self) -> OpIndex:
        return self.uses[-1] if self.uses else self.producer

    def last_use_before(self, position: int) -> OpIndex:
        """The last use before op `position` (the producer if none)."""
        return max((u for u in self.uses if u < position), default=self.producer)

    def gaps(self) -> list[Gap]:
        return self.gap_list


def _attr(attrs: DictionaryAttr | None, name: str) -> object | None:
    return None if attrs is None else attrs.data.get(name)


class ProgramGraph:
    """Ops, tensor values with lifetimes and gaps, and the memory timeline."""

    def __init__(
        self,
        function: func.FuncOp,
        ops: list[Operation],
        op_time: list[float],
        values: list[ValueInfo],
        schedule: Schedule,
        compute_of_op: dict[OpIndex, ComputeStep],
        timeline: list[int],
        fusion: Fusion,
    ):
        self.function = function
        self.ops = ops
        self.op_time = op_time
        self.values = values
        self.schedule = schedule
        self.compute_of_op = compute_of_op
        self.timeline = timeline
        self.fusion = fusion
        """The kernels the ops run in (`hyperoffload.analysis.fusion`)."""
        self.prefix = [0.0, *accumulate(op_time)]
        """Compute time before each op (and, last, in all)."""

    @property
    def has_offload_ops(self) -> bool:
        """Whether the function already moves data (offload ops written before planning)."""
        return any(isinstance(op, OFFLOAD_OPS) for op in self.ops)

    @property
    def peak(self) -> int:
        return max(self.timeline, default=0)

    @property
    def peak_op(self) -> int:
        return self.timeline.index(self.peak) if self.timeline else -1

    def result_tiers(self) -> list[Tier | None]:
        """The tier outside HBM each result's attributes name (None: none)."""
        res_attrs = self.function.res_attrs
        tiers: list[Tier | None] = []
        for attrs in res_attrs.data if res_attrs else ():
            assert isinstance(attrs, DictionaryAttr)
            tier = attrs.data.get(TIER_ARG_ATTR)
            tiers.append(
                tier.tier
                if isinstance(tier, TierAttr) and tier.tier != Tier.HBM
                else None
            )
        return tiers

    def returned_to_tiers(self) -> set[SSAValue]:
        """
        The values the function returns at a result tagged with a tier
        outside HBM: written back there (as an updated optimizer state), so
        nothing holds them in HBM after their last use before the return.
        """
        tiers = self.result_tiers()
        returned = self.ops[-1].operands if self.ops else ()
        return {
            value
            for position, value in enumerate(returned)
            if position < len(tiers) and tiers[position] is not None
        }

    def written_back_gap(self, info: ValueInfo, returned: set[SSAValue]) -> Gap | None:
        """
        Where `info` is one of `returned` (`returned_to_tiers`) and made by an
        op: the stretch from its last use before the return to the end, over
        which it need not be in HBM once stored (it is never fetched back).
        """
        if info.producer < 0 or info.value not in returned:
            return None
        n = len(self.ops)
        last = info.last_use_before(n - 1)
        return Gap(last, OpIndex(n), n - 1 - last, 0.0)

    def time_between(self, after: int, before: int) -> float:
        """Compute time of the ops strictly between two positions."""
        start = min(max(after + 1, 0), len(self.ops))
        end = min(max(before, start), len(self.ops))
        return self.prefix[end] - self.prefix[start]

    @staticmethod
    def build(function: func.FuncOp, costs: CostModel) -> ProgramGraph:
        extraction = extract(function, costs)  # one block, or a located error
        ops = list(function.body.block.ops)
        schedule = extraction.schedule
        op_time = [0.0] * len(ops)
        computes = [s for s in schedule.steps if isinstance(s, Compute)]
        for index, step_index in extraction.compute_of_op.items():
            step = computes[step_index]  # a collective takes no compute-stream time
            op_time[index] = step.time_s if step.stream == "compute" else 0.0
        position = {op: OpIndex(i) for i, op in enumerate(ops)}
        values: list[ValueInfo] = []
        arg_attrs = function.arg_attrs.data if function.arg_attrs else ()
        for arg in function.args:
            if tensor_type(arg) is None:
                continue
            attrs = arg_attrs[arg.index] if arg.index < len(arg_attrs) else None
            assert attrs is None or isinstance(attrs, DictionaryAttr)
            tier_attr = _attr(attrs, TIER_ARG_ATTR)
            category = _attr(attrs, CATEGORY_ATTR)
            if isinstance(arg.type, RemoteType):
                tier = arg.type.tier
            elif isinstance(tier_attr, TierAttr):
                tier = tier_attr.tier
            else:
                tier = Tier.HBM
            values.append(
                ValueInfo(
                    arg,
                    describe(arg),
                    tensor_bytes(arg, function),
                    OpIndex(-1),
                    [],
                    category.data if isinstance(category, StringAttr) else "params",
                    tier,
                    extraction.buffer_of.get(arg),
                )
            )
        for index, op in enumerate(ops):
            for result in op.results:
                if tensor_type(result) is not None:
                    values.append(
                        ValueInfo(
                            result,
                            describe(result),
                            tensor_bytes(result, op),
                            OpIndex(index),
                            [],
                            "activations",
                            Tier.HBM,
                            extraction.buffer_of.get(result),
                        )
                    )
        graph = ProgramGraph(
            function,
            ops,
            op_time,
            values,
            schedule,
            extraction.compute_of_op,
            memory_timeline(schedule, extraction.compute_of_op, len(ops)),
            extraction.fusion,
        )
        fusion = extraction.fusion
        contracting = _ContractingChains(fusion)
        for info in values:
            # a fused op reads its inputs in each kernel that runs it: those
            # kernels read them too; no gap starts at the fused op (it runs
            # no kernel there), and one before a kernel that runs it is
            # `Gap.fused` (written with clones of it there: `write_plan`),
            # unless its chain has a contraction run in several kernels
            # (held: its clones need not fuse as it does). Spans: (fused op,
            # last kernel running it)
            uses: set[OpIndex] = set()
            spans: list[tuple[int, int]] = []
            held: list[tuple[int, int]] = []
            for use in info.value.uses:
                holder = ancestor_in(function.body.block, use.operation)
                if holder is None:
                    continue
                uses.add(position[holder])
                info.returned |= isinstance(holder, func.ReturnOp)
                roots = fusion.roots_of.get(holder, ())
                for root in roots:
                    uses.add(position[root])
                if roots:
                    span = (position[holder], max(position[r] for r in roots))
                    spans.append(span)
                    if contracting.has(holder):
                        held.append(span)
            info.uses = sorted(uses)
            events = [info.producer, *info.uses]
            info.gap_list = [
                Gap(
                    a,
                    b,
                    b - a - 1,
                    graph.time_between(a, b),
                    any(start <= a < end for start, end in spans),
                )
                for a, b in pairwise(events)
                if b > a
                and not any(start == a for start, _ in spans)
                and not any(start <= a < end for start, end in held)
            ]
        return graph


class _ContractingChains:
    """
    Whether the fused ops that read a fused op's result (through views)
    include a contraction that runs in more than one kernel, once per op:
    clones of such a chain need not fuse as the original did (a
    FlashAttention backward's recomputed scores), so a value it reads stays
    in HBM until the last kernel that runs it. A contraction fused into one
    kernel (a matmul and its epilogue) is not cloned: a layout op fused into
    it and into a later matmul (a transposed operand) is cloned alone.
    """

    def __init__(self, fusion: Fusion):
        self.fusion = fusion
        self._known: dict[Operation, bool] = {}

    def has(self, op: Operation) -> bool:
        """Whether the chain from fused op `op` has a contraction run in several kernels."""
        if op not in self._known:
            self._known[op] = self._walk(op)
        return self._known[op]

    def _walk(self, op: Operation) -> bool:
        fusion = self.fusion
        pending, seen = [op], set[Operation]()
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            if len(fusion.roots_of.get(current, ())) > 1:
                work = fusion.costs.work(current)
                if work is not None and work.contraction:
                    return True
            pending.extend(
                use.operation
                for result in current.results
                for use in result.uses
                if use.operation in fusion.absorbed
                or isinstance(use.operation, VIEW_OPS)
            )
        return False


def memory_timeline(
    schedule: Schedule,
    compute_of_op: dict[OpIndex, ComputeStep],
    num_ops: int,
    program: Schedule | None = None,
) -> list[int]:
    """
    Live HBM bytes at each op, replaying the schedule in order (no timing): for
    an op with a compute step, while it runs (inputs and outputs allocated);
    for any other op, after the compute step before it. With `program` (the
    schedule `schedule` was edited from), only its compute steps stand for
    ops; added ones (recomputations) count towards the bytes live.
    """
    sizes = [b.bytes for b in schedule.buffers]
    live = sum(b.bytes for b in schedule.buffers if b.initial and b.tier == Tier.HBM)
    ops_steps = None if program is None else {id(s) for s in program.steps}
    after_step: list[int] = []
    peak_in_step: list[int] = []
    for step in schedule.steps:
        if isinstance(step, Compute):
            live += sum(sizes[b] for b in step.allocs)
            if ops_steps is None or id(step) in ops_steps:
                peak_in_step.append(live)
            live -= sum(sizes[b] for b in step.frees)
            if ops_steps is None or id(step) in ops_steps:
                after_step.append(live)
        elif isinstance(step, Transfer) and step.to_device:
            live += sizes[step.dest]
        elif isinstance(step, Free):
            live -= sizes[step.buffer]
    timeline: list[int] = []
    current = sum(b.bytes for b in schedule.buffers if b.initial and b.tier == Tier.HBM)
    for index in range(num_ops):
        step = compute_of_op.get(OpIndex(index))
        if step is not None:
            timeline.append(peak_in_step[step])
            current = after_step[step]
        else:
            timeline.append(current)
    return timeline
