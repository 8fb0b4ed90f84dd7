"""
An argument that names the result holding its update (`tf.aliasing_output`)
takes it along under either selection (`PlanOptions.selection`): the update
of an argument kept in HBM is returned in HBM (`Plan.kept_results`), that of
an argument left in its tier is written back there, so that the next call
finds each where this one took it from. Under just-in-time selection every
update was once written back, even with its argument kept in HBM: the next
call would have found in the pool an argument the plan had fetched for free.
"""

import pytest
from small_graphs import graph_of
from xdsl.context import Context

from hyperoffload.model.hardware import load_hardware
from hyperoffload.planning.planner import PlanOptions, plan_offload

REMOTE = "hyperoffload.tier = #hyperoffload.tier<remote>"
T = "tensor<256xf32>"
STEP = f"""func.func @step(%x: {T}, %w: {T} {{{REMOTE}, tf.aliasing_output = 1 : i32}},
    %m: {T} {{hyperoffload.category = "optimizer", {REMOTE}, tf.aliasing_output = 2 : i32}})
    -> ({T}, {T} {{{REMOTE}}}, {T} {{hyperoffload.category = "optimizer", {REMOTE}}}) {{
  %y = arith.mulf %x, %w : {T}
  %a = arith.mulf %y, %y : {T}
  %b = arith.addf %a, %y : {T}
  %g = arith.mulf %b, %x : {T}
  %m2 = arith.addf %m, %g : {T}
  %w2 = arith.subf %w, %m2 : {T}
  return %b, %w2, %m2 : {T}, {T}, {T}
}}"""
UPDATES = {"%w": 1, "%m": 2}


@pytest.mark.parametrize("selection", ["ranked", "next-use"])
@pytest.mark.parametrize("target", [6144, 5120, 4096])
def test_each_update_goes_where_its_argument_stays(
    ctx: Context, selection: str, target: int
):
    hardware = load_hardware("ascend-910c")
    graph = graph_of(ctx, STEP, hardware)
    options = PlanOptions(target, place_arguments=True, selection=selection)  # type: ignore[arg-type]
    plan = plan_offload(graph, hardware, options)
    placed = {info.name for info in plan.placed}
    kept = {UPDATES[name] for name in placed}
    assert set(plan.kept_results) == kept
    written_back = {  # results (an argument with one is retired)
        p.info.name
        for p in plan.values
        if p.write_back is not None and p.info.producer >= 0
    }
    in_tier = {p.info.name for p in plan.values if p.initially_out}
    assert placed | in_tier == set(UPDATES)
    assert written_back == {"%w2", "%m2"} & {n + "2" for n in in_tier}
