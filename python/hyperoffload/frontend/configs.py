"""
Model configurations of the frontend's zoo (no torch needed to read them).

Each `ModelConfig` names a family (`llama`, `gpt` or `moe`) and its dimensions.
The published models keep their published dimensions; `tiny-*` are small
versions of each family for tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Literal, NamedTuple

from hyperoffload.support.kv_blocks import blocks_read

Family = Literal["llama", "gpt", "moe"]

AttentionKind = Literal["full", "blocked", "window", "topk"]
ATTENTION_KINDS: tuple[AttentionKind, ...] = ("full", "blocked", "window", "topk")
"""Attention variants (see `AttentionSpec`)."""

DEFAULT_KV_BLOCK = 16
"""Tokens per KV block when none is asked for."""

Visibility = Literal["none", "some", "all"]

RouterKind = Literal["sigmoid", "softmax"]
ROUTER_KINDS: tuple[RouterKind, ...] = ("sigmoid", "softmax")
"""How an MoE layer scores its experts (see `ModelConfig.router`)."""

ExpertsMode = Literal["dense", "routed"]
EXPERTS_MODES: tuple[ExpertsMode, ...] = ("dense", "routed")
"""
How an MoE layer's routed experts are exported: ``dense`` computes every
expert on its dispatched rows; ``routed`` runs each expert under an
`scf.if` on whether any token chose it (`hyperoffload.frontend.route_experts`).
"""


class KVKind(IntEnum):
    """Which half of a layer's cache a block holds (`hyperoffload.kv_block`)."""

    KEYS = 0
    VALUES = 1


class BlockTag(NamedTuple):
    """One KV block: `hyperoffload.kv_block = array<i64: layer, kind, block>`."""

    layer: int
    kind: KVKind
    block: int
    """Absolute block index: tokens [block * B, (block + 1) * B)."""

    def name(self) -> str:
        """The argument name, e.g. `k_cache.0.3` (keys of layer 0, block 3)."""
        return f"{'kv'[self.kind]}_cache.{self.layer}.{self.block}"


@dataclass(frozen=True)
class AttentionSpec:
    """
    How attention reads the KV cache.

    * ``full``: one softmax over the whole cache, one K and one V tensor per
      layer (the plain export).
    * ``blocked``: the same attention, computed over blocks of `block`
      tokens with an online softmax (running max, sum and output, as
      flash-decoding); one cache argument (or result) per block.
    * ``window``: a sliding window of `window` tokens plus `sinks` attention
      sinks (StreamingLLM): the query at position p sees the keys at
      [0, sinks) and [p - window, p] (causal), computed block by block like
      ``blocked``; a decode step reads only the blocks that hold such keys.
    * ``topk``: query-aware block selection (Quest): a decode step sees the
      `sinks`, the `recent` newest positions and the `topk` blocks whose
      per-channel key minimum and maximum give the highest upper bound of
      q·k (`hyperoffload.frontend.topk_attention`), gathered from the
      layer's pooled cache; a prefill is ``blocked``'s.

    >>> spec = AttentionSpec("window", block=16, window=32, sinks=4)
    >>> spec.decode_blocks(70)
    [0, 2, 3, 4]
    """

    kind: AttentionKind = "full"
    block: int = DEFAULT_KV_BLOCK
    window: int = 0
    sinks: int = 0
    topk: int = 0
    """Blocks a ``topk`` step selects (besides its sinks and recent positions)."""
    recent: int = 0
    """The newest positions a ``topk`` step always sees."""

    @property
    def in_blocks(self) -> bool:
        """Whether the cache is split in blocks (every kind but ``full``)."""
        return self.kind != "full"

    def n_blocks(self, length: int) -> int:
        """Blocks holding `length` positions (the last one may be shorter)."""
        return math.ceil(length / self.block)

    def bounds(self, block: int, length: int) -> range:
        """Positions of `block` in a cache of `length` positions."""
        return range(block * self.block, min((block + 1) * self.block, length))

    def decode_blocks(self, kv_len: int) -> list[int]:
        """
        The blocks a decode step at position `kv_len` reads, in increasing
        order: all of them (``blocked``), or those intersecting
        [0, sinks) and [kv_len - window, kv_len) (``window``).
        """
        return blocks_read(self.kind, self.block, self.window, self.sinks, kv_len)

    def sees(self, query: int, key: int) -> bool:
        """Whether the query at position `query` attends the key at `key`."""
        if key > query:
            return False
        return self.kind != "window" or key < self.sinks or key >= query - self.window

    def visibility(self, queries: range, keys: range) -> Visibility:
        """
        Whether the queries at positions `queries` see none, some or all of
        the keys at `keys` (both non-empty, step 1), in closed form.
        """
        q_lo, q_hi, k_lo, k_hi = (
            queries.start,
            queries.stop - 1,
            keys.start,
            keys.stop - 1,
        )
        if k_lo > q_hi:
            return "none"
        if self.kind == "window":
            sink = k_lo < self.sinks
            # some query p in [max(q_lo, k_lo), q_hi] with p - window <= k_hi
            near = max(q_lo, k_lo) <= min(q_hi, k_hi + self.window)
            if not (sink or near):
                return "none"
            # a key in [max(sinks, k_lo), k_hi] older than q_hi - window
            if max(self.sinks, k_lo) < min(k_hi + 1, q_hi - self.window):
                return "some"
        return "all" if k_hi <= q_lo else "some"

    def describe(self, kv_len: int) -> str:
        """
        The value of the `hyperoffload.kv_cache` function attribute for a cache
        of `kv_len` positions (empty for ``full``, which has none).

        >>> AttentionSpec("blocked", block=16).describe(64)
        '{attention = "blocked", block = 16 : i64, window = 0 : i64, sinks = 0 : i64, kv_len = 64 : i64}'
        """
        if not self.in_blocks:
            return ""
        if self.kind == "topk":
            return (
                f'{{attention = "topk", block = {self.block} : i64, '
                f"topk = {self.topk} : i64, sinks = {self.sinks} : i64, "
                f"recent = {self.recent} : i64, kv_len = {kv_len} : i64}}"
            )
        return (
            f'{{attention = "{self.kind}", block = {self.block} : i64, '
            f"window = {self.window} : i64, sinks = {self.sinks} : i64, "
            f"kv_len = {kv_len} : i64}}"
        )


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
    router: RouterKind = "sigmoid"
    """
    How the router turns expert logits into gates (moe family): ``sigmoid``
    (DeepSeek-V3) scores each expert with a sigmoid; ``softmax`` (Mixtral)
    takes a softmax over all experts. Either way each token keeps its top_k
    experts, with gates renormalised to sum to 1 over the chosen ones.
    """
    attention: AttentionSpec = field(default_factory=AttentionSpec)
    """How attention reads the KV cache (an export choice; ``full`` by default)."""
    expert_shard: int = 1
    """
    Devices of the expert-parallel group (moe family; an export choice,
    `hyperoffload-gen --expert-shard N`): this device holds `n_experts` / N
    routed experts of each MoE layer, those of rank `expert_rank`, and its
    tokens reach them through an all-to-all dispatch and combine (1: every
    expert on this device).
    """
    expert_rank: int = 0
    """This device's place in the expert-parallel group."""


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
    "mixtral-8x7b": ModelConfig(
        "moe",
        32000,
        4096,
        32,
        32,
        8,
        128,
        14336,
        1e-5,
        1e6,
        n_experts=8,
        top_k=2,
        n_shared_experts=0,
        expert_ffn=14336,
        n_dense_layers=0,
        router="softmax",
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
