"""
`ProgramGraph.build` on small functions worked out by hand: the values it
lists (tensor arguments, then results in op order), their uses, idle gaps,
categories, tiers and last uses, the op times and the memory timeline.

Hardware: HBM 1 GB/s, 1 GFLOP/s, no launch overhead. An elementwise `arith`
op on tensor<256xf32> (1024 B) is memory-bound: it moves its distinct
operands and its result, 1024 B each, at 1 ns per byte.
"""

import pytest
from small_graphs import graph_of, round_hardware
from xdsl.context import Context

from hyperoffload.analysis.lifetimes import Gap, ProgramGraph, ValueInfo
from hyperoffload.support.positions import OpIndex

US = 1e-6
KB = 1024
T = "tensor<256xf32>"

HARDWARE = round_hardware(10**6, 10**9, 1e8)

PROGRAM = f"""func.func @f(
    %x: {T},
    %w: {T} {{hyperoffload.tier = #hyperoffload.tier<host>, hyperoffload.category = "optimizer"}},
    %r: !hyperoffload.remote<{T}> {{hyperoffload.category = "kv"}},
    %s: f32) -> {T} {{
  %a = arith.addf %x, %x : {T}
  %b = arith.mulf %a, %a : {T}
  %c = arith.mulf %b, %w : {T}
  %d = arith.addf %c, %a : {T}
  func.return %d : {T}
}}"""


def build(ctx: Context, text: str) -> ProgramGraph:
    return graph_of(ctx, text, HARDWARE)


def by_name(graph: ProgramGraph) -> dict[str, ValueInfo]:
    return {info.name: info for info in graph.values}


def test_values_are_tensor_arguments_then_results(ctx: Context):
    # The scalar %s is not a tensor: it has no entry.
    graph = build(ctx, PROGRAM)
    assert [info.name for info in graph.values] == [
        "%x",
        "%w",
        "%r",
        "%a",
        "%b",
        "%c",
        "%d",
    ]
    assert [info.producer for info in graph.values] == [-1, -1, -1, 0, 1, 2, 3]
    assert all(info.bytes == KB for info in graph.values)


def test_uses_and_last_use(ctx: Context):
    # Ops: 0 %a, 1 %b, 2 %c, 3 %d, 4 return. %a is read twice by op 1 (one
    # use) and again by op 3; %d is returned (its use is the return, op 4);
    # the unused remote copy %r has no use, so its last use is its producer.
    values = by_name(build(ctx, PROGRAM))
    uses = {name: info.uses for name, info in values.items()}
    assert uses == {
        "%x": [0],
        "%w": [2],
        "%r": [],
        "%a": [1, 3],
        "%b": [2],
        "%c": [3],
        "%d": [4],
    }
    assert {name: info.last_use for name, info in values.items()} == {
        "%x": 0,
        "%w": 2,
        "%r": -1,
        "%a": 3,
        "%b": 2,
        "%c": 3,
        "%d": 4,
    }
    assert [name for name, info in values.items() if info.returned] == ["%d"]
    # the last use strictly before a position, else the producer
    assert values["%a"].last_use_before(3) == 1
    assert values["%a"].last_use_before(1) == 0
    assert values["%a"].last_use_before(10) == 3


def test_categories_and_tiers(ctx: Context):
    # Arguments default to `params` in HBM; an argument attribute names the
    # category, the tier attribute or a remote type the tier; results are
    # activations produced in HBM.
    values = by_name(build(ctx, PROGRAM))
    assert {name: (info.category, info.tier) for name, info in values.items()} == {
        "%x": ("params", "hbm"),
        "%w": ("optimizer", "host"),
        "%r": ("kv", "remote"),
        "%a": ("activations", "hbm"),
        "%b": ("activations", "hbm"),
        "%c": ("activations", "hbm"),
        "%d": ("activations", "hbm"),
    }


def test_op_times_and_gaps(ctx: Context):
    # Op times: %a and %b move 2 KiB (2.048 us), %c and %d 3 KiB (3.072 us),
    # the return nothing. Gaps run between consecutive events (the producer,
    # -1 for an argument, then each use) and count the ops strictly between.
    graph = build(ctx, PROGRAM)
    assert graph.op_time == pytest.approx(
        [2.048 * US, 2.048 * US, 3.072 * US, 3.072 * US, 0.0]
    )
    values = by_name(graph)
    spans = {
        name: [(g.after, g.before, g.ops) for g in info.gaps()]
        for name, info in values.items()
    }
    times = {name: [g.time_s for g in info.gaps()] for name, info in values.items()}
    assert spans["%x"] == [(-1, 0, 0)]
    assert times["%x"] == [0.0]
    # %w: from entry to op 2, over ops 0 and 1
    assert spans["%w"] == [(-1, 2, 2)]
    assert times["%w"] == pytest.approx([4.096 * US])
    assert spans["%r"] == []
    # %a: produced at 0, read at 1, idle over op 2 (3.072 us), read at 3
    assert spans["%a"] == [(0, 1, 0), (1, 3, 1)]
    assert times["%a"] == pytest.approx([0.0, 3.072 * US])
    assert spans["%d"] == [(3, 4, 0)]


def test_time_between_clamps_to_the_function(ctx: Context):
    graph = build(ctx, PROGRAM)
    total = (2.048 + 2.048 + 3.072 + 3.072) * US
    assert graph.time_between(0, 3) == pytest.approx((2.048 + 3.072) * US)
    assert graph.time_between(-5, 100) == pytest.approx(total)
    assert graph.time_between(3, 1) == 0.0


def test_memory_timeline(ctx: Context):
    # Arguments in HBM from entry: %x and %w (an argument tagged `host` still
    # has its device buffer; the remote copy %r does not count): 2 KiB.
    # While each op runs its output is allocated; a value is freed after
    # its last reader:
    #   op 0: x w a       3 KiB
    #   op 1: x w a b     4 KiB
    #   op 2: x w a b c   5 KiB, then b is freed
    #   op 3: x w a c d   5 KiB, then a and c are freed
    #   return: x w d     3 KiB
    graph = build(ctx, PROGRAM)
    assert graph.timeline == [3 * KB, 4 * KB, 5 * KB, 5 * KB, 3 * KB]
    assert graph.peak == 5 * KB
    assert graph.peak_op == 2


def test_a_value_read_by_a_fused_op_is_held_until_its_kernel(ctx: Context):
    # %s = x + y is absorbed into the kernel of %m (its only consumer, right
    # after it): %x and %y are read at op 1 and, through the fusion, at op 2
    # where that kernel runs; there is no idle gap between the two.
    maps = "affine_map<(i) -> (i)>"
    text = f"""func.func @f(%x: {T}, %y: {T}) -> {T} {{
      %e = tensor.empty() : {T}
      %s = linalg.generic {{indexing_maps = [{maps}, {maps}, {maps}],
          iterator_types = ["parallel"]}} ins(%x, %y : {T}, {T}) outs(%e : {T}) {{
      ^bb0(%p: f32, %q: f32, %o: f32):
        %v = arith.addf %p, %q : f32
        linalg.yield %v : f32
      }} -> {T}
      %m = linalg.generic {{indexing_maps = [{maps}, {maps}],
          iterator_types = ["parallel"]}} ins(%s : {T}) outs(%e : {T}) {{
      ^bb0(%p: f32, %o: f32):
        %v = arith.mulf %p, %p : f32
        linalg.yield %v : f32
      }} -> {T}
      func.return %m : {T}
    }}"""
    values = by_name(build(ctx, text))
    assert values["%x"].uses == [1, 2]
    # only the entry gap, over the tensor.empty (op 0, no time)
    assert values["%x"].gaps() == [Gap(OpIndex(-1), OpIndex(1), 1, 0.0)]
    # the fused intermediate has no buffer of its own
    assert values["%s"].buffer is None
    assert values["%m"].buffer is not None
