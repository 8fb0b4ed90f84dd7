"""
`PlanningLoop` on small functions worked out by hand.

Hardware: `test/inputs/round.toml` (HBM 1 GB/s, 1 GFLOP/s, no launch
overhead, a 100 MB/s remote link without latency). Each tensor<256xf32> is
1 KiB; an elementwise `arith` op on them is memory-bound (1 ns per byte: its
distinct operands and its result), so it takes 2.048 us with one distinct
operand and 3.072 us with two, and a fetch of 1 KiB takes 10.24 us.
"""

from dataclasses import replace
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.func import FuncOp

import hyperoffload.planning.loop as loop_module
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.dialects.hyperoffload import DetachOp, PrefetchOp, StoreOp
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import Hardware, Link, load_hardware
from hyperoffload.planning.loop import LoopOptions, PlanningLoop, Trial
from hyperoffload.planning.placement import MoveOptions
from hyperoffload.planning.planner import Plan, PlanOptions, Simulations, plan_offload
from hyperoffload.support.tiers import Tier

US = 1e-6
KIB = 1024
TEST = Path(__file__).resolve().parents[2]
T = "tensor<256xf32>"


def round_hardware() -> Hardware:
    return load_hardware(str(TEST / "inputs" / "round.toml"))


def fast_hardware() -> Hardware:
    """The same device with a 10 GB/s link: a 1 KiB transfer takes 0.1024 us."""
    link = Link(Tier.REMOTE, 10**9, 1e10, 1e10, 0.0)
    return replace(round_hardware(), links={Tier.REMOTE: link})


def function(ctx: Context, text: str) -> FuncOp:
    return main_function(parse_mlir(ctx, text, "t.mlir"))


def body(f: FuncOp) -> list[str]:
    """The body of `f` as printed, one op per line."""
    return [line.strip() for line in str(f).splitlines()[1:-1]]


# test/passes/pipeline.mlir: %w lives in the remote pool and is read by the
# last op only. Ops 0-4 take 2.048 us each (10.24 us together), op 5 (%a5
# and %w) 3.072 us: the program runs 13.312 us with everything in HBM.
PIPELINE = (TEST / "passes" / "pipeline.mlir").read_text()


def pipeline_loop(ctx: Context, move: MoveOptions | None) -> PlanningLoop:
    options = LoopOptions(PlanOptions(target=0), move)
    return PlanningLoop.for_function(function(ctx, PIPELINE), round_hardware(), options)


def test_the_loop_extracts_the_graph_of_its_function(ctx: Context):
    loop = pipeline_loop(ctx, MoveOptions())
    assert loop.graph.function is loop.function
    # six arith ops and the return
    assert [op.name for op in loop.graph.ops] == [*["arith.mulf"] * 6, "func.return"]
    assert loop.graph.op_time == pytest.approx([*[2.048 * US] * 5, 3.072 * US, 0.0])


def test_trials_leave_the_ir_as_it_was(ctx: Context):
    loop = pipeline_loop(ctx, MoveOptions())
    before = str(loop.function)
    # the device's capacity, a target the program meets, and the least peak
    # (op 5 reads %a5 and %w and writes %r while %x is held: 4 KiB)
    trials = [loop.trial(t) for t in (10**6, 5 * KIB, 4 * KIB)]
    assert str(loop.function) == before
    assert not any(isinstance(op, PrefetchOp) for op in loop.function.walk())
    # each trial planned %w (the rule for a tagged argument) on the graph
    for trial in trials:
        assert [v.info.name for v in trial.plan.values] == ["%w"]


def test_a_trial_without_move_options_keeps_the_inserted_fetch(ctx: Context):
    # Fetched one op ahead (before op 4, at 8.192 us), %w arrives at 18.432
    # us; op 5 would start at 10.24 us and waits 8.192 us: 21.504 us in all.
    trial = pipeline_loop(ctx, None).trial(10**6)
    assert not trial.moved
    assert trial.plan is trial.inserted
    (value,) = trial.plan.values
    assert value.fetch_op(0, 1) == 4
    assert trial.result.exposed_transfer_s == pytest.approx(8.192 * US)
    assert trial.result.makespan_s == pytest.approx(21.504 * US)


def test_a_trial_moves_a_fetch_earlier_when_that_hides_it(ctx: Context):
    # To end by op 5's start (10.24 us) the 10.24 us fetch must start at 0:
    # before op 0. Nothing is exposed and the run takes 13.312 us. %w is
    # then resident throughout: x w a1 while op 0 runs (3 KiB), x w and two
    # activations after (4 KiB), as without the plan.
    trial = pipeline_loop(ctx, MoveOptions()).trial(10**6)
    assert trial.moved
    (inserted,) = trial.inserted.values
    (moved,) = trial.plan.values
    assert (inserted.fetch_op(0, 1), moved.fetch_op(0, 1)) == (4, 0)
    assert trial.result.exposed_transfer_s == pytest.approx(0.0)
    assert trial.result.makespan_s == pytest.approx(13.312 * US)
    assert trial.result.peak_hbm_bytes == 4 * KIB


def test_write_inserts_the_moved_plan_once(ctx: Context):
    # The pipeline's output (test/passes/pipeline.mlir, CHECK lines): the
    # prefetch of %w before the first op, its detach after the last use.
    loop = pipeline_loop(ctx, MoveOptions())
    loop.write(loop.trial(10**6))
    assert body(loop.function) == [
        "%w_1 = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<256xf32>> -> tensor<256xf32>",
        "%a1 = arith.mulf %x, %x : tensor<256xf32>",
        "%a2 = arith.mulf %a1, %a1 : tensor<256xf32>",
        "%a3 = arith.mulf %a2, %a2 : tensor<256xf32>",
        "%a4 = arith.mulf %a3, %a3 : tensor<256xf32>",
        "%a5 = arith.mulf %a4, %a4 : tensor<256xf32>",
        "%r = arith.mulf %a5, %w_1 : tensor<256xf32>",
        "hyperoffload.detach %w_1 : tensor<256xf32>",
        "func.return %r : tensor<256xf32>",
    ]
    assert str(loop.function.function_type) == (
        "(tensor<256xf32>, !hyperoffload.remote<tensor<256xf32>>) -> tensor<256xf32>"
    )


def test_write_without_moves_puts_the_fetch_one_op_ahead(ctx: Context):
    # test/passes/pipeline.mlir, INSERTED lines: before %a5 (op 4).
    loop = pipeline_loop(ctx, None)
    loop.write(loop.trial(10**6))
    lines = body(loop.function)
    fetch = lines.index(
        "%w_1 = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<256xf32>> -> tensor<256xf32>"
    )
    assert lines[fetch - 1].startswith("%a4 = ")
    assert lines[fetch + 1].startswith("%a5 = ")
    offload = [
        op
        for op in loop.function.walk()
        if isinstance(op, PrefetchOp | DetachOp | StoreOp)
    ]
    assert [op.name for op in offload] == [
        "hyperoffload.prefetch",
        "hyperoffload.detach",
    ]


# %h is produced by op 0 and read by ops 1 and 6: idle over ops 2-5. Live
# bytes while each op runs (x is an argument and stays):
#   op 0 x h      2 KiB     op 4 x h b c d  5 KiB (b, c freed after)
#   op 1 x h a    3 KiB     op 5 x h d e    4 KiB
#   op 2 x h a b  4 KiB     op 6 x h e g    4 KiB
#   op 3 x h b c  4 KiB
# A target of 4 KiB needs an optional offload: %h over its gap, fetched
# right before op 6 (distance 0). On the fast link its store (after op 0)
# and fetch hide, so op 4 holds x b c d and op 5 x d e: 4 KiB.
ACTIVATION = f"""func.func @f(%x: {T}) -> {T} {{
  %h = arith.mulf %x, %x : {T}
  %a = arith.addf %h, %x : {T}
  %b = arith.mulf %a, %a : {T}
  %c = arith.mulf %b, %b : {T}
  %d = arith.addf %c, %b : {T}
  %e = arith.mulf %d, %d : {T}
  %g = arith.addf %e, %h : {T}
  func.return %g : {T}
}}"""


def test_an_optional_plan_that_lowers_the_peak_is_kept(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
):
    calls: list[bool] = []

    def recording(
        graph: ProgramGraph,
        hardware: Hardware,
        options: PlanOptions,
        simulations: Simulations | None = None,
    ) -> Plan:
        calls.append(options.optional)
        return plan_offload(graph, hardware, options, simulations)

    monkeypatch.setattr(loop_module, "plan_offload", recording)
    options = LoopOptions(PlanOptions(target=0, prefetch_distance=0))
    loop = PlanningLoop.for_function(
        function(ctx, ACTIVATION), fast_hardware(), options
    )
    trial = loop.trial(4 * KIB)
    # one plan, with %h out over its gap (1, 6): op 4 holds x b c d, 4 KiB
    assert calls == [True]
    assert trial.plan.optional
    assert [
        (v.info.name, [(g.after, g.before) for g in v.gaps]) for v in trial.plan.values
    ] == [("%h", [(1, 6)])]
    assert (trial.plan.peak_before, trial.plan.peak_after) == (5 * KIB, 4 * KIB)


def test_write_places_each_of_several_fetches_where_it_was_moved(ctx: Context):
    # test/passes/insert-place-arguments.mlir at 5120 B on ascend-910c (PIPE
    # lines): %k0 stays in HBM; the plan lists %k2 before %k1 (it ranks
    # first) with fetches reserved before ops 3 and 1. Placed, %k1's moves
    # to the start (ops 0 and 1 then hold q k0 k1 s0 = 4 KiB and
    # q k0 k1 s0 t0 = 5 KiB); %k2's stays before op 3 (before op 2 it would
    # be in HBM with q k0 k1 t0 s1: 6 KiB, above 5120 B). Nothing parked or
    # retired (with retiring, %k1 stays in HBM too: test_search.py).
    text = (TEST / "passes" / "insert-place-arguments.mlir").read_text()
    (decode,) = [
        op
        for op in parse_mlir(ctx, text, "d.mlir").walk()
        if isinstance(op, FuncOp) and op.sym_name.data == "decode"
    ]
    plan = PlanOptions(target=0, place_arguments=True, park_arguments=False)
    loop = PlanningLoop.for_function(
        decode, load_hardware("ascend-910c"), LoopOptions(plan, MoveOptions())
    )
    trial = loop.trial(5120)
    assert trial.moved
    assert [(v.info.name, v.fetch_ops) for v in trial.inserted.values] == [
        ("%k2", [3]),
        ("%k1", [1]),
    ]
    assert [(v.info.name, v.fetch_ops) for v in trial.plan.values] == [
        ("%k2", [3]),
        ("%k1", [0]),
    ]
    assert trial.result.peak_hbm_bytes == 5120
    loop.write(trial)
    remote = "!hyperoffload.remote<tensor<256xf32>> -> tensor<256xf32>"
    assert body(loop.function) == [
        f"%k1_1 = hyperoffload.prefetch %k1 : {remote}",
        f"%s0 = arith.mulf %q, %k0 : {T}",
        f"%t0 = arith.addf %s0, %s0 : {T}",
        f"%s1 = arith.mulf %t0, %k1_1 : {T}",
        f"hyperoffload.detach %k1_1 : {T}",
        f"%k2_1 = hyperoffload.prefetch %k2 : {remote}",
        f"%t1 = arith.addf %s1, %s1 : {T}",
        f"%s2 = arith.mulf %t1, %k2_1 : {T}",
        f"hyperoffload.detach %k2_1 : {T}",
        f"%t2 = arith.addf %s2, %s2 : {T}",
        f"func.return %t2 : {T}",
    ]


def test_a_trial_never_peaks_above_the_function_as_it_came(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
):
    # Whatever the plan chosen peaks at (here made 8 KiB), a trial above the
    # function as it came gives way to the plan for that peak, for its target.
    def inflated(self: PlanningLoop, trial: Trial, options: PlanOptions) -> Trial:
        return replace(trial, result=replace(trial.result, peak_hbm_bytes=8 * KIB))

    monkeypatch.setattr(PlanningLoop, "_stalling", inflated)
    loop = pipeline_loop(ctx, MoveOptions())
    trial = loop.trial(4 * KIB)
    assert loop.unplanned_peak < 8 * KIB
    assert trial.result.peak_hbm_bytes <= loop.unplanned_peak
    assert trial.target == 4 * KIB
