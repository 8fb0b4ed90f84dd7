"""
Routed programs planned as a whole (`hyperoffload.planning.routed`), on a
hand-written decode step: a dense weight read before the router, then two
routed experts (64x64 f32 weights: 16 KiB each, one MoE layer, top-1).
"""

import pytest
from xdsl.dialects import scf
from xdsl.dialects.func import FuncOp

from hyperoffload.analysis.extract import main_function
from hyperoffload.dialects.hyperoffload import PrefetchOp, RemoteType
from hyperoffload.ir.context import make_context
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.model.routing import parse_routing
from hyperoffload.planning.experts import ExpertBudgetError, place_experts
from hyperoffload.planning.loop import LoopOptions
from hyperoffload.planning.planner import PlanError, PlanOptions
from hyperoffload.planning.routed import plan_routed

KIB = 1024
W = "tensor<64x64xf32>"
TAG = "hyperoffload.tier = #hyperoffload.tier<remote>"

DECODE = f"""func.func @decode(%x: tensor<1x64xf32>, %r0: i1, %r1: i1,
    %wd: {W} {{{TAG}}},
    %w0: {W} {{hyperoffload.expert = array<i64: 0, 0>, {TAG}}},
    %w1: {W} {{hyperoffload.expert = array<i64: 0, 1>, {TAG}}})
    -> tensor<1x64xf32> attributes {{hyperoffload.moe = {{experts = 2 : i64, top_k = 1 : i64, routed = true}}}} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64xf32>) -> tensor<1x64xf32>
  %h = linalg.matmul ins(%x, %wd : tensor<1x64xf32>, {W}) outs(%z : tensor<1x64xf32>) -> tensor<1x64xf32>
  %a = arith.mulf %h, %h : tensor<1x64xf32>
  %y0 = scf.if %r0 -> (tensor<1x64xf32>) {{
    %m0 = linalg.matmul ins(%a, %w0 : tensor<1x64xf32>, {W}) outs(%z : tensor<1x64xf32>) -> tensor<1x64xf32>
    scf.yield %m0 : tensor<1x64xf32>
  }} else {{
    scf.yield %z : tensor<1x64xf32>
  }} {{hyperoffload.expert = array<i64: 0, 0>}}
  %s0 = arith.addf %a, %y0 : tensor<1x64xf32>
  %y1 = scf.if %r1 -> (tensor<1x64xf32>) {{
    %m1 = linalg.matmul ins(%a, %w1 : tensor<1x64xf32>, {W}) outs(%z : tensor<1x64xf32>) -> tensor<1x64xf32>
    scf.yield %m1 : tensor<1x64xf32>
  }} else {{
    scf.yield %z : tensor<1x64xf32>
  }} {{hyperoffload.expert = array<i64: 0, 1>}}
  %s1 = arith.addf %s0, %y1 : tensor<1x64xf32>
  func.return %s1 : tensor<1x64xf32>
}}"""


def _plan(target: int):
    module = parse_mlir(make_context(), DECODE, "decode.mlir")
    function = main_function(module)
    hardware = load_hardware("ascend-910c", target)
    options = LoopOptions(PlanOptions(target=target))
    return module, function, hardware, options


def test_a_target_below_the_rest_plans_the_dense_weight_too() -> None:
    # the dense weight (16 KiB) and both experts (32 KiB) peak at about
    # 50 KB; at 32 KB the experts alone leave less than one expert
    target = 32_000
    module, function, hardware, options = _plan(target)
    routing = parse_routing("uniform")
    with pytest.raises(ExpertBudgetError):
        place_experts(module, function, hardware, routing)
    planned = plan_routed(module, function, hardware, routing, options)
    assert planned.peak_bytes <= target
    assert planned.makespan_s >= planned.reference_s
    verify_module(module)
    written = main_function(module)
    assert written is not function  # replaced by its planned copy
    wd = written.args[3]
    assert isinstance(wd.type, RemoteType)  # fetched, then released
    (fetch,) = [u.operation for u in wd.uses]
    assert isinstance(fetch, PrefetchOp)
    assert fetch.parent_op() is written
    # the experts' scf.if stay, each expert resident or fetched in its branch
    branches = [op for op in written.walk() if isinstance(op, scf.IfOp)]
    assert len(branches) == 2
    hot = sum(len(row) for row in planned.placement.hot)
    fetched = [op for b in branches for op in b.walk() if isinstance(op, PrefetchOp)]
    assert hot + len(fetched) == 2
    assert "planned as a whole" in planned.summary()


def test_no_split_that_fits_is_a_located_error() -> None:
    module, function, hardware, options = _plan(8 * KIB)
    with pytest.raises(
        PlanError, match=r"decode.mlir:\d+:\d+: error: @decode: no split"
    ):
        plan_routed(module, function, hardware, parse_routing("uniform"), options)
    assert isinstance(main_function(module), FuncOp)
