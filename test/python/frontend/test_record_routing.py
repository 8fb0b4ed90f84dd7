"""
Routing recording (`hyperoffload.frontend.record_routing`, `hyperoffload-gen
MODEL --record-routing FILE`) on tiny-moe: the trace holds, token by token
and layer by layer, the experts eager PyTorch's router chooses, by
descending score; it loads as a routing trace; it is a function of the seed;
the lazily drawn experts give the routing of the materialised model. Needs
the `torch` extra, as `test_frontend.py`.
"""

from dataclasses import replace
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest

from hyperoffload.frontend import ModelConfig, get_config
from hyperoffload.frontend.models import build_model, moe_layers, top_k_mask
from hyperoffload.frontend.record_routing import (
    lazy_model,
    moe_config,
    record,
    record_routing,
    sample_tokens,
    seed_weights,
    trace_json,
)
from hyperoffload.model.routing import load_trace, parse_routing
from hyperoffload.tools.hyperoffload_gen import main as gen_main

torch: Any = import_module("torch")

TINY = moe_config(get_config("tiny-moe"))
SOFTMAX = replace(TINY, router="softmax", n_shared_experts=0)
"""tiny-moe with Mixtral's router and no shared expert."""
MIXED = moe_config(TINY, layers=3, dense_layers=1)
"""A dense layer first: the MoE layers are decoder layers 1 and 2."""
TOKENS = 12


def _eager_routing(model: Any, tokens: Any) -> list[list[list[int]]]:
    """
    tokens x MoE layers -> experts, found apart from `MoE.recorded`: each
    gate's logits from a forward hook, scored, `top_k_mask`, then sorted by
    score in Python.
    """
    layers = [moe for _, moe in moe_layers(model)]
    logits: list[Any] = []
    hooks = [
        moe.gate.register_forward_hook(lambda _m, _i, out: logits.append(out))
        for moe in layers
    ]
    with torch.no_grad():
        model(tokens)
    for hook in hooks:
        hook.remove()
    per_layer: list[list[list[int]]] = []
    for moe, z in zip(layers, logits, strict=True):
        scores = torch.softmax(z, -1) if moe.router == "softmax" else torch.sigmoid(z)
        chosen = top_k_mask(scores, moe.top_k)
        rows: list[list[int]] = []
        for t in range(scores.shape[0]):
            experts = [e for e in range(scores.shape[1]) if chosen[t, e] > 0]
            rows.append(sorted(experts, key=lambda e: -float(scores[t, e])))
        per_layer.append(rows)
    return [list(token) for token in zip(*per_layer, strict=True)]


def _materialised(cfg: ModelConfig, seed: int) -> Any:
    model = build_model(cfg)
    seed_weights(model, seed)
    return model


@pytest.mark.parametrize(
    "cfg", [TINY, SOFTMAX, MIXED], ids=["sigmoid", "softmax", "mixed"]
)
def test_trace_is_the_routers_choice(cfg: ModelConfig) -> None:
    model = _materialised(cfg, seed=0)
    tokens = sample_tokens(cfg, TOKENS, seed=0)
    got = record(model, tokens)
    assert got == _eager_routing(model, tokens)
    assert all(moe.recorded is None for _, moe in moe_layers(model))


@pytest.mark.parametrize("count", [1, TOKENS])
@pytest.mark.parametrize("cfg", [TINY, MIXED], ids=["moe", "mixed"])
def test_lazy_experts_route_as_the_materialised_model(
    cfg: ModelConfig, count: int
) -> None:
    """One token chooses 2 of 4 experts: the other two are skipped, exactly."""
    recorded = record_routing(cfg, count, seed=4)
    model = _materialised(cfg, seed=4)
    assert [list(map(list, token)) for token in recorded.tokens] == record(
        model, sample_tokens(cfg, count, seed=4)
    )


def test_lazy_model_computes_the_materialised_hidden_states() -> None:
    """Routing aside, the lazy model's last hidden state is, exactly, the other's."""
    tokens = sample_tokens(TINY, TOKENS, seed=2)
    lazy, full = lazy_model(TINY, 2, torch.float32), _materialised(TINY, 2)
    full.register_module("output", torch.nn.Identity())  # as the lazy model's
    with torch.no_grad():
        (got, _), (want, _) = lazy(tokens), full(tokens)
    torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_trace_shape_loads_and_replays(tmp_path: Path) -> None:
    trace = record_routing(TINY, TOKENS, seed=0)
    assert len(trace.tokens) == TOKENS
    assert trace.layers == TINY.n_layers
    assert (trace.experts, trace.top_k) == (4, 2)
    assert all(len(set(layer)) == 2 for token in trace.tokens for layer in token)
    path = tmp_path / "trace.json"
    path.write_text(trace_json(trace))
    assert load_trace(path).tokens == trace.tokens
    routing = parse_routing(f"trace:{path}")
    replayed = routing.sample(layers=2, experts=4, top_k=2, tokens=TOKENS)
    assert replayed == [list(token) for token in trace.tokens]


def test_trace_is_a_function_of_the_seed() -> None:
    first = record_routing(TINY, TOKENS, seed=0).tokens
    assert record_routing(TINY, TOKENS, seed=0).tokens == first
    assert record_routing(TINY, TOKENS, seed=1).tokens != first


def test_prompt_seed_keeps_the_weights() -> None:
    """Another prompt on the same weights: the trace the prompt's ids give that model."""
    model = lazy_model(TINY, 0, torch.float32)
    other = sample_tokens(TINY, TOKENS, 7)
    recorded = record_routing(TINY, TOKENS, seed=0, prompt_seed=7).tokens
    assert recorded != record_routing(TINY, TOKENS, seed=0).tokens
    assert [list(map(list, t)) for t in recorded] == record(model, other)


def test_gen_tool_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "routing.json"
    argv = ["tiny-moe", "--record-routing", str(path), "--record-tokens", "8"]
    assert gen_main([*argv, "--seed", "3"]) == 0
    assert load_trace(path).tokens == record_routing(TINY, 8, seed=3).tokens
    err = capsys.readouterr().err
    assert f"wrote {path}: 8 tokens, 2 MoE layers, 4 experts, top_k 2" in err
    assert "distinct experts chosen per layer" in err
    assert [p.name for p in tmp_path.iterdir()] == ["routing.json"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tiny-llama", "--record-routing", "{}"], "moe family"),
        (["tiny-moe", "--record-routing", "{}", "--dense-layers", "2"], "every layer"),
        (["tiny-moe", "--record-routing", "{}", "--mode", "decode"], "--mode: no IR"),
        (["tiny-moe", "--record-routing", "{}", "-o", "x.mlir"], "-o: no IR"),
        (["tiny-moe", "--record-routing", "{}", "--record-tokens", "0"], "positive"),
        (["tiny-moe", "--seed", "1"], "need --record-routing"),
    ],
)
def test_gen_tool_reports_recording_errors(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "routing.json"
    assert gen_main([arg.format(path) for arg in argv]) == 1
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert not path.exists()
