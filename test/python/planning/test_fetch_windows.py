"""
`place_fetches` on small functions worked out by hand.

Hardware: `test/inputs/round.toml` (HBM 1 GB/s, 1 GFLOP/s, no launch
overhead, a 100 MB/s remote link without latency). Each tensor<256xf32> is
1 KiB; an elementwise `arith` op on them takes 2.048 us with one distinct
operand and 3.072 us with two; a store or fetch of 1 KiB takes 10.24 us.
"""

from pathlib import Path

import pytest
from xdsl.context import Context

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.lifetimes import ProgramGraph, ValueInfo
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import Hardware, load_hardware
from hyperoffload.planning.fetch_windows import place_fetches
from hyperoffload.planning.placement import MoveOptions
from hyperoffload.planning.planner import Plan, PlanOptions, plan_offload
from hyperoffload.planning.value_plan import ValuePlan

US = 1e-6
KIB = 1024
T = "tensor<256xf32>"
REMOTE = "{hyperoffload.tier = #hyperoffload.tier<remote>}"
HARDWARE: Hardware = load_hardware(
    str(Path(__file__).resolve().parents[2] / "inputs" / "round.toml")
)


def graph_of(ctx: Context, text: str) -> ProgramGraph:
    function = main_function(parse_mlir(ctx, text, "t.mlir"))
    return ProgramGraph.build(function, CostModel(HARDWARE))


def value(graph: ProgramGraph, name: str) -> ValueInfo:
    (info,) = [v for v in graph.values if v.name == name]
    return info


def fetches(plan: Plan) -> dict[str, list[int]]:
    """The op before which each fetch of each value is issued (distance 1)."""
    return {
        v.info.name: [v.fetch_op(i, 1) for i in range(len(v.gaps))] for v in plan.values
    }


# %w (remote) is read by the last op only. Op times (us): 2.048, 2.048,
# 3.072, 2.048, 2.048, 3.072; op 5 starts at 11.264 us. Live bytes while each
# op runs, with %w in HBM throughout:
#   op 0 x w a      3 KiB     op 3 x w c d  4 KiB
#   op 1 x w a b    4 KiB     op 4 x w d e  4 KiB
#   op 2 x w a b c  5 KiB     op 5 x w e r  4 KiB
# The rule fetches %w one op ahead (before op 4): op 2 holds x a b c, the
# peak is 4 KiB. That fetch starts at 9.216 us and ends at 19.456 us: 8.192
# us exposed. Hiding it needs a start by 11.264 - 10.24 = 1.024 us: before
# op 0, where it would be in HBM while op 2 runs (5 KiB).
LATE_USE = f"""func.func @f(%x: {T}, %w: {T} {REMOTE}) -> {T} {{
  %a = arith.mulf %x, %x : {T}
  %b = arith.mulf %a, %a : {T}
  %c = arith.addf %a, %b : {T}
  %d = arith.mulf %c, %c : {T}
  %e = arith.mulf %d, %d : {T}
  %r = arith.mulf %e, %w : {T}
  func.return %r : {T}
}}"""


def late_use(ctx: Context) -> tuple[ProgramGraph, Plan]:
    graph = graph_of(ctx, LATE_USE)
    plan = plan_offload(graph, HARDWARE, PlanOptions(target=4 * KIB))
    assert fetches(plan) == {"%w": [4]}
    assert plan.peak_after == 4 * KIB
    return graph, plan


def test_a_fetch_that_hides_moves_to_the_start(ctx: Context):
    # No target: issued before op 0, nothing exposed; op 2 then holds 5 KiB.
    graph, plan = late_use(ctx)
    placed = place_fetches(graph, plan, HARDWARE, None, MoveOptions())
    assert placed.moved
    assert fetches(placed.plan) == {"%w": [0]}
    assert placed.result.exposed_transfer_s == pytest.approx(0.0)
    # op 5 starts at 11.264 us, then runs 3.072 us
    assert placed.result.makespan_s == pytest.approx(14.336 * US)
    assert placed.result.peak_hbm_bytes == 5 * KIB
    # the plan given is left as it was
    assert plan.values[0].fetch_ops is None


def test_a_target_keeps_the_fetch_after_the_peak_op(ctx: Context):
    # At 4 KiB the fetch cannot be in HBM during op 2: it goes before op 3
    # (starts at 7.168 us, ends at 17.408 us: 6.144 us exposed, less than
    # the 8.192 us of the inserted one), and the target holds.
    graph, plan = late_use(ctx)
    placed = place_fetches(graph, plan, HARDWARE, 4 * KIB, MoveOptions())
    assert placed.moved
    assert fetches(placed.plan) == {"%w": [3]}
    assert placed.result.exposed_transfer_s == pytest.approx(6.144 * US)
    assert placed.result.peak_hbm_bytes == 4 * KIB


def test_beta_zero_keeps_the_least_exposure_above_a_met_target(ctx: Context):
    # Memory carries no weight: the fetch goes just in time (before op 0:
    # nothing exposed) although op 2 then holds 5 KiB, above the 4 KiB the
    # inserted plan met.
    graph, plan = late_use(ctx)
    placed = place_fetches(graph, plan, HARDWARE, 4 * KIB, MoveOptions(beta=0))
    assert placed.moved
    assert fetches(placed.plan) == {"%w": [0]}
    assert placed.result.exposed_transfer_s == pytest.approx(0.0)
    assert placed.result.peak_hbm_bytes == 5 * KIB


def test_a_placement_that_costs_more_is_not_kept(ctx: Context):
    # With memory weighed ten times (beta = 10) the placement before op 0
    # costs 10 x 5/4 = 12.5 (nothing exposed, the peak 5 KiB against the
    # inserted 4 KiB); the inserted plan 8.192 / 14.336 + 10 = 10.57 (its
    # exposed time over its compute time). The inserted plan stays.
    graph, plan = late_use(ctx)
    placed = place_fetches(graph, plan, HARDWARE, None, MoveOptions(beta=10))
    assert not placed.moved
    assert placed.plan is plan
    assert fetches(placed.plan) == {"%w": [4]}
    assert placed.result.peak_hbm_bytes == 4 * KIB
    assert placed.result.exposed_transfer_s == pytest.approx(8.192 * US)
    # 11.264 us of ops before op 5, 8.192 us waiting, then op 5 (3.072 us)
    assert placed.result.makespan_s == pytest.approx(22.528 * US)


def test_a_target_the_inserted_plan_missed_does_not_hold_the_placement_back(
    ctx: Context,
):
    # At 3 KiB the inserted plan already peaks above the target (4 KiB), so
    # a placement above it is kept when it exposes less: beta = 0, before
    # op 0, nothing exposed.
    graph, plan = late_use(ctx)
    placed = place_fetches(graph, plan, HARDWARE, 3 * KIB, MoveOptions(beta=0))
    assert placed.moved
    assert fetches(placed.plan) == {"%w": [0]}
    assert placed.result.peak_hbm_bytes == 5 * KIB


def test_alpha_zero_puts_the_fetch_right_before_its_user(ctx: Context):
    # Exposure carries no weight: before op 5, all 10.24 us exposed (the
    # inserted fetch exposed 8.192 us), kept at the same peak of 4 KiB.
    graph, plan = late_use(ctx)
    placed = place_fetches(graph, plan, HARDWARE, None, MoveOptions(alpha=0))
    assert placed.moved
    assert fetches(placed.plan) == {"%w": [5]}
    assert placed.result.exposed_transfer_s == pytest.approx(10.24 * US)
    assert placed.result.peak_hbm_bytes == 4 * KIB


def test_a_plan_without_fetches_is_returned_as_it_is(ctx: Context):
    # Nothing to place: the empty plan and the program's own run (5 KiB).
    graph = graph_of(ctx, LATE_USE)
    plan = Plan(peak_before=5 * KIB, peak_after=5 * KIB)
    placed = place_fetches(graph, plan, HARDWARE, None, MoveOptions())
    assert not placed.moved
    assert placed.plan is plan
    assert placed.result.peak_hbm_bytes == 5 * KIB


# %w (remote) is read by op 0 and op 8; %h is produced by op 1 and read by
# op 7. Op times (us): 3.072 (op 0), 2.048 (ops 1-6), 3.072 (ops 7, 8).
TWO_WINDOWS = f"""func.func @f(%x: {T}, %w: {T} {REMOTE}) -> {T} {{
  %a = arith.mulf %x, %w : {T}
  %h = arith.mulf %a, %a : {T}
  %b1 = arith.mulf %a, %a : {T}
  %b2 = arith.mulf %b1, %b1 : {T}
  %b3 = arith.mulf %b2, %b2 : {T}
  %b4 = arith.mulf %b3, %b3 : {T}
  %b5 = arith.mulf %b4, %b4 : {T}
  %b6 = arith.addf %b5, %h : {T}
  %r = arith.mulf %b6, %w : {T}
  func.return %r : {T}
}}"""


def test_a_window_starts_after_the_use_before_the_gap_and_the_producer(
    ctx: Context,
):
    # At least 9 ops ahead, longer than every gap: each fetch as early as
    # its window allows. %w's first fetch (entry to op 0) can only go
    # before op 0. Its second (gap 0 -> 8: 15.36
    # us, longer than the 10.24 us fetch, so a second cluster) reads the
    # remote copy that exists from entry, but the copy in HBM is still read
    # by op 0: not before op 1. %h, stored after op 1 and idle until op 7,
    # cannot be fetched before its store exists: not before op 2.
    graph = graph_of(ctx, TWO_WINDOWS)
    w = value(graph, "%w")
    h = value(graph, "%h")
    assert [(g.after, g.before) for g in w.gaps()] == [(-1, 0), (0, 8)]
    assert [(g.after, g.before) for g in h.gaps()] == [(1, 7)]
    rules = plan_offload(graph, HARDWARE, PlanOptions(target=10**6))
    assert fetches(rules) == {"%w": [0, 7]}
    plan = Plan([*rules.values, ValuePlan(h, h.gaps(), stored=True)])
    assert fetches(plan) == {"%w": [0, 7], "%h": [6]}
    placed = place_fetches(graph, plan, HARDWARE, None, MoveOptions(distance=9))
    assert placed.moved
    assert fetches(placed.plan) == {"%w": [0, 1], "%h": [2]}
