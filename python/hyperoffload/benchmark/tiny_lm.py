"""
A small trained causal LM for the accuracy of attention variants: random
weights have no attention locality, so top-k block selection, the window
and INT8 KV are judged on a model that has learnt some.

The model is a 2-layer LLaMA-family decoder (`TINY_LM`: hidden 128, 4 query
heads over 2 KV heads of 32, SwiGLU 384) over bytes (vocabulary 256),
trained at context 2048 by `bench/train_tiny_lm.py` on the Python standard
library's own top-level modules (`corpus`): every 16th file is held back
for evaluation. The checkpoint (`CHECKPOINT`, f16, under 1 MB) is test
data.

```python
model = load_checkpoint()                     # f32 `Llama` in eval mode
train, held = corpus()                        # uint8 arrays of bytes
logits = train_logits(model, tokens)          # causal, via SDPA (training)
```
"""

from __future__ import annotations

import sysconfig
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import cast

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from hyperoffload.frontend.configs import ModelConfig
from hyperoffload.frontend.models import (
    Llama,
    LlamaBlock,
    apply_rope,
    rope_tables,
)

TINY_LM = ModelConfig("llama", 256, 128, 2, 4, 2, 32, 384, 1e-5)
"""The trained model's dimensions (bytes in, bytes out)."""
TINY_MOE_LM = replace(
    TINY_LM,
    family="moe",
    n_experts=8,
    top_k=2,
    n_shared_experts=1,
    expert_ffn=96,
    n_dense_layers=0,
    router="softmax",
)
"""The same model with a routed MoE FFN (8 experts, top 2, one shared)."""
CONTEXT = 2048
"""Positions it is trained at."""
HELD_EVERY = 16
"""Every HELD_EVERY-th corpus file (sorted by name) is held back."""
CHECKPOINT = (
    Path(__file__).resolve().parents[3]
    / "test"
    / "inputs"
    / "tiny_lm"
    / "tiny-lm-2k.npz"
)
"""The trained weights (f16), written by `bench/train_tiny_lm.py`."""
MOE_CHECKPOINT = CHECKPOINT.with_name("tiny-moe-lm-2k.npz")
"""The MoE model's weights (`bench/train_tiny_lm.py --moe`)."""


def corpus_files() -> list[Path]:
    """The standard library's top-level modules, sorted by name."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return sorted(stdlib.glob("*.py"), key=lambda p: p.name)


def corpus() -> tuple[np.ndarray, np.ndarray]:
    """(training bytes, held-back bytes): files joined by blank lines."""
    train: list[bytes] = []
    held: list[bytes] = []
    for i, path in enumerate(corpus_files()):
        (held if i % HELD_EVERY == 0 else train).append(path.read_bytes())
    join = b"\n\n".join
    return (
        np.frombuffer(join(train), dtype=np.uint8),
        np.frombuffer(join(held), dtype=np.uint8),
    )


def train_logits(model: Llama, tokens: Tensor) -> Tensor:
    """
    The logits of `model` over `tokens` (batch, seq), causal, computed with
    `scaled_dot_product_attention` (the training path: no (seq, seq) score
    tensor); equal to `model(tokens)[0]` up to rounding.
    """
    cfg = model.cfg
    x = model.tok_embeddings(tokens)
    b, s = tokens.shape
    cos, sin = rope_tables(cfg, 0, s, x.device)
    for layer in cast(Sequence[LlamaBlock], model.layers):
        attention = layer.attention
        h = layer.attention_norm(x)
        q = apply_rope(attention._heads(attention.wq(h), cfg.n_heads), cos, sin)  # pyright: ignore[reportPrivateUsage]
        k = apply_rope(attention._heads(attention.wk(h), cfg.n_kv_heads), cos, sin)  # pyright: ignore[reportPrivateUsage]
        v = attention._heads(attention.wv(h), cfg.n_kv_heads)  # pyright: ignore[reportPrivateUsage]
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + attention.wo(out.transpose(1, 2).reshape(b, s, -1))
        x = x + layer.feed_forward(layer.ffn_norm(x))
    return model.output(model.norm(x))


def save_checkpoint(model: Llama, path: Path = CHECKPOINT) -> None:
    """The weights as f16 arrays, one per parameter name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {
        name: p.detach().to(torch.float16).numpy()
        for name, p in model.named_parameters()
    }
    np.savez_compressed(path, **arrays)  # pyright: ignore[reportArgumentType]


def load_checkpoint(path: Path = CHECKPOINT, cfg: ModelConfig = TINY_LM) -> Llama:
    """The trained model (f32, eval mode); `FileNotFoundError` if not trained."""
    model = Llama(cfg)
    with np.load(path) as arrays:
        state = {
            name: torch.tensor(arrays[name].astype(np.float32)) for name in arrays.files
        }
    model.load_state_dict(state)
    return model.eval()
