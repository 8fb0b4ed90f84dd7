"""
`hyperoffload-assign-offsets`: give every device buffer of a planned function
an offset in one HBM arena, from the lifetimes the simulator sees (a
prefetched copy is live from the moment its prefetch is issued; activations
and recomputed values from their producer to their last use or detach).

The layout is recorded as attributes: `hyperoffload.arena_bytes` on the
function, `hyperoffload.offsets` on each op whose results own a buffer (one
entry per result, -1 for a result with no buffer of its own: a view, a result
written in place into its `outs`, an op fused into a later kernel) and
`hyperoffload.offset` on each argument in HBM. Run it last: a pass that moves
ops afterwards leaves the offsets stale (running it again recomputes them).

```mlir
func.func @f(%x: tensor<256xf32> {hyperoffload.offset = 0 : i64}) -> tensor<256xf32>
    attributes {hyperoffload.arena_bytes = 4096 : i64} {
  %a = arith.mulf %x, %x {hyperoffload.offsets = array<i64: 1024>} : tensor<256xf32>
  %b = arith.addf %a, %x {hyperoffload.offsets = array<i64: 2048>} : tensor<256xf32>
  %c = arith.mulf %b, %a {hyperoffload.offsets = array<i64: 3072>} : tensor<256xf32>
  %d = arith.addf %c, %c {hyperoffload.offsets = array<i64: 1024>} : tensor<256xf32>
  %e = arith.mulf %d, %c {hyperoffload.offsets = array<i64: 2048>} : tensor<256xf32>
  func.return %e : tensor<256xf32>
}
```
(`%d` reuses `%a`'s range and `%e` `%b`'s: each is dead by then.)
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import Extraction, ExtractionError, extract
from hyperoffload.dialects.residency import verify_residency
from hyperoffload.ir.arena import ARENA_ATTR, OFFSETS_ATTR
from hyperoffload.ir.diagnostics import error_at, located_message
from hyperoffload.passes.options import AssignOffsetsOptions
from hyperoffload.sim.arena import Arena, planned_arena
from hyperoffload.sim.simulator import SimResult, SimulationError, simulate

OFFSET_ARG_ATTR = "hyperoffload.offset"
"""On an argument in HBM: its range's offset (the caller's storage)."""


def function_layout(
    function: FuncOp, options: AssignOffsetsOptions
) -> tuple[Extraction, SimResult, Arena]:
    """`function`'s schedule as written, its simulation and its static layout."""
    hardware = options.load_hardware()
    extraction = extract(function, CostModel(hardware))
    result = simulate(extraction.schedule, hardware, None, record=False)
    return (
        extraction,
        result,
        planned_arena(
            result,
            options.layout_strategy(),
            options.layout_alignment(),
            options.layout_time_limit(),
        ),
    )


@dataclass(frozen=True)
class AssignOffsetsPass(AssignOffsetsOptions, ModulePass):
    """Record an arena offset for every device buffer of each function."""

    name = "hyperoffload-assign-offsets"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # residency is read as the verifier reads it: a plan it rejects is
        # rejected here at the same op, with the same words
        verify_residency(op, error_at)
        for function in [f for f in op.walk() if isinstance(f, FuncOp)]:
            if function.is_declaration:
                continue
            try:
                self._assign(function)
            except (ExtractionError, SimulationError, ValueError) as err:
                where = getattr(err, "where", None)  # a bare message's place
                if isinstance(where, str) and where != "<unknown>":
                    raise PassFailedException(f"{where}: error: {err}") from None
                raise PassFailedException(located_message(err)) from None

    def _assign(self, function: FuncOp) -> None:
        extraction, _, arena = function_layout(function, self)
        for child in function.body.block.ops:
            child.attributes.pop(OFFSETS_ATTR, None)
        offsets: dict[Operation, list[int]] = {}
        arguments: dict[int, int] = {}
        for buffer, offset in arena.buffer_offsets().items():
            owner = extraction.owners[buffer]
            if isinstance(owner, BlockArgument):
                arguments[owner.index] = offset
            else:
                assert isinstance(owner, OpResult)
                row = offsets.setdefault(owner.op, [-1] * len(owner.op.results))
                row[owner.index] = offset
        for owner, row in offsets.items():
            owner.attributes[OFFSETS_ATTR] = DenseArrayBase.from_list(i64, row)
        function.arg_attrs = _with_offsets(function, arguments)
        function.attributes[ARENA_ATTR] = IntegerAttr(arena.arena_bytes, i64)


def _with_offsets(
    function: FuncOp, offsets: dict[int, int]
) -> ArrayAttr[DictionaryAttr] | None:
    """The function's argument attributes with `hyperoffload.offset` set anew."""
    old = function.arg_attrs.data if function.arg_attrs else ()
    rows: list[DictionaryAttr] = []
    for index in range(len(function.args)):
        entries: dict[str, Attribute] = (
            dict(old[index].data) if index < len(old) else {}
        )
        entries.pop(OFFSET_ARG_ATTR, None)
        if index in offsets:
            entries[OFFSET_ARG_ATTR] = IntegerAttr(offsets[index], i64)
        rows.append(DictionaryAttr(entries))
    return ArrayAttr(rows) if any(row.data for row in rows) else None
