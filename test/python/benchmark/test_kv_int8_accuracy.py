"""`bench/kv_int8_accuracy.py` on a short generation: the measurements are sane."""

import pytest

pytest.importorskip("torch")

from kv_int8_accuracy import measure


@pytest.mark.parametrize("model", ["tiny-llama", "tiny-gpt"])
def test_a_short_generation_measures_a_small_loss(model: str) -> None:
    row = measure(model, tokens=4, prompt_len=4, seed=0)
    assert 0 < row.attention_error < row.attention_scale / 10
    assert 0.999 < row.cosine_min <= row.cosine_first <= 1.0 + 1e-12
    assert row.logits_error > 0
    assert 0 <= row.teacher_forced <= 1
    assert 0 <= row.free_running <= 1
    # head_dim 16 in f32: 16 B of int8 and a 2 B scale instead of 64 B
    assert row.kv_fraction == pytest.approx(18 / 64)
