"""
Model configurations of the frontend's zoo (no torch needed to read them).

Each `ModelConfig` names a family (`llama`, `gpt` or `moe`) and its dimensions.
The published models keep their published dimensions; `tiny-*` are small
versions of each family for tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Family = Literal["llama", "gpt", "moe"]


@dataclass(frozen=True)
class ModelConfig:
    """Dimensions of one decoder-only model."""

    family: Family
    vocab_size: int
    hidden: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    ffn_hidden: int
    """Dense feed-forward width (SwiGLU or GELU MLP)."""
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    max_positions: int = 2048
    """Learned position table size (gpt family)."""
    n_experts: int = 0
    """Routed experts per MoE layer (moe family)."""
    top_k: int = 0
    """Routed experts each token uses (moe family)."""
    n_shared_experts: int = 0
    expert_ffn: int = 0
    """Width of each routed and shared expert (moe family)."""
    n_dense_layers: int = 0
    """Leading decoder layers with a dense SwiGLU FFN instead of MoE (moe family)."""
    capacity_factor: float = 1.25
    """
    Routed-expert capacity over an even share: each expert takes at most
    min(T, ceil(T * top_k / n_experts * capacity_factor)) of T tokens (moe family).
    """


CONFIGS: dict[str, ModelConfig] = {
    "llama3-8b": ModelConfig(
        "llama", 128256, 4096, 32, 32, 8, 128, 14336, 1e-5, 500000.0
    ),
    "llama2-7b": ModelConfig("llama", 32000, 4096, 32, 32, 32, 128, 11008, 1e-5),
    "llama-65b": ModelConfig("llama", 32000, 8192, 80, 64, 64, 128, 22016, 1e-5),
    "llama2-70b": ModelConfig("llama", 32000, 8192, 80, 64, 8, 128, 28672, 1e-5),
    "gpt3-175b": ModelConfig(
        "gpt", 50257, 12288, 96, 96, 96, 128, 49152, 1e-5, max_positions=2048
    ),
    # Simplified attention: standard MHA with 128 heads of 128 (no MLA).
    "deepseek-v3": ModelConfig(
        "moe",
        129280,
        7168,
        61,
        128,
        128,
        128,
        18432,
        1e-6,
        n_experts=256,
        top_k=8,
        n_shared_experts=1,
        expert_ffn=2048,
        n_dense_layers=3,
    ),
    "tiny-llama": ModelConfig("llama", 128, 64, 2, 4, 2, 16, 128, 1e-5),
    "tiny-gpt": ModelConfig("gpt", 128, 64, 2, 4, 4, 16, 256, 1e-5, max_positions=64),
    "tiny-moe": ModelConfig(
        "moe",
        128,
        64,
        2,
        4,
        4,
        16,
        128,
        1e-5,
        n_experts=4,
        top_k=2,
        n_shared_experts=1,
        expert_ffn=32,
        n_dense_layers=0,
    ),
}
"""Every model `hyperoffload-gen` knows, by name."""

MODES = ("forward", "train", "prefill", "decode")
"""Export modes (see `hyperoffload.frontend.torch_export`)."""


def get_config(name: str) -> ModelConfig:
    """The configuration called `name`; `ValueError` naming the known ones."""
    try:
        return CONFIGS[name]
    except KeyError:
        known = ", ".join(CONFIGS)
        raise ValueError(f"unknown model {name!r} (known: {known})") from None
