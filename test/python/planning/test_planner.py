"""
`plan_offload` on small functions worked out by hand.

Hardware: HBM 1 GB/s, 1 GFLOP/s, no launch overhead, a remote link of
10 GB/s each way without latency. Each tensor<1024xf32> is 4 KiB (`U`); an
elementwise `arith` op on them is memory-bound (1 ns per byte: its distinct
operands and its result), so it takes 8.192 us with one operand and 12.288
us with two, while a transfer takes 0.4096 us: every store and fetch hides
in one op.
"""

import pytest
from small_graphs import graph_of, round_hardware
from xdsl.context import Context

from hyperoffload.planning.planner import Plan, PlanError, PlanOptions, plan_offload

US = 1e-6
U = 4096
T = "tensor<1024xf32>"
REMOTE = "{hyperoffload.tier = #hyperoffload.tier<remote>}"

HARDWARE = round_hardware()


def plan(ctx: Context, text: str, options: PlanOptions) -> Plan:
    return plan_offload(graph_of(ctx, text, HARDWARE), HARDWARE, options)


def planned(result: Plan) -> dict[str, list[tuple[int, int]]]:
    """The gaps (after, before) over which each planned value is out of HBM."""
    return {p.info.name: [(g.after, g.before) for g in p.gaps] for p in result.values}


# %h is produced at op 0, read at op 1 and again at op 5. While each op runs
# (x is an argument and stays):
#   op 0 x h            2U     op 3 x h a b (f0 freed after)  5U
#   op 1 x h f0         3U     op 4 x h a b c                 5U
#   op 2 x h f0 a       4U     op 5 x h c g                   4U
# The peak is 5U = 20480 B. Without %h over ops 2-4, op 3 holds x f0 a b and
# op 4 x a b c: 4U, if %h comes back only after op 4 (fetched right before
# op 5: prefetch distance 0). Nothing else has an idle gap but %a (over op 3)
# and no other plan lowers op 4 below x a b c: 4U is the least peak.
ACTIVATION = f"""func.func @train(%x: {T}) -> {T} {{
  %h = arith.mulf %x, %x : {T}
  %f0 = arith.addf %h, %x : {T}
  %a = arith.addf %f0, %f0 : {T}
  %b = arith.mulf %f0, %f0 : {T}
  %c = arith.addf %a, %b : {T}
  %g = arith.mulf %c, %h : {T}
  func.return %g : {T}
}}"""


def test_a_target_the_program_meets_moves_nothing(ctx: Context):
    result = plan(ctx, ACTIVATION, PlanOptions(target=5 * U))
    assert result.values == []
    assert (result.peak_before, result.peak_after) == (5 * U, 5 * U)
    assert result.met
    assert not result.optional


def test_an_idle_activation_is_stored_and_fetched_back(ctx: Context):
    result = plan(ctx, ACTIVATION, PlanOptions(target=4 * U, prefetch_distance=0))
    assert planned(result) == {"%h": [(1, 5)]}
    (value,) = result.values
    assert value.stored
    assert not value.initially_out
    # over ops 2, 3 and 4: 8.192 + 8.192 + 12.288 us
    assert value.gaps[0].time_s == pytest.approx(28.672 * US)
    assert (result.peak_before, result.peak_after) == (5 * U, 4 * U)
    assert result.met
    assert result.optional


def test_an_unreachable_target_is_reported_not_met(ctx: Context):
    # 3U fits every op alone (op 1 reads h and x and writes f0), but op 4
    # needs x a b c: the plan reaches the least peak, 4U, and says it is short.
    result = plan(ctx, ACTIVATION, PlanOptions(target=3 * U, prefetch_distance=0))
    assert not result.met
    assert result.peak_after == 4 * U
    assert result.peak_before == 5 * U


def test_a_target_below_one_op_is_an_error(ctx: Context):
    # op 0 needs x and h (2U); op 1 needs h, x and f0: 3U.
    with pytest.raises(
        PlanError,
        match=r"t\.mlir:\d+:\d+: error: no plan meets the HBM target of 8192 B: "
        r"'arith\.addf' alone needs 12288 B",
    ):
        plan(ctx, ACTIVATION, PlanOptions(target=2 * U))


@pytest.mark.parametrize(
    "options",
    [
        # no tensor is larger than 4096 B
        PlanOptions(target=4 * U, prefetch_distance=0, min_bytes=U + 1),
        # the longest gap is 28.672 us
        PlanOptions(target=4 * U, prefetch_distance=0, min_gap_s=30 * US),
        # activations may not move
        PlanOptions(target=4 * U, prefetch_distance=0, categories=("params",)),
        # only what the rules require (nothing here)
        PlanOptions(target=4 * U, prefetch_distance=0, optional=False),
    ],
    ids=["min-bytes", "min-gap", "categories", "rules-only"],
)
def test_options_limit_the_candidates(ctx: Context, options: PlanOptions):
    result = plan(ctx, ACTIVATION, options)
    assert result.values == []
    assert result.peak_after == 5 * U
    assert not result.met
    assert not result.optional


# %w lives in the remote pool (tagged), read at ops 1 and 4. While each op
# runs, unplanned (w in HBM from entry):
#   op 0 x w a    3U     op 3 x w b c d (b, c freed after)  5U
#   op 1 x w a b  4U     op 4 x w d e                       4U
#   op 2 x w b c  4U     return x w e                       3U
# Out of HBM over ops 2 and 3 (fetched right before op 4), op 3 holds 4U.
TAGGED = f"""func.func @f(%x: {T}, %w: {T} {REMOTE}) -> {T} {{
  %a = arith.mulf %x, %x : {T}
  %b = arith.mulf %a, %w : {T}
  %c = arith.mulf %b, %b : {T}
  %d = arith.addf %c, %b : {T}
  %e = arith.mulf %d, %w : {T}
  func.return %e : {T}
}}"""


def test_a_tagged_argument_is_fetched_before_each_cluster_of_uses(ctx: Context):
    # Out from entry to op 1, and over ops 2-3 (20.48 us, far longer than its
    # 0.4096 us fetch): two clusters. Fetched one op ahead (the default
    # distance), it is back for op 3 and the peak stays; fetched right before
    # op 4 it is 4U.
    result = plan(ctx, TAGGED, PlanOptions(target=10**9))
    assert planned(result) == {"%w": [(-1, 1), (1, 4)]}
    (value,) = result.values
    assert value.initially_out
    assert not value.stored
    assert result.peak_after == 5 * U
    assert not result.optional
    result = plan(ctx, TAGGED, PlanOptions(target=4 * U, prefetch_distance=0))
    assert planned(result) == {"%w": [(-1, 1), (1, 4)]}
    assert result.peak_after == 4 * U
    assert result.met
    assert not result.optional


def test_uses_closer_than_min_gap_form_one_cluster(ctx: Context):
    # With min_gap 25 us the 20.48 us between its uses does not split them:
    # fetched once, before op 1.
    result = plan(ctx, TAGGED, PlanOptions(target=10**9, min_gap_s=25 * US))
    assert planned(result) == {"%w": [(-1, 1)]}


def test_a_tagged_argument_outside_the_categories_stays(ctx: Context):
    # Untagged by category, %w holds `params`.
    result = plan(ctx, TAGGED, PlanOptions(target=10**9, categories=("kv",)))
    assert result.values == []


def test_placing_arguments_keeps_them_in_hbm_while_the_target_allows(ctx: Context):
    # Nothing needed at 5U: %w stays in HBM for the whole call.
    options = PlanOptions(target=5 * U, place_arguments=True)
    result = plan(ctx, TAGGED, options)
    assert result.values == []
    assert [info.name for info in result.placed] == ["%w"]
    assert result.peak_after == 5 * U
    # At 4U it must stay in its tier. Its fetches are reserved on the link
    # just before their uses (each 0.4096 us, a sliver of the op before), so
    # they are issued before ops 1 and 4 and the peak is 4U.
    options = PlanOptions(target=4 * U, place_arguments=True)
    result = plan(ctx, TAGGED, options)
    assert planned(result) == {"%w": [(-1, 1), (1, 4)]}
    assert result.placed == []
    assert result.peak_after == 4 * U
    assert result.met
    assert result.optional


def test_a_result_tagged_with_a_tier_is_written_back(ctx: Context):
    # %k is returned to the remote pool: stored after op 0 and released
    # after it (it has no other reader). Unplanned, op 2 holds x k a b: 4U;
    # with %k gone, 3U.
    text = f"""func.func @write_back(%x: {T}) -> ({T}, {T} {REMOTE}) {{
      %k = arith.mulf %x, %x : {T}
      %a = arith.addf %x, %x : {T}
      %b = arith.addf %a, %a : {T}
      func.return %b, %k : {T}, {T}
    }}"""
    result = plan(ctx, text, PlanOptions(target=3 * U))
    assert planned(result) == {"%k": []}
    (value,) = result.values
    assert value.write_back == "remote"
    assert value.stored
    assert (result.peak_before, result.peak_after) == (4 * U, 3 * U)
    assert result.met
    assert not result.optional


def test_an_unused_tagged_argument_is_left_in_its_tier(ctx: Context):
    # %u lives in the remote pool and nothing reads it: it stays there (no
    # fetch, no gap) and is not resident. While each op runs:
    #   op 0 x a    2U     op 1 x a b  3U     return x b  2U
    # The peak is 3U = 12288 B (with %u in HBM it would be 4U).
    text = f"""func.func @f(%x: {T}, %u: {T} {REMOTE}) -> {T} {{
      %a = arith.mulf %x, %x : {T}
      %b = arith.mulf %a, %a : {T}
      func.return %b : {T}
    }}"""
    result = plan(ctx, text, PlanOptions(target=10**9, place_arguments=False))
    assert planned(result) == {"%u": []}
    (value,) = result.values
    assert value.initially_out
    assert not value.stored
    assert result.peak_after == 3 * U == 12288
