"""
Expert parallelism (`hyperoffload-gen --expert-shard N`): one device holds
E/N routed experts of each MoE layer and exchanges rows with the others
through an all-to-all dispatch and combine (`hyperoffload.all_to_all`).

* N devices simulated in eager PyTorch, each with its own tokens and its
  own experts, the exchanges done across them: every device's output, and
  every expert's gradient of the summed losses, are the unsharded MoE's.
* The exported step of one device (tiny-moe, f32), lowered to linalg and
  run by the numpy evaluator, matches eager PyTorch under the exchange's
  single-process semantics (the other devices are replicas of this one),
  with four all-to-alls per MoE layer (two forward, two backward).
"""

import subprocess
import sys
from dataclasses import replace
from importlib import import_module
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType

from hyperoffload.dialects.collectives import AllGatherOp, AllToAllOp, ReduceScatterOp
from hyperoffload.evaluators.numeric import evaluate
from hyperoffload.frontend import get_config
from hyperoffload.frontend.models import MoE, build_model, moe_layers
from hyperoffload.frontend.torch_export import ExportError, export
from hyperoffload.frontend.train_step import TrainStepFn
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.passes.convert_to_linalg import ConvertHyperoffloadToLinalgPass

torch: Any = import_module("torch")

GROUP, RANK, BATCH, SEQ, ZERO = 2, 1, 2, 8, 4

_EXPORT_SCRIPT = """
import sys
from dataclasses import replace
from pathlib import Path
from hyperoffload.frontend import get_config
from hyperoffload.frontend.torch_export import Shapes, export
from hyperoffload.frontend.training import OptimizerSpec, TrainSpec
out, group, rank, batch, seq, zero = sys.argv[1], *map(int, sys.argv[2:])
cfg = replace(get_config("tiny-moe"), n_layers=1, expert_shard=group, expert_rank=rank)
shapes = Shapes(batch, seq)
Path(out, "grads.mlir").write_text(export(cfg, "train", shapes=shapes).text)
spec = TrainSpec(OptimizerSpec("adamw"), shard=zero, rank=rank, expert_shard=group)
zero = export(cfg, "train", shapes=shapes, train=spec)
Path(out, "zero.mlir").write_text(zero.text)
Path(out, "zero.names").write_text("\\n".join(zero.signature.arg_names))
"""


def _moe(group: int, rank: int) -> Any:
    cfg = replace(get_config("tiny-moe"), expert_shard=group, expert_rank=rank)
    return MoE(cfg)


def test_simulated_group_matches_the_unsharded_layer() -> None:
    torch.manual_seed(0)
    whole = _moe(1, 0)
    devices = [_moe(GROUP, r) for r in range(GROUP)]
    local = len(devices[0].experts)
    for r, device in enumerate(devices):
        device.gate.load_state_dict(whole.gate.state_dict())
        device.shared.load_state_dict(whole.shared.state_dict())
        for j, expert in enumerate(device.experts):
            expert.load_state_dict(whole.experts[r * local + j].state_dict())
    xs = [torch.randn(1, 12, 64) for _ in range(GROUP)]

    outs: list[Any] = []
    routes: list[tuple[Any, Any, Any, Any]] = []
    for device, x in zip(devices, xs, strict=True):
        flat = x.reshape(-1, 64)
        _, chosen, gates = device.route(flat)
        dispatch = device.dispatch(chosen).to(flat.dtype)
        shared = sum(s(flat) for s in device.shared)
        routes.append((flat, dispatch, gates, shared))
    sends = [
        d.sent(dispatch, flat)
        for d, (flat, dispatch, _, _) in zip(devices, routes, strict=True)
    ]
    chunk = sends[0].shape[0] // GROUP

    def all_to_all(operands: list[Any]) -> list[Any]:
        """Chunk r of device s's operand to device r, in the order of s."""
        return [
            torch.cat([operands[s][r * chunk : (r + 1) * chunk] for s in range(GROUP)])
            for r in range(GROUP)
        ]

    received = all_to_all(sends)
    backs = all_to_all(
        [d.local_experts(x) for d, x in zip(devices, received, strict=True)]
    )
    for d, (_, dispatch, gates, shared), back in zip(
        devices, routes, backs, strict=True
    ):
        outs.append(shared + d.combine(dispatch, gates, back))
    for x, out in zip(xs, outs, strict=True):
        torch.testing.assert_close(out.reshape(x.shape), whole(x), rtol=1e-5, atol=1e-5)
    # gradients of the summed losses: each expert's on the device holding it
    torch.stack([out.square().sum() for out in outs]).sum().backward()
    torch.stack([whole(x).square().sum() for x in xs]).sum().backward()
    for r, device in enumerate(devices):
        for j, expert in enumerate(device.experts):
            for got, want in zip(
                expert.parameters(),
                whole.experts[r * local + j].parameters(),
                strict=True,
            ):
                torch.testing.assert_close(got.grad, want.grad, rtol=1e-4, atol=1e-5)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("expert_shard")
    sizes = (GROUP, RANK, BATCH, SEQ, ZERO)
    subprocess.run(
        [sys.executable, "-c", _EXPORT_SCRIPT, str(out), *map(str, sizes)],
        check=True,
    )
    return out


def test_exported_step_matches_torch(exported: Path, ctx: Context) -> None:
    module = parse_mlir(ctx, (exported / "grads.mlir").read_text(), "step")
    exchanges = [op for op in module.walk() if isinstance(op, AllToAllOp)]
    cfg = replace(get_config("tiny-moe"), n_layers=1)  # one MoE layer
    assert len(exchanges) == 4
    assert {(op.group_size, op.rank_index) for op in exchanges} == {(GROUP, RANK)}
    ConvertHyperoffloadToLinalgPass().apply(ctx, module)
    assert not any(isinstance(op, AllToAllOp) for op in module.walk())

    torch.manual_seed(2)
    model = build_model(replace(cfg, expert_shard=GROUP, expert_rank=RANK))
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn(p.shape))
    for _, moe in moe_layers(model):
        assert len(moe.experts) == cfg.n_experts // GROUP
    params = [p.detach().clone().requires_grad_() for p in model.parameters()]
    tokens = torch.randint(0, cfg.vocab_size, (BATCH, SEQ))
    targets = torch.randint(0, cfg.vocab_size, (BATCH, SEQ))
    want = TrainStepFn(model)(tokens, targets, *params)
    inputs = [t.detach().numpy() for t in (tokens, targets, *params)]
    got = evaluate(module, inputs).outputs
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(
            np.asarray(g), w.detach().numpy(), rtol=2e-4, atol=1e-5
        )


def test_expert_shard_must_divide_the_experts() -> None:
    cfg = replace(get_config("tiny-moe"), expert_shard=3)
    with pytest.raises(ExportError, match="do not split over 3 devices"):
        export(cfg, "train")
    with pytest.raises(ExportError, match="needs an MoE layer"):
        export(replace(get_config("tiny-llama"), expert_shard=2), "train")


def test_zero_shards_an_expert_over_its_replicas(exported: Path, ctx: Context) -> None:
    """
    With ZeRO over ZERO devices, a routed expert's states are sharded over
    the ZERO / GROUP devices that hold it, the other states over all ZERO.
    """
    module = parse_mlir(ctx, (exported / "zero.mlir").read_text(), "zero")
    groups = {
        (op.name, op.group_size)
        for op in module.walk()
        if isinstance(op, ReduceScatterOp | AllGatherOp)
    }
    half = ZERO // GROUP
    assert groups == {
        (kind.name, n) for kind in (ReduceScatterOp, AllGatherOp) for n in (ZERO, half)
    }
    model = build_model(replace(get_config("tiny-moe"), n_layers=1, expert_shard=GROUP))
    shapes = {n: tuple(p.shape) for n, p in model.named_parameters()}
    names = (exported / "zero.names").read_text().split("\n")
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    states = [
        (cast(TensorType[Any], arg.type), name.removeprefix("exp_avg."))
        for arg, name in zip(function.body.block.args, names, strict=True)
        if name.startswith("exp_avg.")
    ]
    assert len(states) == len(shapes)
    for state, name in states:
        expert = ".feed_forward.experts." in name
        rows = shapes[name][0] // (half if expert else ZERO)
        assert state.get_shape()[0] == rows, name
