"""
What INT8 KV compression (`compress-kv=int8`) costs in accuracy, on the tiny
models of the zoo with random weights (fixed seeds, f32, CPU, a few
seconds): the KV cache round-tripped through the quantiser of compressed
transfers (`hyperoffload.support.quantize`, per-row absmax INT8 with f16
scales: per token and head) against the exact cache.

- attention error: the largest absolute difference of layer 0's attention
  output (after its output projection) at the first decode step, and that
  output's largest magnitude;
- logits: their cosine similarity at the first decode step, and the lowest
  over the generation (each step fed the exact run's token), printed as
  `1 - cosine`, and the largest absolute logit difference over it;
- top-1 agreement over a 64-token greedy generation after an 8-token
  prompt: teacher-forced (each step fed the exact run's token; the fraction
  of steps whose argmax agrees) and free-running (each run its own tokens;
  the tokens equal position by position, and the first position where they
  part).

The compressed run stores each step's new KV entries compressed (the
prefill's too), as a plan with `compress-kv=int8` does; the current step's
own K/V are read exact.

    .venv/bin/python bench/kv_int8_accuracy.py [--tokens 64] [--prompt 8] [--seed 0]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from typing import cast

import numpy as np
import torch
from torch import Tensor, nn

from hyperoffload.frontend.configs import ModelConfig, get_config
from hyperoffload.frontend.models import build_model
from hyperoffload.support.quantize import compressed_bytes, round_trip

MODELS = ("tiny-llama", "tiny-gpt")

Cache = list[tuple[Tensor, Tensor]]


def compress(t: Tensor) -> Tensor:
    """`t` round-tripped through the INT8 quantiser (rows along its last dim)."""
    return torch.as_tensor(round_trip(t.detach().cpu().numpy()))


def _append(cache: Cache, new: Cache, lossy: bool) -> Cache:
    """`cache` with each layer's new `(k, v)` entries appended (compressed if `lossy`)."""
    out: Cache = []
    for i, (k, v) in enumerate(new):
        if lossy:
            k, v = compress(k), compress(v)
        if cache:
            k = torch.cat([cache[i][0], k], dim=2)
            v = torch.cat([cache[i][1], v], dim=2)
        out.append((k, v))
    return out


def _attention_of_layer_0(model: nn.Module) -> nn.Module:
    layer = model.layers[0]  # pyright: ignore[reportIndexIssue, reportUnknownVariableType]
    found = getattr(layer, "attention", None) or getattr(layer, "attn", None)  # pyright: ignore[reportUnknownArgumentType]
    assert isinstance(found, nn.Module)
    return found


@dataclass
class Row:
    model: str
    kv_fraction: float
    """Compressed KV bytes over f32 KV bytes."""
    attention_error: float
    attention_scale: float
    cosine_first: float
    cosine_min: float
    logits_error: float
    """The largest absolute logit difference over the generation (teacher-forced)."""
    teacher_forced: float
    free_running: float
    first_divergence: int | None


class _Run:
    """One model generating greedily with an exact and a compressed cache."""

    def __init__(self, cfg: ModelConfig, seed: int):
        torch.manual_seed(seed)  # pyright: ignore[reportUnknownMemberType]
        self.cfg = cfg
        self.model = build_model(cfg).eval()
        self.captured: list[Tensor] = []
        _attention_of_layer_0(self.model).register_forward_hook(self._capture)

    def _capture(self, module: nn.Module, args: object, output: object) -> None:
        assert isinstance(output, tuple)
        out = output[0]  # pyright: ignore[reportUnknownVariableType]
        assert isinstance(out, Tensor)
        self.captured.append(out.detach())

    def step(
        self, tokens: Tensor, cache: Cache, offset: int
    ) -> tuple[Tensor, Cache, Tensor]:
        """Logits of the last position, the new cache entries, layer 0's attention."""
        self.captured.clear()
        logits, new = self.model(tokens, cache or None, offset)
        assert isinstance(logits, Tensor)
        return logits[0, -1], cast(Cache, new), self.captured[-1]


def measure(name: str, tokens: int, prompt_len: int, seed: int) -> Row:
    cfg = get_config(name)
    if cfg.family == "gpt":  # room for the prompt and the generation
        cfg = replace(cfg, max_positions=max(cfg.max_positions, prompt_len + tokens))
    run = _Run(cfg, seed)
    rng = np.random.default_rng(seed + 1)
    prompt = torch.as_tensor(rng.integers(cfg.vocab_size, size=(1, prompt_len)))
    with torch.no_grad():
        logits, new, _ = run.step(prompt, [], 0)
        exact, lossy = _append([], new, False), _append([], new, True)
        free_exact, free_lossy = exact, lossy
        token = token_free_exact = token_free_lossy = int(logits.argmax())
        agree = same = 0
        first_divergence: int | None = None
        cosines: list[float] = []
        logits_error = 0.0
        attention_error = attention_scale = 0.0
        for step in range(tokens):
            offset = prompt_len + step
            feed = torch.tensor([[token]])
            want, new_exact, attn_exact = run.step(feed, exact, offset)
            got, new_lossy, attn_lossy = run.step(feed, lossy, offset)
            if step == 0:
                attention_error = float((attn_exact - attn_lossy).abs().max())
                attention_scale = float(attn_exact.abs().max())
            cosine = torch.cosine_similarity(want.double(), got.double(), dim=0)
            cosines.append(float(cosine))
            logits_error = max(logits_error, float((want - got).abs().max()))
            agree += int(want.argmax()) == int(got.argmax())
            exact = _append(exact, new_exact, False)
            lossy = _append(lossy, new_lossy, True)
            token = int(want.argmax())
            # free-running: each run continues with its own tokens
            a, new_a, _ = run.step(
                torch.tensor([[token_free_exact]]), free_exact, offset
            )
            b, new_b, _ = run.step(
                torch.tensor([[token_free_lossy]]), free_lossy, offset
            )
            free_exact = _append(free_exact, new_a, False)
            free_lossy = _append(free_lossy, new_b, True)
            token_free_exact, token_free_lossy = int(a.argmax()), int(b.argmax())
            if token_free_exact == token_free_lossy:
                same += 1
            elif first_divergence is None:
                first_divergence = step
    k0 = exact[0][0]
    shape = tuple(k0.shape)
    fraction = compressed_bytes(shape) / (k0.numel() * 4)
    return Row(
        name,
        fraction,
        attention_error,
        attention_scale,
        cosines[0],
        min(cosines),
        logits_error,
        agree / tokens,
        same / tokens,
        first_divergence,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--prompt", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    torch.set_num_threads(1)
    rows = [measure(m, options.tokens, options.prompt, options.seed) for m in MODELS]
    print(
        f"INT8 KV (per token and head, f16 scales) against the exact f32 cache: "
        f"{options.prompt}-token prompt, {options.tokens} greedy tokens, seed {options.seed}"
    )
    header = (
        "| model | KV bytes (of f32) | attn max abs err (layer 0, step 1) | "
        "1 - logits cosine (step 1 / worst) | max abs logit err | "
        "top-1 teacher-forced | top-1 free-running |"
    )
    print(header)
    print("|" + " --- |" * 7)
    for r in rows:
        parted = "none" if r.first_divergence is None else f"from {r.first_divergence}"
        print(
            f"| {r.model} | {r.kv_fraction:.1%} | {r.attention_error:.2e} "
            f"(of max {r.attention_scale:.2e}) | {1 - r.cosine_first:.1e} / {1 - r.cosine_min:.1e} | {r.logits_error:.1e} | "
            f"{r.teacher_forced:.1%} | {r.free_running:.1%} (parted: {parted}) |"
        )


if __name__ == "__main__":
    main()
