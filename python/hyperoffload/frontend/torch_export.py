"""
Export the model zoo to linalg-on-tensors MLIR with torch-mlir.

`export(cfg, mode, ...)` traces one program on fake tensors (no weights are
allocated, so published dimensions export on a laptop) with
`make_fx(tracing_mode="fake")`, imports it with
`torch_mlir.fx.stateless_fx_import`, and tags the function arguments:

* ``forward``: ``@forward(tokens, *params) -> logits``
* ``train``: ``@train_step(tokens, targets, *params) -> (loss, *grads)``
  (cross-entropy loss, one gradient per parameter in argument order); with an
  optimizer (``train=TrainSpec(OptimizerSpec("sgd" | "adamw"))``) the
  gradients are consumed by the update and the step returns the updated
  weights and optimizer states (`hyperoffload.frontend.train_step`)
* ``prefill``: ``@prefill(tokens, *params) -> (logits, k0, v0, k1, v1, ...)``
* ``decode``: ``@decode(token, k0, v0, ..., *params) -> (logits, k0n, v0n, ...)``:
  one token per sequence at position ``kv_len``; each cache argument is
  ``(batch, kv_heads, kv_len, head_dim)``, read in place (never copied or
  repeated per head), and each returned tensor is the token's new entry
  ``(batch, kv_heads, 1, head_dim)``, which the caller appends to its paged
  cache.

Parameters carry ``{hyperoffload.tier = #hyperoffload.tier<remote>}`` (or
the tier asked for); KV-cache arguments also ``hyperoffload.category = "kv"``,
optimizer states ``hyperoffload.category = "optimizer"``; the KV-cache
results of a prefill or decode step, and the updated weights and states of a
training step, carry the tier (and category) of their arguments too.

With a blocked attention variant (``attention=AttentionSpec("blocked" |
"window", ...)``, prefill and decode only) the cache is one argument (decode)
or result (prefill) per layer, block and K/V, named ``k_cache.{layer}.{block}``
and tagged ``hyperoffload.kv_block = array<i64: layer, kind, block>``; the
function carries ``hyperoffload.kv_cache = {attention, block, window, sinks,
kv_len}``:

```mlir
func.func @decode(%arg0: tensor<1x1xi64>,
    %arg1: tensor<1x2x16x16xf32> {hyperoffload.category = "kv",
        hyperoffload.tier = #hyperoffload.tier<remote>,
        hyperoffload.kv_block = array<i64: 0, 0, 0>}, ...) -> (...)
    attributes {hyperoffload.kv_cache = {attention = "blocked", block = 16 : i64,
        window = 0 : i64, sinks = 0 : i64, kv_len = 64 : i64}} {
```

In the moe family each routed expert's weights are tagged
``hyperoffload.expert = array<i64: layer, expert>`` and the function carries
``hyperoffload.moe = {experts, top_k, shared, router, routed}``. With
``experts="routed"`` (forward, prefill, decode) each routed expert's work runs
under an ``scf.if`` on whether any token chose it: the program is traced with
markers and rewritten by `hyperoffload.frontend.route_experts`.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from importlib import import_module
from typing import Any, cast

import torch
from torch import Tensor, nn

from hyperoffload.dialects.hyperoffload import ALIASING_ARG_ATTR, EXPERT_ATTR, MOE_ATTR
from hyperoffload.frontend.configs import (
    ATTENTION_KINDS,
    EXPERTS_MODES,
    MODES,
    AttentionSpec,
    BlockTag,
    ExpertsMode,
    KVKind,
    ModelConfig,
)
from hyperoffload.frontend.models import (
    ForwardFn,
    KVBlocks,
    LayerCache,
    PastCache,
    build_model,
    moe_layers,
    one_hot,
)
from hyperoffload.frontend.route_experts import (
    MARKER_ATTR,
    ExpertKey,
    MarkerKind,
    route_experts_text,
)
from hyperoffload.frontend.sharding import insert_collectives_text
from hyperoffload.frontend.train_step import TrainStepFn
from hyperoffload.frontend.training import LOSSES, OPTIMIZERS, TrainSpec, chunk_rows
from hyperoffload.ir.context import make_context
from hyperoffload.support.tiers import OFFLOAD_TIERS, Tier

KV_ATTR = 'hyperoffload.category = "kv"'
OPTIMIZER_ATTR = 'hyperoffload.category = "optimizer"'
KV_BLOCK_ATTR = "hyperoffload.kv_block"
"""Argument and result attribute of a KV block: `array<i64: layer, kind, block>`."""
KV_CACHE_ATTR = "hyperoffload.kv_cache"
"""Function attribute describing a cache in blocks (`AttentionSpec.describe`)."""
FUNC_NAMES = {
    "forward": "forward",
    "train": "train_step",
    "prefill": "prefill",
    "decode": "decode",
}
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


class ExportError(ValueError):
    """A model or mode the exporter cannot handle (names the offending ops)."""


# ----------------------------------------------------------- decomposition overrides


def embedding_dense_backward(
    grad_output: Tensor,
    indices: Tensor,
    num_weights: int,
    padding_idx: int,
    scale_grad_by_freq: bool,
    chunks: int = 1,
) -> Tensor:
    """
    The embedding's gradient as ``onehotᵀ @ grad`` (no scatter); with
    `chunks` > 1, summed (in the gradient's dtype) over chunks of tokens, so the one-hot
    (tokens by vocabulary) never exists whole (as the chunked loss).
    """
    if scale_grad_by_freq:
        raise ExportError("embedding backward with scale_grad_by_freq is unsupported")
    flat = indices.reshape(-1)
    rows = chunk_rows(flat.shape[0], chunks)
    parts: list[Tensor] = []
    for chunk in rows:
        ids = flat[chunk.start : chunk.stop] if len(rows) > 1 else flat
        hot = one_hot(ids, num_weights, grad_output.dtype)
        if padding_idx >= 0:
            hot = hot * (ids != padding_idx).unsqueeze(-1).to(hot.dtype)
        grad = grad_output.reshape(flat.shape[0], -1)
        if len(rows) > 1:
            grad = grad[chunk.start : chunk.stop]
        part = hot.transpose(0, 1) @ grad
        parts.append(part if not parts else parts[-1] + part)
    return parts[-1]


def _nll_target_mask(
    logp: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int
) -> Tensor:
    """Per-class coefficients w[target] * [target != ignore], shaped like logp."""
    valid = (target != ignore_index).to(logp.dtype)
    hot = one_hot(target, logp.shape[-1], logp.dtype) * valid.unsqueeze(-1)
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


def _torch_mlir_fx() -> Any:
    """
    `torch_mlir.fx`, untyped (as `hyperoffload.ir.upstream` keeps the MLIR
    bindings). torch-mlir's MLIR libraries and the project's MLIR Python
    bindings (`mlir`, used by `hyperoffload.evaluators.execution`) cannot share a
    process: loading the second aborts it or breaks the ExecutionEngine.
    """
    if "torch_mlir.fx" not in sys.modules and any(
        name == "mlir" or name.startswith("mlir.") for name in sys.modules
    ):
        raise ExportError(
            "torch-mlir cannot be loaded into a process that already loaded the "
            "MLIR Python bindings (hyperoffload.evaluators.execution / hyperoffload.ir.upstream); "
            "export in a separate process (e.g. hyperoffload-gen)"
        )
    return import_module("torch_mlir.fx")


def decomposition_table(embedding_chunks: int = 1) -> dict[Any, Callable[..., Any]]:
    """
    torch-mlir's table, with one-hot embedding backward (over
    `embedding_chunks` chunks of tokens) and NLL loss (no scatter/gather, so
    no `tm_tensor`), PyTorch's own GELU decompositions (torch-mlir's tanh
    GELU uses a wrong constant) and without `addmm` (its decomposition
    upcasts bf16 to f32).
    """
    aten: Any = cast(Any, torch.ops).aten
    table: dict[Any, Callable[..., Any]] = dict(
        _torch_mlir_fx().get_decomposition_table()
    )
    pytorch: Any = import_module("torch._decomp")
    table.update(pytorch.get_decompositions([aten.gelu, aten.gelu_backward]))
    table[aten.embedding_dense_backward.default] = partial(
        embedding_dense_backward, chunks=embedding_chunks
    )
    table[aten.nll_loss_forward.default] = nll_loss_forward
    table[aten.nll_loss_backward.default] = nll_loss_backward
    for overload in aten.addmm.overloads():
        table.pop(getattr(aten.addmm, overload), None)
    return table


# ------------------------------------------------------------------------ programs


def _flat_cache(cache: Sequence[LayerCache]) -> list[Tensor]:
    """k0, v0, k1, v1, ...; a layer in blocks gives k, v of each block in turn."""
    flat: list[Tensor] = []
    for layer in cache:
        if isinstance(layer, KVBlocks):
            for k, v in zip(layer.keys, layer.values, strict=True):
                flat += [k, v]
        else:
            flat += list(layer)
    return flat


class PrefillFn:
    """
    ``(tokens, *params) -> (logits, k0, v0, k1, v1, ...)``; with a blocked
    attention variant, each layer's cache is k, v of block 0, then block 1...
    """

    def __init__(self, model: nn.Module) -> None:
        self.forward = ForwardFn(model)

    def __call__(self, tokens: Tensor, *params: Tensor) -> tuple[Tensor, ...]:
        logits, cache = self.forward.run(tokens, params)
        return (logits, *_flat_cache(cache))


class DecodeFn:
    """
    ``(token, k0, v0, ..., *params) -> (logits, k0n, v0n, ...)``: the cache
    arguments hold the past positions; the results are only the new entries
    (one position per decoded token) that the caller appends to its cache.
    With `blocks` (the block starts each layer reads), each layer's cache
    arguments are k, v of each of those blocks in turn.
    """

    def __init__(
        self,
        model: nn.Module,
        n_layers: int,
        kv_len: int,
        blocks: Sequence[int] | None = None,
    ) -> None:
        self.forward = ForwardFn(model)
        self.n_layers = n_layers
        self.kv_len = kv_len
        self.blocks = None if blocks is None else tuple(blocks)

    def __call__(self, tokens: Tensor, *args: Tensor) -> tuple[Tensor, ...]:
        per_layer = 2 if self.blocks is None else 2 * len(self.blocks)
        n = per_layer * self.n_layers
        flat, params = args[:n], args[n:]
        past: list[PastCache] = []
        for i in range(self.n_layers):
            mine = flat[per_layer * i : per_layer * (i + 1)]
            if self.blocks is None:
                past.append((mine[0], mine[1]))
            else:
                past.append(KVBlocks(self.blocks, mine[0::2], mine[1::2]))
        logits, cache = self.forward.run(tokens, params, past, self.kv_len)
        return (logits, *_flat_cache(cache))


class RoutedFn:
    """
    `fn`'s results, then the markers `route_experts` takes off: for each MoE
    layer and routed expert, whether any token chose it (a 0-d bool) and its
    contribution to the layer's output.
    """

    def __init__(self, fn: Callable[..., Any], model: nn.Module) -> None:
        self.fn = fn
        self.moes = [moe for _, moe in moe_layers(model)]

    def __call__(self, *args: Tensor) -> tuple[Tensor, ...]:
        for moe in self.moes:
            moe.markers = []
        try:
            result = self.fn(*args)
            markers = [m for moe in self.moes for m in moe.markers or ()]
        finally:
            for moe in self.moes:
                moe.markers = None
        results = cast(
            tuple[Tensor, ...], result if isinstance(result, tuple) else (result,)
        )
        flat = [t for m in markers for t in (m.routed, m.contribution)]
        return (*results, *flat)


# ------------------------------------------------------------------------- export


@dataclass(frozen=True)
class Shapes:
    """Run-time sizes of an exported program."""

    batch: int = 1
    seq: int = 16
    """Prompt length (forward, train, prefill)."""
    kv_len: int = 16
    """Cached positions before the decoded token (decode)."""


@dataclass(frozen=True)
class Signature:
    """What an exported function takes and returns."""

    func_name: str
    arg_names: list[str]
    arg_specs: list[tuple[tuple[int, ...], torch.dtype]]
    first_kv: int
    """Index of the first KV-cache argument (== first_param if none)."""
    first_param: int
    n_params: int
    results: str
    kv_blocks: tuple[BlockTag, ...] = ()
    """The block of each KV-cache argument (decode in blocks; else empty)."""
    kv_attrs: tuple[str, ...] = ()
    """Attributes of each KV-cache argument in place of the tier and block
    (a ``topk`` decode step: pools tagged for the pool, summaries in HBM)."""
    result_blocks: tuple[BlockTag, ...] = ()
    """The block of each result after the logits (prefill in blocks; else empty)."""
    kv_cache: str = ""
    """The value of `hyperoffload.kv_cache` on the function (empty: full attention)."""
    param_experts: tuple[ExpertKey | None, ...] = ()
    """The routed expert (layer, expert) of each parameter, None for the others
    (empty without MoE layers)."""
    moe: str = ""
    """The value of `hyperoffload.moe` on the function (empty: no MoE layer)."""
    markers: tuple[ExpertKey, ...] = ()
    """The experts whose (routed, contribution) markers follow the results of
    the traced program, in order (routed experts; else empty)."""
    n_states: int = 0
    """Optimizer-state arguments after the parameters (train with adamw)."""
    updates: bool = False
    """Whether the results after the loss are the updated parameters and
    optimizer states, in argument order (train with an optimizer)."""


@dataclass(frozen=True)
class Exported:
    """Tagged MLIR text of one program and how it was made."""

    text: str
    signature: Signature
    seconds: float


def with_layers(
    cfg: ModelConfig, n_layers: int | None, n_dense_layers: int | None
) -> ModelConfig:
    """`cfg` cut to `n_layers`, with `n_dense_layers` leading dense layers (moe)."""
    if n_layers is not None:
        cfg = replace(cfg, n_layers=n_layers)
    if n_dense_layers is None:
        return cfg
    if cfg.family != "moe":
        raise ExportError(
            f"dense layers apply to the moe family only (this model is {cfg.family})"
        )
    if n_dense_layers < 0:
        raise ExportError(f"dense layers must be non-negative, not {n_dense_layers}")
    return replace(cfg, n_dense_layers=n_dense_layers)


def check_attention(spec: AttentionSpec, mode: str) -> None:
    """`ExportError` unless `spec` is a variant `mode` can be exported with."""
    if spec.kind not in ATTENTION_KINDS:
        known = ", ".join(ATTENTION_KINDS)
        raise ExportError(f"unknown attention {spec.kind!r} (known: {known})")
    if not spec.in_blocks:
        return
    if mode not in ("prefill", "decode"):
        raise ExportError(
            f"attention {spec.kind!r} applies to the prefill and decode modes, "
            f"not {mode}"
        )
    if spec.block < 1:
        raise ExportError(f"a KV block holds at least 1 token, not {spec.block}")
    if spec.sinks < 0:
        raise ExportError(f"attention sinks must be non-negative, not {spec.sinks}")
    if spec.kind != "topk" and (spec.topk or spec.recent):
        raise ExportError(
            f"top-k and recent positions apply to attention 'topk', not {spec.kind!r}"
        )
    if spec.kind == "window":
        if spec.window < 1:
            raise ExportError(
                f"a sliding window holds at least 1 token, not {spec.window}"
            )
    elif spec.kind == "topk":
        if spec.window:
            raise ExportError("a window applies to attention 'window', not 'topk'")
        if spec.topk < 1 or spec.recent < 1:
            raise ExportError(
                "attention 'topk' selects at least 1 block and sees at least the "
                f"newest position (topk {spec.topk}, recent {spec.recent})"
            )
        if mode != "decode":
            raise ExportError(
                "attention 'topk' applies to the decode mode (a prefill attends "
                "every position: export it with --attention blocked)"
            )
    elif spec.window or spec.sinks:
        raise ExportError(
            f"a window and sinks apply to attention 'window', not {spec.kind!r}"
        )


def check_expert_shard(cfg: ModelConfig, experts: str) -> None:
    """`ExportError` unless `cfg`'s expert-parallel group is one it can be cut in."""
    group, rank = cfg.expert_shard, cfg.expert_rank
    if group == 1 and rank == 0:
        return
    if group < 1 or not 0 <= rank < group:
        raise ExportError(
            f"an expert-parallel group has at least 1 device and a rank within "
            f"it, not {group} devices and rank {rank}"
        )
    if cfg.family != "moe" or cfg.n_layers <= cfg.n_dense_layers:
        raise ExportError(
            "expert parallelism needs an MoE layer (moe family, not every layer dense)"
        )
    if cfg.n_experts % group:
        raise ExportError(
            f"{cfg.n_experts} routed experts do not split over {group} devices"
        )
    if experts != "dense":
        raise ExportError(
            "expert parallelism exchanges every expert's rows; routed experts "
            "(--experts routed) run on one device"
        )


class ExchangingFn:
    """
    `fn`'s results, then the (operand, stand-in) pair of every all-to-all
    of the model's MoE layers (`models.ReplicaExchange`), forward and
    backward, in the order they ran; `count` is how many, once traced.
    """

    def __init__(self, fn: Callable[..., Any], model: nn.Module) -> None:
        self.fn = fn
        self.exchanges = [moe.exchange for _, moe in moe_layers(model)]
        self.count = 0

    def __call__(self, *args: Tensor) -> tuple[Tensor, ...]:
        pairs: list[tuple[Tensor, Tensor]] = []
        for exchange in self.exchanges:
            exchange.pairs = pairs
        try:
            result = self.fn(*args)
        finally:
            for exchange in self.exchanges:
                exchange.pairs = None
        self.count = len(pairs)
        results = cast(
            tuple[Tensor, ...], result if isinstance(result, tuple) else (result,)
        )
        return (*results, *(t for pair in pairs for t in pair))


def check_experts(cfg: ModelConfig, mode: str, experts: str) -> None:
    """`ExportError` unless `experts` is a choice `cfg` and `mode` can be exported with."""
    if experts not in EXPERTS_MODES:
        known = ", ".join(EXPERTS_MODES)
        raise ExportError(f"unknown experts {experts!r} (known: {known})")
    check_expert_shard(cfg, experts)
    if experts == "dense":
        return
    if cfg.family != "moe":
        raise ExportError(
            f"routed experts apply to the moe family only (this model is {cfg.family})"
        )
    if cfg.n_layers <= cfg.n_dense_layers:
        raise ExportError("routed experts need an MoE layer (every layer is dense)")
    if mode == "train":
        raise ExportError(
            "routed experts apply to the forward, prefill and decode modes, not "
            "train (the backward pass of an expert would not be routed)"
        )


def moe_description(cfg: ModelConfig, routed: bool) -> str:
    """
    The value of the `hyperoffload.moe` function attribute (empty without
    MoE layers).

    >>> from hyperoffload.frontend.configs import get_config
    >>> moe_description(get_config("mixtral-8x7b"), routed=True)
    '{experts = 8 : i64, top_k = 2 : i64, shared = 0 : i64, router = "softmax", routed = true}'
    """
    if cfg.family != "moe" or cfg.n_layers <= cfg.n_dense_layers:
        return ""
    return (
        f"{{experts = {cfg.n_experts} : i64, top_k = {cfg.top_k} : i64, "
        f"shared = {cfg.n_shared_experts} : i64, "
        f'router = "{cfg.router}", routed = {"true" if routed else "false"}}}'
    )


def _param_experts(model: nn.Module) -> tuple[ExpertKey | None, ...]:
    """The routed expert of each parameter of `model` (empty without MoE layers)."""
    owner: dict[int, ExpertKey] = {}
    for layer, moe in moe_layers(model):
        for e, expert in enumerate(moe.experts, moe.first_expert):
            for p in expert.parameters():
                owner[id(p)] = (layer, e)
    if not owner:
        return ()
    return tuple(owner.get(id(p)) for p in model.parameters())


def _decode_blocks(
    cfg: ModelConfig, shapes: Shapes, dtype: torch.dtype
) -> tuple[list[BlockTag], list[tuple[tuple[int, ...], torch.dtype]], list[int]]:
    """The cache arguments of a decode step in blocks: tags, specs, block starts."""
    spec = cfg.attention
    read = spec.decode_blocks(shapes.kv_len)
    tags: list[BlockTag] = []
    specs: list[tuple[tuple[int, ...], torch.dtype]] = []
    for layer in range(cfg.n_layers):
        for block in read:
            n = len(spec.bounds(block, shapes.kv_len))
            for kind in KVKind:
                tags.append(BlockTag(layer, kind, block))
                specs.append(((shapes.batch, cfg.n_kv_heads, n, cfg.head_dim), dtype))
    return tags, specs, [block * spec.block for block in read]


def check_train(mode: str, train: TrainSpec | None, shapes: Shapes) -> None:
    """`ExportError` unless `train` is a step `mode` and `shapes` can be exported with."""
    if train is None or train.is_default:
        return
    if mode != "train":
        raise ExportError(
            "an optimizer, gradient accumulation and the loss apply to the train "
            f"mode, not {mode}"
        )
    if train.optimizer.kind not in OPTIMIZERS:
        known = ", ".join(OPTIMIZERS)
        raise ExportError(
            f"unknown optimizer {train.optimizer.kind!r} (known: {known})"
        )
    optimizer = train.optimizer
    beta1, beta2 = optimizer.betas
    if optimizer.kind != "none" and not (
        optimizer.lr >= 0
        and 0 <= beta1 < 1
        and 0 <= beta2 < 1
        and optimizer.eps >= 0
        and optimizer.weight_decay >= 0
    ):
        raise ExportError(
            f"invalid {optimizer.kind} hyperparameters (lr, eps and weight decay "
            f"non-negative, betas in [0, 1), as torch.optim checks): {optimizer}"
        )
    if train.loss.kind not in LOSSES:
        known = ", ".join(LOSSES)
        raise ExportError(f"unknown loss {train.loss.kind!r} (known: {known})")
    if train.grad_accum < 1:
        raise ExportError(
            f"gradient accumulation takes at least 1 micro-batch, not {train.grad_accum}"
        )
    if train.shard < 1 or not 0 <= train.rank < train.shard:
        raise ExportError(
            f"a data-parallel group has at least 1 device and a rank within it, "
            f"not {train.shard} devices and rank {train.rank}"
        )
    if train.in_backward and optimizer.kind == "none":
        raise ExportError(
            "the optimizer step in the backward pass needs an optimizer (sgd or "
            "adamw): without one the step returns its gradients"
        )
    if train.expert_shard > 1 and train.shard % train.expert_shard:
        raise ExportError(
            f"an expert-parallel group of {train.expert_shard} devices does not "
            f"divide the data-parallel group of {train.shard}"
        )
    if train.shard > 1 and optimizer.kind != "adamw":
        raise ExportError(
            f"sharding applies to the adamw optimizer states, not to {optimizer.kind}"
        )
    chunks = train.loss.chunks
    if chunks is not None:
        if train.loss.kind != "chunked":
            raise ExportError("loss chunks apply to the chunked loss")
        tokens = shapes.batch * shapes.seq
        if not 1 <= chunks <= tokens:
            raise ExportError(
                f"a chunked loss over {tokens} tokens takes 1 to {tokens} chunks, "
                f"not {chunks}"
            )


def train_program(
    model: nn.Module, shapes: Shapes, dtype: torch.dtype, train: TrainSpec
) -> tuple[TrainStepFn, Signature]:
    """The training step of `train` over `model` and its signature."""
    param_items = list(model.named_parameters())
    names = [n for n, _ in param_items]
    param_specs = [(tuple(p.shape), p.dtype) for _, p in param_items]
    rows = (shapes.batch, shapes.seq)
    tokens = [
        ((train.grad_accum, *rows) if train.grad_accum > 1 else rows, torch.int64)
    ]
    kind = train.optimizer.kind
    states = train.state_names(names, master=dtype != torch.float32)
    step = [((), torch.int64)] if kind == "adamw" else []
    if train.shard > 1:
        for name, (shape, _) in zip(names, param_specs, strict=True):
            group = train.group_of(name)
            if not shape or shape[0] % group:
                raise ExportError(
                    f"cannot shard {name} {list(shape)} over {group} devices: "
                    "its first dimension is not a multiple of the group"
                )
    state_specs = [
        (train.shard_shape(shape, name), torch.float32)
        for name, (shape, _) in zip(names, param_specs, strict=True)
    ] * (len(states) // max(len(names), 1))
    first = 2 + len(step)
    results = {
        "none": "loss, then d(loss)/d(param) for each parameter in argument order",
        "sgd": "loss, then each parameter after its SGD update, in argument order",
        "adamw": "loss, then each parameter after its AdamW update, then the "
        "updated optimizer states ("
        + ", ".join(dict.fromkeys(name.split(".", 1)[0] for name in states))
        + "), in argument order",
    }[kind]
    if train.shard > 1:
        results += (
            f" (the states are this device's shard, rank {train.rank} of "
            f"{train.shard}: the gradients reduce-scattered, the weights "
            "all-gathered)"
        )
    sig = Signature(
        "train_step",
        ["tokens", "targets", *(["step"] if step else []), *names, *states],
        tokens * 2 + step + param_specs + state_specs,
        first,
        first,
        len(names),
        results,
        n_states=len(states),
        updates=kind != "none",
    )
    return TrainStepFn(model, train), sig


def program(
    model: nn.Module,
    cfg: ModelConfig,
    mode: str,
    shapes: Shapes,
    dtype: torch.dtype,
    experts: ExpertsMode = "dense",
    train: TrainSpec | None = None,
) -> tuple[Callable[..., Any], Signature]:
    """
    The traced function of `mode` and its signature (parameters of `model`;
    the attention variant of `cfg`; the optimizer, micro-batches and loss of
    a `train` step); with routed `experts`, the function also returns the
    markers of `RoutedFn`.
    """
    if mode not in MODES:
        raise ExportError(f"unknown mode {mode!r} (known: {', '.join(MODES)})")
    check_experts(cfg, mode, experts)
    check_train(mode, train, shapes)
    if mode == "train":
        return train_program(model, shapes, dtype, train or TrainSpec())
    fn, sig = _program(model, cfg, mode, shapes, dtype)
    sig = replace(
        sig,
        param_experts=_param_experts(model),
        moe=moe_description(cfg, experts == "routed"),
    )
    if experts == "dense":
        return fn, sig
    markers = tuple(
        (layer, e) for layer, moe in moe_layers(model) for e in range(len(moe.experts))
    )
    return RoutedFn(fn, model), replace(sig, markers=markers)


def _program(
    model: nn.Module, cfg: ModelConfig, mode: str, shapes: Shapes, dtype: torch.dtype
) -> tuple[Callable[..., Any], Signature]:
    """`program` of dense experts, without the MoE tags."""
    spec = cfg.attention
    check_attention(spec, mode)
    param_items = list(model.named_parameters())
    names = [n for n, _ in param_items]
    param_specs = [(tuple(p.shape), p.dtype) for _, p in param_items]
    b = shapes.batch
    seq = 1 if mode == "decode" else shapes.seq
    tokens = [((b, seq), torch.int64)]
    if mode == "decode" and spec.kind == "topk":
        from hyperoffload.frontend.topk_export import TopkDecodeFn, topk_cache_args

        kv_names, kv_specs, kv_attrs = topk_cache_args(cfg, b, shapes.kv_len, dtype)
        sig = Signature(
            "decode",
            ["token", *kv_names, *names],
            tokens + kv_specs + param_specs,
            1,
            1 + len(kv_names),
            len(names),
            "logits, then the new cache entries k0, v0, k1, v1, ... "
            "(one position each; the caller appends them to the tail block "
            "and updates its key summary)",
            kv_attrs=tuple(kv_attrs),
            kv_cache=spec.describe(shapes.kv_len),
        )
        return TopkDecodeFn(model, cfg, shapes.kv_len), sig
    if mode == "decode" and spec.in_blocks:
        tags, kv_specs, starts = _decode_blocks(cfg, shapes, dtype)
        kv_names = [tag.name() for tag in tags]
        sig = Signature(
            "decode",
            ["token", *kv_names, *names],
            tokens + kv_specs + param_specs,
            1,
            1 + len(kv_names),
            len(names),
            "logits, then the new cache entries k0, v0, k1, v1, ... "
            "(one position each; the caller appends them to their blocks)",
            kv_blocks=tuple(tags),
            kv_cache=spec.describe(shapes.kv_len),
        )
        return DecodeFn(model, cfg.n_layers, shapes.kv_len, starts), sig
    if mode == "decode":
        kv_shape = (b, cfg.n_kv_heads, shapes.kv_len, cfg.head_dim)
        kv_names = [f"{t}_cache.{i}" for i in range(cfg.n_layers) for t in "kv"]
        specs = tokens + [(kv_shape, dtype)] * len(kv_names) + param_specs
        sig = Signature(
            "decode",
            ["token", *kv_names, *names],
            specs,
            1,
            1 + len(kv_names),
            len(names),
            "logits, then the new cache entries k0, v0, k1, v1, ... "
            "(one position each; the caller appends them)",
        )
        return DecodeFn(model, cfg.n_layers, shapes.kv_len), sig
    if mode == "prefill":
        blocks = tuple(
            BlockTag(layer, kind, block)
            for layer in range(cfg.n_layers)
            for block in range(spec.n_blocks(shapes.seq) if spec.in_blocks else 0)
            for kind in KVKind
        )
        sig = Signature(
            "prefill",
            ["tokens", *names],
            tokens + param_specs,
            1,
            1,
            len(names),
            "logits, then the KV cache "
            + (
                "of the prompt, per layer k, v of each block in turn"
                if blocks
                else "k0, v0, k1, v1, ... of the prompt"
            ),
            result_blocks=blocks,
            kv_cache=spec.describe(shapes.seq),
        )
        return PrefillFn(model), sig
    sig = Signature(
        "forward", ["tokens", *names], tokens + param_specs, 1, 1, len(names), "logits"
    )
    return ForwardFn(model), sig


_UNLOWERED = re.compile(r"\b(torch\.(?:aten|prim|prims)\.[\w.]+|tm_tensor\.\w+)")


def _unlowered_ops(text: str) -> list[str]:
    return sorted(set(_UNLOWERED.findall(text)))


def lower(
    fn: Callable[..., Any],
    args: Sequence[Tensor],
    func_name: str,
    embedding_chunks: int = 1,
) -> str:
    """
    Trace `fn` on `args` (fake tensors) and import it as linalg-on-tensors
    (the embedding's backward over `embedding_chunks` chunks of tokens).
    """
    from torch.fx.experimental.proxy_tensor import make_fx

    try:
        gm = make_fx(
            fn,
            tracing_mode="fake",
            decomposition_table=decomposition_table(embedding_chunks),
        )(*args)
    except ExportError:
        raise
    except Exception as err:
        raise ExportError(f"@{func_name}: tracing failed: {err}") from err
    try:
        module: Any = _torch_mlir_fx().stateless_fx_import(
            gm, output_type="linalg-on-tensors", model_name=func_name
        )
    except Exception as err:
        ops = _unlowered_ops(str(err))
        named = f" (unsupported: {', '.join(ops)})" if ops else ""
        raise ExportError(
            f"@{func_name}: torch-mlir cannot lower the program{named}: "
            f"{str(err).strip().splitlines()[0] if str(err).strip() else err!r}"
        ) from err
    text = str(module)
    ops = _unlowered_ops(text)
    if ops or "torch." in text:
        raise ExportError(
            f"@{func_name}: exported MLIR still holds ops upstream MLIR cannot run: "
            + (", ".join(ops) or "torch dialect ops")
        )
    return text


def block_attr(tag: BlockTag) -> str:
    """`hyperoffload.kv_block = array<i64: layer, kind, block>`."""
    return f"{KV_BLOCK_ATTR} = array<i64: {tag.layer}, {int(tag.kind)}, {tag.block}>"


def expert_attr(key: ExpertKey) -> str:
    """`hyperoffload.expert = array<i64: layer, expert>`."""
    return f"{EXPERT_ATTR} = array<i64: {key[0]}, {key[1]}>"


def tag_args(text: str, sig: Signature, tier: str = Tier.REMOTE) -> str:
    """
    Attach tier (and KV category and block, expert, or optimizer category)
    attributes to the arguments; with `Signature.updates`, each parameter
    and state also names its updated result (`ALIASING_ARG_ATTR`).
    """
    match = re.search(rf"func\.func @{sig.func_name}\((.*?)\) ->", text)
    if match is None:
        raise ExportError(f"signature of @{sig.func_name} not found")
    args = re.split(r", (?=%arg\d+:)", match.group(1))
    tier_attr = f"hyperoffload.tier = #hyperoffload.tier<{tier}>"
    tagged: list[str] = []
    for i, arg in enumerate(args):
        if "{" in arg or i < sig.first_kv:
            tagged.append(arg)
        elif i < sig.first_param and sig.kv_attrs:
            attr = sig.kv_attrs[i - sig.first_kv]
            attrs = [KV_ATTR, tier_attr, attr] if "kv_pool" in attr else [KV_ATTR, attr]
            tagged.append(f"{arg} {{{', '.join(attrs)}}}")
        elif i < sig.first_param:
            attrs = [KV_ATTR, tier_attr]
            if sig.kv_blocks:
                attrs.append(block_attr(sig.kv_blocks[i - sig.first_kv]))
            tagged.append(f"{arg} {{{', '.join(attrs)}}}")
        else:
            attrs = [tier_attr]
            if i >= sig.first_param + sig.n_params:
                attrs.insert(0, OPTIMIZER_ATTR)
            elif sig.param_experts and (key := sig.param_experts[i - sig.first_param]):
                attrs.append(expert_attr(key))
            if sig.updates:  # results: the loss, then the updates in argument order
                attrs.append(f"{ALIASING_ARG_ATTR} = {1 + i - sig.first_param} : i32")
            tagged.append(f"{arg} {{{', '.join(attrs)}}}")
    start, end = match.span(1)
    return text[:start] + ", ".join(tagged) + text[end:]


def tag_function(text: str, sig: Signature) -> str:
    """
    Attach `hyperoffload.kv_cache` (a cache in blocks) and `hyperoffload.moe`
    (MoE layers) to the function.
    """
    attrs = [
        f"{name} = {value}"
        for name, value in ((KV_CACHE_ATTR, sig.kv_cache), (MOE_ATTR, sig.moe))
        if value
    ]
    if not attrs:
        return text
    header = re.search(rf"func\.func @{sig.func_name}\(.*( \{{)\n", text)
    if header is None:
        raise ExportError(f"body of @{sig.func_name} not found")
    at = header.start(1)
    return f"{text[:at]} attributes {{{', '.join(attrs)}}}{text[at:]}"


def marker_attr(key: ExpertKey, kind: MarkerKind) -> str:
    """`hyperoffload.route_marker = array<i64: layer, expert, kind>`."""
    return f"{MARKER_ATTR} = array<i64: {key[0]}, {key[1]}, {int(kind)}>"


def tag_results(text: str, sig: Signature, tier: str = Tier.REMOTE) -> str:
    """
    Tag the KV-cache results of a prefill or decode step (every result after
    the logits) as living in `tier`: the cache is the caller's, kept in the
    pool beside the cache arguments, so a plan writes it back (the caller
    receives the remote copy) instead of holding it in HBM at return.
    The markers of routed experts (`Signature.markers`, the last results)
    are tagged `hyperoffload.route_marker` instead. The updated parameters
    and optimizer states of a training step with an optimizer
    (`Signature.updates`) are tagged like their arguments: written back to
    the pool where they live.
    """
    cache = sig.func_name in ("prefill", "decode")
    if not cache and not sig.markers and not sig.updates:
        return text
    match = re.search(rf"func\.func @{sig.func_name}\(.*?\) -> \((.*?)\) \{{", text)
    if match is None:
        raise ExportError(f"results of @{sig.func_name} not found")
    results = match.group(1).split(", ")
    first_marker = len(results) - 2 * len(sig.markers)
    tier_attr = f"hyperoffload.tier = #hyperoffload.tier<{tier}>"
    tagged = [results[0]]
    for i, result in enumerate(results[1:first_marker]):
        attrs = [tier_attr]
        if sig.updates and i >= sig.n_params:
            attrs.insert(0, OPTIMIZER_ATTR)
        if sig.result_blocks:
            attrs.append(block_attr(sig.result_blocks[i]))
        tagged.append(f"{result} {{{', '.join(attrs)}}}")
    for i, result in enumerate(results[first_marker:]):
        attrs = [marker_attr(sig.markers[i // 2], MarkerKind(i % 2))]
        tagged.append(f"{result} {{{', '.join(attrs)}}}")
    start, end = match.span(1)
    return text[:start] + ", ".join(tagged) + text[end:]


def export(
    cfg: ModelConfig,
    mode: str,
    *,
    shapes: Shapes | None = None,
    n_layers: int | None = None,
    n_dense_layers: int | None = None,
    dtype: torch.dtype = torch.float32,
    tier: str = Tier.REMOTE,
    attention: AttentionSpec | None = None,
    experts: ExpertsMode = "dense",
    train: TrainSpec | None = None,
) -> Exported:
    """
    Export `mode` of `cfg` on fake tensors, optionally cut to `n_layers` and
    (moe family) with `n_dense_layers` leading dense layers, with the
    `attention` variant (default: the config's, full attention); parameters
    and KV cache are tagged as living in `tier`. With routed `experts` (moe
    family; not train) each routed expert runs under an `scf.if` on whether
    any token chose it (`hyperoffload.frontend.route_experts`); the text is
    then printed by xDSL. `train` (mode ``train``) sets the step's optimizer,
    micro-batches and loss (`hyperoffload.frontend.train_step`); optimizer
    states are tagged like the parameters, with `hyperoffload.category =
    "optimizer"`.
    """
    if tier not in OFFLOAD_TIERS:
        raise ExportError(f"unknown tier {tier!r} (known: {', '.join(OFFLOAD_TIERS)})")
    from torch._subclasses.fake_tensor import FakeTensorMode

    start = time.perf_counter()
    cfg = with_layers(cfg, n_layers, n_dense_layers)
    if attention is not None:
        cfg = replace(cfg, attention=attention)
    check_attention(cfg.attention, mode)
    check_experts(cfg, mode, experts)
    shapes = shapes or Shapes()
    check_train(mode, train, shapes)
    if cfg.family == "gpt":
        needed = shapes.kv_len + 1 if mode == "decode" else shapes.seq
        if needed > cfg.max_positions:
            raise ExportError(
                f"{mode} needs {needed} positions; the learned position table "
                f"has {cfg.max_positions}"
            )
    with torch.device("meta"):
        model = build_model(cfg).to(dtype)
    fn, sig = program(model, cfg, mode, shapes, dtype, experts, train)
    exchanging = ExchangingFn(fn, model) if cfg.expert_shard > 1 else None
    fn = exchanging or fn
    grad = (
        range(sig.first_param, sig.first_param + sig.n_params)
        if mode == "train"
        else range(0)
    )
    with FakeTensorMode() as fake_mode:
        args = [
            torch.empty(shape, dtype=dt, requires_grad=i in grad)
            if dt.is_floating_point
            else torch.zeros(shape, dtype=dt)
            for i, (shape, dt) in enumerate(sig.arg_specs)
        ]
    with fake_mode:
        text = lower(fn, args, sig.func_name, _embedding_chunks(cfg, shapes, train))
    text = tag_function(tag_results(tag_args(text, sig, tier), sig, tier), sig)
    if sig.markers:
        text = route_experts_text(make_context(), text, f"<@{sig.func_name}>")
        sig = replace(sig, markers=())
    zero = train is not None and train.shard > 1
    if zero or exchanging is not None:
        names = [n for n, _ in model.named_parameters()]
        text = insert_collectives_text(
            make_context(),
            text,
            f"<@{sig.func_name}>",
            [(train.group_of(n), train.rank_of(n)) for n in names]
            if train is not None and zero
            else [],
            exchanging.count if exchanging is not None else 0,
            cfg.expert_shard,
            cfg.expert_rank,
        )
    return Exported(text, sig, time.perf_counter() - start)


def _embedding_chunks(cfg: ModelConfig, shapes: Shapes, train: TrainSpec | None) -> int:
    """The chunks of the embedding's backward: the chunked loss's (else 1)."""
    if train is None or train.loss.kind != "chunked":
        return 1
    return train.loss.chunk_count(shapes.batch * shapes.seq, cfg.vocab_size, cfg.hidden)


def header(title: str, regen: str, sig: Signature, tier: str = Tier.REMOTE) -> str:
    """A comment block naming the program, its results and every argument."""
    lines = [
        f"// {title}",
        f"// Generated by: {regen}",
        "// (torch-mlir linalg-on-tensors export; parameters are tagged",
        f"//  hyperoffload.tier = #hyperoffload.tier<{tier}>"
        + (
            ', optimizer states also hyperoffload.category = "optimizer")'
            if sig.n_states
            else ")"
        ),
        f"// @{sig.func_name} results: {sig.results}",
        *(
            [f"// (each updated argument names its result: {ALIASING_ARG_ATTR} = N)"]
            if sig.updates
            else []
        ),
        "// arguments:",
    ]
    lines += [f"//   %arg{i}: {name}" for i, name in enumerate(sig.arg_names)]
    return "\n".join(lines) + "\n"
