"""
Query-aware KV block selection for decode (Quest, ICML'24): a layer's cache
sits in a pool of blocks with per-block, per-channel key summaries, and a
decode step attends over the sinks, the recent positions and the `topk`
blocks whose summaries bound `q · k` highest.

The pool is `(n_blocks, batch, kv_heads, block, head_dim)` (a paged cache:
block `j` holds positions `[j·B, (j+1)·B)`, the tail block padded), the
summaries `(n_blocks, batch, kv_heads, head_dim)` hold each channel's
minimum and maximum over the block's positions (`summarize`, updated by the
caller when it writes a block). A step:

1. scores each candidate block `j` (`hyperoffload.support.topk_blocks`) by
   the upper bound `Σ_d max(q_d·min_jd, q_d·max_jd)` of every query head,
   taking the largest over heads and batch (one selection per layer, so that
   a selected block is a whole block of the pool);
2. chooses the `topk` best by argmax rounds (ties to the lower index;
   `torch.topk` would lower to `tm_tensor.sort`);
3. gathers each from the pool (`index_select` of one block on the block
   dimension: in the IR a gather from the pooled cache) and attends over the fixed
   blocks (masked to the sinks and recent positions), the gathered blocks
   and the new token with an online softmax.

```python
cache = PooledCache.from_kv(k, v, spec)           # k, v: (b, kv, length, hd)
out = cache.attend(q, k_new, v_new)               # q: (b, heads, 1, hd)
chosen = cache.select(q)                          # (topk,) block indices
```
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from hyperoffload.frontend.configs import AttentionSpec
from hyperoffload.support.topk_blocks import TopkLayout, topk_layout


def summarize(keys: Tensor, length: int, block: int) -> tuple[Tensor, Tensor]:
    """
    Per-block, per-channel minimum and maximum of `keys` (b, kv, length, hd)
    over each block's positions: two tensors (n_blocks, b, kv, hd).
    """
    b, kv, _, hd = keys.shape
    n = math.ceil(length / block)
    lows: list[Tensor] = []
    highs: list[Tensor] = []
    for j in range(n):
        part = keys[:, :, j * block : min((j + 1) * block, length)]
        lows.append(part.amin(2))
        highs.append(part.amax(2))
    if not lows:
        empty = keys.new_zeros((0, b, kv, hd))
        return empty, empty
    return torch.stack(lows), torch.stack(highs)


def to_pool(cache: Tensor, length: int, block: int) -> Tensor:
    """(b, kv, length, hd) as the pool (n_blocks, b, kv, block, hd), zero-padded."""
    b, kv, _, hd = cache.shape
    n = math.ceil(length / block)
    padded = cache.new_zeros((b, kv, n * block, hd))
    padded[:, :, :length] = cache[:, :, :length]
    return padded.reshape(b, kv, n, block, hd).permute(2, 0, 1, 3, 4).contiguous()


@dataclass(frozen=True)
class PooledCache:
    """One layer's cache of `length` positions as a pool with key summaries."""

    keys: Tensor
    """(n_blocks, batch, kv_heads, block, head_dim)"""
    values: Tensor
    key_min: Tensor
    """(n_blocks, batch, kv_heads, head_dim)"""
    key_max: Tensor
    length: int
    spec: AttentionSpec
    record: list[Tensor] | None = None
    """
    While a list, each `attend` appends the candidate blocks ranked by their
    bound, best first (eager runs; the selection is the first `topk`).
    """

    @staticmethod
    def from_kv(
        k: Tensor, v: Tensor, spec: AttentionSpec, record: list[Tensor] | None = None
    ) -> PooledCache:
        """The pool and summaries of a contiguous cache (b, kv, length, hd)."""
        length = k.shape[2]
        low, high = summarize(k, length, spec.block)
        return PooledCache(
            to_pool(k, length, spec.block),
            to_pool(v, length, spec.block),
            low,
            high,
            length,
            spec,
            record,
        )

    @property
    def layout(self) -> TopkLayout:
        """The fixed and candidate blocks of a step over this cache."""
        spec = self.spec
        return topk_layout(spec.block, spec.sinks, spec.recent, self.length)

    def scores(self, q: Tensor) -> Tensor:
        """
        (n_blocks,) upper bounds of q·k per block, the largest over batch and
        heads; q (b, heads, 1, hd).
        """
        n, b, kv, hd = self.key_min.shape
        rep = q.shape[1] // kv
        qg = q.reshape(1, b, kv, rep, hd)
        low = self.key_min.reshape(n, b, kv, 1, hd)
        high = self.key_max.reshape(n, b, kv, 1, hd)
        bound = torch.maximum(qg * low, qg * high).sum(-1)
        return bound.reshape(n, b * kv * rep).amax(-1)

    def select(self, q: Tensor) -> Tensor:
        """
        (k,) the chosen candidate blocks, best first, k = min(topk,
        candidates): argmax rounds over the scores, non-candidates at -inf.
        """
        chosen = self._choose(q)
        if not chosen:
            return torch.zeros(0, dtype=torch.int64, device=q.device)
        return torch.cat(chosen)

    def _choose(self, q: Tensor) -> list[Tensor]:
        """The chosen blocks of `select`, one (1,) tensor each, best first."""
        layout = self.layout
        n = self.key_min.shape[0]
        k = min(self.spec.topk, len(layout.candidates))
        blocks = torch.arange(n, device=q.device)
        fixed = torch.zeros(n, dtype=torch.bool, device=q.device)
        for j in layout.fixed:
            fixed = fixed | (blocks == j)
        # (1, n): each round's argmax is (1,), joined by `cat` (a 0-d argmax
        # would be expanded, which xDSL's expand_shape rejects)
        remaining = self.scores(q).masked_fill(fixed, float("-inf"))[None]
        chosen: list[Tensor] = []
        for _ in range(k):
            best = remaining.argmax(-1)
            chosen.append(best)
            remaining = remaining.masked_fill(blocks == best[:, None], float("-inf"))
        return chosen

    def ranking(self, q: Tensor) -> Tensor:
        """The candidate blocks by decreasing bound (ties to the lower index)."""
        candidates = torch.tensor(self.layout.candidates, dtype=torch.int64)
        if not len(candidates):
            return candidates
        order = torch.argsort(-self.scores(q).detach()[candidates], stable=True)
        return candidates[order]

    def attend(self, q: Tensor, k_new: Tensor, v_new: Tensor) -> Tensor:
        """
        softmax(q kᵀ / √hd) v of one query per sequence, q (b, heads, 1, hd),
        over the fixed blocks (masked to sinks and recent positions), the
        selected blocks and the new entry k_new, v_new (b, kv, 1, hd).
        """
        b, heads, s, hd = q.shape
        assert s == 1, "a top-k step decodes one token per sequence"
        kv = k_new.shape[1]
        rep = heads // kv
        block = self.spec.block
        q = q * (1.0 / math.sqrt(hd))
        qt = q.reshape(b * kv, rep, hd).transpose(1, 2)
        layout = self.layout
        parts: list[tuple[Tensor, Tensor, Tensor | None]] = []
        for j in layout.fixed:
            hidden = self._hidden(j, q.device)
            parts.append((self.keys[j], self.values[j], hidden))
        if self.record is not None:
            self.record.append(self.ranking(q))
        # each chosen block is gathered on its own: (1, b, kv, B, hd) is a
        # block as attention reads it, with no copy into one tensor
        for best in self._choose(q):
            gk = self.keys.index_select(0, best).reshape(b, kv, block, hd)
            gv = self.values.index_select(0, best).reshape(b, kv, block, hd)
            parts.append((gk, gv, None))
        parts.append((k_new, v_new, None))
        return _online_softmax(qt, parts).reshape(b, heads, 1, hd)

    def _hidden(self, j: int, device: torch.device) -> Tensor | None:
        """(block,) True at the positions of fixed block j the step does not see."""
        layout = self.layout
        start = j * self.spec.block
        span = range(start, start + self.spec.block)
        if all(layout.visible(p) for p in span):
            return None
        pos = torch.arange(span.start, span.stop, device=device)
        seen = pos < min(layout.sinks, layout.length)
        recent = (pos >= layout.length - layout.recent) & (pos < layout.length)
        return ~(seen | recent)


def _online_softmax(
    qt: Tensor, parts: list[tuple[Tensor, Tensor, Tensor | None]]
) -> Tensor:
    """
    acc / l over the key parts (k, v: (b, kv, n, hd), hidden: (n,) or None)
    for the scaled, transposed queries qt (b·kv, hd, rep): the running max m,
    sum l and output acc of `hyperoffload.frontend.models.Attention`.
    """
    running: tuple[Tensor, Tensor, Tensor] | None = None
    lowest = torch.finfo(qt.dtype).min
    for k_j, v_j, hidden in parts:
        b, kv, n, hd = k_j.shape
        s_j = torch.bmm(k_j.reshape(b * kv, n, hd), qt).transpose(1, 2)
        if hidden is not None:
            s_j = s_j.masked_fill(hidden, lowest)
        m_j = s_j.amax(-1, keepdim=True)
        v_flat = v_j.reshape(b * kv, n, hd)
        if running is None:
            p = torch.exp(s_j - m_j)
            running = (m_j, p.sum(-1, keepdim=True), torch.bmm(p, v_flat))
            continue
        m, total, acc = running
        m_new = torch.maximum(m, m_j)
        alpha = torch.exp(m - m_new)
        p = torch.exp(s_j - m_new)
        total = total * alpha + p.sum(-1, keepdim=True)
        running = (m_new, total, acc * alpha + torch.bmm(p, v_flat))
    assert running is not None
    _, total, acc = running
    return acc / total
