"""
A sharded AdamW step (`hyperoffload-gen --mode train --optimizer adamw
--shard N`, ZeRO-1/2): one device's program of an N-way data-parallel
group, its gradients reduce-scattered, its shard of the master weights and
moments updated, the new weights all-gathered.

Under the collectives' single-process semantics (replicas that saw this
device's data) the device's results are `torch.optim.AdamW` applied to its
rows of the full-batch gradients, master weights and moments: checked to
the bit (moments; master weights with a correctly rounded square root, as
`test_train_step` explains) through the numpy evaluator and the MLIR
ExecutionEngine, against the gradients of the unsharded export (``none``)
run by the same evaluator. The gathered weights hold the rounding of the
new master shard at the device's rows and zeros elsewhere.

Every export runs in one child process (torch-mlir and the MLIR bindings
cannot share one).
"""

import json
import subprocess
import sys
from dataclasses import replace
from importlib import import_module
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.printer import Printer

from hyperoffload.dialects.collectives import AllGatherOp, ReduceScatterOp
from hyperoffload.evaluators.execution import run_upstream
from hyperoffload.evaluators.numeric import evaluate
from hyperoffload.frontend import get_config
from hyperoffload.frontend.models import build_model
from hyperoffload.frontend.torch_export import ExportError, Shapes, export
from hyperoffload.frontend.training import OptimizerSpec, TrainSpec
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.passes.convert_to_linalg import ConvertHyperoffloadToLinalgPass

torch: Any = import_module("torch")

Array = np.ndarray[Any, Any]

BATCH, SEQ, STEP, GROUP, RANK = 2, 8, 3, 2, 1
ADAMW = OptimizerSpec("adamw", lr=1e-2, betas=(0.9, 0.99), eps=1e-6, weight_decay=0.1)

_EXPORT_SCRIPT = """
import json, sys
from pathlib import Path
from hyperoffload.frontend import get_config
from hyperoffload.frontend.torch_export import DTYPES, Shapes, export
from hyperoffload.frontend.training import OptimizerSpec, TrainSpec

out = Path(sys.argv[1])
batch, seq, group, rank, adamw = json.loads(sys.argv[2])
for dtype in ("f32", "bf16"):
    for kind, shard in (("none", 1), ("adamw", group)):
        optimizer = OptimizerSpec(kind, **(adamw if kind == "adamw" else {}))
        spec = TrainSpec(optimizer, shard=shard, rank=rank if shard > 1 else 0)
        exported = export(
            get_config("tiny-llama"), "train", shapes=Shapes(batch, seq),
            n_layers=1, dtype=DTYPES[dtype], train=spec,
        )
        (out / f"{kind}_{dtype}.mlir").write_text(exported.text)
optimizer = OptimizerSpec("adamw", **adamw)
spec = TrainSpec(optimizer, shard=group, rank=rank, in_backward=True)
exported = export(
    get_config("tiny-llama"), "train", shapes=Shapes(batch, seq), n_layers=1,
    train=spec,
)
(out / "adamw_in_backward_f32.mlir").write_text(exported.text)
"""


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sharded_step")
    adamw = {
        "lr": ADAMW.lr,
        "betas": list(ADAMW.betas),
        "eps": ADAMW.eps,
        "weight_decay": ADAMW.weight_decay,
    }
    spec = json.dumps([BATCH, SEQ, GROUP, RANK, adamw])
    subprocess.run([sys.executable, "-c", _EXPORT_SCRIPT, str(out), spec], check=True)
    return out


class _Case:
    """Seeded weights, a batch and the full AdamW moments after STEP - 1 updates."""

    def __init__(self, dtype: Any) -> None:
        torch.manual_seed(1)
        model = build_model(replace(get_config("tiny-llama"), n_layers=1))
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.1 * torch.randn(p.shape))
        self.dtype = dtype
        self.master = [p.detach().clone() for p in model.parameters()]
        self.params = [p.to(dtype) for p in self.master]
        vocab = get_config("tiny-llama").vocab_size
        self.tokens = torch.randint(0, vocab, (BATCH, SEQ))
        self.targets = torch.randint(0, vocab, (BATCH, SEQ))
        self.exp_avg = [1e-3 * torch.randn(p.shape) for p in self.master]
        self.exp_avg_sq = [1e-6 * torch.rand(p.shape) for p in self.master]

    @staticmethod
    def rows(tensor: Any) -> Any:
        size = tensor.shape[0] // GROUP
        return tensor[RANK * size : (RANK + 1) * size]

    def inputs(self, sharded: bool) -> list[Array]:
        arrays: list[Any] = [self.tokens, self.targets]
        if not sharded:
            return [_numpy(a) for a in arrays + self.params]
        arrays += [torch.tensor(STEP), *self.params]
        if self.dtype != torch.float32:
            arrays += [self.rows(w) for w in self.master]
        arrays += [self.rows(m) for m in self.exp_avg]
        arrays += [self.rows(v) for v in self.exp_avg_sq]
        return [_numpy(a) for a in arrays]

    def adamw(self, grads: list[Array]) -> tuple[list[Any], list[Any], list[Any]]:
        """`torch.optim.AdamW` on this device's rows, with correctly rounded sqrt."""
        weights = [self.rows(w).clone().requires_grad_() for w in self.master]
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
            w.grad = self.rows(torch.as_tensor(g).to(torch.float32))
            optimizer.state[w] = {
                "step": torch.tensor(float(STEP - 1)),
                "exp_avg": self.rows(m).clone(),
                "exp_avg_sq": self.rows(v).clone(),
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


def _correctly_rounded_sqrt(tensor: Any) -> Any:
    return torch.sqrt(tensor.to(torch.float64)).to(tensor.dtype)


def _check(
    case: _Case, grads: list[Array], out: list[Array], mp: pytest.MonkeyPatch
) -> None:
    n = len(case.params)
    master = case.dtype != torch.float32
    assert len(out) == 1 + (4 if master else 3) * n
    with mp.context() as patch:
        patch.setattr(torch.Tensor, "sqrt", _correctly_rounded_sqrt)
        weights, exp_avg, exp_avg_sq = case.adamw(grads)
    states = out[1 + n :]
    new_master = states[:n] if master else [case.rows(w) for w in out[1 : 1 + n]]
    for got, want in zip(
        [*new_master, *states[-2 * n :]], [*weights, *exp_avg, *exp_avg_sq], strict=True
    ):
        assert np.array_equal(got, _numpy(want))
    for gathered, shard in zip(out[1 : 1 + n], weights, strict=True):
        rows = gathered.shape[0] // GROUP
        expected = np.zeros_like(gathered)
        expected[RANK * rows : (RANK + 1) * rows] = _numpy(shard.to(case.dtype))
        assert np.array_equal(gathered, expected)


def _read(ctx: Context, exports: Path, name: str) -> Any:
    return parse_mlir(ctx, (exports / f"{name}.mlir").read_text(), name)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_sharded_adamw_matches_torch_on_the_shard(
    dtype: str, exports: Path, ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = _Case(torch.float32 if dtype == "f32" else torch.bfloat16)
    grads = [
        np.asarray(g)
        for g in evaluate(
            _read(ctx, exports, f"none_{dtype}"), case.inputs(False)
        ).outputs[1:]
    ]
    step = _read(ctx, exports, f"adamw_{dtype}")
    collectives = [
        op for op in step.walk() if isinstance(op, ReduceScatterOp | AllGatherOp)
    ]
    assert len(collectives) == 2 * len(case.params)
    out = [np.asarray(x) for x in evaluate(step, case.inputs(True)).outputs]
    _check(case, grads, out, monkeypatch)


def test_sharded_adamw_in_backward(exports: Path, ctx: Context) -> None:
    """
    The sharded step with the optimizer step in the backward pass
    (``--shard 2 --optimizer-in-backward``): each gradient reduce-scattered,
    its shard updated and the new weights all-gathered as soon as the
    backward pass completes it; the same collectives, and the bits of the
    step that updates after the backward pass.
    """
    case = _Case(torch.float32)
    step = _read(ctx, exports, "adamw_in_backward_f32")
    collectives = [
        op for op in step.walk() if isinstance(op, ReduceScatterOp | AllGatherOp)
    ]
    assert len(collectives) == 2 * len(case.params)
    kinds = [isinstance(op, ReduceScatterOp) for op in collectives]
    assert kinds != sorted(kinds, reverse=True)  # interleaved, not all first
    out = evaluate(step, case.inputs(True)).outputs
    after = evaluate(_read(ctx, exports, "adamw_f32"), case.inputs(True)).outputs
    assert len(out) == len(after)
    for got, want in zip(out, after, strict=True):
        assert np.array_equal(np.asarray(got), np.asarray(want))


def test_sharded_adamw_runs_natively(
    exports: Path, ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bf16 step lowered by convert-hyperoffload-to-linalg, run by the ExecutionEngine."""
    case = _Case(torch.bfloat16)
    grads = run_upstream((exports / "none_bf16.mlir").read_text(), case.inputs(False))[
        1:
    ]
    step = _read(ctx, exports, "adamw_bf16")
    ConvertHyperoffloadToLinalgPass().apply(ctx, step)
    text = StringIO()
    Printer(stream=text, print_generic_format=True).print_op(step)
    out = run_upstream(text.getvalue(), case.inputs(True), file_name="sharded")
    _check(
        case, [np.asarray(g) for g in grads], [np.asarray(x) for x in out], monkeypatch
    )


def test_bad_shards_are_export_errors() -> None:
    cfg = get_config("tiny-llama")
    for spec, message in (
        (TrainSpec(OptimizerSpec("sgd"), shard=2), "sharding applies to the adamw"),
        (TrainSpec(ADAMW, shard=2, rank=2), "not 2 devices and rank 2"),
        (TrainSpec(ADAMW, shard=3), r"cannot shard .* over 3 devices"),
    ):
        with pytest.raises(ExportError, match=message):
            export(cfg, "train", shapes=Shapes(BATCH, SEQ), n_layers=1, train=spec)
