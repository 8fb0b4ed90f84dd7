"""
A tagged argument the plan keeps in HBM may still leave it between two of
its uses (`place_arguments`): stored once the call starts, released after
the use before the gap, fetched back before the use after it. Its store
runs on the link's idle direction while the first uses compute, where the
argument left in its tier must be fetched before its first use, with
nothing to hide behind at the start of the step (a training step's weights
between their forward and backward uses).

Hardware: HBM 1 GB/s, 1 GFLOP/s, no launch overhead, a remote link of
10 GB/s each way without latency. A tensor<1024xf32> is 4 KiB (`U`): an
elementwise op with two operands takes 12.288 us, a transfer 0.4096 us.
"""

import pytest
from small_graphs import graph_of, round_hardware
from xdsl.context import Context

from hyperoffload.dialects.hyperoffload import PrefetchOp, StoreOp
from hyperoffload.planning.loop import LoopOptions, PlanningLoop
from hyperoffload.planning.planner import PlanOptions, plan_offload, plan_schedule
from hyperoffload.sim.simulator import simulate

U = 4096
T = "tensor<1024xf32>"
REMOTE = "{hyperoffload.tier = #hyperoffload.tier<remote>}"

HARDWARE = round_hardware()

# %w is read by op 0 and op 4. While each op runs (%x stays: the caller's):
#   op 0 x w a      3U      op 2 x w a b c   5U (a, b freed after)
#   op 1 x w a b    4U      op 3 x w c e     4U      op 4 x w e d  4U
# The peak is 5U, at op 2, where %w is idle: 4U needs %w out over ops 1-2
# (no other value has a gap), fetched before op 3 for op 4. Left in its
# tier, %w is fetched before op 0 with nothing before it to hide behind;
# kept in HBM and parked, its store overlaps op 0 and its fetch op 3.
WEIGHT = f"""func.func @step(%x: {T}, %w: {T} {REMOTE}) -> {T} {{
  %a = arith.mulf %x, %w : {T}
  %b = arith.addf %a, %a : {T}
  %c = arith.addf %a, %b : {T}
  %e = arith.addf %c, %c : {T}
  %d = arith.mulf %e, %w : {T}
  func.return %d : {T}
}}"""


def loop_of(ctx: Context, text: str) -> PlanningLoop:
    graph = graph_of(ctx, text, HARDWARE)
    options = LoopOptions(PlanOptions(target=0, place_arguments=True))
    return PlanningLoop(graph.function, graph, HARDWARE, options)


def test_a_weight_kept_in_hbm_is_parked_between_its_uses(ctx: Context):
    loop = loop_of(ctx, WEIGHT)
    reference = simulate(loop.graph.schedule, HARDWARE, None)
    assert reference.peak_hbm_bytes == 5 * U
    trial = loop.trial(4 * U)
    (value,) = trial.plan.values
    assert value.info.name == "%w"
    assert value.stored
    assert not value.initially_out
    assert [(g.after, g.before) for g in value.gaps] == [(0, 4)]
    assert [info.name for info in trial.plan.placed] == ["%w"]
    assert trial.result.peak_hbm_bytes == 4 * U
    # the store overlaps op 0, the fetch op 3: nothing exposed
    assert trial.result.exposed_transfer_s == 0
    assert trial.result.makespan_s == pytest.approx(reference.makespan_s)


def test_the_parked_weight_is_written_as_priced(ctx: Context):
    loop = loop_of(ctx, WEIGHT)
    trial = loop.write(loop.trial(4 * U))
    ops = list(loop.function.walk())
    assert sum(isinstance(op, StoreOp) for op in ops) == 1
    assert sum(isinstance(op, PrefetchOp) for op in ops) == 1
    # the caller keeps %w in HBM: its tier becomes hbm
    assert "#hyperoffload.tier<hbm>" in str(loop.function.arg_attrs)
    written = loop.simulate_written()
    assert written.peak_hbm_bytes == trial.result.peak_hbm_bytes
    assert written.makespan_s == pytest.approx(trial.result.makespan_s, rel=0.01)


def test_left_in_its_tier_the_weight_would_expose_its_first_fetch(ctx: Context):
    # the plan the planner made before parking existed: %w in its tier,
    # fetched before op 0 (exposed) and before op 3 for op 4
    loop = loop_of(ctx, WEIGHT)
    loop.options = LoopOptions(PlanOptions(target=0, place_arguments=False))
    trial = loop.trial(4 * U)
    (value,) = trial.plan.values
    assert value.initially_out
    assert trial.result.exposed_transfer_s == pytest.approx(U / 1e10)


def test_park_arguments_false_leaves_the_weight_in_its_tier(ctx: Context):
    # the plan the loop weighs against a parking plan that misses its target
    # or exposes time (`PlanningLoop._unparked`)
    loop = loop_of(ctx, WEIGHT)
    options = PlanOptions(target=0, place_arguments=True, park_arguments=False)
    loop.options = LoopOptions(options)
    trial = loop.trial(4 * U)
    (value,) = trial.plan.values
    assert value.initially_out
    assert trial.plan.placed == []
    assert trial.result.peak_hbm_bytes == 4 * U


# %w is read by ops 1 and 4, %h by op 5. While each op runs, everything
# resident (w from entry, freed after op 4):
#   op 0 x w h      3U      op 3 x w h b c   5U      op 5 x h d e  4U
#   op 1 x w h a    4U      op 4 x w h c d   5U
#   op 2 x w h a b  5U (a freed after)
# At 4U %h must be out over ops 1-4 (fetched right before op 5: prefetch
# distance 0). Left in its tier, %w is fetched before op 1 and, its uses
# 24.6 us apart, again before op 4; but with %h out there is room for it
# over ops 2-3.
TWO_USES = f"""func.func @step(%x: {T}, %w: {T} {REMOTE}) -> {T} {{
  %h = arith.mulf %x, %x : {T}
  %a = arith.mulf %x, %w : {T}
  %b = arith.addf %a, %a : {T}
  %c = arith.addf %b, %b : {T}
  %d = arith.mulf %c, %w : {T}
  %e = arith.addf %d, %h : {T}
  func.return %e : {T}
}}"""


def test_a_weight_left_in_its_tier_stays_across_a_gap_the_plan_leaves_room_for(
    ctx: Context,
):
    graph = graph_of(ctx, TWO_USES, HARDWARE)
    options = PlanOptions(target=4 * U, prefetch_distance=0)
    plan = plan_offload(graph, HARDWARE, options)
    gaps = {p.info.name: [(g.after, g.before) for g in p.gaps] for p in plan.values}
    # fetched once (`feasibility.joined`), where the rules split it in two
    assert gaps == {"%w": [(-1, 1)], "%h": [(0, 5)]}
    assert plan.peak_before == 5 * U
    assert plan.peak_after == 4 * U
    schedule = plan_schedule(graph, plan, HARDWARE, 0)
    result = simulate(schedule, HARDWARE, None)
    assert result.bytes_to_device == 2 * U  # %w once, %h once
