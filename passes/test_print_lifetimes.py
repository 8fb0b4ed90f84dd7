"""
`test-print-lifetimes`: print the lifetime analysis of every function, in the
spirit of MLIR's `test-print-liveness`, for FileCheck tests.

```
// lifetimes of @f (peak 3072 B at op 2)
%a: 1024 B, producer 0, uses [1, 2], last use 2, gaps [(0 -> 1: 0 ops, 0.0 us), ...]
```
"""

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.model.hardware import load_hardware


def _position(index: int, graph: ProgramGraph) -> str:
    if index < 0:
        return "entry"
    return "return" if index == len(graph.ops) - 1 else str(index)


@dataclass(frozen=True)
class TestPrintLifetimesPass(ModulePass):
    """Print values, uses, gaps and the memory timeline; the IR is unchanged."""

    name = "test-print-lifetimes"

    hardware: str = "ascend-910c"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        costs = CostModel(load_hardware(self.hardware))
        for function in op.walk():
            if isinstance(function, FuncOp) and not function.is_declaration:
                self._print(ProgramGraph.build(function, costs))

    def _print(self, graph: ProgramGraph) -> None:
        out = sys.stdout
        name = graph.function.sym_name.data
        print(
            f"// lifetimes of @{name} (peak {graph.peak} B at op {graph.peak_op})",
            file=out,
        )
        for info in graph.values:
            uses = ", ".join(_position(u, graph) for u in info.uses)
            gaps = ", ".join(
                f"{_position(g.after, graph)} -> {_position(g.before, graph)}: "
                f"{g.ops} ops, {g.time_s * 1e6:.3f} us"
                for g in info.gaps()
            )
            print(
                f"{info.name}: {info.bytes} B, {info.category}, tier {info.tier}, "
                f"producer {_position(info.producer, graph)}, uses [{uses}], "
                f"last use {_position(info.last_use, graph)}, gaps [{gaps}]",
                file=out,
            )
        timeline = ", ".join(str(b) for b in graph.timeline)
        print(f"// live bytes per op: [{timeline}]", file=out)
