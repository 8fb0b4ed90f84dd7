"""
`memory_lower_bound` on small functions worked out by hand.

Hardware: HBM 1 GB/s, 1 GFLOP/s, no launch overhead; the remote link's
bandwidth varies per test, with no latency. Each tensor<256xf32> is 1 KiB;
an elementwise `arith` op on them is memory-bound (1 ns per byte moved: its
distinct operands and its result).
"""

from small_graphs import graph_of, round_hardware
from xdsl.context import Context

from hyperoffload.analysis.bounds import memory_lower_bound
from hyperoffload.model.hardware import Hardware

KB = 1024
T = "tensor<256xf32>"


def hardware(link_bandwidth: float, latency_s: float = 0.0) -> Hardware:
    return round_hardware(10**6, 10**9, link_bandwidth, latency_s)


def bound(ctx: Context, text: str, hw: Hardware) -> tuple[int, int]:
    """The unconstrained peak and the bound."""
    graph = graph_of(ctx, text, hw)
    return graph.peak, memory_lower_bound(graph, hw)


# %h is idle from op 1 to op 6. Live bytes while each op runs (x is an
# argument and stays):
#   op 0 x h          2 KiB     op 4 x h b c d    5 KiB (the peak)
#   op 1 x h a        3 KiB     op 5 x h d e      4 KiB
#   op 2 x h a b      4 KiB     op 6 x h e g      4 KiB
#   op 3 x h b c      4 KiB     return x g        2 KiB
# Op times (us): 2.048, 3.072, 2.048, 2.048, 3.072, 2.048, 3.072.
IDLE = f"""func.func @f(%x: {T}) -> {T} {{
  %h = arith.mulf %x, %x : {T}
  %a = arith.addf %h, %x : {T}
  %b = arith.mulf %a, %a : {T}
  %c = arith.mulf %b, %b : {T}
  %d = arith.addf %c, %b : {T}
  %e = arith.mulf %d, %d : {T}
  %g = arith.addf %e, %h : {T}
  func.return %g : {T}
}}"""


def test_a_round_trip_hidden_in_the_gap_lowers_the_bound(ctx: Context):
    # At 1 GB/s a store or fetch of %h takes 1.024 us. Inside its gap (1, 6),
    # op t can run without %h if the compute from the end of op 1 to the
    # start of t covers the store and that from the end of t to the start of
    # op 6 covers the fetch:
    #   op 2: 0 us before            -> no
    #   op 3: 2.048 us / 5.120 after -> out
    #   op 4: 4.096 us / 2.048 after -> out
    #   op 5: 7.168 us / 0 after     -> no
    # The peak op 4 drops to 4 KiB; ops 2, 5 and 6 stay at 4 KiB.
    peak, lower = bound(ctx, IDLE, hardware(1e9))
    assert peak == 5 * KB
    assert lower == 4 * KB


def test_a_round_trip_longer_than_the_gap_leaves_the_peak(ctx: Context):
    # At 200 MB/s a transfer of %h takes 5.12 us: no op of the gap has that
    # much compute both before and after it.
    peak, lower = bound(ctx, IDLE, hardware(2e8))
    assert lower == peak == 5 * KB


def test_latency_counts_in_each_transfer(ctx: Context):
    # 1 GB/s plus 1.5 us of latency: 2.524 us per transfer. Op 3 has 2.048
    # us of compute before it and op 4 2.048 us after it: neither fits.
    peak, lower = bound(ctx, IDLE, hardware(1e9, latency_s=1.5e-6))
    assert lower == peak == 5 * KB


# %w is read once, at op 0. Live bytes (x and w are arguments):
#   op 0 x w c   3 KiB     op 2 x w c d e  5 KiB (the peak)
#   op 1 x w c d 4 KiB     return x w e    3 KiB
def _last_use_early(tier: str) -> str:
    attrs = f" {{hyperoffload.tier = #hyperoffload.tier<{tier}>}}" if tier else ""
    return f"""func.func @f(%x: {T}, %w: {T}{attrs}) -> {T} {{
      %c = arith.addf %x, %w : {T}
      %d = arith.mulf %c, %c : {T}
      %e = arith.addf %d, %c : {T}
      func.return %e : {T}
    }}"""


def test_an_argument_living_outside_hbm_is_not_held_after_its_last_use(
    ctx: Context,
):
    # Tagged `remote`, %w needs no HBM after op 0: op 2 drops to 4 KiB, the
    # largest of the bound. In HBM (untagged), the caller's copy stays.
    peak, lower = bound(ctx, _last_use_early("remote"), hardware(1e9))
    assert peak == 5 * KB
    assert lower == 4 * KB
    peak, lower = bound(ctx, _last_use_early(""), hardware(1e9))
    assert lower == peak == 5 * KB


def test_the_bound_is_at_least_the_largest_working_set(ctx: Context):
    # One op reading two 1 KiB tensors and writing a third: nothing can leave
    # HBM while it runs, whatever the link.
    text = f"""func.func @f(%x: {T}, %y: {T}) -> {T} {{
      %s = arith.addf %x, %y : {T}
      func.return %s : {T}
    }}"""
    peak, lower = bound(ctx, text, hardware(1e12))
    assert lower == peak == 3 * KB


def test_an_unused_argument_living_outside_hbm_is_not_resident(ctx: Context):
    # %u is tagged `remote` and read by nothing: it needs no HBM. With
    # tensor<1024xf32> (4 KiB each), op 1 reads a and writes b while x (an
    # untagged argument, the caller's) stays in HBM: 3 x 4096 = 12288 B,
    # and nothing else is live then.
    t = "tensor<1024xf32>"
    text = f"""func.func @f(%x: {t}, %u: {t} {{hyperoffload.tier = #hyperoffload.tier<remote>}}) -> {t} {{
      %a = arith.mulf %x, %x : {t}
      %b = arith.mulf %a, %a : {t}
      func.return %b : {t}
    }}"""
    _, lower = bound(ctx, text, hardware(1e9))
    assert lower == 12288
