"""
The decode step of a ``topk`` attention variant, as `torch_export` traces it
(`hyperoffload-gen ... --mode decode --attention topk`).

Each layer's cache is four arguments: the pooled keys and values
`(n_blocks, batch, kv_heads, block, head_dim)`, tagged for the pool
(`hyperoffload.kv_pool = array<i64: layer, kind>`), and the per-block key
minimum and maximum `(n_blocks, batch, kv_heads, head_dim)`, which stay in
HBM (`hyperoffload.kv_summary = array<i64: layer, 0 | 1>`, as Quest keeps its
page metadata on the device). The step returns the logits and the new
entries, as every decode step does; the caller appends them to the tail
block and updates its summary.

```mlir
func.func @decode(%arg0: tensor<1x1xi64>,
    %arg1: tensor<4x1x2x16x16xf32> {hyperoffload.category = "kv",
        hyperoffload.tier = #hyperoffload.tier<remote>,
        hyperoffload.kv_pool = array<i64: 0, 0>}, ...,
    %arg3: tensor<4x1x2x16xf32> {hyperoffload.category = "kv",
        hyperoffload.kv_summary = array<i64: 0, 0>}, ...) -> (...)
    attributes {hyperoffload.kv_cache = {attention = "topk", block = 16 : i64,
        topk = 1 : i64, sinks = 4 : i64, recent = 16 : i64, kv_len = 64 : i64}}
```

The selected blocks are read by an `index_select` of the pool (a
`linalg.generic` whose body extracts from the pool argument).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor, nn

from hyperoffload.frontend.configs import ModelConfig
from hyperoffload.frontend.models import ForwardFn, LayerCache, PastCache
from hyperoffload.frontend.topk_attention import PooledCache

KV_POOL_ATTR = "hyperoffload.kv_pool"
"""A pooled cache argument: `array<i64: layer, kind>` (kind 0 keys, 1 values)."""
KV_SUMMARY_ATTR = "hyperoffload.kv_summary"
"""A key summary argument: `array<i64: layer, 0 (minimum) | 1 (maximum)>`."""


def topk_cache_args(
    cfg: ModelConfig, batch: int, kv_len: int, dtype: torch.dtype
) -> tuple[list[str], list[tuple[tuple[int, ...], torch.dtype]], list[str]]:
    """
    The cache arguments of a ``topk`` decode step: names, shapes and the
    attributes of each (without the tier, which `tag_args` adds to the pool).
    """
    spec = cfg.attention
    n = math.ceil(kv_len / spec.block)
    pool = (n, batch, cfg.n_kv_heads, spec.block, cfg.head_dim)
    summary = (n, batch, cfg.n_kv_heads, cfg.head_dim)
    names: list[str] = []
    specs: list[tuple[tuple[int, ...], torch.dtype]] = []
    attrs: list[str] = []
    for layer in range(cfg.n_layers):
        for kind, name in enumerate(("k_pool", "v_pool")):
            names.append(f"{name}.{layer}")
            specs.append((pool, dtype))
            attrs.append(f"{KV_POOL_ATTR} = array<i64: {layer}, {kind}>")
        for which, name in enumerate(("k_min", "k_max")):
            names.append(f"{name}.{layer}")
            specs.append((summary, dtype))
            attrs.append(f"{KV_SUMMARY_ATTR} = array<i64: {layer}, {which}>")
    return names, specs, attrs


class TopkDecodeFn:
    """
    ``(token, k_pool0, v_pool0, k_min0, k_max0, ..., *params) -> (logits,
    k0n, v0n, ...)``: one decode step over pooled caches of `kv_len`
    positions.
    """

    def __init__(self, model: nn.Module, cfg: ModelConfig, kv_len: int) -> None:
        self.forward = ForwardFn(model)
        self.cfg = cfg
        self.kv_len = kv_len

    def __call__(self, tokens: Tensor, *args: Tensor) -> tuple[Tensor, ...]:
        n = 4 * self.cfg.n_layers
        flat, params = args[:n], args[n:]
        past: list[PastCache] = []
        for i in range(self.cfg.n_layers):
            k, v, low, high = flat[4 * i : 4 * i + 4]
            past.append(PooledCache(k, v, low, high, self.kv_len, self.cfg.attention))
        logits, cache = self.forward.run(tokens, params, past, self.kv_len)
        return (logits, *_pairs(cache))


def _pairs(cache: Sequence[LayerCache]) -> list[Tensor]:
    flat: list[Tensor] = []
    for layer in cache:
        assert isinstance(layer, tuple)
        flat += list(layer)
    return flat
