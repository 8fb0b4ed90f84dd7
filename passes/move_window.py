"""
`hyperoffload-move-window`: move each offload op within its legal window to
minimise `alpha * T_exposed + beta * M_peak` (the seeds' Algorithm 1).

Windows: a `prefetch` may go anywhere after the remote copy it reads exists
(after the `store` that makes it, or the function start for an argument) and
the copy it replaces is released (its last read, the end of its store), and
before its first consumer (`hyperoffload.planning.fetch_windows`, the rule's
one home, which the planner's placement shares); a `store` goes right after
its producer; a
`detach` right after the last use of its tensor or of a view of it (a
`tensor.collapse_shape` shares its buffer). Prefetches are placed by
`hyperoffload.planning.placement`: just in time for their consumer on the link's copy
stream, never raising the memory timeline past the target. Only offload ops
move; compute ops keep their order. If the result would cost more than the
input (`alpha * T_exposed + beta * M_peak`, each term relative to the
input's: `hyperoffload.planning.placement.keeps`), or pass a target the input
met while memory has a weight, the input order stays (one simulation of
each, not one per candidate).

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
from xdsl.passes import ModulePass

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import extract_schedule
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.dialects.hyperoffload import OFFLOAD_OPS, PrefetchOp
from hyperoffload.model.hardware import Hardware
from hyperoffload.passes.options import MoveWindowOptions
from hyperoffload.planning.arrange import Skeleton, offload_positions, reorder, restore
from hyperoffload.planning.fetch_windows import prefetch_windows
from hyperoffload.planning.placement import MoveOptions, keeps, place_prefetches
from hyperoffload.sim.simulator import simulate
from hyperoffload.support.positions import SkeletonPosition


@dataclass(frozen=True)
class MoveWindowPass(MoveWindowOptions, ModulePass):
    """Place prefetches just in time, stores after producers, detaches after last uses."""

    name = "hyperoffload-move-window"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        hardware = self.load_hardware()
        options = self.move_options()
        for function in [f for f in op.walk() if isinstance(f, FuncOp)]:
            if not function.is_declaration:
                move_window(function, hardware, options)


def move_window(function: FuncOp, hardware: Hardware, options: MoveOptions) -> None:
    """Move the offload ops of `function` within their windows (see the module docstring)."""
    costs = CostModel(hardware)
    block = function.body.block
    skeleton = Skeleton(block)
    prefetches = [o for o in skeleton.body if isinstance(o, PrefetchOp)]
    if not any(isinstance(o, OFFLOAD_OPS) for o in skeleton.body):
        return
    graph = ProgramGraph.build(function, costs)
    live_by_op = dict(zip(graph.ops, graph.timeline, strict=True))
    op_time = dict(zip(graph.ops, graph.op_time, strict=True))
    times = [op_time[o] for o in skeleton.ops]
    start = np.concatenate(([0.0], np.cumsum(times)))
    live = np.array([live_by_op[o] for o in skeleton.ops], dtype=np.int64)
    windows = prefetch_windows(skeleton, prefetches, hardware, graph.fusion, start)
    target = hardware.hbm_capacity
    moved = place_prefetches(windows, start, live, target, options)
    placed = {p: SkeletonPosition(m) for p, m in zip(prefetches, moved, strict=True)}
    positions = offload_positions(skeleton, placed, graph.fusion)
    before = simulate(extract_schedule(function, costs), hardware, None, record=False)
    reorder(skeleton, positions)
    after = simulate(extract_schedule(function, costs), hardware, None, record=False)
    if not keeps(before, after, target, options):
        restore(block, skeleton.body)  # keep the input order
