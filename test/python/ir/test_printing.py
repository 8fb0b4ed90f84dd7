"""`FastPrinter` prints the text xDSL's `Printer` prints, in both forms."""

from io import StringIO
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from hyperoffload.ir.context import make_context
from hyperoffload.ir.engines import Engine, parse_with_engine
from hyperoffload.ir.printing import FastPrinter

ROOT = Path(__file__).resolve().parents[3]

TYPES = """\
func.func @f(%a: tensor<2x3xbf16>, %b: tensor<?x4xi64, "enc">, %c: memref<2xf32>, %d: vector<4xf16>, %e: index, %h: !hyperoffload.remote<tensor<4xf32>>) -> tensor<2x3xbf16> {
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<2x3xbf16>) outs(%a : tensor<2x3xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %s = arith.addf %in, %out : bf16
    linalg.yield %s : bf16
  } -> tensor<2x3xbf16>
  %t = "test.op"() {list = [1, "two", affine_map<(d0) -> (d0)>], empty = [], ty = tensor<2x3xbf16>, note = "tab\\09 \\22quote\\22 \\5C \u00e9"} : () -> tensor<2x3xbf16>
  return %g : tensor<2x3xbf16>
}
"""


def _printed(printer: type[Printer], module: ModuleOp, generic: bool) -> str:
    out = StringIO()
    printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue()


def _programs() -> list[tuple[str, ModuleOp]]:
    ctx = make_context()
    ctx.allow_unregistered = True
    read = [("types", parse_with_engine(ctx, TYPES, "types.mlir", engine=Engine.XDSL))]
    for path in ("examples/offload_mlp.mlir", "test/inputs/torch_attention.mlir"):
        name = Path(path).name
        text = (ROOT / path).read_text()
        read.append((name, parse_with_engine(ctx, text, name, engine=Engine.XDSL)))
    return read


@pytest.mark.parametrize("generic", [False, True])
def test_the_text_is_xdsl_printers(generic: bool) -> None:
    for name, module in _programs():
        expected = _printed(Printer, module, generic)
        assert _printed(FastPrinter, module, generic) == expected, name
