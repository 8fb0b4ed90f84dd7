"""
Recording which experts an MoE model's router chooses, as a routing trace
(`hyperoffload.model.routing`, replayed with `--routing trace:FILE`): the model
runs in eager PyTorch on the CPU, one prefill forward over a prompt of
seeded random token ids, and each MoE layer reports the `top_k` experts of
every token, by descending router score (`MoE.recorded`). The choice is
recorded before capacity dispatch: a token over an expert's capacity still
lists it (and skips it, as `MoE` does, so later layers see the dropped
token's hidden state).

```python
from hyperoffload.frontend import get_config
from hyperoffload.support.outputs import write_output

cfg = moe_config(get_config("mixtral-8x7b"), layers=4)
trace = record_routing(cfg, tokens=64, seed=0)
trace.tokens[5][2]        # token 5, MoE layer 2: its two experts, best first
write_output(Path("mixtral.json"), trace_json(trace))
```

The weights are seeded random, not trained: no checkpoint is available
offline, so a trace records how these weights route, not how a trained
model does (trained routers are known to be more skewed). Recording a
checkpoint's routing would need loading code that this module does not
provide (mapping its tensor names onto the zoo's modules).

Every parameter is drawn from its own generator, seeded by the seed and
its qualified name (`layers.3.feed_forward.experts.17.w1.weight`), with
PyTorch's default distribution for its module: a `Linear`'s weight and bias
uniform in ±1/sqrt(in_features), an `Embedding` normal(0, 1), norms ones
(and zeros). So a weight does not depend on which others are built, and
routed experts need not be materialised together (DeepSeek-V3's two MoE
layers hold 45 GB of them in bf16): each one draws its weights when it runs,
into one buffer that all of them share (`ExpertScratch`). An expert no token reaches (its dispatched rows all
zero) is skipped, which is exact, as a SwiGLU without bias maps zero to
zero. The output head is not built: routing never reads the logits.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from typing import cast

import torch
from torch import Tensor, nn
from torch.func import functional_call

from hyperoffload.frontend.configs import CONFIGS, ModelConfig
from hyperoffload.frontend.models import FeedForward, RMSNorm, build_model, moe_layers
from hyperoffload.frontend.torch_export import with_layers
from hyperoffload.model.routing import Trace, parse_trace

MOE_MODELS = tuple(name for name, cfg in CONFIGS.items() if cfg.family == "moe")
"""The models whose routing can be recorded."""


def moe_config(
    cfg: ModelConfig, layers: int | None = None, dense_layers: int | None = None
) -> ModelConfig:
    """
    `cfg` cut to `layers` decoder layers, `dense_layers` of them dense (each
    the model's when None); `ValueError` unless some layer is an MoE layer.
    """
    if cfg.family != "moe":
        raise ValueError(
            f"routing is recorded on the moe family ({', '.join(MOE_MODELS)}); "
            f"this model is of the {cfg.family} family"
        )
    cfg = with_layers(cfg, layers, dense_layers)
    if cfg.n_layers <= cfg.n_dense_layers:
        raise ValueError("no MoE layer to record: every layer is dense")
    return cfg


def record_routing(
    cfg: ModelConfig,
    tokens: int = 64,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
    prompt_seed: int | None = None,
) -> Trace:
    """
    The experts each of `tokens` seeded random token ids (`prompt_seed`,
    default `seed`) chooses at each MoE layer of `cfg` with the weights of
    `seed` (computed in `dtype`), checked.
    """
    if tokens < 1:
        raise ValueError(f"at least one token is needed, not {tokens}")
    model = lazy_model(cfg, seed, dtype)
    prompt = sample_tokens(cfg, tokens, seed if prompt_seed is None else prompt_seed)
    chosen = record(model, prompt)
    data = {"experts": cfg.n_experts, "top_k": cfg.top_k, "tokens": chosen}
    return parse_trace(data, f"<{cfg.n_layers}-layer model, seed {seed}>")


def trace_json(trace: Trace) -> str:
    """The trace file's text: one token per line."""
    rows = ",\n".join(
        "  " + json.dumps([list(layer) for layer in token]) for token in trace.tokens
    )
    return (
        f'{{"experts": {trace.experts}, "top_k": {trace.top_k}, "tokens": [\n'
        f"{rows}\n]}}\n"
    )


def sample_tokens(cfg: ModelConfig, count: int, seed: int) -> Tensor:
    """A (1, count) prompt of token ids uniform in the vocabulary, seeded."""
    generator = _generator(seed, "tokens")
    return torch.randint(0, cfg.vocab_size, (1, count), generator=generator)


def record(model: nn.Module, tokens: Tensor) -> list[list[list[int]]]:
    """
    tokens x MoE layers -> the experts chosen, by descending score, for one
    forward of `model` on `tokens` (batch, seq), tokens in row-major order.
    """
    layers = [moe for _, moe in moe_layers(model)]
    if not layers:
        raise ValueError("the model has no MoE layer: nothing is routed")
    for moe in layers:
        moe.recorded = []
    try:
        with torch.inference_mode():
            model(tokens)
        per_layer = [
            cast(list[list[int]], torch.cat(moe.recorded or []).numpy().tolist())
            for moe in layers
        ]
    finally:
        for moe in layers:
            moe.recorded = None
    return [list(token) for token in zip(*per_layer, strict=True)]


def seed_weights(module: nn.Module, seed: int, prefix: str = "") -> None:
    """
    Draw every parameter of `module` (in place) from the generator of `seed`
    and its qualified name, `prefix` being `module`'s own.
    """
    with torch.no_grad():
        named = cast(
            Iterator[tuple[str, nn.Module]], module.named_modules(prefix=prefix)
        )
        for name, sub in named:
            own = list(sub.named_parameters(prefix=name, recurse=False))
            if isinstance(sub, nn.Linear):
                bound = 1 / math.sqrt(sub.in_features)
                for key, param in own:
                    param.uniform_(-bound, bound, generator=_generator(seed, key))
            elif isinstance(sub, nn.Embedding):
                for key, param in own:
                    param.normal_(generator=_generator(seed, key))
            elif isinstance(sub, RMSNorm | nn.LayerNorm):
                for key, param in own:
                    param.fill_(0.0 if key.endswith(".bias") else 1.0)
            elif own:
                raise TypeError(f"no seeded distribution for {name} ({sub})")


def lazy_model(cfg: ModelConfig, seed: int, dtype: torch.dtype) -> nn.Module:
    """
    `cfg`'s model with the weights of `seed` (`seed_weights`) in `dtype`,
    its routed experts drawn when they run (`SeededExpert`), without the
    output head.
    """
    with torch.device("meta"):
        model = build_model(cfg)
    scratch = ExpertScratch(cfg.hidden, cfg.expert_ffn, seed)
    for index, moe in moe_layers(model):
        prefix = f"layers.{index}.feed_forward.experts"
        moe.experts = nn.ModuleList(
            SeededExpert(scratch, f"{prefix}.{e}") for e in range(cfg.n_experts)
        )
    model.register_module("output", nn.Identity())
    model.to_empty(device="cpu")
    seed_weights(model, seed)
    return model.to(dtype)


class ExpertScratch:
    """
    One routed expert's weights (f32), redrawn in place for each expert that
    runs: the experts of a model share one buffer, touched once (allocating
    an expert's weights afresh each time costs as much as drawing them).
    Not a module, so that it stays out of the model's parameters.
    """

    def __init__(self, hidden: int, width: int, seed: int) -> None:
        with torch.device("meta"):
            self.expert = FeedForward(hidden, width)
        self.expert.to_empty(device="cpu")
        self.seed = seed

    def run(self, name: str, x: Tensor) -> Tensor:
        """The expert `name` (its `seed_weights`) applied to x, in x's dtype."""
        seed_weights(self.expert, self.seed, name)
        weights = {k: w.to(x.dtype) for k, w in self.expert.named_parameters()}
        return functional_call(self.expert, weights, (x,))


class SeededExpert(nn.Module):
    """
    A routed expert without parameters: a forward that has work draws the
    weights `seed_weights` gives the expert called `name` (into `scratch`)
    and runs them.
    """

    def __init__(self, scratch: ExpertScratch, name: str) -> None:
        super().__init__()
        self.scratch, self.name = scratch, name

    def forward(self, x: Tensor) -> Tensor:
        if not bool(x.any()):
            return torch.zeros_like(x)  # no token reached it: SwiGLU(0) = 0
        return self.scratch.run(self.name, x)


def _generator(seed: int, name: str) -> torch.Generator:
    """A generator seeded by `seed` and `name` (a parameter's qualified name)."""
    digest = hashlib.blake2b(f"{seed}:{name}".encode(), digest_size=8).digest()
    return torch.Generator().manual_seed(int.from_bytes(digest, "little"))
