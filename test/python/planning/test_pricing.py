"""
Link time reserved per op for an argument's fetches (`pricing.reserve`):
taken from the ops right before the use, the latest first, at most twice
the fetch time ahead; the fetch is issued before the first op it takes
time from, or after it where that op gives only a sliver (less than half).

Hardware: HBM 1 GB/s, no launch overhead, a remote link of 10 GB/s. Ops 0-2
each read one 4 KiB tensor and write one (`op` seconds each); op 3 reads
%w, fetched from its tier for it.
"""

import pytest
from small_graphs import graph_of, round_hardware
from xdsl.context import Context

from hyperoffload.analysis.lifetimes import Gap, ProgramGraph
from hyperoffload.planning.plan import PlanOptions
from hyperoffload.planning.plan_context import PlanContext
from hyperoffload.planning.pricing import reserve
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support.positions import OpIndex

T = "tensor<1024xf32>"
HARDWARE = round_hardware()
CHAIN = f"""func.func @step(%x: {T}, %w: {T} {{hyperoffload.tier = #hyperoffload.tier<remote>}}) -> {T} {{
  %a = arith.addf %x, %x : {T}
  %b = arith.addf %a, %a : {T}
  %c = arith.addf %b, %b : {T}
  %d = arith.mulf %c, %w : {T}
  func.return %d : {T}
}}"""


def fetch_for_op_3(ctx: Context) -> tuple[PlanContext, ValuePlan, float]:
    """The context, %w's plan (out of HBM until op 3) and the time of ops 0-2."""
    graph: ProgramGraph = graph_of(ctx, CHAIN, HARDWARE)
    op = graph.op_time[0]
    assert graph.op_time[1] == graph.op_time[2] == op > 0
    w = next(info for info in graph.values if info.name == "%w")
    gap = Gap(OpIndex(-1), OpIndex(3), 3, graph.time_between(-1, 3))
    plan = ValuePlan(w, [gap], stored=False, initially_out=True)
    return PlanContext(graph, HARDWARE, PlanOptions(target=0)), plan, op


def test_a_fetch_is_issued_before_the_first_op_it_takes_time_from(ctx: Context):
    planner, plan, op = fetch_for_op_3(ctx)
    free = list(planner.graph.op_time)
    assert reserve(planner, free, plan, 1.75 * op) == [1]
    assert free[2] == 0.0
    assert free[1] == pytest.approx(0.25 * op)
    assert free[0] == op


def test_a_sliver_of_an_op_issues_the_fetch_after_it(ctx: Context):
    planner, plan, op = fetch_for_op_3(ctx)
    free = list(planner.graph.op_time)
    assert reserve(planner, free, plan, 1.25 * op) == [2]
    assert free[1] == pytest.approx(0.75 * op)


def test_a_fetch_takes_no_link_time_more_than_twice_its_time_ahead(ctx: Context):
    planner, plan, op = fetch_for_op_3(ctx)
    free = list(planner.graph.op_time)
    free[2] = 0.0  # reserved by a better candidate
    # 1.2 ops ahead of op 3: op 1 still runs then, op 0 no longer
    assert reserve(planner, free, plan, 0.6 * op) == [1]
    free[1] = 0.0
    before = list(free)
    assert reserve(planner, free, plan, 0.6 * op) is None
    assert free == before
