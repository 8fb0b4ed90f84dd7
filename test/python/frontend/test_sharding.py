"""
`insert_collectives` on a hand-written step with markers: the stand-ins
become collectives placed right after their operands (the float32 widening
of a gradient moves up to the gradient first), the markers leave the
results, and the stand-ins are gone.
"""

from io import StringIO

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.printer import Printer

from hyperoffload.frontend.sharding import insert_collectives
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir

STEP = """
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @step(%x: tensor<4x2xbf16>) -> (tensor<4x2xbf16>, tensor<4x2xbf16>, tensor<4x2xf32>, tensor<2x2xf32>, tensor<2x2xbf16>, tensor<4x2xbf16>) {
  %e16 = tensor.empty() : tensor<4x2xbf16>
  %grad = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x2xbf16>) outs(%e16 : tensor<4x2xbf16>) {
  ^bb0(%a: bf16, %b: bf16):
    %n = arith.negf %a : bf16
    linalg.yield %n : bf16
  } -> tensor<4x2xbf16>
  %later = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x2xbf16>) outs(%e16 : tensor<4x2xbf16>) {
  ^bb0(%a: bf16, %b: bf16):
    %m = arith.mulf %a, %a : bf16
    linalg.yield %m : bf16
  } -> tensor<4x2xbf16>
  %e32 = tensor.empty() : tensor<4x2xf32>
  %wide = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%grad : tensor<4x2xbf16>) outs(%e32 : tensor<4x2xf32>) {
  ^bb0(%a: bf16, %b: f32):
    %w = arith.extf %a : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<4x2xf32>
  %shard = tensor.extract_slice %wide[2, 0] [2, 2] [1, 1] : tensor<4x2xf32> to tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xbf16>
  %new = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%shard : tensor<2x2xf32>) outs(%e : tensor<2x2xbf16>) {
  ^bb0(%a: f32, %b: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x2xbf16>
  %zero = arith.constant 0.0 : bf16
  %gathered = tensor.pad %new low[2, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : bf16
  } : tensor<2x2xbf16> to tensor<4x2xbf16>
  func.return %later, %gathered, %wide, %shard, %new, %gathered : tensor<4x2xbf16>, tensor<4x2xbf16>, tensor<4x2xf32>, tensor<2x2xf32>, tensor<2x2xbf16>, tensor<4x2xbf16>
}
"""


def test_collectives_replace_the_stand_ins(ctx: Context) -> None:
    module = parse_mlir(ctx, STEP, "step.mlir")
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    insert_collectives(function, params=1, group=2, rank=1)
    verify_module(module)
    out = StringIO()
    Printer(stream=out).print_op(module)
    names = [op.name for op in function.body.block.ops]
    assert names == [
        "tensor.empty",
        "linalg.generic",  # the gradient
        "tensor.empty",
        "linalg.generic",  # its widening, moved up to it
        "hyperoffload.reduce_scatter",
        "linalg.generic",  # the unrelated op that came between
        "tensor.empty",
        "linalg.generic",  # the update
        "hyperoffload.all_gather",
        "func.return",
    ]
    text = out.getvalue()
    assert (
        "%shard = hyperoffload.reduce_scatter %wide {group = 2 : i64, rank = 1 : i64}"
        " : tensor<4x2xf32> -> tensor<2x2xf32>"
    ) in text
    assert (
        "%gathered = hyperoffload.all_gather %new {group = 2 : i64, rank = 1 : i64}"
        " : tensor<2x2xbf16> -> tensor<4x2xbf16>"
    ) in text
    assert "func.return %later, %gathered : tensor<4x2xbf16>, tensor<4x2xbf16>" in text
    assert "-> (tensor<4x2xbf16>, tensor<4x2xbf16>)" in text
