"""
What `hyperoffload-pipeline` returns describes the program before and after
it without a second simulation, and agrees with one made afresh
(`hyperoffload.analysis.program.Program`): on `examples/offload_mlp.mlir` as
written (offload ops the pass moves again on the IR) and stripped of them
(planned on its graph).
"""

from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from hyperoffload.analysis.program import Program
from hyperoffload.ir.diagnostics import silence_diagnostics
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.passes.pipeline import PipelinePass

MLP = Path(__file__).parents[3] / "examples" / "offload_mlp.mlir"
HARDWARE = load_hardware("ascend-910c", "5KB")


def _module(ctx: Context, stripped: bool) -> ModuleOp:
    module = parse_mlir(ctx, MLP.read_text(), str(MLP))
    return Program(module, HARDWARE).reference_module if stripped else module


@pytest.mark.parametrize("stripped", [False, True], ids=["as-written", "stripped"])
def test_figures_agree_with_a_fresh_simulation(ctx: Context, stripped: bool) -> None:
    module = _module(ctx, stripped)
    unplanned = Program(module.clone(), HARDWARE).simulate("none", record=False)
    with silence_diagnostics():
        (done,) = PipelinePass(hbm_capacity="5KB").planned_functions(module)
    assert done.moved_on_ir is not stripped
    assert done.after is (done.written if done.moved_on_ir else done.trial.result)
    assert done.before.peak_hbm_bytes == unplanned.peak_hbm_bytes
    assert done.before.makespan_s == pytest.approx(unplanned.makespan_s)
    written = Program(module, HARDWARE).simulate("plan", record=False)
    assert done.written.peak_hbm_bytes == written.peak_hbm_bytes
    assert done.after.peak_hbm_bytes < done.before.peak_hbm_bytes
