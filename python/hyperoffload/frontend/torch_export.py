"""
Export the model zoo to linalg-on-tensors MLIR with torch-mlir.

`export(cfg, mode, ...)` traces one program on fake tensors (no weights are
allocated, so published dimensions export on a laptop) with
`make_fx(tracing_mode="fake")`, imports it with
`torch_mlir.fx.stateless_fx_import`, and tags the function arguments:

* ``forward``: ``@forward(tokens, *params) -> logits``
* ``train``: ``@train_step(tokens, targets, *params) -> (loss, *grads)``
  (cross-entropy loss, one gradient per parameter in argument order)
* ``prefill``: ``@prefill(tokens, *params) -> (logits, k0, v0, k1, v1, ...)``
* ``decode``: ``@decode(token, k0, v0, ..., *params) -> (logits, k0n, v0n, ...)``:
  one token per sequence at position ``kv_len``; each cache argument is
  ``(batch, kv_heads, kv_len, head_dim)``, read in place (never copied or
  repeated per head), and each returned tensor is the token's new entry
  ``(batch, kv_heads, 1, head_dim)``, which the caller appends to its paged
  cache.

Parameters carry ``{hyperoffload.tier = #hyperoffload.tier<remote>}`` (or
the tier asked for); KV-cache arguments also ``hyperoffload.category = "kv"``;
the KV-cache results of a prefill or decode step carry the tier too.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib import import_module
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from hyperoffload.frontend.configs import MODES, ModelConfig
from hyperoffload.frontend.models import KV, build_model, one_hot
from hyperoffload.support.tiers import OFFLOAD_TIERS, Tier

KV_ATTR = 'hyperoffload.category = "kv"'
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
) -> Tensor:
    if scale_grad_by_freq:
        raise ExportError("embedding backward with scale_grad_by_freq is unsupported")
    flat = indices.reshape(-1)
    hot = one_hot(flat, num_weights, grad_output.dtype)
    if padding_idx >= 0:
        hot = hot * (flat != padding_idx).unsqueeze(-1).to(hot.dtype)
    grad = grad_output.reshape(flat.shape[0], -1)
    return hot.transpose(0, 1) @ grad


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


def decomposition_table() -> dict[Any, Callable[..., Any]]:
    """
    torch-mlir's table, with one-hot embedding backward and NLL loss (no
    scatter/gather, so no `tm_tensor`), PyTorch's own GELU decompositions
    (torch-mlir's tanh GELU uses a wrong constant) and without `addmm` (its
    decomposition upcasts bf16 to f32).
    """
    aten: Any = cast(Any, torch.ops).aten
    table: dict[Any, Callable[..., Any]] = dict(
        _torch_mlir_fx().get_decomposition_table()
    )
    pytorch: Any = import_module("torch._decomp")
    table.update(pytorch.get_decompositions([aten.gelu, aten.gelu_backward]))
    table[aten.embedding_dense_backward.default] = embedding_dense_backward
    table[aten.nll_loss_forward.default] = nll_loss_forward
    table[aten.nll_loss_backward.default] = nll_loss_backward
    for overload in aten.addmm.overloads():
        table.pop(getattr(aten.addmm, overload), None)
    return table


# ------------------------------------------------------------------------ programs


class ForwardFn:
    """``(tokens, *params) -> logits``; the model is held, not registered."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model
        self.names = [n for n, _ in model.named_parameters()]

    def run(
        self,
        tokens: Tensor,
        params: Sequence[Tensor],
        past: list[KV] | None = None,
        offset: int = 0,
    ) -> tuple[Tensor, list[KV]]:
        params_dict = dict(zip(self.names, params, strict=True))
        out = torch.func.functional_call(
            self.model, params_dict, (tokens,), {"past": past, "offset": offset}
        )
        return cast(tuple[Tensor, list[KV]], out)

    def __call__(self, tokens: Tensor, *params: Tensor) -> Tensor:
        return self.run(tokens, params)[0]


class TrainStepFn:
    """``(tokens, targets, *params) -> (loss, *grads)`` with cross-entropy loss."""

    def __init__(self, model: nn.Module) -> None:
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


class PrefillFn:
    """``(tokens, *params) -> (logits, k0, v0, k1, v1, ...)``."""

    def __init__(self, model: nn.Module) -> None:
        self.forward = ForwardFn(model)

    def __call__(self, tokens: Tensor, *params: Tensor) -> tuple[Tensor, ...]:
        logits, cache = self.forward.run(tokens, params)
        return (logits, *(t for kv in cache for t in kv))


class DecodeFn:
    """
    ``(token, k0, v0, ..., *params) -> (logits, k0n, v0n, ...)``: the cache
    arguments hold the past positions; the results are only the new entries
    (one position per decoded token) that the caller appends to its cache.
    """

    def __init__(self, model: nn.Module, n_layers: int) -> None:
        self.forward = ForwardFn(model)
        self.n_layers = n_layers

    def __call__(self, tokens: Tensor, *args: Tensor) -> tuple[Tensor, ...]:
        n = 2 * self.n_layers
        flat, params = args[:n], args[n:]
        past = [(flat[2 * i], flat[2 * i + 1]) for i in range(self.n_layers)]
        offset = flat[0].shape[2]
        logits, cache = self.forward.run(tokens, params, past, offset)
        return (logits, *(t for kv in cache for t in kv))


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


@dataclass(frozen=True)
class Exported:
    """Tagged MLIR text of one program and how it was made."""

    text: str
    signature: Signature
    seconds: float


def _with_layers(
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


def program(
    model: nn.Module, cfg: ModelConfig, mode: str, shapes: Shapes, dtype: torch.dtype
) -> tuple[Callable[..., Any], Signature]:
    """The traced function of `mode` and its signature (parameters of `model`)."""
    if mode not in MODES:
        raise ExportError(f"unknown mode {mode!r} (known: {', '.join(MODES)})")
    param_items = list(model.named_parameters())
    names = [n for n, _ in param_items]
    param_specs = [(tuple(p.shape), p.dtype) for _, p in param_items]
    b = shapes.batch
    seq = 1 if mode == "decode" else shapes.seq
    tokens = [((b, seq), torch.int64)]
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
        return DecodeFn(model, cfg.n_layers), sig
    if mode == "train":
        sig = Signature(
            "train_step",
            ["tokens", "targets", *names],
            tokens * 2 + param_specs,
            2,
            2,
            len(names),
            "loss, then d(loss)/d(param) for each parameter in argument order",
        )
        return TrainStepFn(model), sig
    if mode == "prefill":
        sig = Signature(
            "prefill",
            ["tokens", *names],
            tokens + param_specs,
            1,
            1,
            len(names),
            "logits, then the KV cache k0, v0, k1, v1, ... of the prompt",
        )
        return PrefillFn(model), sig
    sig = Signature(
        "forward", ["tokens", *names], tokens + param_specs, 1, 1, len(names), "logits"
    )
    return ForwardFn(model), sig


_UNLOWERED = re.compile(r"\b(torch\.(?:aten|prim|prims)\.[\w.]+|tm_tensor\.\w+)")


def _unlowered_ops(text: str) -> list[str]:
    return sorted(set(_UNLOWERED.findall(text)))


def lower(fn: Callable[..., Any], args: Sequence[Tensor], func_name: str) -> str:
    """Trace `fn` on `args` (fake tensors) and import it as linalg-on-tensors."""
    from torch.fx.experimental.proxy_tensor import make_fx

    try:
        gm = make_fx(
            fn, tracing_mode="fake", decomposition_table=decomposition_table()
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


def tag_args(text: str, sig: Signature, tier: str = Tier.REMOTE) -> str:
    """Attach tier (and KV category) attributes to the signature's arguments."""
    match = re.search(rf"func\.func @{sig.func_name}\((.*?)\) ->", text)
    if match is None:
        raise ExportError(f"signature of @{sig.func_name} not found")
    args = re.split(r", (?=%arg\d+:)", match.group(1))
    tier_attr = f"hyperoffload.tier = #hyperoffload.tier<{tier}>"
    tagged: list[str] = []
    for i, arg in enumerate(args):
        if "{" in arg or i < sig.first_kv:
            tagged.append(arg)
        elif i < sig.first_param:
            tagged.append(f"{arg} {{{KV_ATTR}, {tier_attr}}}")
        else:
            tagged.append(f"{arg} {{{tier_attr}}}")
    start, end = match.span(1)
    return text[:start] + ", ".join(tagged) + text[end:]


def tag_results(text: str, sig: Signature, tier: str = Tier.REMOTE) -> str:
    """
    Tag the KV-cache results of a prefill or decode step (every result after
    the logits) as living in `tier`: the cache is the caller's, kept in the
    pool beside the cache arguments, so a plan writes it back (the caller
    receives the remote copy) instead of holding it in HBM at return.
    """
    if sig.func_name not in ("prefill", "decode"):
        return text
    match = re.search(rf"func\.func @{sig.func_name}\(.*?\) -> \((.*?)\) \{{", text)
    if match is None:
        raise ExportError(f"results of @{sig.func_name} not found")
    results = match.group(1).split(", ")
    attr = f"{{hyperoffload.tier = #hyperoffload.tier<{tier}>}}"
    tagged = [results[0], *(f"{r} {attr}" for r in results[1:])]
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
) -> Exported:
    """
    Export `mode` of `cfg` on fake tensors, optionally cut to `n_layers` and
    (moe family) with `n_dense_layers` leading dense layers; parameters and
    KV cache are tagged as living in `tier`.
    """
    if tier not in OFFLOAD_TIERS:
        raise ExportError(f"unknown tier {tier!r} (known: {', '.join(OFFLOAD_TIERS)})")
    from torch._subclasses.fake_tensor import FakeTensorMode

    start = time.perf_counter()
    cfg = _with_layers(cfg, n_layers, n_dense_layers)
    shapes = shapes or Shapes()
    if cfg.family == "gpt":
        needed = shapes.kv_len + 1 if mode == "decode" else shapes.seq
        if needed > cfg.max_positions:
            raise ExportError(
                f"{mode} needs {needed} positions; the learned position table "
                f"has {cfg.max_positions}"
            )
    with torch.device("meta"):
        model = build_model(cfg).to(dtype)
    fn, sig = program(model, cfg, mode, shapes, dtype)
    grad = mode == "train"
    with FakeTensorMode() as fake_mode:
        args = [
            torch.empty(shape, dtype=dt, requires_grad=grad and i >= sig.first_param)
            if dt.is_floating_point
            else torch.zeros(shape, dtype=dt)
            for i, (shape, dt) in enumerate(sig.arg_specs)
        ]
    with fake_mode:
        text = lower(fn, args, sig.func_name)
    text = tag_results(tag_args(text, sig, tier), sig, tier)
    return Exported(text, sig, time.perf_counter() - start)


def header(title: str, regen: str, sig: Signature, tier: str = Tier.REMOTE) -> str:
    """A comment block naming the program, its results and every argument."""
    lines = [
        f"// {title}",
        f"// Generated by: {regen}",
        "// (torch-mlir linalg-on-tensors export; parameters are tagged",
        f"//  hyperoffload.tier = #hyperoffload.tier<{tier}>)",
        f"// @{sig.func_name} results: {sig.results}",
        "// arguments:",
    ]
    lines += [f"//   %arg{i}: {name}" for i, name in enumerate(sig.arg_names)]
    return "\n".join(lines) + "\n"
