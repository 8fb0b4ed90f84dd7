"""
Gaps before a kernel that runs ops fused into it from before the gap
(`Gap.fused`): `%a` and `%c` below run in the kernels of `%r1` (fused
into the matmul at op 6) and `%r2` (op 46), so `%x` is read at ops 6 and 46
and idle between. A plan moving `%x`
over that gap is written with clones of `%a` and `%c` before `%r2`, reading
the fetched copy; the written program runs as the plan was priced.

`TRANSPOSED` is a mixture of experts' dispatch matrix as its training step
reads it: `%s`, a transpose of `%x` seen through views as `%u`, runs in the
kernel of the matmul `%p` (fused into its epilogue `%m0`) and in the kernel
of `%r`, whose own transpose `%t2` of `%u` runs in it too; `%y` reads `%x`
in between.
"""

import pytest
from xdsl.context import Context
from xdsl.dialects.func import FuncOp

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import extract_schedule, main_function
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.planning.planner import (
    Plan,
    PlanOptions,
    offload_choices,
    plan_schedule,
)
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.planning.write_plan import write_plan
from hyperoffload.sim.simulator import SimResult, SimulationError, simulate

HARDWARE = load_hardware("ascend-910c")
T = "tensor<1024x1024xf32>"
MAP = "affine_map<(d0, d1) -> (d0, d1)>"
MATMULS = 40
"""Between `%r1` and `%r2`: long enough for `%x`'s store and fetch to hide."""
LAST = f"%m{MATMULS}"


def _generic(result: str, inputs: list[str], body: list[str]) -> str:
    maps = ", ".join([MAP] * (len(inputs) + 1))
    blocks = ", ".join([f"%i{k}: f32" for k in range(len(inputs))] + ["%o: f32"])
    return "\n".join(
        [
            f"  {result} = linalg.generic {{indexing_maps = [{maps}], "
            f'iterator_types = ["parallel", "parallel"]}} '
            f"ins({', '.join(inputs)} : {', '.join([T] * len(inputs))}) "
            f"outs(%e : {T}) {{",
            f"  ^bb0({blocks}):",
            *(f"    {line}" for line in body),
            f"  }} -> {T}",
        ]
    )


PROGRAM = "\n".join(
    [
        f"func.func @f(%x: {T}, %w: {T}) -> ({T}, {T}) {{",
        f"  %e = tensor.empty() : {T}",
        "  %z = arith.constant 0.0 : f32",
        f"  %acc = linalg.fill ins(%z : f32) outs(%e : {T}) -> {T}",
        _generic("%a", ["%x"], ["%t = math.exp %i0 : f32", "linalg.yield %t : f32"]),
        _generic("%c", ["%a"], ["linalg.yield %i0 : f32"]),
        _generic(
            "%r1",
            ["%c", "%x"],
            ["%t = arith.mulf %i0, %i1 : f32", "linalg.yield %t : f32"],
        ),
        *(
            f"  %m{k} = linalg.matmul ins(%{'r1' if k == 1 else f'm{k - 1}'}, %w : "
            f"{T}, {T}) outs(%acc : {T}) -> {T}"
            for k in range(1, MATMULS + 1)
        ),
        _generic(
            "%r2",
            ["%c", LAST],
            ["%t = arith.mulf %i0, %i1 : f32", "linalg.yield %t : f32"],
        ),
        f"  func.return %r2, {LAST} : {T}, {T}",
        "}",
    ]
)


TR = "affine_map<(d0, d1) -> (d1, d0)>"


def _transpose(result: str, source: str) -> str:
    return "\n".join(
        [
            f"  {result} = linalg.generic {{indexing_maps = [{TR}, {MAP}], "
            f'iterator_types = ["parallel", "parallel"]}} ins({source} : {T}) '
            f"outs(%e : {T}) {{",
            "  ^bb0(%i0: f32, %o: f32):",
            "    linalg.yield %i0 : f32",
            f"  }} -> {T}",
        ]
    )


def _matmul(result: str, a: str, b: str) -> str:
    return (
        f"  {result} = linalg.matmul ins({a}, {b} : {T}, {T}) outs(%acc : {T}) -> {T}"
    )


HALF = MATMULS // 2
TRANSPOSED = "\n".join(
    [
        f"func.func @f(%x: {T}, %w: {T}) -> ({T}, {T}, {T}) {{",
        f"  %e = tensor.empty() : {T}",
        "  %z = arith.constant 0.0 : f32",
        f"  %acc = linalg.fill ins(%z : f32) outs(%e : {T}) -> {T}",
        _transpose("%s", "%x"),
        f"  %v = tensor.expand_shape %s [[0, 1], [2]] output_shape [2, 512, 1024] "
        f": {T} into tensor<2x512x1024xf32>",
        f"  %u = tensor.collapse_shape %v [[0, 1], [2]] : tensor<2x512x1024xf32> "
        f"into {T}",
        _matmul("%p", "%u", "%w"),
        _generic("%m0", ["%p"], ["%t = math.exp %i0 : f32", "linalg.yield %t : f32"]),
        *(_matmul(f"%m{k}", f"%m{k - 1}", "%w") for k in range(1, HALF + 1)),
        _matmul("%y", "%x", "%w"),
        *(_matmul(f"%m{k}", f"%m{k - 1}", "%w") for k in range(HALF + 1, MATMULS + 1)),
        _transpose("%t2", "%u"),
        _matmul("%r", "%t2", LAST),
        f"  func.return %r, {LAST}, %y : {T}, {T}, {T}",
        "}",
    ]
)


def _parsed(ctx: Context, program: str = PROGRAM) -> tuple[FuncOp, ProgramGraph]:
    function = main_function(parse_mlir(ctx, program, "t.mlir"))
    return function, ProgramGraph.build(function, CostModel(HARDWARE))


def _moving_x(graph: ProgramGraph) -> Plan:
    """`%x` stored at entry, out of HBM over its gap before `%r2`."""
    (x,) = [v for v in graph.values if v.name == "%x"]
    (gap,) = [g for g in x.gaps() if g.fused]
    assert (gap.after, gap.before) == (6, 6 + MATMULS)
    return Plan([ValuePlan(x, [gap], stored=True)])


def _written(function: FuncOp) -> SimResult:
    return simulate(extract_schedule(function, CostModel(HARDWARE)), HARDWARE, None)


def test_a_value_read_through_fused_ops_is_idle_until_their_next_kernel(ctx: Context):
    _, graph = _parsed(ctx)
    fused = {
        (v.name, g.after, g.before) for v in graph.values for g in v.gaps() if g.fused
    }
    assert ("%x", 6, 6 + MATMULS) in fused
    # no gap starts where the fused op reading it stands (op 3)
    (x,) = [v for v in graph.values if v.name == "%x"]
    assert [(g.after, g.before) for g in x.gaps()] == [(-1, 3), (6, 6 + MATMULS)]


def test_the_fused_ops_are_cloned_before_the_kernel_after_the_gap(ctx: Context):
    function, graph = _parsed(ctx)
    plan = _moving_x(graph)
    priced = simulate(plan_schedule(graph, plan, HARDWARE), HARDWARE, None)
    write_plan(function, graph.ops, plan, 1, HARDWARE.offload_tier, fusion=graph.fusion)
    module = function.parent_op()
    verify_module(module)  # type: ignore[arg-type]
    text = str(function)
    # the prefetch, then the clones of %a and %c reading it, then %r2
    fetched = text.index("hyperoffload.prefetch")
    assert text.count("math.exp") == 2
    assert fetched < text.rindex("math.exp") < text.rindex("arith.mulf")
    written = _written(function)
    assert written.peak_hbm_bytes == priced.peak_hbm_bytes
    assert abs(written.makespan_s - priced.makespan_s) <= 0.01 * priced.makespan_s


def test_without_the_clones_the_kernel_would_read_what_left_hbm(ctx: Context):
    function, graph = _parsed(ctx)
    write_plan(function, graph.ops, _moving_x(graph), 1, HARDWARE.offload_tier)
    with pytest.raises(SimulationError, match="not resident"):
        _written(function)


def test_the_planner_moves_values_over_fused_gaps_only_when_asked(ctx: Context):
    _, graph = _parsed(ctx)
    for allowed in (False, True):
        options = PlanOptions(target=1, fused_gaps=allowed)
        _, ranked = offload_choices(graph, HARDWARE, options, check_target=False)
        over_fused = [p for p in ranked for g in p.gaps if g.fused and not p.recompute]
        assert bool(over_fused) is allowed


def test_a_transposed_operand_is_cloned_with_its_views_before_its_first_reader(
    ctx: Context,
):
    function, graph = _parsed(ctx, TRANSPOSED)
    (x,) = [v for v in graph.values if v.name == "%x"]
    # the matmul fused into its epilogue runs in one kernel: %x is not held
    # from %s to %r (a contraction run again in a later kernel would hold it)
    y = graph.ops.index(
        next(op for op in graph.ops if op.results and op.results[0].name_hint == "y")
    )
    gap = next(g for g in x.gaps() if g.after < y == g.before)
    assert gap.fused
    plan = Plan([ValuePlan(x, [gap], stored=True)])
    priced = simulate(plan_schedule(graph, plan, HARDWARE), HARDWARE, None)
    write_plan(function, graph.ops, plan, 1, HARDWARE.offload_tier, fusion=graph.fusion)
    text = str(function)
    # %s and both views cloned after the fetch, before %t2 reads %u's clone
    assert text.count("tensor.collapse_shape") == 2
    assert "ins(%u_1 :" in text
    assert (
        text.index("hyperoffload.prefetch") < text.index("%u_1 =") < text.index("%t2 =")
    )
    written = _written(function)
    assert written.peak_hbm_bytes == priced.peak_hbm_bytes
    assert abs(written.makespan_s - priced.makespan_s) <= 0.01 * priced.makespan_s
