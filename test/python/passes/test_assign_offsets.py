"""
`hyperoffload-assign-offsets` on random programs, planned at random targets:
two buffers whose stays in HBM overlap never share an address, read back
from the attributes the pass writes; the arena is never below the live peak.
"""

from typing import Literal

from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, IntegerAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument, OpResult, SSAValue

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import extract, main_function
from hyperoffload.ir.arena import ARENA_ATTR, OFFSETS_ATTR
from hyperoffload.ir.context import make_context
from hyperoffload.ir.diagnostics import silence_diagnostics
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.model.layout import aligned
from hyperoffload.passes.assign_offsets import OFFSET_ARG_ATTR, AssignOffsetsPass
from hyperoffload.passes.pipeline import PipelinePass
from hyperoffload.sim.simulator import simulate

SIZES = (64, 256, 1024)
"""Elements per tensor: three size classes, so that holes can form."""


@st.composite
def programs(draw: st.DrawFn) -> str:
    """A straight-line program of adds and muls within each size class."""
    values: dict[int, list[str]] = {n: [f"%a{n}"] for n in SIZES}
    lines: list[str] = []
    for index in range(draw(st.integers(3, 14))):
        size = draw(st.sampled_from(SIZES))
        pool = values[size]
        lhs, rhs = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
        op = draw(st.sampled_from(("arith.addf", "arith.mulf")))
        lines.append(f"  %v{index} = {op} {lhs}, {rhs} : tensor<{size}xf32>")
        pool.append(f"%v{index}")
    results = [values[n][-1] for n in SIZES]
    args = ", ".join(f"%a{n}: tensor<{n}xf32>" for n in SIZES)
    types = ", ".join(f"tensor<{n}xf32>" for n in SIZES)
    return "\n".join(
        [
            f"func.func @f({args}) -> ({types}) {{",
            *lines,
            f"  func.return {', '.join(results)} : {types}",
            "}",
        ]
    )


def _offset(value: SSAValue, function: FuncOp) -> int:
    """The offset the pass recorded for the buffer `value` owns."""
    if isinstance(value, BlockArgument):
        assert function.arg_attrs is not None
        attrs = function.arg_attrs.data[value.index]
        assert isinstance(attrs, DictionaryAttr)
        offset = attrs.data[OFFSET_ARG_ATTR]
        assert isinstance(offset, IntegerAttr)
        return offset.value.data
    assert isinstance(value, OpResult)
    row = value.op.attributes[OFFSETS_ATTR]
    assert isinstance(row, DenseArrayBase)
    offset = row.get_values()[value.index]
    assert isinstance(offset, int)
    return offset


@settings(max_examples=40, deadline=None)
@given(programs(), st.floats(0.4, 1.0), st.sampled_from(("best-fit", "auto")))
def test_overlapping_stays_never_share_addresses(
    text: str, fraction: float, layout: Literal["best-fit", "auto"]
):
    ctx = make_context()
    module = parse_mlir(ctx, text, "random.mlir")
    hardware = "test/inputs/round.toml"
    none = simulate(
        extract(main_function(module), CostModel(load_hardware(hardware))).schedule,
        load_hardware(hardware),
    )
    target = max(none.bound_peak_bytes, int(none.peak_hbm_bytes * fraction))
    with silence_diagnostics():
        PipelinePass(hardware=hardware, hbm_capacity=target).apply(ctx, module)
    AssignOffsetsPass(hardware=hardware, layout=layout).apply(ctx, module)

    function = main_function(module)
    extraction = extract(function, CostModel(load_hardware(hardware)))
    result = simulate(extraction.schedule, load_hardware(hardware))
    stays = result.allocations
    ranges = [
        (_offset(extraction.owners[s.buffer], function), aligned(s.bytes))
        for s in stays
    ]
    for i, first in enumerate(stays):
        for j in range(i + 1, len(stays)):
            second = stays[j]
            if first.start < second.end and second.start < first.end:
                (a, a_size), (b, b_size) = ranges[i], ranges[j]
                assert a + a_size <= b or b + b_size <= a, (first, second)
    arena = function.attributes[ARENA_ATTR]
    assert isinstance(arena, IntegerAttr)
    assert arena.value.data >= result.peak_hbm_bytes
    assert all(offset + size <= arena.value.data for offset, size in ranges)
