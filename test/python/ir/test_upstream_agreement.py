"""
Where xDSL and upstream MLIR disagreed on upstream's own tests
(`bench/upstream_corpus.py`): ops only upstream registers, verifiers that
rejected valid IR or accepted invalid IR, diagnostics naming an op the input
never wrote, and inputs beyond what the tools support.
"""

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.dialects.func import CallOp
from xdsl.dialects.linalg.ops import FillOp, GenericOp
from xdsl.dialects.tensor import ReshapeOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import ParseError, VerifyException

from hyperoffload.analysis.cost import CostModelError, reject_recursion, tensor_bytes
from hyperoffload.analysis.extract import ExtractionError, main_function
from hyperoffload.dialects.provenance import generalised_from, written_as
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.ir.upstream import UpstreamParseError
from hyperoffload.ir.xdsl_fixes import UpstreamOnlyOp

UPSTREAM_ONLY = """\
func.func @f(%t: tensor<*xf32>, %u: tensor<2x3xf32>) -> (index, tensor<2xindex>, tensor<4xindex>) {
  %r = tensor.rank %t : tensor<*xf32>
  %s = shape.shape_of %u : tensor<2x3xf32> -> tensor<2xindex>
  %g = tensor.generate {
  ^bb0(%i: index):
    tensor.yield %i : index
  } : tensor<4xindex>
  return %r, %s, %g : index, tensor<2xindex>, tensor<4xindex>
}
"""


def _ops(module: ModuleOp, name: str) -> list[Operation]:
    return [op for op in module.walk() if op.name == name]


def test_ops_only_upstream_registers_are_kept(ctx: Context) -> None:
    module = parse_mlir(ctx, UPSTREAM_ONLY, "only.mlir")
    verify_module(module)
    for name in ("tensor.rank", "shape.shape_of", "tensor.generate"):
        (op,) = _ops(module, name)
        assert isinstance(op, UpstreamOnlyOp)
        assert isinstance(op.location, FileLineColLoc)
    (generate,) = _ops(module, "tensor.generate")
    assert len(generate.regions) == 1
    assert "tensor.yield" in str(generate)


def test_an_op_no_one_registers_is_a_located_error(ctx: Context) -> None:
    text = UPSTREAM_ONLY.replace(
        "%r = tensor.rank %t : tensor<*xf32>", '%r = "test.source"() : () -> index'
    )
    with pytest.raises(
        UpstreamParseError,
        match=r"only\.mlir:12:8: error: Operation test\.source is not registered",
    ):
        parse_mlir(ctx, text, "only.mlir", line_offset=10)


def test_reshape_with_a_dynamic_dimension_verifies(ctx: Context) -> None:
    text = """\
func.func @f(%t: tensor<?x10xf32>, %s: tensor<3xi64>) -> tensor<2x2x5xf32> {
  %r = tensor.reshape %t(%s) : (tensor<?x10xf32>, tensor<3xi64>) -> tensor<2x2x5xf32>
  return %r : tensor<2x2x5xf32>
}
"""
    module = parse_mlir(ctx, text, "reshape.mlir")
    verify_module(module)
    static = parse_mlir(ctx, text.replace("?x10", "4x10"), "reshape.mlir")
    (reshape,) = [op for op in static.walk() if isinstance(op, ReshapeOp)]
    with pytest.raises(VerifyException, match="same number of elements"):
        reshape.verify()


def test_fill_takes_the_output_element_type_only(ctx: Context) -> None:
    text = """\
func.func @f(%v: vector<2x4xf32>, %x: f32) -> (tensor<vector<2x4xf32>>, tensor<8xf16>) {
  %e = tensor.empty() : tensor<vector<2x4xf32>>
  %a = linalg.fill ins(%v : vector<2x4xf32>) outs(%e : tensor<vector<2x4xf32>>) -> tensor<vector<2x4xf32>>
  %h = tensor.empty() : tensor<8xf16>
  %b = linalg.fill ins(%x : f32) outs(%h : tensor<8xf16>) -> tensor<8xf16>
  return %a, %b : tensor<vector<2x4xf32>>, tensor<8xf16>
}
"""
    module = parse_mlir(ctx, text, "fill.mlir")
    vector_fill, f16_fill = [op for op in module.walk() if isinstance(op, FillOp)]
    vector_fill.verify()
    with pytest.raises(
        VerifyException,
        match=r"fill value type \(f32\) to match output element type \(f16\)",
    ):
        f16_fill.verify()
    # a vector element is sized by its lanes
    assert tensor_bytes(vector_fill.results[0], vector_fill) == 2 * 4 * 4


def test_a_generalised_op_is_named_as_written(ctx: Context) -> None:
    text = """\
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %c: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%c : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %r : tensor<2x3x5xf32>
}
"""
    module = parse_mlir(ctx, text, "bmm.mlir")
    (generic,) = [op for op in module.walk() if isinstance(op, GenericOp)]
    assert generalised_from(generic) == "linalg.batch_matmul"
    assert (
        written_as(generic) == "'linalg.batch_matmul' (generalised to 'linalg.generic')"
    )
    (ret,) = _ops(module, "func.return")
    assert written_as(ret) == "'func.return'"


def test_split_chunks_are_located_in_the_file(ctx: Context) -> None:
    """xDSL's own parse errors in a chunk of `--split-input-file` count its lines."""
    text = 'func.func @f() {\n  "hyperoffload.detach"(%x) : (tensor<4xf32>) -> ()\n}\n'
    with pytest.raises(ParseError, match="values used but not defined") as caught:
        parse_mlir(ctx, text, "split.mlir", line_offset=40)
    assert str(caught.value.span.get_location()) == "split.mlir:44:1"  # the end


def test_recursion_is_a_located_error(ctx: Context) -> None:
    text = """\
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @f(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""
    module = parse_mlir(ctx, text, "rec.mlir")
    (call,) = [op for op in module.walk() if isinstance(op, CallOp)]
    with pytest.raises(
        CostModelError, match=r"rec\.mlir:2:3: error: 'func.call' recurses \(@f -> @f\)"
    ):
        reject_recursion(call)


def test_a_shape_overflowing_64_bits_is_a_located_error(ctx: Context) -> None:
    text = """\
func.func @f(%a: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {
  return %a : tensor<4294967296x4294967296xf32>
}
"""
    module = parse_mlir(ctx, text, "big.mlir")
    function = main_function(module)
    with pytest.raises(
        CostModelError,
        match=r"big\.mlir:1:1: error: .* overflows 64 bits \(not supported\)",
    ):
        tensor_bytes(function.args[0], function)


@pytest.mark.parametrize(
    "text", ["", "// nothing\n", "module {\n}\n", "func.func private @g(f32)\n"]
)
def test_no_function_with_a_body_is_located_at_the_input(
    ctx: Context, text: str
) -> None:
    module = parse_mlir(ctx, text, "none.mlir", line_offset=4)
    with pytest.raises(ExtractionError) as caught:
        main_function(module)
    assert str(caught.value) == "no public function with a body"
    assert caught.value.where == "none.mlir:5:1"
