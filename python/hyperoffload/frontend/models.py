"""
The model zoo in PyTorch: a LLaMA-family decoder (RMSNorm, RoPE, GQA,
SwiGLU), a GPT-family decoder (LayerNorm, learned positions, MHA, GELU tanh)
and MoE layers (DeepSeek or Mixtral router, top-k routed experts with
capacity-based dispatch, shared experts).

Every model maps `(tokens, past, offset)` to `(logits, cache)`: `past` holds
one `(k, v)` pair per layer of shape `(batch, kv_heads, past_len, head_dim)`
(or is None), `offset` is the position of the first token, and `cache` holds
one `(k, v)` pair per layer for the new tokens only, `(batch, kv_heads, seq,
head_dim)`: without `past` that is the prompt's cache; with `past` it is the
entries the caller appends to its (paged) cache, which is read in place and
never copied. Nothing is stored in buffers: RoPE tables, positions and masks
are computed in the graph, so every tensor an exported program reads is a
function argument.

With a blocked attention variant (`cfg.attention`, see
`hyperoffload.frontend.configs.AttentionSpec`) a layer's cache is a `KVBlocks`
instead of a `(k, v)` pair: a prefill returns the prompt's cache in blocks, a
decode step reads the blocks it is given (and still returns the new entries
as a pair).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from hyperoffload.frontend.configs import ModelConfig
from hyperoffload.frontend.topk_attention import PooledCache

KV = tuple[Tensor, Tensor]


@dataclass(frozen=True)
class KVBlocks:
    """
    One layer's cache in blocks along the sequence: `keys[i]` and `values[i]`,
    `(batch, kv_heads, n_i, head_dim)`, hold the positions from `starts[i]`
    on. Blocks need not be contiguous (a window skips the middle of the cache).
    """

    starts: tuple[int, ...]
    keys: tuple[Tensor, ...]
    values: tuple[Tensor, ...]


LayerCache = KV | KVBlocks
"""A layer's cache: one `(k, v)` pair (full attention) or blocks."""

PastCache = LayerCache | PooledCache
"""
What a step reads of a layer's past: a `LayerCache`, or a pool of blocks
with key summaries (a ``topk`` decode step).
"""


# ------------------------------------------------------------------ building blocks


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        scale = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x * scale * self.weight


def rope_tables(
    cfg: ModelConfig, offset: int, seq: int, device: torch.device
) -> tuple[Tensor, Tensor]:
    """cos/sin of shape (seq, head_dim) for positions offset.., computed in-graph."""
    half = cfg.head_dim // 2
    idx = torch.arange(half, device=device, dtype=torch.float32)
    inv_freq = torch.exp(idx * (-2.0 * math.log(cfg.rope_theta) / cfg.head_dim))
    if offset == 0:
        pos = torch.arange(seq, device=device, dtype=torch.float32)
    else:
        pos = torch.arange(offset, offset + seq, device=device, dtype=torch.float32)
    angles = pos[:, None] * inv_freq[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    return torch.cos(angles), torch.sin(angles)


def apply_rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate-half RoPE on x of shape (batch, heads, seq, head_dim)."""
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


def causal_mask(seq: int, device: torch.device) -> Tensor | None:
    """
    (seq, seq) booleans among the new tokens, True where attention is allowed;
    None if all (one token). Cached positions are always visible.
    """
    if seq == 1:
        return None
    pos = torch.arange(seq, device=device)
    return pos[:, None] >= pos[None, :]


def one_hot(indices: Tensor, num_classes: int, dtype: torch.dtype) -> Tensor:
    """One-hot by comparison with an arange (plain linalg, no scatter)."""
    classes = torch.arange(num_classes, device=indices.device)
    return (indices.unsqueeze(-1) == classes).to(dtype)


class Attention(nn.Module):
    """
    Multi-head attention with grouped KV heads (GQA; MHA when equal). Returns
    the output and the K/V of the new tokens (not of `past`).
    """

    def __init__(self, cfg: ModelConfig, bias: bool = False) -> None:
        super().__init__()
        self.cfg = cfg
        d, hd = cfg.hidden, cfg.head_dim
        self.wq = nn.Linear(d, cfg.n_heads * hd, bias=bias)
        self.wk = nn.Linear(d, cfg.n_kv_heads * hd, bias=bias)
        self.wv = nn.Linear(d, cfg.n_kv_heads * hd, bias=bias)
        self.wo = nn.Linear(cfg.n_heads * hd, d, bias=bias)

    def _heads(self, x: Tensor, n: int) -> Tensor:
        b, s, _ = x.shape
        return x.reshape(b, s, n, self.cfg.head_dim).transpose(1, 2)

    def _repeat_kv(self, x: Tensor) -> Tensor:
        """GQA: (b, kv, s, hd) -> (b, heads, s, hd) via expand (no gather)."""
        b, kv, s, hd = x.shape
        rep = self.cfg.n_heads // kv
        return x[:, :, None].expand(b, kv, rep, s, hd).reshape(b, kv * rep, s, hd)

    def forward(
        self,
        x: Tensor,
        rope: tuple[Tensor, Tensor] | None,
        mask: Tensor | None,
        past: PastCache | None,
        offset: int = 0,
    ) -> tuple[Tensor, LayerCache]:
        """
        The output and the cache of the new tokens (at positions `offset`..):
        `(k, v)`, or the blocks of a blocked prefill (no `past`).
        """
        cfg = self.cfg
        b, s, _ = x.shape
        q = self._heads(self.wq(x), cfg.n_heads)
        if rope is not None:
            q = apply_rope(q, *rope)
        cache: LayerCache
        if isinstance(past, PooledCache):
            k, v = cache = self._project_kv(x, rope)
            out = past.attend(q, k, v)
        elif cfg.attention.in_blocks:
            out, cache = self._attend_blocks(x, rope, q, past, offset)
        elif isinstance(past, KVBlocks):
            raise ValueError("a cache in blocks needs a blocked attention variant")
        elif past is not None:
            k, v = cache = self._project_kv(x, rope)
            out = self._attend_cached(q, k, v, mask, past)
        else:
            k, v = cache = self._project_kv(x, rope)
            kr, vr = self._repeat_kv(k), self._repeat_kv(v)
            scores = q @ kr.transpose(-2, -1) * (1.0 / math.sqrt(cfg.head_dim))
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            out = torch.softmax(scores, dim=-1) @ vr
        out = out.transpose(1, 2).reshape(b, s, cfg.n_heads * cfg.head_dim)
        return self.wo(out), cache

    def _project_kv(
        self, x: Tensor, rope: tuple[Tensor, Tensor] | None, rows: range | None = None
    ) -> KV:
        """The k and v (rotated k) of the tokens `rows` of x (all if None)."""
        if rows is not None:
            x = x[:, rows.start : rows.stop]
        k = self._heads(self.wk(x), self.cfg.n_kv_heads)
        if rope is not None:
            cos, sin = rope
            if rows is not None:
                cos, sin = cos[rows.start : rows.stop], sin[rows.start : rows.stop]
            k = apply_rope(k, cos, sin)
        return k, self._heads(self.wv(x), self.cfg.n_kv_heads)

    def _attend_cached(
        self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, past: KV
    ) -> Tensor:
        """
        Attention of q (b, heads, s, hd) over `past` then the new k/v, reading
        the cache in place: the heads sharing a KV head become rows of one
        matmul (no repeat, no concatenated cache); only the scores are joined.
        The cache is never transposed either: q @ past_k^T is computed as
        (past_k @ q^T)^T, transposing q and the scores instead.
        """
        b, heads, s, hd = q.shape
        kv = k.shape[1]
        rep = heads // kv
        past_k, past_v = past
        n_past = past_k.shape[2]
        qg = q.reshape(b, kv, rep * s, hd)
        old = (past_k @ qg.transpose(-2, -1)).transpose(-2, -1)
        new = qg @ k.transpose(-2, -1)
        if mask is not None:
            new = new.reshape(b, kv, rep, s, s).masked_fill(~mask, float("-inf"))
            new = new.reshape(b, kv, rep * s, s)
        scores = torch.cat([old, new], dim=-1) * (1.0 / math.sqrt(hd))
        p = torch.softmax(scores, dim=-1)
        out = p[..., :n_past] @ past_v + p[..., n_past:] @ v
        return out.reshape(b, heads, s, hd)

    def _attend_blocks(
        self,
        x: Tensor,
        rope: tuple[Tensor, Tensor] | None,
        q: Tensor,
        past: LayerCache | None,
        offset: int,
    ) -> tuple[Tensor, LayerCache]:
        """
        Attention over the cache in blocks (`cfg.attention`): the blocks of
        `past` then the new k/v as one more block (decode), or, without
        `past`, the new tokens in query and key blocks of B (prefill, whose
        cache is returned in blocks). A prefill of several blocks projects
        each block's k/v from its own rows of x (as chunked prefill does):
        a block is then its own tensor, which the planner can store and free
        on its own, not a view keeping the whole layer's k/v alive.
        """
        spec = self.cfg.attention
        s, hd = q.shape[2], q.shape[3]
        bounds = [
            range(start, min(start + spec.block, s))
            for start in range(0, s, spec.block)
        ]
        whole = (
            self._project_kv(x, rope) if past is not None or len(bounds) == 1 else None
        )
        q = q * (1.0 / math.sqrt(hd))  # the scale, once, on the queries
        if past is None:
            projected = (
                [whole]
                if whole is not None
                else [self._project_kv(x, rope, r) for r in bounds]
            )
            keys = tuple(kb for kb, _ in projected)
            values = tuple(vb for _, vb in projected)
            starts = tuple(offset + r.start for r in bounds)
            blocks = list(zip(starts, keys, values, strict=True))
            rows = [(offset + r.start, q[:, :, r.start : r.stop]) for r in bounds]
            outs = [self._online_softmax(start, qb, blocks) for start, qb in rows]
            out = outs[0] if len(outs) == 1 else torch.cat(outs, dim=2)
            return out, KVBlocks(starts, keys, values)
        if not isinstance(past, KVBlocks):
            n = past[0].shape[2]
            bounds = [spec.bounds(j, n) for j in range(spec.n_blocks(n))]
            past = KVBlocks(
                tuple(r.start for r in bounds),
                tuple(past[0][:, :, r.start : r.stop] for r in bounds),
                tuple(past[1][:, :, r.start : r.stop] for r in bounds),
            )
        assert whole is not None
        blocks = [
            *zip(past.starts, past.keys, past.values, strict=True),
            (offset, *whole),
        ]
        return self._online_softmax(offset, q, blocks), whole

    def _online_softmax(
        self, start: int, q: Tensor, blocks: Sequence[tuple[int, Tensor, Tensor]]
    ) -> Tensor:
        """
        softmax(q kᵀ) v of the (scaled) queries at positions `start`.. over
        the key blocks `(first position, k_j, v_j)`, one block at a time:
        m' = max(m, rowmax s_j), acc = acc·exp(m - m') + exp(s_j - m') v_j,
        l = l·exp(m - m') + rowsum exp(s_j - m'); the result is acc / l.
        Blocks no query sees are skipped, partly seen ones masked. As in
        `_attend_cached`, the heads sharing a KV head are rows of one matmul
        and s_j = (k_j qᵀ)ᵀ: a block is never transposed nor repeated.

        A masked score is the dtype's lowest finite value, not -inf: a row
        that sees nothing of the first block it meets then holds finite
        garbage that exp(m - m') = 0 drops at its first seen key (every row
        sees its own position, in the last block it meets).
        """
        spec = self.cfg.attention
        b, heads, s, hd = q.shape
        kv = blocks[0][1].shape[1]
        rep = heads // kv
        queries = range(start, start + s)
        # (batch · kv heads) as the one batch dimension of `bmm`: a 4-D matmul
        # would trace as expand/view/bmm/view per operand
        qt = q.reshape(b * kv, rep * s, hd).transpose(1, 2)
        lowest = torch.finfo(q.dtype).min
        running: tuple[Tensor, Tensor, Tensor] | None = None  # m, l, acc
        for first, k_j, v_j in blocks:
            n = k_j.shape[2]
            keys = range(first, first + n)
            seen = spec.visibility(queries, keys)
            if seen == "none":
                continue
            s_j = torch.bmm(k_j.reshape(b * kv, n, hd), qt).transpose(1, 2)
            if seen == "some":
                hidden = self._hidden(queries, keys, q.device)
                s_j = s_j.reshape(b * kv, rep, s, n).masked_fill(hidden, lowest)
                s_j = s_j.reshape(b * kv, rep * s, n)
            m_j = s_j.amax(-1, keepdim=True)
            v_j = v_j.reshape(b * kv, n, hd)
            if running is None:
                p = torch.exp(s_j - m_j)
                running = (m_j, p.sum(-1, keepdim=True), torch.bmm(p, v_j))
                continue
            m, total, acc = running
            m_new = torch.maximum(m, m_j)
            alpha = torch.exp(m - m_new)
            p = torch.exp(s_j - m_new)
            total = total * alpha + p.sum(-1, keepdim=True)
            running = (m_new, total, acc * alpha + torch.bmm(p, v_j))
        assert running is not None, "every query sees its own position"
        _, total, acc = running
        return (acc / total).reshape(b, heads, s, hd)

    def _hidden(self, queries: range, keys: range, device: torch.device) -> Tensor:
        """
        (len(queries), len(keys)) booleans, True where the query does not see
        the key (`AttentionSpec.sees`), computed in-graph from the positions;
        only the terms that hide something in this block pair appear.
        """
        spec = self.cfg.attention
        q_pos = torch.arange(queries.start, queries.stop, device=device)[:, None]
        k_pos = torch.arange(keys.start, keys.stop, device=device)[None, :]
        hidden: Tensor | None = None
        if keys.stop - 1 > queries.start:
            hidden = k_pos > q_pos
        too_old = min(keys.stop, queries.stop - 1 - spec.window)
        if spec.kind == "window" and max(keys.start, spec.sinks) < too_old:
            old = k_pos < q_pos - spec.window
            if keys.start < spec.sinks:
                old = old & (k_pos >= spec.sinks)
            hidden = old if hidden is None else hidden | old
        assert hidden is not None, "a partly seen block hides something"
        return hidden


class FeedForward(nn.Module):
    """SwiGLU: w2(silu(w1 x) * w3 x)."""

    def __init__(self, hidden: int, ffn_hidden: int) -> None:
        super().__init__()
        self.w1 = nn.Linear(hidden, ffn_hidden, bias=False)
        self.w2 = nn.Linear(ffn_hidden, hidden, bias=False)
        self.w3 = nn.Linear(hidden, ffn_hidden, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def top_k_mask(scores: Tensor, k: int) -> Tensor:
    """
    1.0 at the k largest scores of each row, else 0.0: k rounds of argmax and
    one-hot masking (`torch.topk` would lower to `tm_tensor.sort`).
    """
    n = scores.shape[-1]
    remaining = scores
    chosen = torch.zeros_like(scores)
    for _ in range(k):
        hot = one_hot(remaining.argmax(-1), n, scores.dtype)
        chosen = chosen + hot
        remaining = remaining.masked_fill(hot > 0, float("-inf"))
    return chosen


@dataclass(frozen=True)
class ExpertMarker:
    """
    What one routed expert did in one `MoE` forward, recorded for the routed
    export (`hyperoffload.frontend.route_experts`): `routed`, a 0-d bool,
    whether any token chose the expert; `contribution`, (T, hidden), the
    value it added to the layer's output (exactly zero when `routed` is
    false).
    """

    routed: Tensor
    contribution: Tensor


class MoE(nn.Module):
    """
    MoE FFN: router scores (sigmoid as DeepSeek, or softmax as Mixtral:
    `ModelConfig.router`), the top-k routed experts weighted by their scores
    renormalised over the chosen ones, plus shared experts every token uses.
    Each expert's weights stay separate arguments.

    Routed experts use capacity-based dispatch with static shapes (as in
    GShard/Switch): with T tokens, each expert takes at most
    C = min(T, ceil(T * top_k / n_experts * capacity_factor)) of them, in
    token order; tokens beyond an expert's capacity skip it (dropped; shared
    experts and the residual still apply). A token's slot in an expert's
    queue is an inclusive prefix count of the (T, E) chosen-mask, computed as
    a lower-triangular (T, T) matmul in float32 (exact past 256, unlike bf16;
    `torch.cumsum` would lower to `tm_tensor.scan`). `dispatch` (T, E, C) is
    the one-hot of slot - 1; expert e runs on `dispatch[:, e]^T @ x` (C rows)
    and its output returns through `(dispatch[:, e] * gate_e) @ y_e`.

    With an expert-parallel group (`ModelConfig.expert_shard` = N > 1) the
    layer holds E/N routed experts, those of its rank: the rows it sends
    every expert (`sent`, one (E·C, T) @ (T, hidden) product) go out through
    an all-to-all (`exchange`), its experts run on the N·C rows each
    receives (`local_experts`), their outputs return through a second one,
    and `combine` gates them back onto the tokens. Both exchanges' backward
    passes are all-to-alls too.

    While `markers` is a list, each forward appends one `ExpertMarker` per
    routed expert, in expert order (the routed export sets it). While
    `recorded` is a list, each forward appends the (T, top_k) experts each
    token chose, by descending score (`hyperoffload.frontend.record_routing`).
    """

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.top_k = cfg.top_k
        self.capacity_factor = cfg.capacity_factor
        self.router = cfg.router
        self.markers: list[ExpertMarker] | None = None
        self.recorded: list[Tensor] | None = None
        self.n_experts = cfg.n_experts
        self.group = cfg.expert_shard
        self.rank = cfg.expert_rank
        self.exchange = ReplicaExchange(self.group, self.rank)
        self.gate = nn.Linear(cfg.hidden, cfg.n_experts, bias=False)
        self.experts = nn.ModuleList(
            FeedForward(cfg.hidden, cfg.expert_ffn)
            for _ in range(cfg.n_experts // cfg.expert_shard)
        )
        self.shared = nn.ModuleList(
            FeedForward(cfg.hidden, cfg.expert_ffn) for _ in range(cfg.n_shared_experts)
        )

    @property
    def first_expert(self) -> int:
        """The index, among the layer's routed experts, of `experts[0]`."""
        return self.rank * len(self.experts)

    def capacity(self, tokens: int) -> int:
        """Tokens each routed expert takes out of `tokens`."""
        n = self.n_experts
        wanted = math.ceil(tokens * self.top_k / n * self.capacity_factor)
        return min(tokens, wanted)

    def dispatch(self, chosen: Tensor) -> Tensor:
        """
        (T, E, C) one-hot of each chosen token's slot in its expert's queue,
        from the (T, E) chosen-mask; zero where not chosen or over capacity.
        """
        t = chosen.shape[0]
        c = self.capacity(t)
        pos = torch.arange(t, device=chosen.device)
        lower = (pos[:, None] >= pos[None, :]).to(torch.float32)
        hot = chosen.to(torch.float32)
        slot = (lower @ hot) * hot - 1.0  # -1 where not chosen
        classes = torch.arange(c, device=chosen.device, dtype=torch.float32)
        return slot.unsqueeze(-1) == classes

    def forward(self, x: Tensor) -> Tensor:
        b, s, d = x.shape
        flat = x.reshape(b * s, d)
        scores, chosen, gates = self.route(flat)
        if self.recorded is not None:
            ranked = scores.detach().masked_fill(chosen == 0, float("-inf"))
            order = ranked.argsort(dim=-1, descending=True, stable=True)
            self.recorded.append(order[:, : self.top_k])
        dispatch = self.dispatch(chosen).to(flat.dtype)
        out = torch.zeros_like(flat)
        for shared in self.shared:
            out = out + shared(flat)
        if self.group > 1:
            sent = self.sent(dispatch, flat)
            back = self.exchange(self.local_experts(self.exchange(sent)))
            return (out + self.combine(dispatch, gates, back)).reshape(b, s, d)
        for e, expert in enumerate(self.experts):
            # before the expert's work, so that it dominates the routed branch
            routed = chosen[:, e].amax() > 0 if self.markers is not None else None
            route = dispatch[:, e, :]
            y = expert(route.transpose(0, 1) @ flat)
            contribution = (route * gates[:, e : e + 1]) @ y
            out = out + contribution
            if self.markers is not None:
                assert routed is not None
                self.markers.append(ExpertMarker(routed, contribution))
        return out.reshape(b, s, d)

    def route(self, flat: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """
        The router on (T, hidden) rows: every expert's score, the (T, E)
        mask of the top-k chosen and their gates (renormalised over them).
        """
        logits = self.gate(flat)
        if self.router == "softmax":
            scores = torch.softmax(logits, dim=-1)
        else:
            scores = torch.sigmoid(logits)
        chosen = top_k_mask(scores.detach(), self.top_k)
        weights = scores * chosen
        return scores, chosen, weights / weights.sum(-1, keepdim=True)

    def sent(self, dispatch: Tensor, flat: Tensor) -> Tensor:
        """(E, C, hidden): the rows this device sends each routed expert."""
        t, e, c = dispatch.shape
        rows = dispatch.permute(1, 2, 0).reshape(e * c, t) @ flat
        return rows.reshape(e, c, flat.shape[1])

    def local_experts(self, received: Tensor) -> Tensor:
        """
        (E, C, hidden) received, chunk s from device s, to the outputs of this
        device's experts laid out the same way (what the combine sends back).
        """
        e, c, d = received.shape
        n, local = self.group, len(self.experts)
        rows = received.reshape(n, local, c, d).transpose(0, 1)
        outs = [
            expert(rows[j].reshape(n * c, d)).reshape(n, c, d)
            for j, expert in enumerate(self.experts)
        ]
        return torch.stack(outs, dim=1).reshape(e, c, d)

    def combine(self, dispatch: Tensor, gates: Tensor, back: Tensor) -> Tensor:
        """(T, hidden): every routed expert's output on this device's rows, gated."""
        t, e, c = dispatch.shape
        weights = dispatch * gates.to(dispatch.dtype).unsqueeze(-1)
        return weights.reshape(t, e * c) @ back.reshape(e * c, back.shape[-1])


class ReplicaExchange:
    """
    The all-to-all of one device's program (`MoE.exchange`) under the
    collectives' single-process semantics (`hyperoffload.all_to_all`): the
    other devices are replicas of this one, so every chunk of the result is
    the operand's chunk `rank`; its adjoint is the same exchange. While
    `pairs` is a list, each exchange (forward and backward) appends its
    operand and result, the markers `hyperoffload.frontend.sharding`
    replaces with `hyperoffload.all_to_all`.
    """

    def __init__(self, group: int, rank: int) -> None:
        self.group, self.rank = group, rank
        self.pairs: list[tuple[Tensor, Tensor]] | None = None

    def stand_in(self, x: Tensor) -> Tensor:
        size = x.shape[0] // self.group
        chunk = x[self.rank * size : (self.rank + 1) * size]
        y = chunk.repeat(self.group, *[1] * (x.dim() - 1))
        if self.pairs is not None:
            self.pairs.append((x, y))
        return y

    def __call__(self, x: Tensor) -> Tensor:
        function: Any = _AllToAll
        return cast(Tensor, function.apply(x, self))


class _AllToAll(torch.autograd.Function):
    """An exchange whose backward pass is the same exchange of the gradient."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, exchange: ReplicaExchange) -> Tensor:
        ctx.exchange = exchange
        return exchange.stand_in(x)

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Tensor) -> tuple[Tensor, None]:
        return ctx.exchange.stand_in(grad_outputs[0]), None


def moe_layers(model: nn.Module) -> list[tuple[int, MoE]]:
    """The MoE FFNs of `model` with the index of their decoder layer, in order."""
    found: list[tuple[int, MoE]] = []
    for i, layer in enumerate(cast(Sequence[nn.Module], getattr(model, "layers", ()))):
        ffn = getattr(layer, "feed_forward", None)
        if isinstance(ffn, MoE):
            found.append((i, ffn))
    return found


# ----------------------------------------------------------------------- families


class LlamaBlock(nn.Module):
    def __init__(self, cfg: ModelConfig, moe: bool) -> None:
        super().__init__()
        self.attention_norm = RMSNorm(cfg.hidden, cfg.norm_eps)
        self.attention = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.hidden, cfg.norm_eps)
        self.feed_forward: nn.Module = (
            MoE(cfg) if moe else FeedForward(cfg.hidden, cfg.ffn_hidden)
        )

    def forward(
        self,
        x: Tensor,
        rope: tuple[Tensor, Tensor],
        mask: Tensor | None,
        past: PastCache | None,
        offset: int = 0,
    ) -> tuple[Tensor, LayerCache]:
        attn, cache = self.attention(self.attention_norm(x), rope, mask, past, offset)
        x = x + attn
        return x + self.feed_forward(self.ffn_norm(x)), cache


class Llama(nn.Module):
    """
    LLaMA-family decoder; the `moe` family swaps FFNs for `MoE` layers. With
    ``head=False`` the forward returns the final normalised hidden states
    instead of the logits (a chunked loss applies the head itself).
    """

    HEAD = "output.weight"
    """The parameter of the LM head."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        moe = cfg.family == "moe"
        self.tok_embeddings = nn.Embedding(cfg.vocab_size, cfg.hidden)
        self.layers = nn.ModuleList(
            LlamaBlock(cfg, moe and i >= cfg.n_dense_layers)
            for i in range(cfg.n_layers)
        )
        self.norm = RMSNorm(cfg.hidden, cfg.norm_eps)
        self.output = nn.Linear(cfg.hidden, cfg.vocab_size, bias=False)

    def forward(
        self,
        tokens: Tensor,
        past: Sequence[PastCache] | None = None,
        offset: int = 0,
        head: bool = True,
    ) -> tuple[Tensor, list[LayerCache]]:
        x = self.tok_embeddings(tokens)
        seq = tokens.shape[1]
        cos, sin = (t.to(x.dtype) for t in rope_tables(self.cfg, offset, seq, x.device))
        mask = None if self.cfg.attention.in_blocks else causal_mask(seq, x.device)
        cache: list[LayerCache] = []
        for i, layer in enumerate(self.layers):
            layer_past = None if past is None else past[i]
            x, kv = layer(x, (cos, sin), mask, layer_past, offset)
            cache.append(kv)
        x = self.norm(x)
        return (self.output(x) if head else x), cache


class GPTMLP(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.c_fc = nn.Linear(cfg.hidden, cfg.ffn_hidden)
        self.c_proj = nn.Linear(cfg.ffn_hidden, cfg.hidden)

    def forward(self, x: Tensor) -> Tensor:
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class GPTBlock(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.hidden, eps=cfg.norm_eps)
        self.attn = Attention(cfg, bias=True)
        self.ln_2 = nn.LayerNorm(cfg.hidden, eps=cfg.norm_eps)
        self.mlp = GPTMLP(cfg)

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None,
        past: PastCache | None,
        offset: int = 0,
    ) -> tuple[Tensor, LayerCache]:
        attn, cache = self.attn(self.ln_1(x), None, mask, past, offset)
        x = x + attn
        return x + self.mlp(self.ln_2(x)), cache


class GPT(nn.Module):
    """
    GPT-family decoder: learned positions, pre-LayerNorm, MHA, GELU (tanh);
    ``head=False`` as in `Llama`.
    """

    HEAD = "lm_head.weight"
    """The parameter of the LM head."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.hidden)
        self.wpe = nn.Embedding(cfg.max_positions, cfg.hidden)
        self.layers = nn.ModuleList(GPTBlock(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.hidden, eps=cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.hidden, cfg.vocab_size, bias=False)

    def forward(
        self,
        tokens: Tensor,
        past: Sequence[PastCache] | None = None,
        offset: int = 0,
        head: bool = True,
    ) -> tuple[Tensor, list[LayerCache]]:
        seq = tokens.shape[1]
        positions = torch.arange(offset, offset + seq, device=tokens.device)
        x = self.wte(tokens) + self.wpe(positions)[None]
        mask = None if self.cfg.attention.in_blocks else causal_mask(seq, x.device)
        cache: list[LayerCache] = []
        for i, layer in enumerate(self.layers):
            x, kv = layer(x, mask, None if past is None else past[i], offset)
            cache.append(kv)
        x = self.ln_f(x)
        return (self.lm_head(x) if head else x), cache


def head_weight(model: nn.Module) -> str:
    """The name of `model`'s LM head parameter (`Llama.HEAD`, `GPT.HEAD`)."""
    return GPT.HEAD if isinstance(model, GPT) else Llama.HEAD


def build_model(cfg: ModelConfig) -> nn.Module:
    """The family's module for `cfg` (on the current default device, f32)."""
    if cfg.family == "gpt":
        return GPT(cfg)
    return Llama(cfg)


class ForwardFn:
    """``(tokens, *params) -> logits``; the model is held, not registered."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.names = [n for n, _ in model.named_parameters()]

    def run(
        self,
        tokens: Tensor,
        params: Sequence[Tensor],
        past: Sequence[PastCache] | None = None,
        offset: int = 0,
    ) -> tuple[Tensor, list[LayerCache]]:
        params_dict = dict(zip(self.names, params, strict=True))
        out = torch.func.functional_call(
            self.model, params_dict, (tokens,), {"past": past, "offset": offset}
        )
        return cast(tuple[Tensor, list[LayerCache]], out)

    def __call__(self, tokens: Tensor, *params: Tensor) -> Tensor:
        return self.run(tokens, params)[0]
