"""
Recomputation in the planner, on round figures (test/inputs/round.toml: an
op costs 1.024 us per KiB it reads or writes; a 1 KiB transfer 10.24 us each
way).
"""

from pathlib import Path

import pytest
from xdsl.context import Context

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.model.schedule import Compute, Free
from hyperoffload.planning.planner import PlanOptions, plan_offload, plan_schedule
from hyperoffload.sim.simulator import simulate

ROUND = load_hardware(
    str(Path(__file__).resolve().parents[2] / "inputs" / "round.toml")
)
US = 1e-6

# %h (1 KiB) is read by %a1 (op 1) and again by %r (op 6); %c..%e run at
# 5 KiB with it (x, h and three of the chain). Its gap, ops 2-5, is
# 2.048 + 3 x 3.072 = 11.264 us of compute, short of its 20.48 us round trip.
PROGRAM = """
func.func @f(%x: tensor<256xf32>) -> tensor<256xf32> {
  %h = arith.mulf %x, %x : tensor<256xf32>
  %a1 = arith.addf %h, %h : tensor<256xf32>
  %b = arith.mulf %a1, %a1 : tensor<256xf32>
  %c = arith.addf %b, %a1 : tensor<256xf32>
  %d = arith.mulf %c, %b : tensor<256xf32>
  %e = arith.addf %d, %c : tensor<256xf32>
  %r = arith.addf %e, %h : tensor<256xf32>
  func.return %r : tensor<256xf32>
}
"""


def _graph(ctx: Context) -> ProgramGraph:
    module = parse_mlir(ctx, PROGRAM, "recompute.mlir")
    return ProgramGraph.build(main_function(module), CostModel(ROUND))


def test_a_value_is_computed_again_where_its_transfer_would_be_exposed(
    ctx: Context,
) -> None:
    graph = _graph(ctx)
    plan = plan_offload(graph, ROUND, PlanOptions(target=4096, recompute="selective"))
    (value,) = plan.values
    assert value.info.name == "%h"
    assert value.recompute
    assert not value.stored
    assert [(g.after, g.before) for g in value.gaps] == [(1, 6)]
    # without %h over ops 2-5 they hold 4 KiB; the clone before op 6 holds
    # x, e and h (3 KiB), op 6 then x, e, h and r (4 KiB)
    assert (plan.peak_before, plan.peak_after, plan.met) == (5120, 4096, True)


def test_the_schedule_frees_the_value_and_runs_its_producer_again(
    ctx: Context,
) -> None:
    graph = _graph(ctx)
    plan = plan_offload(graph, ROUND, PlanOptions(target=4096, recompute="auto"))
    schedule = plan_schedule(graph, plan, ROUND)
    h = plan.values[0].info.buffer
    computes = [s for s in schedule.steps if isinstance(s, Compute)]
    assert [c.name for c in computes].count("arith.mulf") == 4  # h twice, b, d
    again = computes[6]  # after the six steps of ops 0-5, before op 6
    assert (again.name, again.allocs, again.reads, again.frees) == (
        "arith.mulf",
        [h],
        [0],
        [],
    )
    freed = schedule.steps.index(computes[1]) + 1  # right after %a1 reads it
    assert schedule.steps[freed] == Free(h)  # pyright: ignore[reportArgumentType]
    # the clone costs its 2.048 us on the compute stream: 20.48 us in all
    original = simulate(graph.schedule, ROUND, None)
    result = simulate(schedule, ROUND, None)
    assert original.makespan_s == pytest.approx(18.432 * US)
    assert result.makespan_s == pytest.approx(20.48 * US)
    assert result.peak_hbm_bytes == 4096


def test_without_recomputation_the_target_is_missed(ctx: Context) -> None:
    # an offload of %h would still be fetched while %e runs (5 KiB)
    plan = plan_offload(_graph(ctx), ROUND, PlanOptions(target=4096))
    assert not any(v.recompute for v in plan.values)
    assert (plan.peak_after, plan.met) == (5120, False)


def test_selective_leaves_contractions_alone(ctx: Context) -> None:
    # the same program on 16x16 tensors, %h now a matmul (2 x 16^3 FLOPs at
    # 1 GFLOP/s: 8.192 us, still less than the 9.216 us its transfer would
    # expose): `selective` does not compute a contraction again, `auto` does
    text = PROGRAM.replace("tensor<256xf32>", "tensor<16x16xf32>").replace(
        "%h = arith.mulf %x, %x : tensor<16x16xf32>",
        "%z = tensor.empty() : tensor<16x16xf32>\n"
        "  %h = linalg.matmul ins(%x, %x : tensor<16x16xf32>, tensor<16x16xf32>)"
        " outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>",
    )
    module = parse_mlir(ctx, text, "contraction.mlir")
    graph = ProgramGraph.build(main_function(module), CostModel(ROUND))
    selective = plan_offload(graph, ROUND, PlanOptions(4096, recompute="selective"))
    auto = plan_offload(graph, ROUND, PlanOptions(4096, recompute="auto"))
    assert graph.op_time[1] == pytest.approx(8.192 * US)
    assert (selective.values, selective.peak_after) == ([], 5120)
    assert [(v.info.name, v.recompute) for v in auto.values] == [("%h", True)]
    assert auto.peak_after == 4096
