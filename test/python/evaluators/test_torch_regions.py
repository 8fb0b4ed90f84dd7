"""
Ops with regions in the torch executor (`hyperoffload-run`): `scf.if`
(routed experts, both branches taken across seeds) and `tensor.pad` (a
convolution's border) agree with the numpy evaluator; a fetch inside a
branch is a located error.
"""

from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context

pytest.importorskip("torch")

from hyperoffload.evaluators.numeric import evaluate
from hyperoffload.evaluators.numeric.interpreter import find_function
from hyperoffload.evaluators.torch import RunError, execute, make_device, tensor_inputs
from hyperoffload.ir.parsing import parse_mlir

INPUTS = Path(__file__).resolve().parents[2] / "inputs"

PAD = """
func.func @pad(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x6x7xf32> {
  %one = arith.constant 1.5 : f32
  %p = tensor.pad %x low[0, 0, 1, 2] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %one : f32
  } : tensor<1x2x4x4xf32> to tensor<1x2x6x7xf32>
  func.return %p : tensor<1x2x6x7xf32>
}
"""

FETCH_IN_BRANCH = """
func.func @f(%c: i1, %w: !hyperoffload.remote<tensor<4xf32>>) -> tensor<4xf32> {
  %r = scf.if %c -> (tensor<4xf32>) {
    %v = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
    scf.yield %v : tensor<4xf32>
  } else {
    %z = tensor.empty() : tensor<4xf32>
    scf.yield %z : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
"""


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_routed_branches_agree_with_the_numpy_evaluator(
    ctx: Context, seed: int
) -> None:
    text = (INPUTS / "two_expert_decode.mlir").read_text()
    module = parse_mlir(ctx, text, "two_expert_decode.mlir")
    inputs = tensor_inputs(find_function(module, None), seed=seed)
    got = execute(module, make_device("cpu", threads=1), inputs).outputs
    expected = evaluate(module, seed=seed).outputs
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_pad_agrees_with_the_numpy_evaluator(ctx: Context) -> None:
    module = parse_mlir(ctx, PAD, "pad.mlir")
    inputs = tensor_inputs(find_function(module, None), seed=0)
    (got,) = execute(module, make_device("cpu", threads=1), inputs).outputs
    (expected,) = evaluate(module, seed=0).outputs
    assert np.array_equal(got, expected)
    assert got[0, 0, 0, 0] == 1.5
    assert got[0, 0, 1, 2] == inputs[0][0, 0, 0, 0].item()


def test_a_fetch_inside_a_branch_is_a_located_error(ctx: Context) -> None:
    module = parse_mlir(ctx, FETCH_IN_BRANCH, "branch.mlir")
    inputs = tensor_inputs(find_function(module, None), seed=0)
    with pytest.raises(
        RunError, match=r"branch\.mlir:4:\d+: .*'hyperoffload\.prefetch'"
    ):
        execute(module, make_device("cpu", threads=1), inputs)
