"""Export a tiny LLaMA-family decoder to linalg-on-tensors MLIR with torch-mlir.

Writes, next to this script:

* ``tiny_llama_forward.mlir``: ``@forward(tokens, *params) -> logits``
* ``tiny_llama_train.mlir``: ``@train_step(tokens, targets, *params) -> (loss, *grads)``
* ``tiny_llama_{forward,train}.reference.npz``: inputs (``arg0``, ``arg1``, ...) and
  eager PyTorch outputs (``out0``, ``out1``, ...) for seed 0.

Every parameter is a function argument tagged
``{hyperoffload.tier = #hyperoffload.tier<remote>}``.

Needs ``pip install torch==2.13.0 torch-mlir`` (not the project environment); run::

    python examples/generate_tiny_llama.py
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.fx.experimental.proxy_tensor import make_fx
from torch_mlir.fx import get_decomposition_table, stateless_fx_import

EXAMPLES_DIR = Path(__file__).resolve().parent
REGEN_COMMAND = (
    "python examples/generate_tiny_llama.py  # with torch==2.13.0 and torch-mlir"
)
TIER_ATTR = "{hyperoffload.tier = #hyperoffload.tier<remote>}"
SEED = 0


@dataclass(frozen=True)
class LlamaConfig:
    vocab_size: int = 128
    hidden: int = 64
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: int = 2
    head_dim: int = 16
    ffn_hidden: int = 128
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    batch: int = 2
    seq_len: int = 16


# --------------------------------------------------------------------------- model


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        scale = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x * scale * self.weight


def rope_tables(cfg: LlamaConfig, device: torch.device) -> tuple[Tensor, Tensor]:
    """cos/sin of shape (seq, head_dim), computed in-graph (no baked constants)."""
    half = cfg.head_dim // 2
    idx = torch.arange(half, device=device, dtype=torch.float32)
    inv_freq = torch.exp(idx * (-2.0 * math.log(cfg.rope_theta) / cfg.head_dim))
    pos = torch.arange(cfg.seq_len, device=device, dtype=torch.float32)
    angles = pos[:, None] * inv_freq[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    return torch.cos(angles), torch.sin(angles)


def apply_rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate-half RoPE on x of shape (batch, heads, seq, head_dim)."""
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class Attention(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.cfg = cfg
        d, hd = cfg.hidden, cfg.head_dim
        self.wq = nn.Linear(d, cfg.n_heads * hd, bias=False)
        self.wk = nn.Linear(d, cfg.n_kv_heads * hd, bias=False)
        self.wv = nn.Linear(d, cfg.n_kv_heads * hd, bias=False)
        self.wo = nn.Linear(cfg.n_heads * hd, d, bias=False)

    def _heads(self, x: Tensor, n: int) -> Tensor:
        b, s, _ = x.shape
        return x.reshape(b, s, n, self.cfg.head_dim).transpose(1, 2)

    def _repeat_kv(self, x: Tensor) -> Tensor:
        """GQA: (b, kv, s, hd) -> (b, heads, s, hd) via expand (no gather)."""
        b, kv, s, hd = x.shape
        rep = self.cfg.n_heads // kv
        return x[:, :, None].expand(b, kv, rep, s, hd).reshape(b, kv * rep, s, hd)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor, mask: Tensor) -> Tensor:
        cfg = self.cfg
        b, s, _ = x.shape
        q = apply_rope(self._heads(self.wq(x), cfg.n_heads), cos, sin)
        k = apply_rope(self._heads(self.wk(x), cfg.n_kv_heads), cos, sin)
        v = self._heads(self.wv(x), cfg.n_kv_heads)
        k, v = self._repeat_kv(k), self._repeat_kv(v)
        scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(cfg.head_dim))
        scores = scores.masked_fill(~mask, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.wo(out.transpose(1, 2).reshape(b, s, cfg.n_heads * cfg.head_dim))


class FeedForward(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.w1 = nn.Linear(cfg.hidden, cfg.ffn_hidden, bias=False)
        self.w2 = nn.Linear(cfg.ffn_hidden, cfg.hidden, bias=False)
        self.w3 = nn.Linear(cfg.hidden, cfg.ffn_hidden, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.attention_norm = RMSNorm(cfg.hidden, cfg.norm_eps)
        self.attention = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.hidden, cfg.norm_eps)
        self.feed_forward = FeedForward(cfg)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor, mask: Tensor) -> Tensor:
        x = x + self.attention(self.attention_norm(x), cos, sin, mask)
        return x + self.feed_forward(self.ffn_norm(x))


class TinyLlama(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok_embeddings = nn.Embedding(cfg.vocab_size, cfg.hidden)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = RMSNorm(cfg.hidden, cfg.norm_eps)
        self.output = nn.Linear(cfg.hidden, cfg.vocab_size, bias=False)

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.tok_embeddings(tokens)
        cos, sin = rope_tables(self.cfg, x.device)
        pos = torch.arange(self.cfg.seq_len, device=x.device)
        mask = pos[:, None] >= pos[None, :]
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.output(self.norm(x))


# ----------------------------------------------------------- decomposition overrides


def _one_hot(indices: Tensor, num_classes: int, dtype: torch.dtype) -> Tensor:
    """One-hot by comparison with an arange (lowers to plain linalg, no scatter)."""
    classes = torch.arange(num_classes, device=indices.device)
    return (indices.unsqueeze(-1) == classes).to(dtype)


def embedding_dense_backward(
    grad_output: Tensor,
    indices: Tensor,
    num_weights: int,
    padding_idx: int,
    scale_grad_by_freq: bool,
) -> Tensor:
    assert not scale_grad_by_freq, "scale_grad_by_freq is not supported"
    flat = indices.reshape(-1)
    hot = _one_hot(flat, num_weights, grad_output.dtype)
    if padding_idx >= 0:
        hot = hot * (flat != padding_idx).unsqueeze(-1).to(hot.dtype)
    grad = grad_output.reshape(flat.shape[0], -1)
    return hot.transpose(0, 1) @ grad


def _nll_target_mask(
    logp: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int
) -> Tensor:
    """Per-class coefficients w[target] * [target != ignore], shaped like logp."""
    valid = (target != ignore_index).to(logp.dtype)
    hot = _one_hot(target, logp.shape[-1], logp.dtype) * valid.unsqueeze(-1)
    if weight is not None:
        hot = hot * weight
    return hot


def nll_loss_forward(
    logp: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
    ignore_index: int,
) -> tuple[Tensor, Tensor]:
    coef = _nll_target_mask(logp, target, weight, ignore_index)
    losses = -(logp * coef).sum(-1)
    total_weight = coef.sum()
    if reduction == 0:  # none
        return losses, total_weight
    if reduction == 1:  # mean
        return losses.sum() / total_weight, total_weight
    return losses.sum(), total_weight


def nll_loss_backward(
    grad_output: Tensor,
    logp: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
    ignore_index: int,
    total_weight: Tensor,
) -> Tensor:
    coef = _nll_target_mask(logp, target, weight, ignore_index)
    if reduction == 0:
        return -coef * grad_output.unsqueeze(-1)
    if reduction == 1:
        return -coef * (grad_output / total_weight)
    return -coef * grad_output


def decomposition_table() -> dict[torch._ops.OperatorBase, Callable]:
    aten = torch.ops.aten
    table = dict(get_decomposition_table())
    table[aten.embedding_dense_backward.default] = embedding_dense_backward
    table[aten.nll_loss_forward.default] = nll_loss_forward
    table[aten.nll_loss_backward.default] = nll_loss_backward
    return table


# ------------------------------------------------------------------ traced programs


class ForwardFn:
    """``(tokens, *params) -> logits``; the model is held, not registered."""

    def __init__(self, model: TinyLlama) -> None:
        self.model = model
        self.names = [n for n, _ in model.named_parameters()]

    def __call__(self, tokens: Tensor, *params: Tensor) -> Tensor:
        params_dict = dict(zip(self.names, params, strict=True))
        return torch.func.functional_call(self.model, params_dict, (tokens,))


class TrainStepFn:
    """``(tokens, targets, *params) -> (loss, *grads)`` with cross-entropy loss."""

    def __init__(self, model: TinyLlama) -> None:
        self.forward = ForwardFn(model)

    def __call__(
        self, tokens: Tensor, targets: Tensor, *params: Tensor
    ) -> tuple[Tensor, ...]:
        logits = self.forward(tokens, *params)
        loss = F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
        )
        grads = torch.autograd.grad(loss, params)
        return (loss, *grads)


def export_mlir(fn: Callable, args: Sequence[Tensor], func_name: str) -> str:
    gm = make_fx(fn, tracing_mode="fake", decomposition_table=decomposition_table())(
        *args
    )
    module = stateless_fx_import(
        gm, output_type="linalg-on-tensors", model_name=func_name
    )
    text = str(module)
    for bad in ("tm_tensor", "torch."):
        assert bad not in text, f"{func_name}: exported MLIR still holds {bad!r}"
    return text


def tag_remote_args(text: str, func_name: str, first_param: int) -> str:
    """Attach the remote-tier attribute to %arg<first_param>.. in the signature."""
    match = re.search(rf"func\.func @{func_name}\((.*?)\) ->", text)
    assert match, f"signature of @{func_name} not found"
    args = re.split(r", (?=%arg\d+:)", match.group(1))
    tagged = [
        a if i < first_param or "{" in a else f"{a} {TIER_ATTR}"
        for i, a in enumerate(args)
    ]
    start, end = match.span(1)
    return text[:start] + ", ".join(tagged) + text[end:]


def header(title: str, func_name: str, arg_names: Sequence[str], results: str) -> str:
    lines = [
        f"// {title}",
        f"// Generated by: {REGEN_COMMAND}",
        "// (torch-mlir linalg-on-tensors export; parameters are tagged",
        "//  hyperoffload.tier = #hyperoffload.tier<remote>)",
        f"// @{func_name} results: {results}",
        "// arguments:",
    ]
    lines += [f"//   %arg{i}: {name}" for i, name in enumerate(arg_names)]
    return "\n".join(lines) + "\n"


def write_reference(path: Path, args: Sequence[Tensor], outs: Sequence[Tensor]) -> None:
    arrays = {f"arg{i}": a.detach().numpy() for i, a in enumerate(args)}
    arrays |= {f"out{i}": o.detach().numpy() for i, o in enumerate(outs)}
    np.savez_compressed(path, **arrays)


def emit(
    stem: str,
    func_name: str,
    fn: Callable,
    args: Sequence[Tensor],
    arg_names: Sequence[str],
    first_param: int,
    results: str,
    title: str,
) -> None:
    text = export_mlir(fn, args, func_name)
    text = tag_remote_args(text, func_name, first_param)
    mlir_path = EXAMPLES_DIR / f"tiny_llama_{stem}.mlir"
    mlir_path.write_text(header(title, func_name, arg_names, results) + text)
    outs = fn(*args)
    outs = outs if isinstance(outs, tuple) else (outs,)
    write_reference(EXAMPLES_DIR / f"tiny_llama_{stem}.reference.npz", args, outs)
    print(f"wrote {mlir_path.name} ({mlir_path.stat().st_size} bytes)")


def main() -> None:
    cfg = LlamaConfig()
    torch.manual_seed(SEED)
    model = TinyLlama(cfg)
    names = [n for n, _ in model.named_parameters()]
    params = [p.detach().clone() for p in model.parameters()]
    shape = (cfg.batch, cfg.seq_len)
    tokens = torch.randint(0, cfg.vocab_size, shape, dtype=torch.int64)
    targets = torch.randint(0, cfg.vocab_size, shape, dtype=torch.int64)

    emit(
        "forward",
        "forward",
        ForwardFn(model),
        [tokens, *params],
        ["tokens", *names],
        first_param=1,
        results="logits",
        title="Tiny LLaMA forward pass: (tokens, *params) -> logits",
    )
    train_params = [p.clone().requires_grad_() for p in params]
    emit(
        "train",
        "train_step",
        TrainStepFn(model),
        [tokens, targets, *train_params],
        ["tokens", "targets", *names],
        first_param=2,
        results="loss, then d(loss)/d(param) for each parameter in argument order",
        title="Tiny LLaMA training step: (tokens, targets, *params) -> (loss, *grads)",
    )


if __name__ == "__main__":
    main()
