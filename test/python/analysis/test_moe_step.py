"""
`moe_step` on `test/inputs/two_expert_decode.mlir` (one MoE layer, two
experts of 16 KiB, top-1), and `hyperoffload-sim --routing` over it; the
grouped expert kernels of the tiny-moe export
(`test/inputs/tiny_moe_routed_decode.mlir`) against their floors.
"""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from hyperoffload.analysis.expert_roles import Role, expert_roles
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.moe_step import moe_step, routed_kernels
from hyperoffload.analysis.program import Program
from hyperoffload.ir.context import make_context
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.model.moe import ExpertError
from hyperoffload.model.schedule import Compute
from hyperoffload.tools.hyperoffload_sim import main as sim_main

INPUTS = Path(__file__).parents[2] / "inputs"
STEP = INPUTS / "two_expert_decode.mlir"
HARDWARE = load_hardware("ascend-910c")


def _kernels() -> dict[str, float]:
    """Each kernel's time by its location, along the path where both experts run."""
    module = parse_mlir(make_context(), STEP.read_text(), str(STEP))
    planned = Program(module, HARDWARE).planned
    steps = [s for s in planned.steps if isinstance(s, Compute)]
    return {s.loc.rsplit(":", 2)[1]: s.time_s for s in steps}  # line -> time


def test_layer_parts() -> None:
    module = parse_mlir(make_context(), STEP.read_text(), str(STEP))
    step = moe_step(module, HARDWARE)
    kernel = _kernels()
    (layer,) = step.layers
    assert step.top_k == 1
    assert layer.expert_bytes == (64 * 64 * 4, 64 * 64 * 4)
    # grouped: the matmuls of lines 15 and 22 are the experts' work, the adds
    # of lines 20 and 27 their combine, each expert's share without launch;
    # one grouped launch for the work, one for the combine (after); %a
    # (line 13) runs before the router, the tail (28) after
    launch = HARDWARE.op_overhead_s
    assert layer.expert_s == pytest.approx(
        (
            kernel["15"] + kernel["20"] - 2 * launch,
            kernel["22"] + kernel["27"] - 2 * launch,
        )
    )
    assert layer.launch_s == pytest.approx(launch)
    assert layer.pre_s == kernel["13"]
    assert layer.post_s == pytest.approx(kernel["28"] + launch)


def test_not_a_moe_export() -> None:
    path = INPUTS / "window_decode.mlir"
    module = parse_mlir(make_context(), path.read_text(), str(path))
    with pytest.raises(ExpertError, match="not a MoE export"):
        moe_step(module, HARDWARE)


def test_cli_counts_lru_misses_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """
    Tokens choose experts 0 0 1 0 1 1; a one-expert budget under LRU: miss
    (0), hit, miss (1 evicts 0), miss (0), miss (1), hit: 2 hits of 6, four
    16 KiB fetches.
    """
    trace = tmp_path / "trace.json"
    routes = [0, 0, 1, 0, 1, 1]
    trace.write_text(
        json.dumps({"experts": 2, "top_k": 1, "tokens": [[[e]] for e in routes]})
    )
    argv = [str(STEP), "--routing", f"trace:{trace}", "--generate", "6"]
    assert (
        sim_main([*argv, "--policy", "lru", "--expert-budget", "16KiB", "--json"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["expert_hit_rate"] == pytest.approx(2 / 6)
    assert report["bytes_moved_per_token"] == pytest.approx(4 * 16384 / 6)
    for key in ("tokens_per_s", "exposed_transfer_s"):
        assert key in report
    assert sim_main([*argv, "--policy", "all"]) == 0
    table = capsys.readouterr().out
    assert all(p in table for p in ("ours", "lru", "moe-infinity", "on-demand"))


def test_cli_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert sim_main([str(STEP), "--routing", "zipf:1"]) == 1
    assert "needs --generate" in capsys.readouterr().err
    assert sim_main([str(STEP), "--routing", "pareto", "--generate", "2"]) == 1
    assert "error" in capsys.readouterr().err


@pytest.mark.parametrize("launch", [10e-6, 0.0])
def test_grouped_kernels_above_their_floors(launch: float) -> None:
    """
    tiny-moe decode (2 MoE layers, top-2 of 4, f32): with each layer's
    experts grouped, a token launches fewer kernels and takes less time than
    with one launch per expert, and no less than the bytes it must read at
    the datasheet HBM bandwidth, nor its launches' overhead.
    """
    path = INPUTS / "tiny_moe_routed_decode.mlir"
    module = parse_mlir(make_context(), path.read_text(), str(path))
    hardware = replace(HARDWARE, op_overhead_s=launch)
    step, kernels = routed_kernels(module, hardware)
    share = step.top_k / step.experts
    token_s = step.compute_per_token_s([[share] * step.experts] * len(step.layers))
    assert kernels.grouped < kernels.per_expert
    assert token_s < kernels.per_expert_s if launch else token_s <= kernels.per_expert_s
    assert token_s >= kernels.read_bytes / hardware.hbm_bandwidth
    assert token_s >= kernels.grouped * launch * (1 - 1e-12)
    # one grouped launch per kernel of an expert's branch
    roles = expert_roles(main_function(module))
    branch = {
        loc for loc, (role, key) in roles.items() if (role, key) == (Role.WORK, (0, 0))
    }
    planned = Program(module, hardware).planned
    work = [s for s in planned.steps if isinstance(s, Compute) and s.loc in branch]
    assert step.layers[0].launch_s == pytest.approx(len(work) * launch)
