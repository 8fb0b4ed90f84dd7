"""
`hyperoffload-move-window`: move each offload op within its legal window to
minimise `alpha * T_exposed + beta * M_peak` (the seeds' Algorithm 1).

Windows: a `prefetch` may go anywhere after the remote copy it reads exists
(after the `store` that makes it, or the function start for an argument) and
before its first consumer; a `store` goes right after its producer; a
`detach` right after the last use of its tensor or of a view of it (a
`tensor.collapse_shape` shares its buffer). Prefetches are placed by
`hyperoffload.planning.placement`: just in time for their consumer on the link's copy
stream, never raising the memory timeline past the target. Only offload ops
move; compute ops keep their order. If the result would expose more transfer
time than the input, or pass a target the input met, the input order stays
(one simulation of each, not one per candidate).

```mlir
%w_1 = hyperoffload.prefetch %w : ...   // one op ahead, after insertion
```
moves as many ops ahead as its transfer time needs to hide behind compute.
"""

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from hyperoffload.analysis.cost import VIEW_OPS, CostModel, tensor_bytes
from hyperoffload.analysis.extract import extract_schedule
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.dialects.hyperoffload import (
    OFFLOAD_OPS,
    DetachOp,
    PrefetchOp,
    RemoteType,
    StoreOp,
)
from hyperoffload.dialects.residency import ancestor_in
from hyperoffload.planning.placement import (
    MoveOptions,
    PrefetchWindow,
    place_prefetches,
)
from hyperoffload.sim.hardware import Hardware, load_hardware
from hyperoffload.sim.simulator import simulate


class _Skeleton:
    """The non-offload top-level ops of a function, and where each offload op hangs."""

    def __init__(self, block: Block):
        self.block = block
        self.body = list(block.ops)
        self.ops = [op for op in self.body if not isinstance(op, OFFLOAD_OPS)]
        self.index = {op: i for i, op in enumerate(self.ops)}
        # for every body op, the skeleton index of the first skeleton op at or after it
        self._next: dict[Operation, int] = {}
        following = len(self.ops)
        for op in reversed(self.body):
            following = self.index.get(op, following)
            self._next[op] = following

    def holder(self, op: Operation) -> int | None:
        """Skeleton index of the skeleton op holding `op` (None: an offload op)."""
        current: Operation | None = op
        while current is not None and current not in self.index:
            if (
                isinstance(current, OFFLOAD_OPS)
                and current.parent_block() is self.block
            ):
                return None
            current = current.parent_op()
        return None if current is None else self.index[current]

    def before(self, op: Operation) -> int:
        """Skeleton index of the first skeleton op after `op` in the body."""
        return self._next[op]

    def anchor_of_value(self, op: Operation) -> int:
        """The skeleton op after which the value `op` reads exists (-1: entry)."""
        value = op.operands[0]
        owner = value.owner
        if isinstance(value, BlockArgument) or not isinstance(owner, Operation):
            return -1
        if owner in self.index:
            return self.index[owner]
        return self.before(owner) - 1  # produced by an offload op


def _windows(
    skeleton: _Skeleton, prefetches: list[PrefetchOp], hardware: Hardware
) -> list[PrefetchWindow]:
    windows: list[PrefetchWindow] = []
    for prefetch in prefetches:
        users = [skeleton.holder(use.operation) for use in prefetch.result.uses]
        users = [u for u in users if u is not None]
        current = skeleton.before(prefetch)
        source = prefetch.source
        earliest = 0
        if isinstance(source.owner, StoreOp):
            earliest = skeleton.anchor_of_value(source.owner) + 1
        if not users:
            windows.append(PrefetchWindow(current, current, 0, 0.0, "", current))
            continue
        assert isinstance(source.type, RemoteType)
        nbytes = tensor_bytes(prefetch.result, prefetch)
        link = hardware.link(source.type.tier)
        duration = link.transfer_time(nbytes, to_device=True)
        latest = max(min(users), earliest)
        windows.append(
            PrefetchWindow(
                earliest, latest, nbytes, duration, source.type.tier, current
            )
        )
    return windows


def _detach_anchor(skeleton: _Skeleton, detach: DetachOp, graph: ProgramGraph) -> int:
    """The last skeleton op reading the detached value or a view of it (fused reads too)."""
    values: list[SSAValue] = [detach.value]
    uses: list[int | None] = []
    fusion = graph.fusion
    while values:
        for use in values.pop().uses:
            holder = ancestor_in(skeleton.block, use.operation)
            readers = fusion.roots_of.get(holder, ()) if holder else ()
            uses += [skeleton.holder(use.operation), *map(skeleton.holder, readers)]
            if isinstance(use.operation, VIEW_OPS) and use.index == 0:
                values += use.operation.results
    last = max((u for u in uses if u is not None), default=-1)
    return max(last, skeleton.anchor_of_value(detach))


def _reorder(skeleton: _Skeleton, positions: dict[Operation, tuple[int, int]]) -> None:
    """Rebuild the block: skeleton ops in order, offload ops at (position, rank)."""
    before: dict[int, list[tuple[int, Operation]]] = {}
    for op, (position, rank) in positions.items():
        before.setdefault(position, []).append((rank, op))
    order: list[Operation] = []
    for index in range(len(skeleton.ops) + 1):
        order += [op for _, op in sorted(before.get(index, []), key=lambda r: r[0])]
        if index < len(skeleton.ops):
            order.append(skeleton.ops[index])
    block = skeleton.block
    for op in list(block.ops):
        block.detach_op(op)
    block.add_ops(order)


@dataclass(frozen=True)
class MoveWindowPass(ModulePass):
    """Place prefetches just in time, stores after producers, detaches after last uses."""

    name = "hyperoffload-move-window"

    hardware: str = "ascend-910c"
    hbm_capacity: str | int | None = None
    alpha: float = 1.0
    beta: float = 1.0
    max_inflight: int = 8

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        hardware = load_hardware(self.hardware, self.hbm_capacity)
        options = MoveOptions(self.alpha, self.beta, self.max_inflight)
        costs = CostModel(hardware)
        for function in [f for f in op.walk() if isinstance(f, FuncOp)]:
            if not function.is_declaration:
                self._function(function, hardware, costs, options)

    def _function(
        self,
        function: FuncOp,
        hardware: Hardware,
        costs: CostModel,
        options: MoveOptions,
    ) -> None:
        block = function.body.block
        skeleton = _Skeleton(block)
        prefetches = [o for o in skeleton.body if isinstance(o, PrefetchOp)]
        if not any(isinstance(o, OFFLOAD_OPS) for o in skeleton.body):
            return
        graph = ProgramGraph.build(function, costs)
        live_by_op = dict(zip(graph.ops, graph.timeline, strict=True))
        op_time = dict(zip(graph.ops, graph.op_time, strict=True))
        times = [op_time[o] for o in skeleton.ops]
        start = np.concatenate(([0.0], np.cumsum(times)))
        live = np.array([live_by_op[o] for o in skeleton.ops], dtype=np.int64)
        windows = _windows(skeleton, prefetches, hardware)
        target = hardware.hbm_capacity
        moved = place_prefetches(windows, start, live, target, options)
        positions: dict[Operation, tuple[int, int]] = {}
        for prefetch, position in zip(prefetches, moved, strict=True):
            positions[prefetch] = (position, 2)
        for offload in skeleton.body:
            if isinstance(offload, StoreOp | DetachOp):
                position, rank = (
                    (
                        skeleton.anchor_of_value(offload) + 1,
                        0,
                    )  # right after the producer
                    if isinstance(offload, StoreOp)
                    else (
                        _detach_anchor(skeleton, offload, graph) + 1,
                        1,
                    )  # after the last use
                )
                owner = offload.operands[0].owner
                if isinstance(owner, PrefetchOp) and positions[owner][0] >= position:
                    position, rank = positions[owner][0], 3  # right after that prefetch
                positions[offload] = (position, rank)
        before = simulate(
            extract_schedule(function, costs), hardware, None, record=False
        )
        _reorder(skeleton, positions)
        after = simulate(
            extract_schedule(function, costs), hardware, None, record=False
        )
        met_before = before.peak_hbm_bytes <= target
        if after.exposed_transfer_s > before.exposed_transfer_s * (
            1 + 1e-9
        ) + 1e-12 or (met_before and after.peak_hbm_bytes > target):
            for op in list(block.ops):
                block.detach_op(op)
            block.add_ops(skeleton.body)  # keep the input order
