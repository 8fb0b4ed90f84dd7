"""
Conditional regions (docs/dialect.md, "Conditional regions (experts)"): a
two-expert toy mixture of experts whose cold expert's weights live in the
remote pool, prefetched inside its `scf.if` branch or speculatively above it,
lowered by `convert-hyperoffload-to-linalg` and run natively (MLIR
ExecutionEngine) for both router decisions against numpy.
"""

import io
from typing import Any

import numpy as np
import pytest
from xdsl.passes import PassPipeline
from xdsl.printer import Printer

from hyperoffload.dialects.hyperoffload import PrefetchOp
from hyperoffload.evaluators.execution import UpstreamProgram
from hyperoffload.ir.context import make_context
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.passes import all_passes

Array = np.ndarray[Any, Any]

HEADER = """
func.func @two_experts(%x: tensor<2x4xf32>, %routed: i1, %w_hot: tensor<4x4xf32>,
                       %w_cold: !hyperoffload.remote<tensor<4x4xf32>> {hyperoffload.tier = #hyperoffload.tier<remote>})
    -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
"""
HOT = """
    %hot = linalg.matmul ins(%x, %w_hot : tensor<2x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
    scf.yield %hot : tensor<2x4xf32>
"""
COLD = """
    %cold = linalg.matmul ins(%x, %wd : tensor<2x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
"""
PREFETCH = "%wd = hyperoffload.prefetch %w_cold{attrs} : !hyperoffload.remote<tensor<4x4xf32>> -> tensor<4x4xf32>"
RESULT = """
  %r = arith.addf %x, %y : tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
"""

IN_BRANCH = f"""{HEADER}
  %y = scf.if %routed -> (tensor<2x4xf32>) {{{HOT}  }} else {{
    {PREFETCH.format(attrs="")}{COLD}    hyperoffload.detach %wd : tensor<4x4xf32>
    scf.yield %cold : tensor<2x4xf32>
  }}{RESULT}"""
"""The cold expert prefetches, reads and detaches its weights in its branch."""

SPECULATIVE = f"""{HEADER}
  {PREFETCH.format(attrs=" {speculative}")}
  %y = scf.if %routed -> (tensor<2x4xf32>) {{{HOT}  }} else {{{COLD}    scf.yield %cold : tensor<2x4xf32>
  }}
  hyperoffload.detach %wd : tensor<4x4xf32>{RESULT}"""
"""The cold expert's prefetch hoisted above the router's decision."""

PROGRAMS = {"in-branch": IN_BRANCH, "speculative": SPECULATIVE}
CONVERSIONS = [
    "convert-hyperoffload-to-linalg",
    "convert-hyperoffload-to-linalg{dma=false dealloc=false}",
]


def _lowered(text: str, conversion: str) -> str:
    """`text` verified, converted and printed generic for upstream."""
    ctx = make_context()
    module = parse_mlir(ctx, text, "two_experts.mlir")
    verify_module(module)
    prefetches = [op for op in module.walk() if isinstance(op, PrefetchOp)]
    assert len(prefetches) == 1
    PassPipeline.parse_spec(all_passes(), conversion).apply(ctx, module)
    assert not any(op.dialect_name() == "hyperoffload" for op in module.walk())
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(module)
    return stream.getvalue()


def _expected(x: Array, routed: bool, w_hot: Array, w_cold: Array) -> Array:
    """The toy in numpy: the residual plus the routed expert's product."""
    return x + x @ (w_hot if routed else w_cold)


@pytest.fixture(
    scope="module",
    params=[(p, c) for p in PROGRAMS for c in CONVERSIONS],
    ids=lambda param: f"{param[0]}:{'copy' if '{' in param[1] else 'dma'}",
)
def program(request: pytest.FixtureRequest) -> UpstreamProgram:
    name, conversion = request.param
    return UpstreamProgram(_lowered(PROGRAMS[name], conversion), file_name=name)


@pytest.mark.parametrize("routed", [True, False])
def test_the_routed_expert_computes_as_numpy(
    program: UpstreamProgram, routed: bool
) -> None:
    rng = np.random.default_rng(7)
    # small integers: every product and sum is exact in f32, in any order
    x = rng.integers(-3, 4, (2, 4)).astype(np.float32)
    w_hot = rng.integers(-3, 4, (4, 4)).astype(np.float32)
    w_cold = rng.integers(-3, 4, (4, 4)).astype(np.float32)
    assert not np.array_equal(x @ w_hot, x @ w_cold)
    (got,) = program([x, np.bool_(routed), w_hot, w_cold])
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, _expected(x, routed, w_hot, w_cold))


@pytest.mark.parametrize("routed", [True, False])
def test_the_expert_not_taken_is_not_read(
    program: UpstreamProgram, routed: bool
) -> None:
    """NaN weights of the other expert (prefetched or not) never reach the output."""
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    weights = np.eye(4, dtype=np.float32) * 2
    poison = np.full((4, 4), np.nan, np.float32)
    w_hot, w_cold = (weights, poison) if routed else (poison, weights)
    (got,) = program([x, np.bool_(routed), w_hot, w_cold])
    np.testing.assert_array_equal(got, x + 2 * x)
