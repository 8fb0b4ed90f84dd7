"""
Training steps of `hyperoffload.frontend` with an optimizer, micro-batches
and a chunked loss (`hyperoffload-gen --mode train --optimizer ...
--grad-accum N --loss chunked`): the exported steps, run by the numpy
evaluator and the MLIR ExecutionEngine, against `torch.optim.SGD`,
`torch.optim.AdamW` and eager autograd.

Two references for each optimizer step. The update alone: PyTorch's
optimizer applied to the gradients the exported program itself computes (the
same export with ``--optimizer none``, run by the same evaluator: the
forward and backward ops are the same, so are their gradients). The whole
step: eager autograd, then PyTorch's optimizer; there the exported gradients
differ from eager ones by the order of their sums (matmuls, reductions),
a few float32 ulps, which the update carries into the weights.

As in `test_frontend.py`, every export runs in one child process
(torch-mlir and the MLIR bindings cannot share one).
"""

import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace
from importlib import import_module
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import (
    BFloat16Type,
    DictionaryAttr,
    Float32Type,
    IntegerAttr,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import FuncOp

from hyperoffload.evaluators.execution import run_upstream
from hyperoffload.evaluators.numeric import evaluate
from hyperoffload.frontend import ModelConfig, get_config
from hyperoffload.frontend.models import build_model
from hyperoffload.frontend.optimizers import adamw_update, sgd_update
from hyperoffload.frontend.torch_export import ExportError, Shapes, check_train
from hyperoffload.frontend.training import OptimizerSpec, TrainSpec
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.tools.hyperoffload_gen import main as gen_main

torch: Any = import_module("torch")

Array = np.ndarray[Any, Any]

BATCH, SEQ = 2, 8
TOKENS = BATCH * SEQ
LAYERS = 1
STEP = 3
"""The AdamW step count of the states given (random moments: a running optimizer)."""
VOCAB = 200
"""The vocabulary of the chunked-loss exports: no other dimension of the
tiny model is 200, so a tokens-by-vocabulary tensor shows in the IR types."""
CHUNKS = 3
"""Chunks of the chunked loss: 6, 6 and 4 of the 16 tokens."""
ADAMW = OptimizerSpec("adamw", lr=1e-2, betas=(0.9, 0.99), eps=1e-6, weight_decay=0.1)
SGD = OptimizerSpec("sgd", lr=0.1)

EXPORTS: dict[str, tuple[str, str, str, int, str, int | None, int | None]] = {
    # name: model, dtype, optimizer, micro-batches, loss, chunks, vocabulary
    "llama_none": ("tiny-llama", "f32", "none", 1, "full", None, None),
    "llama_adamw": ("tiny-llama", "f32", "adamw", 1, "full", None, None),
    "llama_sgd": ("tiny-llama", "f32", "sgd", 1, "full", None, None),
    "gpt_none": ("tiny-gpt", "f32", "none", 1, "full", None, None),
    "gpt_adamw": ("tiny-gpt", "f32", "adamw", 1, "full", None, None),
    "llama_none_bf16": ("tiny-llama", "bf16", "none", 1, "full", None, None),
    "llama_adamw_bf16": ("tiny-llama", "bf16", "adamw", 1, "full", None, None),
    "llama_accum": ("tiny-llama", "f32", "none", 2, "full", None, None),
    "llama_full_v": ("tiny-llama", "f32", "none", 1, "full", None, VOCAB),
    "llama_chunked_v": ("tiny-llama", "f32", "none", 1, "chunked", CHUNKS, VOCAB),
    "gpt_chunked_accum": ("tiny-gpt", "f32", "none", 2, "chunked", CHUNKS, None),
    "llama_adamw_in_backward": ("tiny-llama", "f32", "adamw", 1, "full", None, None),
}
IN_BACKWARD = {"llama_adamw_in_backward": "llama_adamw"}
"""Exports with the optimizer step in the backward pass, and their twin without."""
GENERATED = {
    "gen": ("tiny-llama", "bf16", "adamw", 2, "chunked", CHUNKS, None),
    "gen_in_backward": ("tiny-llama", "bf16", "adamw", 2, "chunked", CHUNKS, None),
}
"""The `hyperoffload-gen` exports (`GEN`, then `GEN` with
``--optimizer-in-backward``), as `EXPORTS` would describe them."""

_EXPORT_SCRIPT = """
import json, sys
from dataclasses import replace
from pathlib import Path
from hyperoffload.frontend import get_config
from hyperoffload.frontend.torch_export import DTYPES, Shapes, export
from hyperoffload.frontend.training import LossSpec, OptimizerSpec, TrainSpec
from hyperoffload.tools.hyperoffload_gen import main as gen_main

out = Path(sys.argv[1])
exports, (batch, seq, layers), optimizers, gen, in_backward = json.loads(sys.argv[2])
for name, (model, dtype, kind, accum, loss, chunks, vocab) in exports.items():
    cfg = get_config(model)
    if vocab is not None:
        cfg = replace(cfg, vocab_size=vocab)
    optimizer = OptimizerSpec(kind, **optimizers.get(kind, {}))
    spec = TrainSpec(
        optimizer, accum, LossSpec(loss, chunks), in_backward=name in in_backward
    )
    exported = export(
        cfg, "train", shapes=Shapes(batch, seq), n_layers=layers,
        dtype=DTYPES[dtype], train=spec,
    )
    (out / f"{name}.mlir").write_text(exported.text)
status = gen_main([*gen, "-o", str(out / "gen.mlir")])
(out / "gen.status").write_text(str(status))
argv = [*gen, "--optimizer-in-backward", "-o", str(out / "gen_in_backward.mlir")]
(out / "gen_in_backward.status").write_text(str(gen_main(argv)))
"""

GEN = [
    "tiny-llama",
    "--mode",
    "train",
    "--layers",
    "1",
    "--seq",
    str(SEQ),
    "--batch",
    str(BATCH),
    "--dtype",
    "bf16",
    "--optimizer",
    "adamw",
    "--grad-accum",
    "2",
    "--loss",
    "chunked",
    "--loss-chunks",
    str(CHUNKS),
]


def _hyperparameters(spec: OptimizerSpec) -> dict[str, Any]:
    return {
        "lr": spec.lr,
        "betas": list(spec.betas),
        "eps": spec.eps,
        "weight_decay": spec.weight_decay,
    }


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every export of this module, made by one child process."""
    out = tmp_path_factory.mktemp("train_step")
    optimizers = {"adamw": _hyperparameters(ADAMW), "sgd": {"lr": SGD.lr}}
    spec = json.dumps(
        [EXPORTS, [BATCH, SEQ, LAYERS], optimizers, GEN, list(IN_BACKWARD)]
    )
    subprocess.run([sys.executable, "-c", _EXPORT_SCRIPT, str(out), spec], check=True)
    return out


# ------------------------------------------------------------------ references


def _config(name: str) -> ModelConfig:
    model, *_, vocab = {**EXPORTS, **GENERATED}[name]
    cfg = replace(get_config(model), n_layers=LAYERS)
    return cfg if vocab is None else replace(cfg, vocab_size=vocab)


class _Case:
    """A seeded model, a batch (or micro-batches) and AdamW states for one export."""

    def __init__(self, name: str, seed: int = 1) -> None:
        cfg = _config(name)
        _, dtype, _, accum, *_ = {**EXPORTS, **GENERATED}[name]
        torch.manual_seed(seed)
        self.model = build_model(cfg)
        with torch.no_grad():
            for p in self.model.parameters():  # non-trivial norms and biases too
                p.add_(0.1 * torch.randn(p.shape))
        self.names = [n for n, _ in self.model.named_parameters()]
        self.master = [p.detach().clone() for p in self.model.parameters()]
        self.dtype = torch.bfloat16 if dtype == "bf16" else torch.float32
        self.params = [p.to(self.dtype) for p in self.master]
        shape = (accum, BATCH, SEQ) if accum > 1 else (BATCH, SEQ)
        self.tokens = torch.randint(0, cfg.vocab_size, shape)
        self.targets = torch.randint(0, cfg.vocab_size, shape)
        # the moments after STEP - 1 updates by random gradients
        beta1, beta2 = ADAMW.betas
        self.exp_avg = [torch.zeros(p.shape) for p in self.master]
        self.exp_avg_sq = [torch.zeros(p.shape) for p in self.master]
        for _ in range(STEP - 1):
            for m, v in zip(self.exp_avg, self.exp_avg_sq, strict=True):
                g = 1e-2 * torch.randn(m.shape)
                m.mul_(beta1).add_((1 - beta1) * g)
                v.mul_(beta2).add_((1 - beta2) * g * g)

    def inputs(self, optimizer: str) -> list[Array]:
        """The arguments of the export with `optimizer`, as numpy arrays."""
        arrays: list[Any] = [self.tokens, self.targets]
        if optimizer == "adamw":
            arrays.append(torch.tensor(STEP))
        arrays += self.params
        if optimizer == "adamw":
            if self.dtype != torch.float32:
                arrays += self.master
            arrays += self.exp_avg + self.exp_avg_sq
        return [_numpy(a) for a in arrays]

    def eager_loss_and_grads(self) -> tuple[float, list[Any]]:
        """Eager autograd: each micro-batch's loss / N, backward, grads summed."""
        params = [p.clone().requires_grad_() for p in self.params]
        micro = self.tokens.unsqueeze(0) if self.tokens.dim() == 2 else self.tokens
        goals = self.targets.unsqueeze(0) if self.targets.dim() == 2 else self.targets
        total = 0.0
        for tokens, targets in zip(micro, goals, strict=True):
            logits = torch.func.functional_call(
                self.model, dict(zip(self.names, params, strict=True)), (tokens,)
            )[0]
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
            )
            (loss / len(micro)).backward()
            total += loss.item() / len(micro)
        return total, [p.grad for p in params]

    def adamw(self, grads: Sequence[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        """`torch.optim.AdamW` on the float32 weights: new weights, moments."""
        weights = [p.clone().requires_grad_() for p in self.master]
        optimizer = torch.optim.AdamW(
            weights,
            lr=ADAMW.lr,
            betas=ADAMW.betas,
            eps=ADAMW.eps,
            weight_decay=ADAMW.weight_decay,
        )
        for w, g, m, v in zip(
            weights, grads, self.exp_avg, self.exp_avg_sq, strict=True
        ):
            w.grad = torch.as_tensor(np.asarray(g)).to(torch.float32)
            optimizer.state[w] = {
                "step": torch.tensor(float(STEP - 1)),
                "exp_avg": m.clone(),
                "exp_avg_sq": v.clone(),
            }
        optimizer.step()
        state = [optimizer.state[w] for w in weights]
        return (
            [w.detach() for w in weights],
            [s["exp_avg"] for s in state],
            [s["exp_avg_sq"] for s in state],
        )


def _numpy(tensor: Any) -> Array:
    if tensor.dtype == torch.bfloat16:
        return tensor.to(torch.float32).numpy()
    return tensor.detach().numpy()


_OUR_ATTRS = re.compile(r" \{hyperoffload\.[^{}]*\}")


_EVALUATED: dict[tuple[Path, str, bytes], list[Array]] = {}
"""Outputs of the evaluator by export and inputs (several tests read the same)."""


def _evaluate(
    ctx: Context, exports: Path, name: str, inputs: list[Array]
) -> list[Array]:
    """The numpy evaluator on the export `name`, our attributes removed."""
    key = (
        exports,
        name,
        hashlib.sha256(b"".join(a.tobytes() for a in inputs)).digest(),
    )
    if key not in _EVALUATED:
        text = _OUR_ATTRS.sub("", (exports / f"{name}.mlir").read_text())
        module = parse_mlir(ctx, text, name)
        _EVALUATED[key] = [np.asarray(x) for x in evaluate(module, inputs).outputs]
    return [a.copy() for a in _EVALUATED[key]]


def _same_bits(got: Sequence[Array], want: Sequence[Any]) -> bool:
    return all(
        np.array_equal(g, _numpy(torch.as_tensor(w)))
        for g, w in zip(got, want, strict=True)
    )


# ---------------------------------------------------------------------- eager


@pytest.mark.parametrize("step", [1, 2, 3, 1000])
@pytest.mark.parametrize("size", [7, 100, 4096])
def test_updates_match_torch_optimizers_in_eager(step: int, size: int) -> None:
    """
    The update formulas (`hyperoffload.frontend.optimizers`), run eagerly,
    give PyTorch's bits: the same ops in the same order, each fused
    multiply-add of PyTorch's kernels (lerp, addcmul, add with alpha)
    computed in float64 and rounded.
    """
    torch.manual_seed(step * size)
    p, g = torch.randn(size), 1e-2 * torch.randn(size)
    m, v = 1e-3 * torch.randn(size), 1e-5 * torch.rand(size)
    w = p.clone().requires_grad_()
    optimizer = torch.optim.AdamW(
        [w],
        lr=ADAMW.lr,
        betas=ADAMW.betas,
        eps=ADAMW.eps,
        weight_decay=ADAMW.weight_decay,
    )
    w.grad = g.clone()
    optimizer.state[w] = {
        "step": torch.tensor(float(step - 1)),
        "exp_avg": m.clone(),
        "exp_avg_sq": v.clone(),
    }
    optimizer.step()
    new_p, new_m, new_v = adamw_update(p, g, m, v, torch.tensor(step), ADAMW)
    assert torch.equal(new_p, w.detach())
    assert torch.equal(new_m, optimizer.state[w]["exp_avg"])
    assert torch.equal(new_v, optimizer.state[w]["exp_avg_sq"])
    w = p.clone().requires_grad_()
    plain = torch.optim.SGD([w], lr=SGD.lr)
    w.grad = g.clone()
    plain.step()
    assert torch.equal(sgd_update(p, g, SGD), w.detach())


@pytest.mark.parametrize(
    ("kind", "dtype", "accum", "loss", "shard"),
    [
        ("sgd", "f32", 2, "chunked", 1),
        ("sgd", "bf16", 1, "full", 1),
        ("adamw", "f32", 1, "full", 2),
        ("adamw", "bf16", 2, "full", 1),
        ("adamw", "bf16", 2, "chunked", 2),
    ],
)
def test_optimizer_in_backward_in_eager(
    kind: str, dtype: str, accum: int, loss: str, shard: int
) -> None:
    """
    The step run eagerly (`TrainStepFn`, no export) with and without the
    optimizer step in the backward pass: the same tensors, bit for bit,
    for SGD and AdamW, float32 and bfloat16 (master weights), one or two
    micro-batches, the full or chunked loss, sharded or not. Every
    parameter's hook fired (`_Update.results` checks that none is missing).
    """
    from hyperoffload.frontend.train_step import TrainStepFn
    from hyperoffload.frontend.training import LossSpec

    def step(in_backward: bool) -> tuple[Any, ...]:
        torch.manual_seed(0)
        cfg = replace(get_config("tiny-llama"), n_layers=2)
        precision = torch.bfloat16 if dtype == "bf16" else torch.float32
        model = build_model(cfg).to(precision)
        chunks = LossSpec(cast(Any, loss), CHUNKS if loss == "chunked" else None)
        optimizer = OptimizerSpec(cast(Any, kind))
        spec = TrainSpec(optimizer, accum, chunks, shard=shard, in_backward=in_backward)
        shape = (accum, BATCH, SEQ) if accum > 1 else (BATCH, SEQ)
        tokens = torch.randint(0, cfg.vocab_size, shape)
        targets = torch.randint(0, cfg.vocab_size, shape)
        params = [p.detach().clone().requires_grad_() for p in model.parameters()]
        args: list[Any] = [torch.tensor(STEP)] if kind == "adamw" else []
        args += params
        if kind == "adamw":
            shapes = [spec.shard_shape(p.shape) for p in params]
            if precision != torch.float32:
                args += [torch.randn(s) for s in shapes]
            args += [1e-3 * torch.randn(s) for s in shapes]
            args += [1e-6 * torch.rand(s) for s in shapes]
        return TrainStepFn(model, spec)(tokens, targets, *args)

    after, during = step(False), step(True)
    assert len(during) == len(after)
    assert all(torch.equal(a, b) for a, b in zip(after, during, strict=True))


# ------------------------------------------------------------- exported steps


@pytest.mark.parametrize("model", ["llama", "gpt"])
def test_adamw_update_matches_torch_adamw(
    model: str, exports: Path, ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    The exported AdamW step (numpy evaluator) against `torch.optim.AdamW`
    applied to the step's own gradients. The moments are the same bits.
    The weights are the same bits once PyTorch's square root is correctly
    rounded: PyTorch's CPU ``sqrt`` of float32 (a vectorised library
    square root) is one ulp off on some inputs (seen on an AVX-512 CPU: 17%
    of the second moments here), where the program's ``math.sqrt`` (numpy, LLVM) is exact.
    With PyTorch's own ``sqrt`` the denominator then differs by an ulp, the
    update ``lr / bc1 · m / denom`` by a few, and a weight by at most four
    ulps of its update plus two of itself (seen: 1.7% of the weights differ,
    the worst by two ulps of its update plus two of itself).
    """
    case = _Case(f"{model}_adamw")
    grads = _evaluate(ctx, exports, f"{model}_none", case.inputs("none"))[1:]
    out = _evaluate(ctx, exports, f"{model}_adamw", case.inputs("adamw"))
    _assert_adamw_update(case, grads, out, monkeypatch)


def _assert_adamw_update(
    case: "_Case",
    grads: Sequence[Array],
    out: Sequence[Array],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """
    `out`, the results of an AdamW step, against `torch.optim.AdamW` applied
    to `grads`: moments to the bit, master weights to the bit with a
    correctly rounded square root (else `_assert_within_an_update_error`),
    weights of a lower precision the rounding of the master weights.
    """
    n = len(case.params)
    master = case.dtype != torch.float32
    assert len(out) == 1 + (4 if master else 3) * n
    weights, exp_avg, exp_avg_sq = case.adamw(grads)
    states = out[1 + n :] if master else out[1:]
    assert _same_bits(states[n : 2 * n], exp_avg)
    assert _same_bits(states[2 * n :], exp_avg_sq)
    _assert_within_an_update_error(
        states[:n], weights, states[n : 2 * n], states[2 * n :]
    )
    with monkeypatch.context() as patch:
        patch.setattr(torch.Tensor, "sqrt", _correctly_rounded_sqrt)
        exact, _, _ = case.adamw(grads)
    assert _same_bits(states[:n], exact)
    for weight, new_master in zip(out[1 : 1 + n], states[:n], strict=True):
        rounded = torch.as_tensor(new_master).to(case.dtype)
        assert np.array_equal(weight, _numpy(rounded))


def _correctly_rounded_sqrt(tensor: Any) -> Any:
    """`Tensor.sqrt`, computed in float64 and rounded (exact for float32)."""
    return torch.sqrt(tensor.to(torch.float64)).to(tensor.dtype)


def _assert_within_an_update_error(
    got: Sequence[Array],
    want: Sequence[Any],
    exp_avg: Sequence[Array],
    exp_avg_sq: Sequence[Array],
) -> None:
    """
    Each weight of `got` within four ulps of its AdamW update (computed in
    float64 from the new moments) plus two ulps of itself.
    """
    beta1, beta2 = ADAMW.betas
    scale = ADAMW.lr / (1 - beta1**STEP)
    root = np.sqrt(1 - beta2**STEP)
    for g, w, m, v in zip(got, want, exp_avg, exp_avg_sq, strict=True):
        expected = _numpy(w)
        m64, v64 = m.astype(np.float64), v.astype(np.float64)
        update = np.float32(scale * np.abs(m64) / (np.sqrt(v64) / root + ADAMW.eps))
        bound = 4 * np.spacing(update) + 2 * np.spacing(np.abs(expected))
        assert (np.abs(g - expected) <= bound).all()


@pytest.mark.parametrize(
    ("model", "grads_atol", "weights_atol"),
    [("llama", 1e-7, 2.5e-7), ("gpt", 1e-7, 2.5e-7)],
)
def test_adamw_step_matches_eager_pytorch(
    model: str, grads_atol: float, weights_atol: float, exports: Path, ctx: Context
) -> None:
    """
    The whole exported AdamW step against eager autograd and
    `torch.optim.AdamW`. The exported gradients differ from eager ones by
    the order of their sums (seen: at most 7.5e-8 on gradients up to 0.2);
    the moments inherit (1 - β1) and (1 - β2)·2|g| of that; the weights move
    by lr · m̂ / (√v̂ + eps), where a small v̂ magnifies a gradient's relative
    difference (seen: at most 1.2e-7 for both models at lr 1e-2).
    The tolerances are about twice what these seeds show.
    """
    case = _Case(f"{model}_adamw")
    out = _evaluate(ctx, exports, f"{model}_adamw", case.inputs("adamw"))
    n = len(case.params)
    loss, grads = case.eager_loss_and_grads()
    exported_grads = _evaluate(ctx, exports, f"{model}_none", case.inputs("none"))
    for g, e in zip(exported_grads[1:], grads, strict=True):
        np.testing.assert_allclose(g, e.numpy(), rtol=0, atol=grads_atol)
    weights, exp_avg, exp_avg_sq = case.adamw(grads)
    np.testing.assert_allclose(out[0], loss, rtol=2e-7)
    beta1, beta2 = ADAMW.betas
    for got, want, atol in (
        (out[1 : 1 + n], weights, weights_atol),
        (out[1 + n : 1 + 2 * n], exp_avg, (1 - beta1) * grads_atol),
        (out[1 + 2 * n :], exp_avg_sq, (1 - beta2) * 2 * 0.2 * grads_atol),
    ):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w.numpy(), rtol=0, atol=atol)


def test_sgd_step_matches_torch_sgd(exports: Path, ctx: Context) -> None:
    """
    The exported SGD step: `torch.optim.SGD` on the step's own gradients
    gives the same bits (one fused multiply-add, no square root); against
    eager autograd the weights differ by lr times the gradients' difference
    plus an ulp (seen: 6e-8).
    """
    case = _Case("llama_sgd")
    grads = _evaluate(ctx, exports, "llama_none", case.inputs("none"))[1:]
    out = _evaluate(ctx, exports, "llama_sgd", case.inputs("sgd"))
    weights = [p.clone().requires_grad_() for p in case.params]
    optimizer = torch.optim.SGD(weights, lr=SGD.lr)
    for w, g in zip(weights, grads, strict=True):
        w.grad = torch.as_tensor(g)
    optimizer.step()
    assert len(out) == 1 + len(weights)
    assert _same_bits(out[1:], [w.detach() for w in weights])
    _, eager = case.eager_loss_and_grads()
    for got, p, g in zip(out[1:], case.params, eager, strict=True):
        want = (p - SGD.lr * g).numpy()
        np.testing.assert_allclose(got, want, rtol=0, atol=SGD.lr * 1e-7 + 1.2e-7)


def test_adamw_step_in_bf16(
    exports: Path, ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    Mixed precision: bfloat16 weights compute the step, float32 master
    weights and moments take the update, the new weights are the new master
    weights rounded to bfloat16. Given the step's own (bfloat16) gradients,
    the master weights and moments are what `torch.optim.AdamW` makes of the
    gradients in float32 (the moments to the bit; the master weights up to
    PyTorch's square root, as in float32), and the weights are their
    rounding. Against eager bfloat16 autograd the gradients differ by
    bfloat16 roundings (eager PyTorch rounds each op's result to bfloat16
    where the export keeps float32 accumulators; seen: 3.4e-3); the master
    weights then differ by less than lr (seen: 3.8e-3 at lr 1e-2), the loss
    by a bfloat16 ulp (seen: 5.8125 against 5.78125).
    """
    case = _Case("llama_adamw_bf16")
    grads = _evaluate(ctx, exports, "llama_none_bf16", case.inputs("none"))[1:]
    out = _evaluate(ctx, exports, "llama_adamw_bf16", case.inputs("adamw"))
    _assert_adamw_update(case, grads, out, monkeypatch)
    n = len(case.params)
    loss, eager = case.eager_loss_and_grads()
    np.testing.assert_allclose(out[0], loss, rtol=2**-7)  # one bfloat16 ulp
    eager_master, _, _ = case.adamw([g.to(torch.float32) for g in eager])
    for got, want in zip(out[1 + n : 1 + 2 * n], eager_master, strict=True):
        np.testing.assert_allclose(got, want.numpy(), rtol=0, atol=ADAMW.lr)


def test_adamw_step_runs_natively(
    exports: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    The AdamW steps of tiny-llama, float32 and bfloat16, compiled and run
    by the MLIR ExecutionEngine: `torch.optim.AdamW` on the native step's
    own gradients (the ``none`` export, run natively too) gives its bits as
    with the numpy evaluator.
    """
    for name, dtype in (("llama", ""), ("llama", "_bf16")):
        case = _Case(f"{name}_adamw{dtype}")
        none = (exports / f"{name}_none{dtype}.mlir").read_text()
        step = (exports / f"{name}_adamw{dtype}.mlir").read_text()
        grads = run_upstream(none, case.inputs("none"), file_name="none")[1:]
        out = run_upstream(step, case.inputs("adamw"), file_name="adamw")
        _assert_adamw_update(case, grads, [np.asarray(x) for x in out], monkeypatch)


def test_optimizer_in_backward_matches_torch_adamw(
    exports: Path, ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    `TrainSpec(in_backward=True)` (``--optimizer-in-backward``) updates each
    parameter as soon as the backward pass completes its gradient. The
    program computes the same values in another order: its results are the
    bits of the step that updates after the backward pass, and
    `torch.optim.AdamW` on the step's own gradients gives them (to the bit,
    as in `test_adamw_update_matches_torch_adamw`).
    """
    for name, twin in IN_BACKWARD.items():
        case = _Case(name)
        out = _evaluate(ctx, exports, name, case.inputs("adamw"))
        after = _evaluate(ctx, exports, twin, case.inputs("adamw"))
        assert len(out) == len(after)
        assert all(np.array_equal(a, b) for a, b in zip(out, after, strict=True))
        grads = _evaluate(ctx, exports, "llama_none", case.inputs("none"))[1:]
        _assert_adamw_update(case, grads, out, monkeypatch)


def test_optimizer_in_backward_over_micro_batches(exports: Path, ctx: Context) -> None:
    """
    `hyperoffload-gen ... --grad-accum 2 --loss chunked --dtype bf16
    --optimizer-in-backward`: the updates run in the last micro-batch's
    backward pass, each gradient added to the first micro-batch's (in
    float32) as it completes; the head's right after the chunked loss. The
    loss, weights, master weights and moments are the bits of the same
    export without the option.
    """
    assert (exports / "gen_in_backward.status").read_text() == "0"
    text = (exports / "gen_in_backward.mlir").read_text()
    assert "optimizer step in the backward pass)" in text.splitlines()[0]
    case = _Case("gen_in_backward")
    out = _evaluate(ctx, exports, "gen_in_backward", case.inputs("adamw"))
    after = _evaluate(ctx, exports, "gen", case.inputs("adamw"))
    assert len(out) == 1 + 4 * len(case.params)
    assert all(np.array_equal(a, b) for a, b in zip(out, after, strict=True))


_MATMUL = re.compile(r"\blinalg\.(?:batch_)?matmul\b")
_STATE_ARG = re.compile(r"(%arg\d+): [^,{]*\{hyperoffload\.category = \"optimizer\"")


def _state_reads_before_last_matmul(text: str, params: list[str]) -> dict[str, bool]:
    """
    For each optimizer state of an export (``exp_avg.NAME`` ..., in the
    order of `TrainSpec.state_names` over the parameters `params`), whether
    the body first reads it before its last matmul: AdamW has none, so a
    state read there is an update that runs before the backward pass ends.
    """
    header = text.index("func.func @train_step")
    start = text.index("{\n", text.index(") -> (", header))
    signature, body = text[header:start], text[start:]
    args = _STATE_ARG.findall(signature)
    kinds = ["master", "exp_avg", "exp_avg_sq"][-(len(args) // len(params)) :]
    names = [f"{kind}.{name}" for kind in kinds for name in params]
    assert len(names) == len(args)
    last = max(m.start() for m in _MATMUL.finditer(body))
    reads: dict[str, bool] = {}
    for arg, name in zip(args, names, strict=True):
        first = re.search(re.escape(arg) + r"\b", body)
        assert first is not None, name
        reads[name] = first.start() < last
    return reads


@pytest.mark.parametrize(
    ("name", "twin"), [*IN_BACKWARD.items(), ("gen_in_backward", "gen")]
)
def test_optimizer_in_backward_interleaves_updates(
    name: str, twin: str, exports: Path
) -> None:
    """
    Without the option every optimizer state is first read after the
    step's last matmul (the backward pass's); with it, the states of the LM
    head and of the final norm (whose gradients the backward pass completes
    first) and of most of the layer's weights are read before it, so their
    updates (and a plan's prefetches and stores of them) overlap the rest of
    the backward pass.
    """
    params = _Case(name).names
    text = (exports / f"{twin}.mlir").read_text()
    after = _state_reads_before_last_matmul(text, params)
    assert after
    assert not any(after.values())
    text = (exports / f"{name}.mlir").read_text()
    early = _state_reads_before_last_matmul(text, params)
    assert early.keys() == after.keys()
    for kind in ("exp_avg", "exp_avg_sq"):
        assert early[f"{kind}.output.weight"]
        assert early[f"{kind}.norm.weight"]
    assert sum(early.values()) > len(early) / 2


def test_grad_accum_matches_eager_pytorch(exports: Path, ctx: Context) -> None:
    """
    Two micro-batches (tokens and targets of (2, batch, seq)): the loss is
    the mean of theirs and the gradients the sum of each ``loss_i / 2``'s,
    as a trainer calling ``(loss / 2).backward()`` per micro-batch gets
    them. The order of sums differs from eager's as in one micro-batch
    (seen: 7.5e-8 on gradients, 4.8e-7 on a loss of 5.8).
    """
    case = _Case("llama_accum")
    assert case.tokens.shape == (2, BATCH, SEQ)
    out = _evaluate(ctx, exports, "llama_accum", case.inputs("none"))
    loss, grads = case.eager_loss_and_grads()
    assert len(out) == 1 + len(grads)
    np.testing.assert_allclose(out[0], loss, rtol=2e-7)
    for got, want in zip(out[1:], grads, strict=True):
        np.testing.assert_allclose(got, want.numpy(), rtol=0, atol=1e-7)


@pytest.mark.parametrize("name", ["llama_chunked_v", "gpt_chunked_accum"])
def test_chunked_loss_matches_eager_pytorch(
    name: str, exports: Path, ctx: Context
) -> None:
    """
    The LM head fused with the cross-entropy over 3 chunks of tokens (and
    the embedding's backward over the same chunks) against eager
    `F.cross_entropy` over all logits: the same loss and gradients, summed
    in another order (the head's and the embedding's gradients over chunks;
    seen: at most 6.7e-8 on gradients, 2.4e-7 on a loss of 5.4).
    """
    case = _Case(name)
    out = _evaluate(ctx, exports, name, case.inputs("none"))
    loss, grads = case.eager_loss_and_grads()
    np.testing.assert_allclose(out[0], loss, rtol=2e-7)
    for got, want in zip(out[1:], grads, strict=True):
        np.testing.assert_allclose(got, want.numpy(), rtol=0, atol=1e-7)


_TENSOR = re.compile(r"tensor<((?:\d+x)*)([a-z]\w*)>")


def _shapes(text: str) -> set[tuple[int, ...]]:
    """The shape of every tensor type in `text`."""
    return {
        tuple(int(d) for d in dims.split("x") if d) for dims, _ in _TENSOR.findall(text)
    }


def test_chunked_loss_never_holds_tokens_by_vocabulary(exports: Path) -> None:
    """
    The full loss holds the logits (and their gradient) of every token:
    tensors of 16 tokens by the 200 words of the vocabulary. The chunked
    loss holds at most a chunk's: 6 by 200 (the embedding's backward, a
    one-hot of tokens by vocabulary, is chunked alike).
    """
    full = _shapes((exports / "llama_full_v.mlir").read_text())
    chunked = _shapes((exports / "llama_chunked_v.mlir").read_text())

    def by_vocabulary(shapes: set[tuple[int, ...]]) -> set[tuple[int, ...]]:
        return {s for s in shapes if VOCAB in s and len(s) > 1}

    assert (TOKENS, VOCAB) in by_vocabulary(full)
    others = {d for s in by_vocabulary(chunked) for d in s if d != VOCAB}
    # the head's weight (200 x 64) and its gradient; chunks of 6 and 4 tokens
    assert others == {_config("llama_chunked_v").hidden, 6, 4}


def _attrs(attrs: Any) -> list[dict[str, Any]]:
    assert attrs is not None
    out: list[dict[str, Any]] = []
    for entry in attrs.data:
        assert isinstance(entry, DictionaryAttr)
        out.append(dict(entry.data))
    return out


def test_gen_tool_tags_the_optimizer_states(exports: Path, ctx: Context) -> None:
    """
    `hyperoffload-gen ... --optimizer adamw --grad-accum 2 --loss chunked
    --dtype bf16`: tokens and targets of (2, batch, seq), a 0-d step count,
    the bfloat16 weights, then float32 master weights and moments tagged for
    the pool with the optimizer category; the results (loss, weights, master
    weights, moments) are tagged where their arguments live, and each
    argument names the result holding its update (`tf.aliasing_output`).
    """
    assert (exports / "gen.status").read_text() == "0"
    text = (exports / "gen.mlir").read_text()
    assert text.startswith("// tiny-llama train (1 layers, batch 2, seq 8, bf16, adamw")
    assert "2 micro-batches, chunked loss (3 chunks of 6 tokens))" in text
    module = parse_mlir(ctx, text, "gen.mlir")
    verify_module(module)
    (func,) = [op for op in module.walk() if isinstance(op, FuncOp)]
    inputs = func.function_type.inputs.data
    outputs = func.function_type.outputs.data
    args, results = _attrs(func.arg_attrs), _attrs(func.res_attrs)
    n = (len(inputs) - 3) // 4
    assert len(inputs) == 3 + 4 * n
    assert len(outputs) == 1 + 4 * n
    for t in inputs[:2]:
        assert isinstance(t, TensorType)
        assert tuple(t.get_shape()) == (2, BATCH, SEQ)
    assert isinstance(inputs[2], TensorType)
    assert tuple(inputs[2].get_shape()) == ()
    assert args[:3] == [{}, {}, {}]
    optimizer = StringAttr("optimizer")
    for i, attrs in enumerate(args[3:]):
        assert "hyperoffload.tier" in attrs
        state = i >= n
        assert (attrs.get("hyperoffload.category") == optimizer) == state
        t: Any = inputs[3 + i]
        assert isinstance(t, TensorType)
        element = Float32Type() if state else BFloat16Type()
        assert t.get_element_type() == element
        assert outputs[1 + i] == t  # its updated value, tagged the same
        assert attrs.pop("tf.aliasing_output") == IntegerAttr(1 + i, 32)
    assert results[0] == {}
    assert results[1:] == args[3:]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--optimizer", "adamw"], "apply to the train mode, not forward"),
        (["--mode", "decode", "--grad-accum", "2"], "not decode"),
        (["--mode", "train", "--grad-accum", "0"], "at least 1 micro-batch, not 0"),
        (
            ["--mode", "train", "--loss-chunks", "2"],
            "--loss-chunks needs --loss chunked",
        ),
        (
            ["--mode", "train", "--loss", "chunked", "--loss-chunks", "17"],
            "over 16 tokens takes 1 to 16 chunks, not 17",
        ),
        (
            ["--mode", "train", "--loss", "chunked", "--loss-chunks", "0"],
            "must be positive",
        ),
        (
            ["--mode", "train", "--optimizer-in-backward"],
            "in the backward pass needs an optimizer (sgd or adamw)",
        ),
        (["--optimizer", "sgd", "--optimizer-in-backward"], "not forward"),
    ],
)
def test_gen_tool_rejects_bad_training_options(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert gen_main(["tiny-llama", *argv]) == 1
    assert message in capsys.readouterr().err


def test_chunked_loss_over_micro_batches_runs_natively(exports: Path) -> None:
    """
    tiny-gpt's step of two micro-batches with the chunked loss, compiled and
    run by the MLIR ExecutionEngine, against eager PyTorch (tolerances as
    with the numpy evaluator; seen: 2.4e-7 on a loss of 5.3, 4.5e-8 on
    gradients).
    """
    case = _Case("gpt_chunked_accum")
    text = (exports / "gpt_chunked_accum.mlir").read_text()
    out = [np.asarray(x) for x in run_upstream(text, case.inputs("none"))]
    loss, grads = case.eager_loss_and_grads()
    np.testing.assert_allclose(out[0], loss, rtol=2e-7)
    for got, want in zip(out[1:], grads, strict=True):
        np.testing.assert_allclose(got, want.numpy(), rtol=0, atol=1e-7)


def test_bad_hyperparameters_are_export_errors() -> None:
    """Hyperparameters `torch.optim` refuses are refused before tracing."""
    bad = TrainSpec(OptimizerSpec("adamw", betas=(0.9, 1.0)))
    with pytest.raises(ExportError, match="invalid adamw hyperparameters"):
        check_train("train", bad, Shapes())
    with pytest.raises(ExportError, match="invalid sgd hyperparameters"):
        check_train("train", TrainSpec(OptimizerSpec("sgd", lr=-1.0)), Shapes())
    check_train("train", TrainSpec(OptimizerSpec("sgd", lr=0.5)), Shapes())
