"""
Your own model, end to end: four small `nn.Module`s written in
`own_models.py` (a ResNet-style CNN training step with BatchNorm and
max-pooling, a ViT-style encoder forward, a Qwen-style decoder training step
with tied embeddings, a U-Net-style encoder-decoder training step) are
exported with ``hyperoffload-gen --module own_models:NAME``, evaluated
against eager PyTorch on the factory's own weights and inputs, planned at 60%
of their unconstrained peak, and checked through ``hyperoffload-check``
(MLIR ExecutionEngine) and ``hyperoffload-run`` (PyTorch).

torch-mlir and the MLIR Python bindings cannot share a process: the exports
are made by one child process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context

pytest.importorskip("torch_mlir")

from hyperoffload.evaluators.numeric import evaluate
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.tools import (
    hyperoffload_check,
    hyperoffload_opt,
    hyperoffload_run,
    hyperoffload_sim,
)

torch: Any = import_module("torch")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
own_models: Any = import_module("own_models")

Array = np.ndarray[Any, Any]

CASES: dict[str, list[str]] = {
    # name: the options of hyperoffload-gen --module own_models:NAME
    "resnet": ["--mode", "train", "--optimizer", "sgd", "--loss", "cross_entropy"],
    "vit": ["--mode", "forward"],
    "qwen": ["--mode", "train", "--optimizer", "adamw", "--loss", "cross_entropy"],
    "unet": ["--mode", "train", "--optimizer", "sgd", "--loss", "mse"],
}
LR = 1e-3
"""The learning rate of both optimizers (`OptimizerSpec`'s default)."""

_EXPORT = """
import sys, json
from hyperoffload.tools.hyperoffload_gen import main
out, cases = sys.argv[1], json.loads(sys.argv[2])
for name, options in cases.items():
    status = main(["--module", f"own_models:{name}", *options, "-o", f"{out}/{name}.mlir"])
    if status:
        sys.exit(status)
"""


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("own_model")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), *sys.path]))
    subprocess.run(
        [sys.executable, "-c", _EXPORT, str(out), json.dumps(CASES)],
        check=True,
        env=env,
    )
    return out


# ---------------------------------------------------------------- eager reference


def _numpy(t: Any) -> Array:
    return t.detach().numpy()


def _arguments(name: str) -> tuple[Any, list[Any], list[Any], list[Array]]:
    """The factory's model, inputs, targets, and the export's arguments."""
    model, inputs, targets = getattr(own_models, name)()
    train = CASES[name][1] == "train"
    args = [*inputs, *(targets if train else ())]
    if "adamw" in CASES[name]:
        args.append(torch.tensor(1))
    args += [p for _, p in model.named_parameters()]
    args += [b for _, b in model.named_buffers()]
    if "adamw" in CASES[name]:
        args += [torch.zeros_like(p) for p in model.parameters()] * 2
    return model, list(inputs), list(targets), [_numpy(a) for a in args]


def _loss(name: str, out: Any, targets: Sequence[Any]) -> Any:
    if "mse" in CASES[name]:
        return torch.nn.functional.mse_loss(out, targets[0])
    return torch.nn.functional.cross_entropy(
        out.reshape(-1, out.shape[-1]), targets[0].reshape(-1)
    )


def _eager(name: str) -> list[Array]:
    """What the exported program returns, computed by eager PyTorch."""
    model, inputs, targets, _ = _arguments(name)
    if CASES[name][1] != "train":
        with torch.no_grad():
            return [_numpy(model(*inputs))]
    params = list(model.parameters())
    if "adamw" in CASES[name]:
        optimizer: Any = torch.optim.AdamW(params, lr=LR)
    else:
        optimizer = torch.optim.SGD(params, lr=LR)
    loss = _loss(name, model(*inputs), targets)
    loss.backward()
    optimizer.step()
    results = [_numpy(loss), *(_numpy(p) for p in params)]
    if "adamw" in CASES[name]:
        state = [optimizer.state[p] for p in params]
        results += [_numpy(s["exp_avg"]) for s in state]
        results += [_numpy(s["exp_avg_sq"]) for s in state]
    return results + [_numpy(b) for _, b in model.named_buffers()]


_OUR_ATTRS = re.compile(r" \{hyperoffload\.[^{}]*\}")


@pytest.mark.parametrize("name", list(CASES))
def test_export_matches_eager_pytorch(name: str, exports: Path, ctx: Context) -> None:
    """
    The exported program on the factory's weights and inputs (numpy
    evaluator) against eager PyTorch: the forward pass, or the loss, the
    updated weights, the optimizer's moments and BatchNorm's running
    statistics of one training step. They differ by the order of sums.
    """
    text = _OUR_ATTRS.sub("", (exports / f"{name}.mlir").read_text())
    module = parse_mlir(ctx, text, name)
    _, _, _, args = _arguments(name)
    got = [np.asarray(x) for x in evaluate(module, args).outputs]
    want = _eager(name)
    assert len(got) == len(want)
    for index, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g.shape == w.shape, f"result #{index}"
        np.testing.assert_allclose(
            g, w, rtol=1e-4, atol=2e-6, err_msg=f"result #{index}"
        )


# ------------------------------------------------------------------ planned at 60%


def _peak(path: Path, capsys: pytest.CaptureFixture[str]) -> int:
    capsys.readouterr()
    assert hyperoffload_sim.main([str(path), "--json"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return int(report["peak_hbm_bytes"])


@pytest.mark.parametrize("name", list(CASES))
def test_planned_at_60_percent_checks_and_runs(
    name: str, exports: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """
    Planned at 60% of the unconstrained peak, the program peaks within it
    (simulated), and its outputs equal the original's through the
    ExecutionEngine (`hyperoffload-check`) and through PyTorch
    (`hyperoffload-run`), where the plan fetches bytes (and, training,
    stores activations too).
    """
    source = exports / f"{name}.mlir"
    target = int(0.6 * _peak(source, capsys))
    pipeline = f"hyperoffload-pipeline{{hbm-capacity={target}}}"
    planned = tmp_path / "planned.mlir"
    assert hyperoffload_opt.main([str(source), "-p", pipeline, "-o", str(planned)]) == 0
    assert _peak(planned, capsys) <= target
    status = hyperoffload_check.main([str(source), "--pipeline", pipeline, "-q"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "outputs match: yes" in out
    status = hyperoffload_run.main(
        [str(planned), "--device", "cpu", "--threads", "1", "--warmup", "0", "--json"]
    )
    captured = capsys.readouterr()
    assert status == 0, captured.err
    report: dict[str, Any] = json.loads(captured.out)
    assert report["outputs_match_reference"] is True
    assert report["bytes_to_device"] > 0
    if CASES[name][1] == "train":
        assert report["bytes_to_remote"] > 0


def test_unsupported_op_is_located_in_the_model(tmp_path: Path) -> None:
    """
    An op torch-mlir leaves unlowered (a cumulative sum: `tm_tensor.scan`) is
    a diagnostic naming it and the model's line, exit status 1, no traceback.
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), *sys.path]))
    out = tmp_path / "bad.mlir"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _EXPORT,
            str(tmp_path),
            json.dumps({"running_total": []}),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    line = next(
        i
        for i, text in enumerate((HERE / "own_models.py").read_text().splitlines(), 1)
        if "the unsupported line" in text
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "hyperoffload-gen: error: @forward: unsupported op(s)" in done.stderr
    assert f"tm_tensor.scan at {HERE / 'own_models.py'}:{line}" in done.stderr
    assert not out.exists()


def test_annotations_in_the_model_become_argument_attributes(tmp_path: Path) -> None:
    """
    With nothing selected for the pool (``--remote none``), the model's own
    marks tag its arguments: `remote` on a module tags its weight and bias,
    `prefetch` a weight with its distance; the unmarked bias stays in HBM.
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), *sys.path]))
    cases = {"annotated": ["--remote", "none"]}
    subprocess.run(
        [sys.executable, "-c", _EXPORT, str(tmp_path), json.dumps(cases)],
        env=env,
        check=True,
    )
    text = (tmp_path / "annotated.mlir").read_text()
    signature = re.search(r"func\.func @forward\((.*?)\) ->", text)
    assert signature is not None
    args = re.split(r", (?=%arg\d+:)", signature.group(1))
    remote = "hyperoffload.tier = #hyperoffload.tier<remote>"
    assert remote not in args[0]  # the input
    assert remote in args[1]
    assert remote in args[2]
    assert remote in args[3]
    assert "hyperoffload.prefetch_distance = 2 : i64" in args[3]
    assert "hyperoffload" not in args[4]  # fc2.bias
