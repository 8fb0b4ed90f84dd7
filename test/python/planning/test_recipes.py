"""
Recomputation recipes: chains of kernels, the depth limit, `selective`, and
ops fused into a later kernel cloned beside the value (on the tiny LLaMA
training step, where the backward's kernels recompute forward ops).
"""

from pathlib import Path

from xdsl.context import Context

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.lifetimes import ProgramGraph, ValueInfo
from hyperoffload.analysis.program import Program
from hyperoffload.evaluators.numeric import evaluate
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import Hardware, load_hardware
from hyperoffload.model.schedule import Compute
from hyperoffload.planning.planner import Plan, plan_schedule
from hyperoffload.planning.recipes import RecipeBuilder, recomputation_steps
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.planning.write_plan import write_plan
from hyperoffload.sim.simulator import simulate
from hyperoffload.support.arrays import same_array
from hyperoffload.support.tiers import Tier

ROOT = Path(__file__).resolve().parents[3]
ROUND = load_hardware(str(ROOT / "test" / "inputs" / "round.toml"))

CHAIN = """
func.func @chain(%x: tensor<256xf32>, %w: tensor<256x256xf32>) -> tensor<256xf32> {
  %h = arith.mulf %x, %x : tensor<256xf32>
  %h2 = arith.addf %h, %x : tensor<256xf32>
  %a = arith.addf %h2, %h2 : tensor<256xf32>
  %init = tensor.empty() : tensor<256xf32>
  %m = linalg.matvec ins(%w, %a : tensor<256x256xf32>, tensor<256xf32>) outs(%init : tensor<256xf32>) -> tensor<256xf32>
  %b = arith.mulf %m, %a : tensor<256xf32>
  %c = arith.addf %b, %b : tensor<256xf32>
  %r = arith.addf %c, %h2 : tensor<256xf32>
  %s = arith.addf %r, %m : tensor<256xf32>
  func.return %s : tensor<256xf32>
}
"""


def _graph(ctx: Context, text: str, hardware: Hardware = ROUND) -> ProgramGraph:
    module = parse_mlir(ctx, text, "recipes.mlir")
    return ProgramGraph.build(main_function(module), CostModel(hardware))


def _made_by(graph: ProgramGraph, op: int) -> ValueInfo:
    return next(v for v in graph.values if v.producer == op)


def _x_buffer(graph: ProgramGraph) -> int | None:
    return next(v.buffer for v in graph.values if v.producer < 0 and v.uses == [0, 1])


def test_a_chain_is_cloned_back_to_what_is_resident(ctx: Context) -> None:
    graph = _graph(ctx, CHAIN)
    h2 = _made_by(graph, 1)
    (gap,) = RecipeBuilder(graph, "auto", 2).gaps(h2)
    assert (gap.after, gap.before) == (2, 7)  # read by %a, then by %r
    recipe = RecipeBuilder(graph, "auto", 2).recipe(h2, gap)
    assert recipe is not None
    assert (recipe.at, recipe.ops, recipe.rewired) == (7, (0, 1), (1,))
    computes = [s for s in graph.schedule.steps if isinstance(s, Compute)]
    assert recipe.time_s == computes[0].time_s + computes[1].time_s
    assert recipe.reads == {_x_buffer(graph)}
    # one kernel deep, %h is not resident before %r: no recipe
    assert RecipeBuilder(graph, "auto", 1).recipe(h2, gap) is None


def test_the_intermediate_is_freed_after_the_kernel_that_reads_it(
    ctx: Context,
) -> None:
    graph = _graph(ctx, CHAIN)
    h, h2 = _made_by(graph, 0), _made_by(graph, 1)
    (gap,) = RecipeBuilder(graph, "auto", 2).gaps(h2)
    recipe = RecipeBuilder(graph, "auto", 2).recipe(h2, gap)
    assert recipe is not None
    computes = [s for s in graph.schedule.steps if isinstance(s, Compute)]
    first, second = recomputation_steps(computes, [recipe], {h2.buffer})  # type: ignore[arg-type]
    assert (first.allocs, first.frees) == ([h.buffer], [])
    assert (second.allocs, second.frees) == ([h2.buffer], [h.buffer])


def test_selective_never_runs_a_contraction_again(ctx: Context) -> None:
    graph = _graph(ctx, CHAIN)
    m = _made_by(graph, 4)
    gap = next(g for g in RecipeBuilder(graph, "auto", 1).gaps(m) if g.before == 8)
    recipe = RecipeBuilder(graph, "auto", 4).recipe(m, gap)  # %m, %a, %h2, %h
    assert recipe is not None
    assert recipe.ops == (0, 1, 2, 4)
    assert RecipeBuilder(graph, "selective", 4).recipe(m, gap) is None


def test_a_tagged_argument_out_of_hbm_is_not_read_by_a_clone(ctx: Context) -> None:
    tagged = CHAIN.replace(
        "%w: tensor<256x256xf32>",
        "%w: tensor<256x256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}",
    )
    graph = _graph(ctx, tagged)
    w = next(v for v in graph.values if v.producer < 0 and v.uses == [4])
    assert graph.schedule.buffers[w.buffer].home == Tier.REMOTE  # type: ignore[index]
    m = _made_by(graph, 4)
    gap = next(g for g in RecipeBuilder(graph, "auto", 1).gaps(m) if g.before == 8)
    assert RecipeBuilder(graph, "auto", 1).recipe(m, gap) is None


def test_ops_fused_into_a_later_kernel_are_cloned_with_the_value(
    ctx: Context,
) -> None:
    """
    In the tiny LLaMA training step (bf16) the backward's kernels run forward ops
    again (the SiLU product inside the kernel of d(up)); a value such a
    fused op reads is idle between kernels, and its recipe clones the fused
    op too. Recomputing one such value keeps the program's outputs bit for
    bit, and the program written peaks where the planner's estimate says.
    """
    text = (ROOT / "test" / "inputs" / "tiny_llama_train_bf16.mlir").read_text()
    hardware = load_hardware("ascend-910c")
    graph = _graph(ctx, text, hardware)
    builder = RecipeBuilder(graph, "auto", 2)
    plans: list[ValuePlan] = []
    for info in graph.values:
        if info.producer < 0 or info.buffer is None:
            continue
        for gap in builder.gaps(info):
            recipe = builder.recipe(info, gap)
            if recipe is not None and len(recipe.rewired) > 1:
                plans.append(
                    ValuePlan(info, [gap], False, recompute=True, recipes=[recipe])
                )
                break
    assert plans, "no value read through a fused op has a recipe"
    plan = Plan(values=plans[:1])
    estimate = simulate(plan_schedule(graph, plan, hardware), hardware, None)
    module = parse_mlir(ctx, text, "tiny_llama_train.mlir")
    original = module.clone()
    function = main_function(module)
    write_plan(function, list(function.body.block.ops), plan, 1, Tier.REMOTE)
    verify_module(module)
    for got, want in zip(
        evaluate(module).outputs, evaluate(original).outputs, strict=True
    ):
        assert same_array(got, want)
    planned = Program(module, hardware).planned
    judged = simulate(planned, hardware, None)
    none = simulate(graph.schedule, hardware, None)
    assert judged.peak_hbm_bytes <= none.peak_hbm_bytes
    assert judged.peak_hbm_bytes == estimate.peak_hbm_bytes
