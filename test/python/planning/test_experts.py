"""
Placement of routed experts (`hyperoffload.planning.experts`) on the
two-expert decode step of `test/inputs/two_expert_decode.mlir` (16 KiB of
weights per expert) and a three-expert variant of it, worked out by hand:
the rest of the step peaks at 1,024 B (x, the fill, a and the first
matmul's output, 256 B each), so a 40,000 B target leaves 38,976 B for
experts.
"""

import json
from pathlib import Path

import pytest
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from hyperoffload.dialects.hyperoffload import DetachOp, PrefetchOp, RemoteType
from hyperoffload.ir.context import make_context
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.model.routing import parse_routing
from hyperoffload.planning.experts import (
    is_routed,
    place_experts,
    planned_hot_set,
    write_placement,
)
from hyperoffload.planning.planner import PlanError
from hyperoffload.support.tiers import Tier
from hyperoffload.tools.hyperoffload_sim import main as sim_main

INPUTS = Path(__file__).parents[2] / "inputs"
EXPERT = 64 * 64 * 4


def _module(text: str | None = None) -> tuple[ModuleOp, FuncOp]:
    source = (INPUTS / "two_expert_decode.mlir").read_text() if text is None else text
    module = parse_mlir(make_context(), source, "two_expert_decode.mlir")
    (function,) = [op for op in module.walk() if isinstance(op, FuncOp)]
    return module, function


def _trace(tmp_path: Path, chosen: list[int]) -> str:
    path = tmp_path / "routing.json"
    tokens = [[[e]] for e in chosen]
    path.write_text(json.dumps({"experts": 2, "top_k": 1, "tokens": tokens}))
    return f"trace:{path}"


def test_budget_is_the_target_less_the_rest() -> None:
    module, function = _module()
    assert is_routed(function)
    placement = place_experts(
        module, function, load_hardware("ascend-910c", 40_000), parse_routing("uniform")
    )
    assert placement.others_bytes == 1024
    assert placement.budget_bytes == 40_000 - 1024
    # both experts (32 KiB) fit: both stay
    assert placement.hot == ((0, 1),)
    assert placement.speculative == ((),)


def test_no_room_beside_a_buffer_fetches_both_in_their_branches(
    tmp_path: Path,
) -> None:
    """
    30,000 B leave 28,976 B for experts: one expert (16,384 B) fits, but not
    beside a fetch buffer for the other, so neither is hot and each is
    fetched in its own branch; expert 1, chosen three times in four, would
    be fetched ahead of the router if it fitted beside the buffer: it does not.
    """
    module, function = _module()
    routing = parse_routing(_trace(tmp_path, [1, 1, 0, 1]))
    hardware = load_hardware("ascend-910c", 30_000)
    placement = place_experts(module, function, hardware, routing)
    assert (placement.hot, placement.speculative) == (((),), ((),))
    write_placement(function, placement, routing, Tier.REMOTE)
    verify_module(module)
    assert all(isinstance(function.args[i].type, RemoteType) for i in (3, 4))
    prefetches = [op for op in function.walk() if isinstance(op, PrefetchOp)]
    assert [p.source for p in prefetches] == [function.args[3], function.args[4]]
    for prefetch in prefetches:
        branch = prefetch.parent_op()
        assert isinstance(branch, scf.IfOp)
        block = branch.true_region.block
        assert block.first_op is prefetch
        detach = block.last_op.prev_op  # type: ignore[union-attr]
        assert isinstance(detach, DetachOp)
        assert detach.operands[0] is prefetch.result
    assert planned_hot_set(function) == ([[]], placement.budget_bytes)


def test_three_experts_keep_the_popular_one(tmp_path: Path) -> None:
    text = (INPUTS / "two_expert_decode.mlir").read_text()
    text = text.replace("%r1: i1,", "%r1: i1, %r2: i1,").replace(
        "experts = 2 : i64", "experts = 3 : i64"
    )
    text = text.replace(
        "hyperoffload.tier = #hyperoffload.tier<remote>})",
        "hyperoffload.tier = #hyperoffload.tier<remote>},\n"
        "    %w2: tensor<64x64xf32> {hyperoffload.expert = array<i64: 0, 2>, "
        "hyperoffload.tier = #hyperoffload.tier<remote>})",
    )
    text = text.replace(
        "  %out = arith.mulf %s1, %s1",
        """  %y2 = scf.if %r2 -> (tensor<1x64xf32>) {
    %m2 = linalg.matmul ins(%a, %w2 : tensor<1x64xf32>, tensor<64x64xf32>) outs(%z : tensor<1x64xf32>) -> tensor<1x64xf32>
    scf.yield %m2 : tensor<1x64xf32>
  } else {
    scf.yield %z : tensor<1x64xf32>
  } {hyperoffload.expert = array<i64: 0, 2>}
  %s2 = arith.addf %s1, %y2 : tensor<1x64xf32>
  %out = arith.mulf %s2, %s2""",
    )
    module, function = _module(text)
    path = tmp_path / "three.json"
    tokens = [[[e]] for e in [2, 2, 0, 2, 1, 2, 0, 2]]  # 2: 5 of 8
    path.write_text(json.dumps({"experts": 3, "top_k": 1, "tokens": tokens}))
    routing = parse_routing(f"trace:{path}")
    # one expert and one buffer: 32 KiB beside the rest
    hardware = load_hardware("ascend-910c", 2 * EXPERT + 4000)
    placement = place_experts(module, function, hardware, routing)
    assert placement.hot == ((2,),)
    assert placement.speculative == ((),)  # no room for a second buffer
    write_placement(function, placement, routing, Tier.REMOTE)
    verify_module(module)
    assert planned_hot_set(function) == ([[2]], placement.budget_bytes)


def test_target_below_the_rest_is_a_located_error() -> None:
    module, function = _module()
    with pytest.raises(
        PlanError,
        match=r"two_expert_decode.mlir:\d+:\d+: error: @decode: everything but the routed experts peaks at 1.02 KB, leaving 8.98 KB",
    ):
        place_experts(
            module,
            function,
            load_hardware("ascend-910c", 10_000),
            parse_routing("uniform"),
        )


def test_weights_read_outside_their_branch_are_refused() -> None:
    text = (INPUTS / "two_expert_decode.mlir").read_text()
    text = text.replace(
        "%out = arith.mulf %s1, %s1 : tensor<1x64xf32>",
        "%out = arith.mulf %s1, %s1 : tensor<1x64xf32>\n"
        "  %leak = linalg.matmul ins(%a, %w1 : tensor<1x64xf32>, tensor<64x64xf32>) "
        "outs(%z : tensor<1x64xf32>) -> tensor<1x64xf32>",
    )
    module, function = _module(text)
    routing = parse_routing("uniform")
    placement = place_experts(
        module, function, load_hardware("ascend-910c", 30_000), routing
    )
    with pytest.raises(
        PlanError,
        match=r"reads the weights of the expert of this scf\.if outside its branch",
    ):
        write_placement(function, placement, routing, Tier.REMOTE)


def test_simulator_keeps_the_planned_hot_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`hyperoffload-sim --routing` on a planned program: ours' hot set and budget are the plan's."""
    module, function = _module()
    routing = parse_routing("uniform")
    placement = place_experts(
        module, function, load_hardware("ascend-910c", 40_000), routing
    )
    write_placement(function, placement, routing, Tier.REMOTE)
    planned = tmp_path / "planned.mlir"
    planned.write_text(str(module))
    argv = [str(planned), "--routing", "uniform", "--generate", "4", "--json"]
    assert sim_main([*argv, "--policy", "plan"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert "the program is planned" in captured.err
    assert report["policy"] == "ours"
    assert report["expert_hit_rate"] == 1.0  # both experts resident
    assert report["bytes_moved_per_token"] == 0
