"""Tests of the numpy evaluator `hyperoffload.evaluators.numeric`."""

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from hyperoffload.evaluators.numeric import (
    NumericError,
    evaluate,
    outputs_match_reference,
    random_inputs,
)
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.support.arrays import same_array

ROOT = Path(__file__).resolve().parents[3]

Array = np.ndarray[Any, Any]


def parse(ctx: Context, text: str, name: str = "test.mlir") -> ModuleOp:
    return parse_mlir(ctx, text, name)


def first_func(module: ModuleOp) -> FuncOp:
    return next(op for op in module.walk() if isinstance(op, FuncOp))


MLP_LAYER = """
#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#mn = affine_map<(i, j, k) -> (i, j)>
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#row = affine_map<(i, j) -> (i)>
func.func @layer(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %bias: tensor<5xf32>)
    -> (tensor<4x5xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %mm = linalg.generic {indexing_maps = [#mk, #kn, #mn],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  %biased = linalg.generic {indexing_maps = [#id, #col, #id],
                            iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<4x5xf32>, tensor<5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%x: f32, %c: f32, %out: f32):
    %s = arith.addf %x, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%biased : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%x: f32, %out: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x5xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%relu : tensor<4x5xf32>) outs(%z1 : tensor<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  func.return %relu, %sum : tensor<4x5xf32>, tensor<4xf32>
}
"""


def test_hand_written_layer_matches_numpy(ctx: Context) -> None:
    module = parse(ctx, MLP_LAYER)
    a, b, bias = random_inputs(first_func(module), seed=3)
    relu, total = evaluate(module, [a, b, bias]).outputs

    # The loop nest's order: k ascending for the matmul, j ascending for the sum.
    acc = np.zeros((4, 5), np.float32)
    for k in range(8):
        acc = acc + a[:, k, None] * b[None, k, :]
    expected_relu = np.maximum(acc + bias, np.float32(0))
    expected_sum = np.zeros(4, np.float32)
    for j in range(5):
        expected_sum = expected_sum + expected_relu[:, j]

    assert relu.dtype == np.float32
    assert total.dtype == np.float32
    np.testing.assert_array_equal(relu, expected_relu)
    np.testing.assert_array_equal(total, expected_sum)
    np.testing.assert_allclose(relu, np.maximum(a @ b + bias, 0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(total, relu.sum(axis=1), rtol=1e-6, atol=1e-6)


def test_offload_mlp_matches_reference_and_numpy(ctx: Context) -> None:
    path = ROOT / "examples" / "offload_mlp.mlir"
    module = parse(ctx, path.read_text(), str(path))
    x, w1, w2 = random_inputs(first_func(module))
    assert (x.shape, w1.shape, w2.shape) == ((8, 16), (16, 32), (32, 16))

    assert outputs_match_reference(module)
    assert outputs_match_reference(module, seed=7)
    (y,) = evaluate(module, [x, w1, w2]).outputs
    assert y.shape == (8, 16)
    np.testing.assert_allclose(y, x @ w1 @ w2, rtol=1e-5, atol=1e-5)


def test_torch_attention_runs(ctx: Context) -> None:
    path = ROOT / "test" / "inputs" / "torch_attention.mlir"
    module = parse(ctx, path.read_text(), str(path))
    (out,) = evaluate(module).outputs
    assert out.shape == (2, 4, 16)
    assert out.dtype == np.float32
    assert np.isfinite(out).all()
    assert (out >= 0).all()
    assert out.any()
    (again,) = evaluate(module).outputs
    assert out.tobytes() == again.tobytes()
    assert outputs_match_reference(module)


def test_read_after_detach_is_not_resident(ctx: Context) -> None:
    module = parse(
        ctx,
        """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.addf %x, %x : tensor<4xf32>
  hyperoffload.detach %y : tensor<4xf32>
  %z = arith.mulf %y, %y : tensor<4xf32>
  func.return %z : tensor<4xf32>
}""",
        "detach.mlir",
    )
    with pytest.raises(NumericError, match=r"^detach\.mlir:4:3: error: .*not resident"):
        evaluate(module)


def test_prefetch_after_store_and_detach(ctx: Context) -> None:
    module = parse(
        ctx,
        """func.func @f(%x: tensor<4xf32>, %w: !hyperoffload.remote<tensor<4xf32>>) -> tensor<4xf32> {
  %h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
  hyperoffload.detach %x : tensor<4xf32>
  %y = hyperoffload.prefetch %h : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
  %v = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
  %r = arith.addf %y, %v : tensor<4xf32>
  func.return %r : tensor<4xf32>
}""",
    )
    x = np.arange(4, dtype=np.float32)
    w = np.full(4, 0.5, np.float32)
    (r,) = evaluate(module, [x, w]).outputs
    np.testing.assert_array_equal(r, x + w)
    assert outputs_match_reference(module, [x, w])


def test_compute_reading_a_remote_copy_fails(ctx: Context) -> None:
    module = parse(
        ctx,
        """func.func @f(%h: !hyperoffload.remote<tensor<4xf32>>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%h : !hyperoffload.remote<tensor<4xf32>>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}""",
    )
    with pytest.raises(NumericError, match="reads %h, a remote copy"):
        evaluate(module)


def test_unsupported_op_is_named(ctx: Context) -> None:
    module = parse(
        ctx,
        """func.func @f(%x: i32) -> i32 {
  %y = math.ctlz %x : i32
  func.return %y : i32
}""",
    )
    with pytest.raises(NumericError, match=r"^test\.mlir:2:3: error: 'math\.ctlz'"):
        evaluate(module)


def test_embedding_lookup_with_index_and_extract(ctx: Context) -> None:
    module = parse(
        ctx,
        """func.func @embed(%ids: tensor<3xi64>) -> tensor<3x2xf32> {
  %w = arith.constant dense<[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0],
                             [8.0, 9.0], [10.0, 11.0], [12.0, 13.0], [14.0, 15.0]]> : tensor<8x2xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<3xi64>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%id: i64, %out: f32):
    %i = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %w[%i, %j] : tensor<8x2xf32>
    linalg.yield %v : f32
  } -> tensor<3x2xf32>
  func.return %r : tensor<3x2xf32>
}""",
    )
    (ids,) = random_inputs(first_func(module), seed=1)
    assert ids.dtype == np.int64
    assert ((ids >= 0) & (ids < 8)).all()
    (out,) = evaluate(module, [ids]).outputs
    table = np.arange(16, dtype=np.float32).reshape(8, 2)
    np.testing.assert_array_equal(out, table[ids])


def test_integer_and_bf16_scalars(ctx: Context) -> None:
    module = parse(
        ctx,
        """func.func @scalars(%a: i32, %b: i32, %f: f32) -> (i32, i32, i32, i1, f32) {
  %q = arith.divsi %a, %b : i32
  %r = arith.remsi %a, %b : i32
  %u = arith.divui %a, %b : i32
  %c = arith.cmpi ult, %a, %b : i32
  %t = arith.truncf %f : f32 to bf16
  %x = arith.extf %t : bf16 to f32
  func.return %q, %r, %u, %c, %x : i32, i32, i32, i1, f32
}""",
    )
    args: list[Array] = [np.array(-7, np.int32), np.array(2, np.int32)]
    half_ulp = np.array(1.0 + 2.0**-8, np.float32)  # ties to even: 1.0
    q, r, u, c, x = evaluate(module, [*args, half_ulp]).outputs
    assert (int(q), int(r), int(u), bool(c)) == (-3, -1, (2**32 - 7) // 2, False)
    assert q.dtype == np.int32
    assert c.dtype == np.bool_
    assert float(x) == 1.0
    three_halves = np.array(1.0 + 3 * 2.0**-8, np.float32)  # ties to even: 1 + 2^-6
    *_, x = evaluate(module, [*args, three_halves]).outputs
    assert float(x) == 1.0 + 2.0**-6


def test_call_and_tensor_ops(ctx: Context) -> None:
    module = parse(
        ctx,
        """func.func @main(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %y = func.call @double(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = tensor.concat dim(0) %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %s = tensor.extract_slice %c[1, 0] [2, 3] [2, 1] : tensor<4x3xf32> to tensor<2x3xf32>
  %i = tensor.insert_slice %s into %c[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x3xf32>
  func.return %i : tensor<4x3xf32>
}
func.func private @double(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %two = arith.constant dense<2.0> : tensor<2x3xf32>
  %y = arith.mulf %x, %two : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}""",
    )
    (x,) = random_inputs(first_func(module), seed=5)
    (out,) = evaluate(module, [x]).outputs
    concat = np.concatenate([x, 2 * x])
    expected = concat.copy()
    expected[0:2] = concat[1:4:2]
    np.testing.assert_array_equal(out, expected)


def test_random_inputs_of_remote_argument(ctx: Context) -> None:
    module = parse(
        ctx,
        """func.func @f(%x: tensor<3xi1>, %w: !hyperoffload.remote<tensor<2x2xf16>, host>) -> tensor<3xi1> {
  func.return %x : tensor<3xi1>
}""",
    )
    x, w = random_inputs(first_func(module))
    assert (x.dtype, x.shape) == (np.bool_, (3,))
    assert (w.dtype, w.shape) == (np.float16, (2, 2))
    again = random_inputs(first_func(module))
    assert all(same_array(a, b) for a, b in zip([x, w], again, strict=True))


MASKED_ROW_MAX = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
#row = affine_map<(d0, d1) -> (d0)>
func.func @masked_row_max(%x: tensor<3x4xf32>, %drop: tensor<3x4xi1>)
    -> (tensor<3xf32>, tensor<4xf32>, tensor<2xf64>, tensor<2xbf16>, tensor<2xi32>) {
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %ninf_scalar = arith.constant 0xFF800000 : f32
  %special = arith.constant dense<[0x7F800000, 0x3FC00000, 0xFF800000, 0x80000000]> : tensor<4xf32>
  %wide = arith.constant dense<0xFFF0000000000000> : tensor<2xf64>
  %half = arith.constant dense<[0x3F80, 0xFF80]> : tensor<2xbf16>
  %ints = arith.constant dense<[16, 0xFF]> : tensor<2xi32>
  %e = tensor.empty() : tensor<3x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #scalar, #id, #id],
                            iterator_types = ["parallel", "parallel"]}
      ins(%drop, %ninf, %x : tensor<3x4xi1>, tensor<f32>, tensor<3x4xf32>)
      outs(%e : tensor<3x4xf32>) {
  ^bb0(%d: i1, %m: f32, %v: f32, %out: f32):
    %s = arith.select %d, %m, %v : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  %e1 = tensor.empty() : tensor<3xf32>
  %init = linalg.fill ins(%ninf_scalar : f32) outs(%e1 : tensor<3xf32>) -> tensor<3xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<3x4xf32>) outs(%init : tensor<3xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.maximumf %v, %acc : f32
    linalg.yield %m : f32
  } -> tensor<3xf32>
  func.return %max, %special, %wide, %half, %ints
      : tensor<3xf32>, tensor<4xf32>, tensor<2xf64>, tensor<2xbf16>, tensor<2xi32>
}
"""


def test_hex_dense_float_literals_are_bit_patterns(ctx: Context) -> None:
    # `dense<0xFF800000> : tensor<f32>` is -inf, as upstream MLIR reads it (and
    # as torch-mlir emits the -inf fill of a causal mask); xDSL alone reads the
    # integer 4286578688.0, which broke softmax in `tiny_llama_*.mlir`.
    module = parse(ctx, MASKED_ROW_MAX)
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 6
    drop = np.array([[0, 0, 1, 1], [1, 1, 1, 1], [1, 0, 0, 1]], np.bool_)
    for program in (module, parse(ctx, str(module), "printed.mlir")):
        row_max, special, wide, half, ints = evaluate(program, [x, drop]).outputs
        np.testing.assert_array_equal(row_max, [-5.0, -np.inf, 4.0])
        np.testing.assert_array_equal(special, [np.inf, 1.5, -np.inf, -0.0])
        assert np.signbit(special[3])
        np.testing.assert_array_equal(wide, [-np.inf, -np.inf])
        np.testing.assert_array_equal(half, [1.0, -np.inf])
        np.testing.assert_array_equal(ints, [16, 255])


def test_tiny_llama_forward_matches_eager_torch(ctx: Context) -> None:
    # torch-mlir's export of examples/generate_tiny_llama.py (read through
    # upstream MLIR's normalisation) against eager PyTorch's outputs.
    stem = ROOT / "examples" / "tiny_llama_forward"
    module = parse(ctx, stem.with_suffix(".mlir").read_text(), "tiny_llama_forward")
    reference = np.load(stem.with_suffix(".reference.npz"))
    count = sum(1 for key in reference.files if key.startswith("arg"))
    inputs: list[Array] = [reference[f"arg{i}"] for i in range(count)]
    outputs = evaluate(module, inputs).outputs
    assert len(outputs) == sum(1 for k in reference.files if k.startswith("out"))
    for index, output in enumerate(outputs):
        expected = reference[f"out{index}"]
        assert output.shape == expected.shape
        np.testing.assert_allclose(output, expected, rtol=1e-4, atol=1e-5)
