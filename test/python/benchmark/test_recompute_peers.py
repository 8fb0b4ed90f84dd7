"""
The recomputation peers on the tiny LLaMA training step (bf16, 2 blocks):
the blocks they find, and that every setting runs in the simulator and
trades compute for memory as its source says.
"""

from pathlib import Path

import pytest

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.benchmark.recompute_peers import RecomputePeers
from hyperoffload.ir.context import make_context
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.policies.peers import resident_arguments
from hyperoffload.sim.simulator import SimResult, simulate

PROGRAM = Path(__file__).resolve().parents[2] / "inputs" / "tiny_llama_train_bf16.mlir"
HARDWARE = load_hardware("ascend-910c")


@pytest.fixture(scope="module")
def peers() -> RecomputePeers:
    module = parse_mlir(make_context(), PROGRAM.read_text(), PROGRAM.name)
    graph = ProgramGraph.build(main_function(module), CostModel(HARDWARE))
    return RecomputePeers(graph, HARDWARE)


def _none(peers: RecomputePeers) -> SimResult:
    return simulate(resident_arguments(peers.graph.schedule), HARDWARE, None)


def test_each_block_holds_one_attention_kernel(peers: RecomputePeers) -> None:
    blocks = peers.blocks()
    assert len(blocks) == 2
    assert blocks[0][1] == blocks[1][0]  # one block ends where the next starts
    assert peers.loss is not None
    attention = peers._attention(peers.loss)  # pyright: ignore[reportPrivateUsage]
    assert len(attention) == 2
    for (start, end), (first, last) in zip(blocks, attention, strict=True):
        assert start < first <= last < end


def test_checkpointing_more_blocks_recomputes_more(
    peers: RecomputePeers,
) -> None:
    none = _none(peers)
    one, both = (
        simulate(peers.schedule(peers.plan(c)), HARDWARE, None)
        for c in peers.checkpointing()
    )
    assert none.compute_s < one.compute_s < both.compute_s
    # (the tiny step peaks in its loss, outside the blocks: the peak stays)
    assert both.peak_hbm_bytes <= one.peak_hbm_bytes <= none.peak_hbm_bytes
    kept = [sum(s.info.bytes for s, _ in c[1]) for c in peers.checkpointing()]
    assert 0 < kept[0] < kept[1]


def test_every_setting_runs_and_recomputes_only_saved_values(
    peers: RecomputePeers,
) -> None:
    assert peers.loss is not None
    saved = {id(s) for s in peers.saved}
    for choices in (peers.checkpointing(), peers.selective(), peers.budgeted()):
        for name, values, _ in choices:
            assert all(id(s) in saved for s, _ in values), name
            for s, _ in values:  # made in the forward, read again in the backward
                assert s.info.producer < peers.loss < s.gap.before
            plan = peers.plan((name, values, 2))
            result = simulate(peers.schedule(plan), HARDWARE, None)
            assert result.oom is None


def test_a_smaller_budget_recomputes_more(peers: RecomputePeers) -> None:
    chosen = [sum(s.info.bytes for s, _ in values) for _, values, _ in peers.budgeted()]
    assert chosen == sorted(chosen)  # budgets 0.9 down to 0.0
    assert chosen[-1] > chosen[0]
