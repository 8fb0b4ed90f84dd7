"""
`test-print-layout`: print the static arena layout of every function (the
one `hyperoffload-assign-offsets` records), buffer by buffer in address
order, for FileCheck tests; the IR is unchanged.

```
// layout of @f: arena 4096 B, live peak 4096 B (+0.0%), best-fit
// [0, 1024) %x (argument), events [0, 10)
// [1024, 2048) %a, events [1, 4)
// [1024, 2048) %d, events [6, 9)
// [2048, 3072) %b, events [2, 5)
```
(the program of `hyperoffload-assign-offsets`'s docstring; events number the
changes of HBM occupancy, so two buffers may share addresses exactly when
their event ranges do not overlap)
"""

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from hyperoffload.analysis.extract import ExtractionError
from hyperoffload.ir.diagnostics import located_message
from hyperoffload.model.layout import aligned
from hyperoffload.passes.assign_offsets import function_layout
from hyperoffload.passes.options import AssignOffsetsOptions
from hyperoffload.sim.arena import fragmentation
from hyperoffload.sim.simulator import SimulationError


@dataclass(frozen=True)
class TestPrintLayoutPass(AssignOffsetsOptions, ModulePass):
    """Print each function's arena: every device buffer's range and stay."""

    name = "test-print-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in [f for f in op.walk() if isinstance(f, FuncOp)]:
            if not function.is_declaration:
                try:
                    self._print(function)
                except (ExtractionError, SimulationError, ValueError) as err:
                    raise PassFailedException(located_message(err)) from None

    def _print(self, function: FuncOp) -> None:
        extraction, result, arena = function_layout(function, self)
        buffers = extraction.schedule.buffers
        print(
            f"// layout of @{function.sym_name.data}: arena {arena.arena_bytes} B, "
            f"live peak {result.peak_hbm_bytes} B "
            f"({fragmentation(arena.arena_bytes, result.peak_hbm_bytes):+.1%}), "
            f"{arena.strategy}",
            file=sys.stdout,
        )
        placed = sorted(
            zip(arena.offsets, arena.allocations, strict=True),
            key=lambda placed: (placed[0], placed[1].start),
        )
        for offset, stay in placed:
            buffer = buffers[stay.buffer]
            kind = "" if buffer.kind == "activation" else f" ({buffer.kind})"
            print(
                f"// [{offset}, {offset + aligned(stay.bytes, self.alignment)}) "
                f"{buffer.name}{kind}, events [{stay.start}, {stay.end})",
                file=sys.stdout,
            )
