"""
The pure parts of `bench/calibration.py`: work counts from model dimensions
against hand-computed values, the conversion of published figures, per-layer
scaling and the table. No model is exported (the GEMM is parsed, it is tiny).
"""

from dataclasses import replace
from pathlib import Path

import pytest
from calibration import (
    DECODE_8B,
    GEMM,
    ROWS,
    SCALING_DEPTHS,
    TRAIN_8B,
    TRAIN_8B_SEEDS,
    Export,
    Interpreter,
    Modelled,
    Published,
    Result,
    Work,
    bound_s,
    export_work,
    gemm_work,
    layer_linear_params,
    linear_in_layers,
    parameter_count,
    render_table,
    table_row,
)

from hyperoffload.frontend.configs import get_config
from hyperoffload.model.hardware import load_hardware

LLAMA3_8B = get_config("llama3-8b")
LAYER = 4096 * 4096 + 2 * 4096 * 1024 + 4096 * 4096 + 3 * 4096 * 14336
"""q, k, v, o projections (8 KV heads of 128) and the SwiGLU FFN of 14336."""
FORWARD_LINEAR = 32 * LAYER + 4096 * 128256
"""Matmul weights a token passes through: 32 layers and the LM head."""


def test_llama3_8b_parameters() -> None:
    assert layer_linear_params(LLAMA3_8B) == LAYER == 218_103_808
    # layers with their two norms, final norm, embedding and LM head: 8.03 B
    assert parameter_count(LLAMA3_8B) == 8_030_261_248


def test_decode_work() -> None:
    work = export_work(DECODE_8B)
    attention = 32 * 4 * 32 * 128 * 129  # one query over 128 cached keys and its own
    assert work.flops == 2 * FORWARD_LINEAR + attention == 15_076_950_016
    weights = 8_030_261_248 - 128256 * 4096 + 4096  # one embedding row looked up
    kv = 2 * 32 * 8 * 128 * 2 * 129  # K and V of every layer, bf16
    assert work.bytes == 2 * weights + kv == 15_026_765_824


def test_training_work() -> None:
    work = export_work(TRAIN_8B)
    tokens = 2 * 8192
    attention = 4 * 32 * 2 * 32 * 128 * (8192 * 8193 // 2)
    assert work.flops == 3 * (2 * tokens * FORWARD_LINEAR + attention)
    assert work.bytes == 2 * (8_030_261_248 - 128256 * 4096 + tokens * 4096) + 2 * (
        8_030_261_248
    )


def test_prefill_needs_the_lm_head_once() -> None:
    prefill = export_work(Export("llama3-8b", "prefill", seq=4))
    forward = export_work(Export("llama3-8b", "forward", seq=4))
    assert forward.flops - prefill.flops == 2 * 3 * 4096 * 128256


def test_gemm_work() -> None:
    work = gemm_work(GEMM)
    assert work.flops == 2 * 2048 * 2048 * 13312 == 111_669_149_696
    assert work.bytes == 2 * (2048 * 13312 + 13312 * 2048 + 2048 * 2048)


def test_other_families_are_refused() -> None:
    with pytest.raises(ValueError, match="llama family"):
        export_work(Export("gpt3-175b", "forward"))


def test_published_step() -> None:
    assert Published(5762, "tokens/s", "s", True, 16384).step_s() == 16384 / 5762
    assert Published(109, "ms", "s", True).step_s() == pytest.approx(0.109)
    gemm = Published(794.5, "TFLOPS", "s", True, 2 * 2048 * 2048 * 13312)
    assert gemm.step_s() == pytest.approx(140.55e-6, rel=1e-4)
    assert gemm.text() == "794.5 TFLOPS"
    assert Published(5762, "tokens/s", "s", True).text() == "5,762 tokens/s"
    with pytest.raises(ValueError, match="unknown unit"):
        Published(1, "W", "s", True).step_s()


def test_bound() -> None:
    h100 = load_hardware("h100-pcie5")
    compute, memory = bound_s(Work(989e12, 3.35e12), h100, shards=4)
    assert compute == pytest.approx(0.25)
    assert memory == pytest.approx(0.25)


def test_per_layer_scaling_is_linear() -> None:
    assert SCALING_DEPTHS == (2, 3)
    two = Modelled(5.0, 50.0, frozenset({"a"}))
    three = Modelled(7.0, 70.0, frozenset({"b"}))
    scaled = linear_in_layers(two, three, 32)
    assert (scaled.time_s, scaled.flops) == (5.0 + 30 * 2.0, 50.0 + 30 * 20.0)
    assert scaled.unknown == {"a", "b"}


def test_rows() -> None:
    assert len({row.key for row in ROWS}) == len(ROWS)
    assert len({row.workload for row in ROWS}) >= 5
    for row in ROWS:
        load_hardware(row.preset)
        assert row.published.source
        assert row.leaves_out
        assert row.published.step_s() > 0


def test_export_file_names() -> None:
    assert DECODE_8B.file_name() == (
        "llama3-8b_mode_decode_dtype_bf16_batch_1_layers_32_kv-len_128.mlir"
    )
    assert replace(TRAIN_8B, layers=2).describe() == (
        "llama3-8b train, 2 layers, batch 2, seq 8192, bf16"
    )


def test_table() -> None:
    h100 = load_hardware("h100-pcie5")
    inside = Result(ROWS[0], h100, Modelled(141e-6, 1.0, frozenset()), (1e-4, 3e-5))
    unverified = next(row for row in ROWS if not row.published.verified)
    outside = Result(unverified, h100, Modelled(0.1, 1.0, frozenset()), (1e-3, 4e-2))
    lines = render_table([inside, outside]).splitlines()
    assert len(lines) == 4
    assert all(line.count("|") == 10 for line in lines)
    assert "| 1.00 (sets, not counted) |" in lines[2]  # the GEMM sets the efficiency
    assert "outside" not in lines[2]
    assert "140.6 us" in lines[2]
    assert "141.0 us" in lines[2]
    assert "**outside**" in lines[3]
    assert "(not verified)" in lines[3]
    assert "1.00 ms, 40.00 ms" in lines[3]


def test_gemm_program_is_priced(tmp_path: Path) -> None:
    h100 = load_hardware("h100-pcie5")
    modelled = Interpreter(tmp_path, lambda _: None).simulate(GEMM, h100)
    assert modelled.flops == gemm_work(GEMM).flops
    compute, _ = bound_s(gemm_work(GEMM), h100)
    assert modelled.time_s > compute


def test_adamw_step_reads_and_writes_its_states() -> None:
    params = 8_030_261_248
    extra = export_work(TRAIN_8B_SEEDS).bytes - export_work(TRAIN_8B).bytes
    assert extra == (3 * 4 * 2 + 2) * params  # master, m, v in f32; the bf16 weight
    assert export_work(TRAIN_8B_SEEDS).flops == export_work(TRAIN_8B).flops
    assert TRAIN_8B_SEEDS.argv()[-4:] == ["--optimizer", "adamw", "--loss", "chunked"]


def test_rows_that_set_are_apart_and_fp8_is_marked() -> None:
    setting = {row.key for row in ROWS if row.sets}
    assert setting == {"gemm-h100", "train-8b-910c-seeds"}
    (fp8,) = [row for row in ROWS if row.precision]
    assert fp8.key == "prefill-70b-h100"
    assert fp8.precision == "FP8"
    h100 = load_hardware("h100-pcie5")
    line = table_row(9, Result(fp8, h100, Modelled(0.4, 1.0, frozenset()), (0, 0)))
    assert "**FP8**" in line
    seeds = next(row for row in ROWS if row.key == "train-8b-910c-seeds")
    assert seeds.preset == "ascend-910c"
    assert seeds.published.step_s() == 5.2
