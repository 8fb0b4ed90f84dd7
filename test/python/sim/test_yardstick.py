"""
The yardstick against physics (DESIGN.md §9): real-shape torch-mlir exports,
priced by the interpreter with every policy off, land where real hardware
does. A training step implies a model-FLOP utilisation between 25% and 65%
(well-tuned LLM training reports 35-55%), and a decode step takes between
1x and 2x its bytes over the datasheet HBM bandwidth, with a peak no more
than 10% above its arguments. FLOPs and bytes are counted here from the
model's dimensions, independently of the cost model. Needs the `torch`
extra; exports run in a child process (torch-mlir cannot share a process
with the MLIR bindings).
"""

import subprocess
import sys
from pathlib import Path

import pytest
from calibration import layer_linear_params
from xdsl.context import Context

from hyperoffload.analysis.program import Program
from hyperoffload.frontend import ModelConfig, get_config
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.sim.simulator import SimResult, simulate

LAYERS = 2


def _export(directory: Path, *args: str) -> Path:
    path = directory / "program.mlir"
    gen = Path(sys.executable).parent / "hyperoffload-gen"
    subprocess.run([str(gen), *args, "-o", str(path)], check=True, capture_output=True)
    return path


def _none(ctx: Context, path: Path, preset: str) -> tuple[SimResult, int]:
    """The unconstrained run, and the bytes of the program's tensor arguments."""
    hardware = load_hardware(preset)
    module = parse_mlir(ctx, path.read_text(), str(path))
    stripped = Program(module, hardware).reference
    arguments = sum(b.bytes for b in stripped.buffers if b.kind == "argument")
    return simulate(stripped, hardware, record=False), arguments


def training_flops(cfg: ModelConfig, layers: int, seq: int) -> float:
    """6 FLOPs per parameter per token (the LM head included, the embedding a
    gather) plus attention: 4·s²·h forward per layer, 3x with the backward."""
    params = layers * layer_linear_params(cfg) + cfg.hidden * cfg.vocab_size
    attention = 3 * 4 * seq * seq * cfg.n_heads * cfg.head_dim * layers
    return 6.0 * params * seq + attention


def decode_bytes(cfg: ModelConfig, layers: int, kv_len: int, elem: int) -> int:
    """Weights (not the embedding table: one row is gathered) and the KV cache."""
    weights = layers * (layer_linear_params(cfg) + 2 * cfg.hidden) + cfg.hidden * (
        cfg.vocab_size + 1
    )
    cache = 2 * layers * cfg.n_kv_heads * cfg.head_dim * kv_len
    return (weights + cache) * elem


def test_independent_counts_by_hand():
    # LLaMA-3-8B layer: 4096·128·(64 + 16) + 3·4096·14336 = 218,103,808.
    cfg = get_config("llama3-8b")
    assert layer_linear_params(cfg) == 218_103_808
    assert training_flops(cfg, 1, 1) == 6.0 * (218_103_808 + 4096 * 128256) + 12 * 4096


@pytest.fixture(scope="module")
def train_step(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _export(
        tmp_path_factory.mktemp("train"),
        *("llama3-8b", "--mode", "train", "--layers", str(LAYERS)),
        *("--seq", "2048", "--dtype", "bf16"),
    )


@pytest.mark.parametrize("preset", ["h100-pcie5", "ascend-910c"])
def test_training_step_mfu_is_realistic(ctx: Context, train_step: Path, preset: str):
    result, _ = _none(ctx, train_step, preset)
    flops = training_flops(get_config("llama3-8b"), LAYERS, 2048)
    mfu = flops / (result.makespan_s * load_hardware(preset).peak("bf16"))
    assert 0.25 <= mfu <= 0.65, f"implied MFU {mfu:.1%}"


def test_decode_step_is_near_the_bandwidth_roofline(
    ctx: Context, tmp_path_factory: pytest.TempPathFactory
):
    path = _export(
        tmp_path_factory.mktemp("decode"),
        *("llama-65b", "--mode", "decode", "--layers", str(LAYERS)),
        *("--kv-len", "4096", "--dtype", "f16", "--tier", "host"),
    )
    result, arguments = _none(ctx, path, "h100-pcie5")
    nbytes = decode_bytes(get_config("llama-65b"), LAYERS, 4096, 2)
    roofline = nbytes / load_hardware("h100-pcie5").hbm_bandwidth
    assert 1.0 <= result.makespan_s / roofline <= 2.0
    assert result.peak_hbm_bytes <= 1.10 * arguments
