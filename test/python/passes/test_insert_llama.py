"""`hyperoffload-insert` on the tiny LLaMA training step exported by torch-mlir."""

from pathlib import Path

from hyperoffload.analysis.program import Program
from hyperoffload.evaluators.numeric import outputs_match_reference
from hyperoffload.ir.context import make_context
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.passes.insert import InsertPass
from hyperoffload.policies.peers import PolicyOptions, run_policy

TRAIN = Path(__file__).resolve().parents[3] / "examples" / "tiny_llama_train.mlir"


def test_sixty_percent_target_is_met_with_unchanged_outputs() -> None:
    ctx = make_context()
    hardware = load_hardware("ascend-910c")
    module = parse_mlir(ctx, TRAIN.read_text(), str(TRAIN))
    stripped = Program(module, hardware).reference
    none = run_policy("none", stripped, stripped, hardware, None, PolicyOptions())
    target = int(0.6 * none.peak_hbm_bytes)

    InsertPass(hbm_capacity=target).apply(ctx, module)

    planned = Program(module, hardware).planned
    plan = run_policy("plan", planned, stripped, hardware, target, PolicyOptions())
    assert plan.oom is None
    assert plan.peak_hbm_bytes <= target
    assert outputs_match_reference(module)
