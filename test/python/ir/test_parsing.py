"""Reading MLIR: xDSL first, upstream MLIR for what xDSL lacks, located errors."""

from io import StringIO
from pathlib import Path
from typing import Any, cast

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FileLineColLoc, ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.printer import Printer

from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.ir.upstream import UpstreamParseError, mlir_tools_dir

INPUTS = Path(__file__).resolve().parents[2] / "inputs"

BATCH_MATMUL = """\
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %c: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%c : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %r : tensor<2x3x5xf32>
}
"""


def _printed(module: ModuleOp, ctx: Context) -> str:
    out = StringIO()
    printer = Printer(stream=out)
    printer.print_op(module)
    printer.print_metadata(ctx.loaded_dialects)
    return out.getvalue()


def test_named_op_xdsl_lacks_is_generalised_and_keeps_its_location(
    ctx: Context,
) -> None:
    module = parse_mlir(ctx, BATCH_MATMUL, "bmm.mlir", line_offset=10)
    (generic,) = [op for op in module.walk() if isinstance(op, GenericOp)]
    assert [str(t.data) for t in generic.iterator_types] == [
        "parallel",
        "parallel",
        "parallel",
        "reduction",
    ]
    loc = generic.location
    assert isinstance(loc, FileLineColLoc)
    assert (loc.filename.data, loc.line.data) == ("bmm.mlir", 12)


def test_ops_parsed_by_xdsl_carry_their_position(ctx: Context) -> None:
    module = parse_mlir(ctx, "\n\nfunc.func @g() {\n  func.return\n}\n", "g.mlir")
    ret = module.body.block.ops.first
    assert ret is not None
    body = ret.regions[0].block.ops.first
    assert body is not None
    assert isinstance(body.location, FileLineColLoc)
    assert (body.location.line.data, body.location.column.data) == (4, 3)


def test_torch_mlir_output_keeps_its_weight_blobs_when_parsed_twice(
    ctx: Context,
) -> None:
    text = (INPUTS / "torch_attention.mlir").read_text()
    for _ in range(2):  # the blob registry is process-wide; a re-parse must not lose it
        parse_ctx = ctx.clone()
        module = parse_mlir(parse_ctx, text, "torch_attention.mlir")
        assert "torch_tensor_48_16_torch.float32: " in _printed(module, parse_ctx)


def test_text_neither_parser_reads_gets_the_upstream_diagnostic(ctx: Context) -> None:
    broken = BATCH_MATMUL.replace("outs(%c", "outs(%c, %c")
    with pytest.raises(UpstreamParseError, match=r"^bmm\.mlir:4:\d+: error: "):
        parse_mlir(ctx, broken, "bmm.mlir", line_offset=2)


def test_mlir_opt_is_found_in_the_wheel() -> None:
    assert (mlir_tools_dir() / "mlir-opt").is_file()


def test_splat_dense_literals_are_held_as_one_element(ctx: Context) -> None:
    """
    A splat is held as its one element (of the literal's type), the value
    xDSL's element-by-element path gives each element of the spelled-out one.
    """
    from xdsl.dialects.arith import ConstantOp

    splats = [
        "dense<1.5> : tensor<2x3xbf16>",
        "dense<true> : tensor<4xi1>",
        "dense<0xFF800000> : tensor<2xf32>",
        "dense<7> : tensor<3xi64>",
    ]
    spelled = [
        "dense<[[1.5, 1.5, 1.5], [1.5, 1.5, 1.5]]> : tensor<2x3xbf16>",
        "dense<[true, true, true, true]> : tensor<4xi1>",
        "dense<[0xFF800000, 0xFF800000]> : tensor<2xf32>",
        "dense<[7, 7, 7]> : tensor<3xi64>",
    ]

    def constants(literals: list[str]) -> list[DenseIntOrFPElementsAttr[Any]]:
        body = "\n".join(
            f"  %c{i} = arith.constant {lit}" for i, lit in enumerate(literals)
        )
        module = parse_mlir(
            ctx, f"func.func @s() {{\n{body}\n  func.return\n}}", "s.mlir"
        )
        values = [op.value for op in module.walk() if isinstance(op, ConstantOp)]
        assert all(isinstance(v, DenseIntOrFPElementsAttr) for v in values)
        return cast(list[DenseIntOrFPElementsAttr[Any]], values)

    for splat, full in zip(constants(splats), constants(spelled), strict=True):
        assert splat.get_type() == full.get_type()
        assert len(splat) == 1
        assert splat.is_splat()
        assert full.is_splat()
        assert splat.get_values()[0] == full.get_values()[0]
