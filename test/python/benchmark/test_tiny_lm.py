"""
The trained checkpoint of `hyperoffload.benchmark.tiny_lm` (test data): it
loads into the model its script trains, stays small, and the training
forward (SDPA) computes what the model's own forward computes.
"""

import json
from importlib import import_module
from pathlib import Path
from typing import Any

import numpy as np

from hyperoffload.benchmark.tiny_lm import (
    CHECKPOINT,
    HELD_EVERY,
    MOE_CHECKPOINT,
    TINY_LM,
    TINY_MOE_LM,
    corpus_files,
    load_checkpoint,
    train_logits,
)
from hyperoffload.model.routing import parse_trace

torch: Any = import_module("torch")

ROUTING = Path(__file__).parents[3] / "bench" / "routing" / "tiny-moe-lm.json"


def test_checkpoint_loads_and_is_small() -> None:
    assert CHECKPOINT.stat().st_size < 2_000_000
    model = load_checkpoint()
    assert model.cfg == TINY_LM
    assert not model.training


def test_training_forward_is_the_model() -> None:
    model = load_checkpoint()
    text = np.frombuffer(b"def f(x):\n    return x + 1\n", np.uint8)
    tokens = torch.tensor(text.astype(np.int64))[None]
    with torch.no_grad():
        want, _ = model(tokens)
        got = train_logits(model, tokens)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_held_back_files_are_not_trained_on() -> None:
    files = corpus_files()
    assert len(files) > HELD_EVERY
    assert [p.name for p in files] == sorted(p.name for p in files)


def test_moe_checkpoint_and_its_trace() -> None:
    assert MOE_CHECKPOINT.stat().st_size < 2_000_000
    model = load_checkpoint(MOE_CHECKPOINT, TINY_MOE_LM)
    assert model.cfg == TINY_MOE_LM
    trace = parse_trace(json.loads(ROUTING.read_text()), str(ROUTING))
    assert (trace.experts, trace.top_k, trace.layers) == (8, 2, 2)
    assert len(trace.tokens) == 512
