"""
`write_plan` on small functions: plans made by hand (or by the planner) on
the program graph, written into the IR and compared with the text expected.
Hardware: `test/inputs/round.toml`, or ascend-910c for the decode step of
`test/passes/insert-place-arguments.mlir`.
"""

from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.func import FuncOp

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.lifetimes import ProgramGraph, ValueInfo
from hyperoffload.dialects.hyperoffload import PrefetchOp
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.planning.planner import Plan, PlanOptions, plan_offload
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.planning.write_plan import write_plan
from hyperoffload.support.tiers import Tier

TEST = Path(__file__).resolve().parents[2]
ROUND = load_hardware(str(TEST / "inputs" / "round.toml"))
T = "tensor<256xf32>"
R = "!hyperoffload.remote<tensor<256xf32>>"
REMOTE = "{hyperoffload.tier = #hyperoffload.tier<remote>}"


def parsed(ctx: Context, text: str) -> tuple[FuncOp, ProgramGraph]:
    function = main_function(parse_mlir(ctx, text, "t.mlir"))
    return function, ProgramGraph.build(function, CostModel(ROUND))


def value(graph: ProgramGraph, name: str) -> ValueInfo:
    (info,) = [v for v in graph.values if v.name == name]
    return info


def body(function: FuncOp) -> list[str]:
    """The body of `function` as printed, one op per line."""
    return [line.strip() for line in str(function).splitlines()[1:-1]]


def verified(function: FuncOp) -> FuncOp:
    """`function`, after the residency invariants and every op verifier pass."""
    module = function.parent_op()
    assert module is not None
    verify_module(module)  # type: ignore[arg-type]
    return function


# %h (op 0) is read at ops 1, 3, 4 and 6: idle over op 2 and over op 5.
TWO_GAPS = f"""func.func @f(%x: {T}) -> {T} {{
  %h = arith.mulf %x, %x : {T}
  %a = arith.addf %h, %x : {T}
  %b = arith.mulf %a, %a : {T}
  %c = arith.addf %b, %h : {T}
  %d = arith.addf %c, %h : {T}
  %e = arith.mulf %d, %d : {T}
  %g = arith.addf %e, %h : {T}
  func.return %g : {T}
}}"""


def two_gaps(ctx: Context) -> tuple[FuncOp, ProgramGraph, Plan]:
    function, graph = parsed(ctx, TWO_GAPS)
    h = value(graph, "%h")
    gaps = [g for g in h.gaps() if g.ops > 0]
    assert [(g.after, g.before) for g in gaps] == [(1, 3), (4, 6)]
    return function, graph, Plan([ValuePlan(h, gaps, stored=True)])


def test_the_uses_after_each_gap_read_that_gaps_prefetch(ctx: Context):
    # Stored after op 0; released after op 1 and fetched one op ahead of op
    # 3 (before op 2): %c and %d read that copy. Released after op 4 and
    # fetched before op 5: %g reads the second copy, released after it.
    function, graph, plan = two_gaps(ctx)
    prefetches = write_plan(function, graph.ops, plan, 1, Tier.REMOTE).prefetches
    assert body(verified(function)) == [
        f"%h = arith.mulf %x, %x : {T}",
        f"%h_remote = hyperoffload.store %h : {T} -> {R}",
        f"%a = arith.addf %h, %x : {T}",
        f"hyperoffload.detach %h : {T}",
        f"%h_1 = hyperoffload.prefetch %h_remote : {R} -> {T}",
        f"%b = arith.mulf %a, %a : {T}",
        f"%c = arith.addf %b, %h_1 : {T}",
        f"%d = arith.addf %c, %h_1 : {T}",
        f"hyperoffload.detach %h_1 : {T}",
        f"%h_2 = hyperoffload.prefetch %h_remote : {R} -> {T}",
        f"%e = arith.mulf %d, %d : {T}",
        f"%g = arith.addf %e, %h_2 : {T}",
        f"hyperoffload.detach %h_2 : {T}",
        f"func.return %g : {T}",
    ]
    # the prefetches returned, one per gap, in the order of the gaps
    first, second = prefetches
    assert [op.operands[1] for op in graph.ops[3:5]] == [first.result] * 2
    assert graph.ops[6].operands[1] is second.result
    assert graph.ops[1].operands[0] is value(graph, "%h").value


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_lazy_detaches_go_right_before_the_fetch(ctx: Context, lazy: bool):
    # Fetched right before the use after each gap (distance 0): before op 3
    # and before op 6. Eager, each copy is released after the use before
    # its gap (ops 1 and 4); lazy, right before the fetch that replaces it
    # (after ops 2 and 5). The last copy goes after its last use either way.
    function, graph, plan = two_gaps(ctx)
    write_plan(function, graph.ops, plan, 0, Tier.REMOTE, lazy=lazy)
    detach_h = f"hyperoffload.detach %h : {T}"
    detach_h1 = f"hyperoffload.detach %h_1 : {T}"
    expected = [
        f"%h = arith.mulf %x, %x : {T}",
        f"%h_remote = hyperoffload.store %h : {T} -> {R}",
        f"%a = arith.addf %h, %x : {T}",
        *([] if lazy else [detach_h]),
        f"%b = arith.mulf %a, %a : {T}",
        *([detach_h] if lazy else []),
        f"%h_1 = hyperoffload.prefetch %h_remote : {R} -> {T}",
        f"%c = arith.addf %b, %h_1 : {T}",
        f"%d = arith.addf %c, %h_1 : {T}",
        *([] if lazy else [detach_h1]),
        f"%e = arith.mulf %d, %d : {T}",
        *([detach_h1] if lazy else []),
        f"%h_2 = hyperoffload.prefetch %h_remote : {R} -> {T}",
        f"%g = arith.addf %e, %h_2 : {T}",
        f"hyperoffload.detach %h_2 : {T}",
        f"func.return %g : {T}",
    ]
    assert body(verified(function)) == expected


def test_a_prefetch_distance_of_two_fetches_two_ops_ahead(ctx: Context):
    # The second gap (4 -> 6) allows a fetch before op 5 at the earliest:
    # distance 2 (before op 4) is clamped to op 5; the first (1 -> 3) goes
    # before op 2, as with distance 1.
    function, graph, plan = two_gaps(ctx)
    prefetches = write_plan(function, graph.ops, plan, 2, Tier.REMOTE).prefetches
    order = list(function.body.block.ops)
    assert [order.index(p) for p in prefetches] == [
        order.index(graph.ops[2]) - 1,
        order.index(graph.ops[5]) - 1,
    ]


def test_a_written_back_result_is_returned_as_the_remote_copy(ctx: Context):
    # %k is returned to the remote pool: the planner writes it back (stored
    # after op 0, released after it, its last reader), and the function
    # returns the store's handle, its result type now the remote type.
    text = f"""func.func @write_back(%x: {T}) -> ({T}, {T} {REMOTE}) {{
      %k = arith.mulf %x, %x : {T}
      %a = arith.addf %x, %x : {T}
      %b = arith.addf %a, %a : {T}
      func.return %b, %k : {T}, {T}
    }}"""
    function, graph = parsed(ctx, text)
    plan = plan_offload(graph, ROUND, PlanOptions(target=3 * 1024))
    assert [(v.info.name, v.write_back) for v in plan.values] == [("%k", Tier.REMOTE)]
    assert write_plan(function, graph.ops, plan, 1, Tier.REMOTE).prefetches == []
    assert body(verified(function)) == [
        f"%k = arith.mulf %x, %x : {T}",
        f"%k_remote = hyperoffload.store %k : {T} -> {R}",
        f"hyperoffload.detach %k : {T}",
        f"%a = arith.addf %x, %x : {T}",
        f"%b = arith.addf %a, %a : {T}",
        f"func.return %b, %k_remote : {T}, {R}",
    ]
    assert str(function.function_type) == f"({T}) -> ({T}, {R})"


def test_a_tagged_argument_becomes_a_remote_argument(ctx: Context):
    # %w is read by ops 1 and 8, with six ops of 2.048 us between them:
    # 12.288 us, longer than its 10.24 us fetch, so two clusters. It is
    # fetched one op ahead of each (before op 0, before op 7).
    text = f"""func.func @f(%x: {T}, %w: {T} {REMOTE}) -> {T} {{
      %a = arith.mulf %x, %x : {T}
      %b = arith.mulf %a, %w : {T}
      %c = arith.mulf %b, %b : {T}
      %d = arith.mulf %c, %c : {T}
      %e = arith.mulf %d, %d : {T}
      %f = arith.mulf %e, %e : {T}
      %g = arith.mulf %f, %f : {T}
      %i = arith.mulf %g, %g : {T}
      %r = arith.mulf %i, %w : {T}
      func.return %r : {T}
    }}"""
    function, graph = parsed(ctx, text)
    plan = plan_offload(graph, ROUND, PlanOptions(target=10**6))
    w = plan.values[0]
    assert (w.info.name, [(g.after, g.before) for g in w.gaps]) == (
        "%w",
        [(-1, 1), (1, 8)],
    )
    write_plan(function, graph.ops, plan, 1, Tier.REMOTE)
    lines = body(verified(function))
    assert lines[:4] == [
        f"%w_1 = hyperoffload.prefetch %w : {R} -> {T}",
        f"%a = arith.mulf %x, %x : {T}",
        f"%b = arith.mulf %a, %w_1 : {T}",
        f"hyperoffload.detach %w_1 : {T}",
    ]
    assert lines[-5:] == [
        f"%w_2 = hyperoffload.prefetch %w : {R} -> {T}",
        f"%i = arith.mulf %g, %g : {T}",
        f"%r = arith.mulf %i, %w_2 : {T}",
        f"hyperoffload.detach %w_2 : {T}",
        f"func.return %r : {T}",
    ]
    assert str(function.function_type) == f"({T}, {R}) -> {T}"
    assert f"%w: {R} {REMOTE}" in str(function).splitlines()[0]


def test_arguments_kept_in_hbm_are_tagged_hbm(ctx: Context):
    # test/passes/insert-place-arguments.mlir at 5120 B: %k0 stays in HBM
    # (its attribute becomes `hbm`, its type stays a tensor); %k1 and %k2
    # stay remote, fetched one op before their use.
    module = parse_mlir(
        ctx, (TEST / "passes" / "insert-place-arguments.mlir").read_text(), "d.mlir"
    )
    (function,) = [
        op
        for op in module.walk()
        if isinstance(op, FuncOp) and op.sym_name.data == "decode"
    ]
    hardware = load_hardware("ascend-910c")
    graph = ProgramGraph.build(function, CostModel(hardware))
    plan = plan_offload(graph, hardware, PlanOptions(5120, place_arguments=True))
    assert [info.name for info in plan.placed] == ["%k0"]
    prefetches = write_plan(
        function, graph.ops, plan, 1, hardware.offload_tier
    ).prefetches
    verify_module(module)
    header = str(function).splitlines()[0]
    kv = 'hyperoffload.category = "kv"'
    assert f"%k0: {T} {{hyperoffload.tier = #hyperoffload.tier<hbm>, {kv}}}" in header
    for name in ("%k1", "%k2"):
        assert (
            f"{name}: {R} {{hyperoffload.tier = #hyperoffload.tier<remote>, {kv}}}"
            in header
        )
    # returned in plan order (%k2 ranks first), standing in the IR in order
    assert [p.operands[0] for p in prefetches] == [function.args[3], function.args[2]]
    in_ir = [op for op in function.walk() if isinstance(op, PrefetchOp)]
    assert [p.operands[0] for p in in_ir] == [function.args[2], function.args[3]]
