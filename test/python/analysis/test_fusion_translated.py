"""A fusion carried to a clone of its block is the one decided on the clone."""

from pathlib import Path

from xdsl.context import Context
from xdsl.ir import SSAValue

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.fusion import Fusion
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware

INPUTS = Path(__file__).resolve().parents[2] / "inputs"


def test_translated_kernels_are_those_decided_on_the_clone(ctx: Context):
    # the tiny LLaMA step: absorbed prologues, epilogues and layout ops
    text = (INPUTS / "tiny_llama_train_bf16.mlir").read_text()
    function = main_function(parse_mlir(ctx, text, "t.mlir"))
    costs = CostModel(load_hardware("ascend-910c"))
    fusion = Fusion(function.body.block, costs)
    values: dict[SSAValue, SSAValue] = {}
    clone = function.clone(value_mapper=values)
    block = clone.body.block
    ops = dict(zip(function.body.block.ops, block.ops, strict=True))
    translated = fusion.translated(block, ops, values)
    decided = Fusion(block, costs)
    assert fusion.absorbed  # something to carry
    assert translated.ops == decided.ops
    assert translated.absorbed == decided.absorbed
    assert translated.scores == decided.scores
    assert translated.roots_of == decided.roots_of
    assert translated.kernels == decided.kernels
    assert [translated.cost(op) for op in block.ops] == [
        decided.cost(op) for op in block.ops
    ]
