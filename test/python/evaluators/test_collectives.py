"""
The collectives' single-process semantics in both evaluators agree with
their lowering (`convert-hyperoffload-to-linalg`): an all-to-all repeats the
rank's chunk of its operand in every chunk of its result.
"""

import numpy as np
import torch
from xdsl.context import Context

from hyperoffload.evaluators.numeric import evaluate
from hyperoffload.evaluators.torch import execute, make_device
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.passes.convert_to_linalg import ConvertHyperoffloadToLinalgPass

PROGRAM = """
func.func @exchange(%x: tensor<8x3xf32>, %s: tensor<2x3xf32>) -> (tensor<8x3xf32>, tensor<2x3xf32>, tensor<8x3xf32>) {
  %r = hyperoffload.all_to_all %x {group = 4 : i64, rank = 2 : i64} : tensor<8x3xf32> -> tensor<8x3xf32>
  %gs = hyperoffload.reduce_scatter %x {group = 4 : i64, rank = 2 : i64} : tensor<8x3xf32> -> tensor<2x3xf32>
  %w = hyperoffload.all_gather %s {group = 4 : i64, rank = 2 : i64} : tensor<2x3xf32> -> tensor<8x3xf32>
  func.return %r, %gs, %w : tensor<8x3xf32>, tensor<2x3xf32>, tensor<8x3xf32>
}
"""


def test_collectives_match_their_lowering(ctx: Context) -> None:
    x = np.arange(24, dtype=np.float32).reshape(8, 3)
    s = -np.arange(6, dtype=np.float32).reshape(2, 3)
    chunk = x[4:6]  # rank 2 of 4: rows 4 and 5
    gathered = np.zeros_like(x)
    gathered[4:6] = s
    want = [np.concatenate([chunk] * 4), chunk, gathered]

    module = parse_mlir(ctx, PROGRAM, "exchange")
    numeric = evaluate(module, [x, s]).outputs
    run = execute(module, make_device("cpu"), [torch.tensor(x), torch.tensor(s)])
    ConvertHyperoffloadToLinalgPass().apply(ctx, module)
    assert "hyperoffload." not in str(module)
    lowered = evaluate(module, [x, s]).outputs
    for got in (numeric, run.outputs, lowered):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(np.asarray(g), w)
