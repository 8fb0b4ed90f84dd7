"""
Compressed transfers (`compress = "int8"`) in the evaluators: the numpy
evaluator's lossy round trip on a tiny decode step planned with
`compress-kv=int8`, the lowering run natively (MLIR ExecutionEngine) bit for
bit against the numpy evaluator, and the torch executor's refusal.
"""

import io
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException

from hyperoffload.dialects.hyperoffload import PrefetchOp, StoreOp
from hyperoffload.evaluators.execution import run_upstream
from hyperoffload.evaluators.numeric import evaluate
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.passes import all_passes
from hyperoffload.support.arrays import round_bf16
from hyperoffload.support.quantize import QMAX, round_trip

Array = np.ndarray[Any, Any]

SCALE_STEP = 1 + 2.0**-10
"""A scale is rounded up to an f16: at most one f16 step above absmax / 127."""
F32_EPS = 2.0**-23

DECODE = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @decode(%q: tensor<64xf32>,
                  %k: tensor<16x64xf32> {hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "kv"},
                  %x: tensor<1x64xf32>)
    -> (tensor<16x64xf32>, tensor<1x64xf32> {hyperoffload.tier = #hyperoffload.tier<remote>}) {
  %e = tensor.empty() : tensor<16x64xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%k, %q : tensor<16x64xf32>, tensor<64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<16x64xf32>
  %kn = arith.addf %x, %x : tensor<1x64xf32>
  func.return %s, %kn : tensor<16x64xf32>, tensor<1x64xf32>
}
"""
"""A decode step: the scores' product with the KV block `%k` (living in the
pool), and the token's new entry `%kn`, written back to the pool."""


def _planned(ctx: Context, text: str, pipeline: str) -> ModuleOp:
    module = parse_mlir(ctx, text, "decode.mlir")
    PassPipeline.parse_spec(all_passes(), pipeline).apply(ctx, module)
    return module


def _generic(module: ModuleOp) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    return out.getvalue()


def _inputs(seed: int) -> list[Array]:
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(64).astype(np.float32)
    k = rng.standard_normal((16, 64)).astype(np.float32)
    k[3] = 0.0  # a row of zeros: scale 0
    k[5] *= 1e3  # rows far apart in magnitude: each has its own scale
    x = rng.standard_normal((1, 64)).astype(np.float32)
    return [q, k, x]


def test_a_compressed_decode_is_within_the_quantiser_bound(ctx: Context) -> None:
    module = _planned(ctx, DECODE, "hyperoffload-pipeline{compress-kv=int8}")
    moves = [o for o in module.walk() if isinstance(o, PrefetchOp | StoreOp)]
    assert moves
    assert all(m.compress is not None and m.compress.data == "int8" for m in moves)
    q, k, x = _inputs(0)
    scores, entry = evaluate(module, [q, k, x]).outputs
    exact = k * q
    # |k' - k| <= absmax(row) / 254 per element (the scale rounded up to an
    # f16: one f16 step), so |s' - s| <= |q| * absmax(row) / 254, plus the
    # f32 rounding of the product
    absmax = np.max(np.abs(k), axis=1, keepdims=True)
    bound = np.abs(q) * absmax / (2 * QMAX) * SCALE_STEP + np.abs(exact) * F32_EPS
    error = np.abs(scores - exact)
    assert np.all(error <= bound)
    assert error.max() > 0  # lossy: the compressed copy is not the exact one
    np.testing.assert_array_equal(scores[3], 0)
    # the caller gets the new entry as its compressed copy decodes
    np.testing.assert_array_equal(entry, round_trip(x + x))


def test_without_compress_kv_the_decode_is_exact(ctx: Context) -> None:
    module = _planned(ctx, DECODE, "hyperoffload-pipeline")
    assert not any(
        isinstance(o, PrefetchOp | StoreOp) and o.compress is not None
        for o in module.walk()
    )
    q, k, x = _inputs(0)
    scores, entry = evaluate(module, [q, k, x]).outputs
    np.testing.assert_array_equal(scores, k * q)
    np.testing.assert_array_equal(entry, x + x)


PARK = """
func.func @park(%x: tensor<4x64xf32>,
                %w: !hyperoffload.remote<tensor<8x32xbf16>> {hyperoffload.tier = #hyperoffload.tier<remote>})
    -> (tensor<4x64xf32>, tensor<8x32xbf16>, !hyperoffload.remote<tensor<4x64xf32>>) {
  %a = arith.mulf %x, %x : tensor<4x64xf32>
  %h = hyperoffload.store %a {compress = "int8"} : tensor<4x64xf32> -> !hyperoffload.remote<tensor<4x64xf32>>
  hyperoffload.detach %a : tensor<4x64xf32>
  %b = arith.addf %x, %x : tensor<4x64xf32>
  %wd = hyperoffload.prefetch %w {compress = "int8"} : !hyperoffload.remote<tensor<8x32xbf16>> -> tensor<8x32xbf16>
  %ad = hyperoffload.prefetch %h {compress = "int8"} : !hyperoffload.remote<tensor<4x64xf32>> -> tensor<4x64xf32>
  %r = arith.addf %b, %ad : tensor<4x64xf32>
  hyperoffload.detach %ad : tensor<4x64xf32>
  func.return %r, %wd, %h : tensor<4x64xf32>, tensor<8x32xbf16>, !hyperoffload.remote<tensor<4x64xf32>>
}
"""
"""A compressed store and its prefetch, a compressed prefetch of a bf16
argument, and a compressed copy returned to the caller."""


def _park_inputs(seed: int) -> list[Array]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((4, 64)).astype(np.float32)
    x[2] = 0.0
    w = round_bf16(rng.standard_normal((8, 32)).astype(np.float32) * 50)
    return [x, w]


@pytest.mark.parametrize(
    "conversion",
    [
        "convert-hyperoffload-to-linalg",
        "convert-hyperoffload-to-linalg{dma=false dealloc=false}",
    ],
)
def test_the_lowering_computes_the_numpy_evaluators_bits(
    ctx: Context, conversion: str
) -> None:
    module = parse_mlir(ctx, PARK, "park.mlir")
    inputs = _park_inputs(1)
    expected = evaluate(module, inputs).outputs
    PassPipeline.parse_spec(all_passes(), conversion).apply(ctx, module)
    got = run_upstream(_generic(module), inputs)
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    x, w = inputs
    # the caller's copy, decoded to bf16
    np.testing.assert_array_equal(expected[1], round_bf16(round_trip(w)))
    np.testing.assert_array_equal(expected[2], round_trip(x * x))


def test_a_planned_compressed_decode_lowers_to_the_same_bits(ctx: Context) -> None:
    module = _planned(ctx, DECODE, "hyperoffload-pipeline{compress-kv=int8}")
    inputs = _inputs(2)
    expected = evaluate(module, inputs).outputs
    PassPipeline.parse_spec(all_passes(), "convert-hyperoffload-to-linalg").apply(
        ctx, module
    )
    for a, b in zip(run_upstream(_generic(module), inputs), expected, strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_arena_lowering_rejects_compression(ctx: Context) -> None:
    module = parse_mlir(ctx, PARK, "park.mlir")
    spec = "hyperoffload-assign-offsets,convert-hyperoffload-to-linalg{arena=true}"
    message = r"park\.mlir:6:3: error: cannot lower a compressed 'hyperoffload\.store' with arena=true"
    with pytest.raises(PassFailedException, match=message):
        PassPipeline.parse_spec(all_passes(), spec).apply(ctx, module)


def test_the_torch_executor_rejects_compression(ctx: Context) -> None:
    pytest.importorskip("torch")
    from hyperoffload.evaluators.numeric.interpreter import find_function
    from hyperoffload.evaluators.torch import (
        RunError,
        execute,
        make_device,
        tensor_inputs,
    )

    module = parse_mlir(ctx, PARK, "park.mlir")
    inputs = tensor_inputs(find_function(module, None))
    message = r"park\.mlir:6:3: error: 'hyperoffload\.store' with compress = \"int8\" .* not supported by the torch executor"
    with pytest.raises(RunError, match=message):
        execute(module, make_device("cpu"), inputs)
