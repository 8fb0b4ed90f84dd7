"""`hyperoffload-insert` on the tiny LLaMA training step exported by torch-mlir."""

from pathlib import Path

from hyperoffload.extract import program_schedules
from hyperoffload.hardware import load_hardware
from hyperoffload.numeric import outputs_match_reference
from hyperoffload.parsing import parse_mlir
from hyperoffload.passes.insert import InsertPass
from hyperoffload.policies import PolicyOptions, run_policy
from hyperoffload.tools.hyperoffload_opt import HyperoffloadOptMain

TRAIN = Path(__file__).resolve().parents[2] / "examples" / "tiny_llama_train.mlir"


def test_sixty_percent_target_is_met_with_unchanged_outputs(
    opt_main: HyperoffloadOptMain,
) -> None:
    ctx = opt_main.ctx.clone()
    hardware = load_hardware("ascend-910c")
    module = parse_mlir(ctx, TRAIN.read_text(), str(TRAIN))
    _, stripped, _ = program_schedules(module, hardware)
    none = run_policy("none", stripped, stripped, hardware, None, PolicyOptions())
    target = int(0.6 * none.peak_hbm_bytes)

    InsertPass(hbm_capacity=target).apply(ctx, module)

    planned, _, _ = program_schedules(module, hardware)
    plan = run_policy("plan", planned, stripped, hardware, target, PolicyOptions())
    assert plan.oom is None
    assert plan.peak_hbm_bytes <= target
    assert outputs_match_reference(module)
