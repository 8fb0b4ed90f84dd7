"""
`hyperoffload.policies.generation`: decode calls with the cache growing and the
window sliding, counted by hand on `test/inputs/window_decode.mlir` (one
layer, blocks of 4 positions of 128 B, a window of 8 positions and 4 sinks,
16 positions cached before the first call).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hyperoffload.analysis.kv_cache import KVCacheError, decode_step
from hyperoffload.ir.context import make_context
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.model.kv_step import KVLayout, StepBlocks
from hyperoffload.policies.generation import GenerationError, simulate_generation
from hyperoffload.support.quantize import Compression
from hyperoffload.tools.hyperoffload_sim import main as sim_main

STEP = Path(__file__).parents[2] / "inputs" / "window_decode.mlir"
HARDWARE = load_hardware("ascend-910c")
TOKENS = 8
BLOCK_BYTES = 128


@pytest.fixture(scope="module")
def step() -> StepBlocks:
    return decode_step(
        parse_mlir(make_context(), STEP.read_text(), str(STEP)), HARDWARE
    )


def test_window_blocks() -> None:
    layout = KVLayout("window", 4, 8, 4, 16)
    # the window [L - 8, L) plus the sink block 0
    assert layout.blocks_read(16) == [0, 2, 3]
    assert layout.blocks_read(17) == [0, 2, 3, 4]
    assert layout.blocks_read(20) == [0, 3, 4]
    assert KVLayout("blocked", 4, 0, 0, 16).blocks_read(17) == [0, 1, 2, 3, 4]


def test_step_blocks(step: StepBlocks) -> None:
    assert sorted(step.blocks.values()) == [
        ((0, kind), block) for kind in (0, 1) for block in (0, 2, 3)
    ]
    assert sorted(step.entries.values()) == [(0, 0), (0, 1)]


def test_plan_moves_each_block_once(step: StepBlocks) -> None:
    """
    With room for everything, ours fetches blocks 0, 2 and 3 of the keys and
    the values once (6), and writes blocks 4 and 5 back once each when their
    last position is appended, after calls 3 and 7 (4): 10 copies, 1.25 a
    token. Block 2 leaves the window at call 4 and is freed, not written.
    """
    result = simulate_generation(step, TOKENS, "plan", HARDWARE, HARDWARE.hbm_capacity)
    assert result.run.oom is None
    assert result.run.transfers == 10
    assert result.blocks_moved_per_token == 10 / TOKENS
    assert result.run.bytes_to_device == 6 * BLOCK_BYTES
    assert result.run.bytes_to_remote == 4 * BLOCK_BYTES
    assert result.bytes_moved_per_token == 10 * BLOCK_BYTES / TOKENS
    assert len(result.peak_per_token) == TOKENS


def test_flexgen_streams_every_block(step: StepBlocks) -> None:
    """
    FlexGen's schedule fetches every block a call reads except the tail
    being appended to: call 0 reads 0, 2, 3 (3 fetches); calls 1-3 read
    0, 2, 3 and the tail 4 (3 each); call 4 reads 0, 3 and block 4, still
    in HBM from its appends (2); calls 5-7 read 0, 3, 4 and the tail 5 (3
    each): 23 fetches and 2 write-backs for each of keys and values.
    """
    result = simulate_generation(
        step, TOKENS, "flexgen", HARDWARE, HARDWARE.hbm_capacity
    )
    assert result.run.transfers == 2 * (23 + 2)
    assert result.run.bytes_to_remote == 4 * BLOCK_BYTES


def test_reference_moves_nothing(step: StepBlocks) -> None:
    result = simulate_generation(step, TOKENS, "none", HARDWARE, None)
    assert result.run.transfers == 0
    planned = simulate_generation(step, TOKENS, "plan", HARDWARE, None)
    # ours frees block 2 when it leaves the window; the reference keeps it
    assert planned.run.peak_hbm_bytes < result.run.peak_hbm_bytes


@pytest.mark.parametrize("capacity", [1500, 1300, 1200])
def test_plan_fits_smaller_capacities(step: StepBlocks, capacity: int) -> None:
    """Ours keeps fewer blocks resident as the capacity falls, and still fits."""
    result = simulate_generation(step, TOKENS, "plan", HARDWARE, capacity)
    roomy = simulate_generation(step, TOKENS, "plan", HARDWARE, None)
    assert result.run.oom is None
    assert result.run.peak_hbm_bytes <= capacity
    assert result.run.transfers >= roomy.run.transfers
    for peer in ("reactive-lru", "runtime-prefetch"):
        other = simulate_generation(step, TOKENS, peer, HARDWARE, capacity)
        assert result.tokens_per_s >= other.tokens_per_s


def test_warm_up_is_not_measured(step: StepBlocks) -> None:
    """
    After one warm-up call the window's blocks are resident: the 8 measured
    calls only write blocks 4 and 5 back (4 copies).
    """
    result = simulate_generation(step, TOKENS - 1, "plan", HARDWARE, None, warmup=1)
    assert result.moved_blocks == 4
    assert result.measured_from_s > 0
    assert len(result.peak_per_token) == TOKENS - 1


def test_bad_generations(step: StepBlocks) -> None:
    with pytest.raises(GenerationError, match="at least one token"):
        simulate_generation(step, 0, "plan", HARDWARE, None)
    with pytest.raises(GenerationError, match="unknown policy"):
        simulate_generation(step, 1, "distance", HARDWARE, None)
    text = STEP.read_text().replace("hyperoffload.kv_cache", "other.attribute")
    with pytest.raises(KVCacheError, match=r"no 'hyperoffload\.kv_cache' attribute"):
        decode_step(parse_mlir(make_context(), text, "x"), HARDWARE)


def test_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    plot = tmp_path / "peaks.png"
    argv = [str(STEP), "--generate", str(TOKENS), "--json", "--plot", str(plot)]
    assert sim_main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["policy"] == "plan"
    assert report["blocks_moved_per_token"] == 10 / TOKENS
    for key in ("tokens_per_s", "peak_hbm_bytes", "bytes_moved_per_token"):
        assert report[key] > 0
    assert plot.stat().st_size > 0
    assert sim_main([str(STEP), "--generate", "4", "--policy", "all"]) == 0
    table = capsys.readouterr().out
    assert all(p in table for p in ("plan", "flexgen", "runtime-prefetch"))
    assert sim_main([str(STEP), "--generate", "0"]) == 1
    assert "at least one token" in capsys.readouterr().err


def test_compressed_blocks(step: StepBlocks) -> None:
    """
    Compressed, each streamed 32-element f32 block crosses the link as 32
    int8 values and one f16 scale (34 B instead of 128), its codec on the
    compute stream. Keeping nothing resident (the 50 copies of FlexGen's
    schedule), the 46 fetches and the write-backs of blocks 4 (streamed
    later) are compressed; blocks 5, only ever appended to, move as they
    are. With room for everything nothing is streamed: no codec at all.
    """
    plain = simulate_generation(step, TOKENS, "plan", HARDWARE, None, resident=0)
    packed = simulate_generation(
        step, TOKENS, "plan", HARDWARE, None, compress=Compression.INT8, resident=0
    )
    assert packed.run.transfers == plain.run.transfers == 50
    assert packed.run.bytes_to_device == 46 * 34
    assert packed.run.bytes_to_remote == 2 * 34 + 2 * BLOCK_BYTES
    assert packed.run.compute_s > plain.run.compute_s
    roomy = simulate_generation(step, TOKENS, "plan", HARDWARE, None)
    kept = simulate_generation(
        step, TOKENS, "plan", HARDWARE, None, compress=Compression.INT8
    )
    assert kept.run.bytes_to_device == roomy.run.bytes_to_device == 6 * BLOCK_BYTES
    assert kept.run.compute_s == roomy.run.compute_s


def _export(tmp: Path, *flags: str) -> Path:
    """A tiny-llama decode step exported by `hyperoffload-gen` (its own process)."""
    path = tmp / "step.mlir"
    argv = ["tiny-llama", "--mode", "decode", "--kv-len", "64", *flags, "-o", str(path)]
    command = [sys.executable, "-m", "hyperoffload.tools.hyperoffload_gen", *argv]
    subprocess.run(command, check=True, capture_output=True)
    return path


def test_tiny_llama_window_generation(tmp_path: Path) -> None:
    """
    tiny-llama (2 layers; keys and values: 4 block sequences), 64 cached
    positions, blocks of 16, a window of 32 and 4 sinks; 32 calls append
    positions 64-95, so blocks 4 and 5 complete (calls 15 and 31).
    Ours: blocks 0, 2, 3 fetched once and blocks 4, 5 written back once, per
    sequence: 4 * (3 + 2) = 20 copies. FlexGen: calls 0-15 fetch 0, 2, 3
    (block 4 is the tail), call 16 fetches 0 and 3 (block 4 is still in HBM
    from its appends), calls 17-31 fetch 0, 3, 4: 48 + 2 + 45 = 95 fetches
    and 2 write-backs per sequence, 388 copies.
    """
    flags = (
        "--attention",
        "window",
        "--window",
        "32",
        "--sinks",
        "4",
        "--kv-block",
        "16",
    )
    path = _export(tmp_path, *flags)
    step = decode_step(
        parse_mlir(make_context(), path.read_text(), str(path)), HARDWARE
    )
    ours = simulate_generation(step, 32, "plan", HARDWARE, None)
    flexgen = simulate_generation(step, 32, "flexgen", HARDWARE, None)
    assert ours.moved_blocks == 4 * (3 + 2)
    assert ours.blocks_moved_per_token == 20 / 32
    assert flexgen.moved_blocks == 4 * (95 + 2)
    block = 1 * 2 * 16 * 16 * 4  # batch, kv heads, positions, head dim, f32
    assert ours.moved_bytes == 20 * block
