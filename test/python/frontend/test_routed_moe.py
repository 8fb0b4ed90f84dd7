"""
Routed experts (`--experts routed`): the MoE export with each routed
expert's work under an `scf.if` on whether any token chose it
(`hyperoffload.frontend.route_experts`), and the numpy evaluator running it.

One `scf.if` per routed expert per MoE layer; an expert's weight arguments
are read only inside its own branch; the evaluated program computes what
eager PyTorch computes. In a decode step of one token (top-2 of 4 experts)
two experts per layer are not chosen: their weights are given as NaN, which
the dense export propagates to the logits and the routed one never reads.

As in `test_frontend.py`, every export runs in one child process
(torch-mlir and the MLIR bindings cannot share one).
"""

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from importlib import import_module
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    i1,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute

from hyperoffload.analysis.moe_step import moe_step
from hyperoffload.dialects.hyperoffload import PrefetchOp
from hyperoffload.evaluators.numeric import NumericError, evaluate
from hyperoffload.frontend import CONFIGS, ModelConfig, get_config
from hyperoffload.frontend.models import MoE, build_model
from hyperoffload.frontend.route_experts import route_experts
from hyperoffload.frontend.torch_export import Shapes, program
from hyperoffload.ir.context import make_context
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.model.routing import parse_routing
from hyperoffload.passes.pipeline import PipelinePass
from hyperoffload.planning.experts import place_experts, planned_hot_set
from hyperoffload.tools.hyperoffload_gen import main as gen_main

torch: Any = import_module("torch")

Array = np.ndarray[Any, Any]

LAYERS = 2
DECODE = Shapes(batch=1, kv_len=4)
"""One token: top-2 of 4 experts leaves 2 per layer unchosen."""
PREFILL = Shapes(batch=1, seq=8)
SOFTMAX = {"router": "softmax", "n_shared_experts": 0}
"""tiny-moe with Mixtral's router and no shared expert."""

_EXPORT_SCRIPT = """
import json, sys
from dataclasses import replace
from pathlib import Path
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from hyperoffload.frontend import get_config
from hyperoffload.frontend.models import build_model
from hyperoffload.frontend.torch_export import Shapes, export, lower, program
from hyperoffload.tools.hyperoffload_gen import main as gen_main

out = Path(sys.argv[1])
layers, decode, prefill, softmax = json.loads(sys.argv[2])
moe = get_config("tiny-moe")
runs = {
    "routed_decode": (moe, "decode", decode, layers, "routed"),
    "routed_prefill": (moe, "prefill", prefill, layers, "routed"),
    "dense_decode": (moe, "decode", decode, layers, "dense"),
    "softmax_decode": (replace(moe, **softmax), "decode", decode, 1, "routed"),
}
for name, (cfg, mode, dims, n, experts) in runs.items():
    exported = export(cfg, mode, shapes=Shapes(*dims), n_layers=n, experts=experts)
    (out / f"{name}.mlir").write_text(exported.text)
# torch-mlir's own text of the dense decode step, before any tagging
cut = replace(moe, n_layers=layers)
with torch.device("meta"):
    model = build_model(cut)
fn, sig = program(model, cut, "decode", Shapes(*decode), torch.float32)
with FakeTensorMode() as fake:
    args = [
        torch.empty(s, dtype=d) if d.is_floating_point else torch.zeros(s, dtype=d)
        for s, d in sig.arg_specs
    ]
with fake:
    (out / "raw_decode.mlir").write_text(lower(fn, args, "decode"))
argv = ["tiny-moe", "--layers", "1", "--experts", "routed", "--seq", "4"]
status = gen_main([*argv, "-o", str(out / "gen.mlir")])
(out / "gen.status").write_text(str(status))
"""


def _dims(shapes: Shapes) -> list[int]:
    return [shapes.batch, shapes.seq, shapes.kv_len]


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every export of this module, made by one child process."""
    out = tmp_path_factory.mktemp("routed")
    spec = json.dumps([LAYERS, _dims(DECODE), _dims(PREFILL), SOFTMAX])
    subprocess.run([sys.executable, "-c", _EXPORT_SCRIPT, str(out), spec], check=True)
    return out


Parsed = Callable[[str], tuple[ModuleOp, FuncOp]]


@pytest.fixture(scope="module")
def parsed(exports: Path) -> Parsed:
    """The export `name` parsed and verified, once per module (nothing mutates it)."""
    ctx = make_context()
    cache: dict[str, tuple[ModuleOp, FuncOp]] = {}

    def load(name: str) -> tuple[ModuleOp, FuncOp]:
        if name not in cache:
            cache[name] = _func(ctx, (exports / f"{name}.mlir").read_text())
        return cache[name]

    return load


def _config(layers: int = LAYERS, softmax: bool = False) -> ModelConfig:
    cfg = replace(get_config("tiny-moe"), n_layers=layers)
    return replace(cfg, **SOFTMAX) if softmax else cfg  # pyright: ignore[reportArgumentType]


def _func(ctx: Context, text: str) -> tuple[ModuleOp, FuncOp]:
    module = parse_mlir(ctx, text, "<export>")
    verify_module(module)
    (func,) = [op for op in module.walk() if isinstance(op, FuncOp)]
    return module, func


def _key(attr: Attribute | None) -> tuple[int, int] | None:
    if attr is None:
        return None
    assert isinstance(attr, DenseArrayBase)
    layer, expert = cast(DenseArrayBase[IntegerType], attr).get_values()
    return layer, expert


def _arg_keys(func: FuncOp) -> list[tuple[int, int] | None]:
    """The `hyperoffload.expert` tag of each argument (None if untagged)."""
    assert func.arg_attrs is not None
    keys: list[tuple[int, int] | None] = []
    for attrs in func.arg_attrs.data:
        assert isinstance(attrs, DictionaryAttr)
        keys.append(_key(attrs.data.get("hyperoffload.expert")))
    return keys


def _branches(func: FuncOp) -> dict[tuple[int, int], scf.IfOp]:
    branches: dict[tuple[int, int], scf.IfOp] = {}
    for op in func.body.block.ops:
        if isinstance(op, scf.IfOp):
            key = _key(op.attributes.get("hyperoffload.expert"))
            assert key is not None
            assert key not in branches
            branches[key] = op
    return branches


def _moe_attr(func: FuncOp) -> dict[str, Any]:
    attr = func.attributes["hyperoffload.moe"]
    assert isinstance(attr, DictionaryAttr)
    values: dict[str, Any] = {}
    for key, value in attr.data.items():
        if isinstance(value, StringAttr):
            values[key] = value.data
        else:
            assert isinstance(value, IntegerAttr)
            number = cast(IntegerAttr[IntegerType], value)
            data = number.value.data
            values[key] = data != 0 if number.type == i1 else data
    return values


@pytest.mark.parametrize("mode", ["decode", "prefill"])
def test_one_branch_per_routed_expert(mode: str, parsed: Parsed) -> None:
    _, func = parsed(f"routed_{mode}")
    cfg = _config()
    experts = {(layer, e) for layer in range(LAYERS) for e in range(cfg.n_experts)}
    assert set(_branches(func)) == experts
    # the markers are gone: logits then k, v per layer, the cache tagged
    assert len(func.function_type.outputs.data) == 1 + 2 * LAYERS
    assert "route_marker" not in str(func)
    assert func.res_attrs is not None
    assert all("hyperoffload.tier" in a.data for a in func.res_attrs.data[1:])
    assert _moe_attr(func) == {
        "experts": 4,
        "top_k": 2,
        "shared": 1,
        "router": "sigmoid",
        "routed": True,
    }


@pytest.mark.parametrize("mode", ["decode", "prefill"])
def test_expert_weights_are_read_only_in_their_branch(
    mode: str, parsed: Parsed
) -> None:
    _, func = parsed(f"routed_{mode}")
    branches = _branches(func)
    keys = _arg_keys(func)
    # w1, w2, w3 of each routed expert; shared experts and the router untagged
    assert len([k for k in keys if k is not None]) == 3 * len(branches)
    block = func.body.block
    for arg, key in zip(func.args, keys, strict=True):
        users = [block.find_ancestor_op_in_block(u.operation) for u in arg.uses]
        assert users, f"argument {arg.index} is never read"
        if key is None:
            assert not any(u in branches.values() for u in users)
        else:
            assert all(u is branches[key] for u in users), key


def _random_model(cfg: ModelConfig, seed: int) -> Any:
    torch.manual_seed(seed)
    eager = build_model(cfg)
    with torch.no_grad():
        for p in eager.parameters():
            p.add_(0.1 * torch.randn(p.shape))
    return eager


def _inputs(cfg: ModelConfig, mode: str, shapes: Shapes, eager: Any) -> list[Any]:
    sig = program(eager, cfg, mode, shapes, torch.float32)[1]
    args: list[Any] = []
    for shape, dtype in sig.arg_specs[: sig.first_param]:
        if dtype.is_floating_point:
            args.append(torch.randn(shape))
        else:
            args.append(torch.randint(0, cfg.vocab_size, shape))
    return args + [p.detach().clone() for p in eager.parameters()]


def _eager(
    cfg: ModelConfig, mode: str, shapes: Shapes, seed: int
) -> tuple[list[Any], list[Any], list[set[int]]]:
    """
    Inputs, eager outputs (the dense program) and, per MoE layer, the experts
    some token chose (top-k of the router's scores, computed here).
    """
    eager = _random_model(cfg, seed)
    args = _inputs(cfg, mode, shapes, eager)
    chosen: list[set[int]] = []

    def record(moe: Any, inputs: tuple[Any, ...], _: Any) -> None:
        flat = inputs[0].reshape(-1, cfg.hidden)
        logits = moe.gate(flat)
        scores = logits.softmax(-1) if cfg.router == "softmax" else logits.sigmoid()
        chosen.append(
            set(torch.topk(scores, cfg.top_k, dim=-1).indices.flatten().tolist())
        )

    for module in eager.modules():
        if isinstance(module, MoE):
            module.register_forward_hook(record)
    fn = program(eager, cfg, mode, shapes, torch.float32)[0]
    with torch.no_grad():
        want = list(cast(tuple[Any, ...], fn(*args)))
    return args, want, chosen


def _close(got: list[Array], want: list[Any]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        expected: Array = w.detach().numpy()
        assert g.shape == expected.shape
        np.testing.assert_allclose(g, expected, rtol=1e-4, atol=1e-5)


def _poisoned(func: FuncOp, args: list[Any], chosen: list[set[int]]) -> list[Array]:
    """The inputs with the weights of every expert no token chose set to NaN."""
    inputs: list[Array] = [a.numpy().copy() for a in args]
    for i, key in enumerate(_arg_keys(func)):
        if key is not None and key[1] not in chosen[key[0]]:
            inputs[i][...] = np.nan
    return inputs


@pytest.mark.parametrize(
    ("name", "mode", "shapes", "layers"),
    [
        ("routed_decode", "decode", DECODE, LAYERS),
        ("routed_prefill", "prefill", PREFILL, LAYERS),
        ("softmax_decode", "decode", DECODE, 1),
    ],
)
def test_routed_export_matches_eager_pytorch(
    name: str, mode: str, shapes: Shapes, layers: int, parsed: Parsed
) -> None:
    cfg = _config(layers, softmax=name.startswith("softmax"))
    args, want, chosen = _eager(cfg, mode, shapes, seed=5)
    module, func = parsed(name)
    _close(evaluate(module, _poisoned(func, args, chosen)).outputs, want)


def test_unchosen_expert_is_skipped(parsed: Parsed) -> None:
    """
    A decode step of one token leaves experts unchosen; with their weights
    NaN the dense export's logits are NaN, the routed export's are eager's.
    """
    cfg = _config()
    args, want, chosen = _eager(cfg, "decode", DECODE, seed=5)
    assert len(chosen) == LAYERS
    assert all(len(c) == cfg.top_k < cfg.n_experts for c in chosen)
    routed, routed_func = parsed("routed_decode")
    dense, dense_func = parsed("dense_decode")
    poisoned = _poisoned(routed_func, args, chosen)
    assert _arg_keys(routed_func) == _arg_keys(dense_func)
    assert any(np.isnan(a).all() for a in poisoned)
    assert np.isnan(evaluate(dense, poisoned).outputs[0]).all()
    got = evaluate(routed, poisoned).outputs
    _close(got, want)
    clean = evaluate(dense, [a.numpy() for a in args]).outputs
    assert all(np.array_equal(a, b) for a, b in zip(got, clean, strict=True))


def test_planned_program_computes_what_the_unplanned_one_does(
    parsed: Parsed, ctx: Context, tmp_path: Path
) -> None:
    """
    Planned from a recorded profile (layer 0: experts 0 and 1 every token;
    layer 1: expert 0 three tokens in four) for the rest of the step plus
    two experts: expert 0.0 stays resident beside one fetch buffer, 0.1 and
    1.0 are fetched ahead of their routers (each through the buffer, its
    branch the first cold one of its layer), the others in their branches.
    The routed decode step then gives the same bits as the unplanned one on
    the same inputs (the same routing), inputs whose routing takes cold
    experts.
    """
    module, func = parsed("routed_decode")
    profile = tmp_path / "profile.json"
    tokens = [[[0, 1], [0, e]] for e in (2, 3, 1)] + [[[1, 0], [1, 2]]]
    profile.write_text(json.dumps({"experts": 4, "top_k": 2, "tokens": tokens}))
    routing = f"trace:{profile}"
    hardware = load_hardware("ascend-910c", None)
    others = place_experts(module, func, hardware, parse_routing(routing)).others_bytes
    expert = moe_step(module, hardware).layers[0].expert_bytes[0]
    planned = module.clone()
    capacity = others + 2 * expert + 100
    PipelinePass(hbm_capacity=capacity, routing=routing).apply(ctx, planned)
    (planned_func,) = [op for op in planned.walk() if isinstance(op, FuncOp)]
    assert planned_hot_set(planned_func) == ([[0], []], 2 * expert + 100)
    prefetches = [op for op in planned.walk() if isinstance(op, PrefetchOp)]
    ahead = [p for p in prefetches if p.speculative is not None]
    assert len(ahead) == 2 * 3  # experts 0.1 and 1.0, three matrices each
    assert all(p.parent_op() is planned_func for p in ahead)
    inside = [p for p in prefetches if isinstance(p.parent_op(), scf.IfOp)]
    assert len(inside) == 3 * (4 * LAYERS - 3)
    hot = [[0], []]
    cold_taken = 0
    for seed in range(3):
        args, _, chosen = _eager(_config(), "decode", DECODE, seed)
        inputs: list[Array] = [a.numpy() for a in args]
        want = evaluate(module, inputs).outputs
        got = evaluate(planned, inputs).outputs
        assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
        cold_taken += sum(
            e not in hot[layer] for layer, c in enumerate(chosen) for e in c
        )
    assert cold_taken > 0


def test_dense_export_is_unchanged(exports: Path, parsed: Parsed) -> None:
    """
    Dense experts: torch-mlir's text, only the signature line tagged (expert
    weights included) and `hyperoffload.moe` saying `routed = false`.
    """
    text = (exports / "dense_decode.mlir").read_text()
    raw = (exports / "raw_decode.mlir").read_text()
    signature = [i for i, line in enumerate(raw.splitlines()) if "func.func" in line]
    assert len(signature) == 1
    lines, raw_lines = text.splitlines(), raw.splitlines()
    del lines[signature[0]], raw_lines[signature[0]]
    assert lines == raw_lines
    _, func = parsed("dense_decode")
    assert not any(isinstance(op, scf.IfOp) for op in func.walk())
    assert _moe_attr(func)["routed"] is False
    keys = _arg_keys(func)
    assert keys.count((1, 3)) == 3
    assert len([k for k in keys if k is not None]) == 3 * LAYERS * 4


def test_mixtral_config() -> None:
    mx = CONFIGS["mixtral-8x7b"]
    dims = (mx.vocab_size, mx.hidden, mx.n_layers, mx.n_heads, mx.n_kv_heads)
    assert dims == (32000, 4096, 32, 32, 8)
    assert (mx.head_dim, mx.rope_theta, mx.router) == (128, 1e6, "softmax")
    moe = (mx.n_experts, mx.top_k, mx.n_shared_experts, mx.expert_ffn)
    assert moe == (8, 2, 0, 14336)
    assert (mx.family, mx.n_dense_layers) == ("moe", 0)
    assert get_config("deepseek-v3").router == "sigmoid"


def test_softmax_router_renormalises_over_the_chosen() -> None:
    """Mixtral's gates: softmax over all logits, top-k, renormalised."""
    cfg = _config(1, softmax=True)
    torch.manual_seed(11)
    moe = MoE(cfg)
    x = torch.randn(1, 6, cfg.hidden)
    flat = x.reshape(6, cfg.hidden)
    with torch.no_grad():
        got = moe(x).reshape(6, cfg.hidden)
        top = torch.topk(moe.gate(flat), cfg.top_k, dim=-1)
        gates = torch.softmax(top.values, dim=-1)  # == softmax, top-k, renormalise
        want = torch.zeros_like(flat)
        load = [0] * cfg.n_experts
        capacity = moe.capacity(6)
        for t in range(6):
            for e, gate in zip(top.indices[t].tolist(), gates[t], strict=True):
                load[e] += 1
                if load[e] <= capacity:
                    want[t] += gate * moe.experts[e](flat[t])
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_gen_tool_routes_experts(exports: Path, ctx: Context) -> None:
    assert (exports / "gen.status").read_text() == "0"
    text = (exports / "gen.mlir").read_text()
    assert text.startswith("// tiny-moe forward (1 layers, batch 1, seq 4")
    assert "routed experts" in text.splitlines()[0]
    _, func = _func(ctx, text)
    assert len(_branches(func)) == 4
    assert len(func.function_type.outputs.data) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tiny-llama"], "moe family only (this model is llama)"),
        (["tiny-gpt", "--mode", "decode"], "moe family only (this model is gpt)"),
        (["tiny-moe", "--mode", "train"], "not train"),
    ],
)
def test_gen_rejects_routed_experts(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert gen_main([*argv, "--experts", "routed"]) == 1
    err = capsys.readouterr().err
    assert "error:" in err
    assert message in err
    assert "Traceback" not in err


# ------------------------------------------------------------ IR-level checks

_MARKED = """
func.func @f(%x: tensor<2xf32>, %w: tensor<2xf32>, %r: tensor<i1>)
    -> (tensor<2xf32>,
        tensor<i1> {hyperoffload.route_marker = array<i64: 0, 0, 0>},
        tensor<2xf32> {hyperoffload.route_marker = array<i64: 0, 0, 1>}) {
  %e = tensor.empty() : tensor<2xf32>
  %c = arith.constant dense<2.0> : tensor<2xf32>
  %s = linalg.mul ins(%w, %c : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %a = linalg.add ins(%x, %s : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %o = linalg.add ins(%x, %a : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  func.return %o, %r, %a : tensor<2xf32>, tensor<i1>, tensor<2xf32>
}
"""


def test_rewrite_takes_only_what_the_expert_needs(ctx: Context) -> None:
    """
    The shared `tensor.empty` stays outside, captured; the constant and both
    ops only the contribution needs move in; the markers leave the signature.
    """
    module = parse_mlir(ctx, _MARKED, "<marked>")
    (func,) = [op for op in module.walk() if isinstance(op, FuncOp)]
    (branch,) = route_experts(func)
    verify_module(module)
    inside = [op.name for op in branch.true_region.block.ops]
    assert inside == ["arith.constant", "linalg.mul", "linalg.add", "scf.yield"]
    outside = [op.name for op in func.body.block.ops]
    assert outside == [
        "tensor.empty",
        "tensor.extract",
        "scf.if",
        "linalg.add",
        "func.return",
    ]
    returned = func.body.block.last_op
    assert isinstance(returned, ReturnOp)
    assert len(returned.operands) == 1
    assert len(func.function_type.outputs.data) == 1
    assert func.res_attrs is None
    x, w = np.array([1.0, 2.0], np.float32), np.array([10.0, 20.0], np.float32)
    for routed, want in ((True, [22.0, 44.0]), (False, [1.0, 2.0])):
        got = evaluate(module, [x, w, np.array(routed)]).outputs
        np.testing.assert_array_equal(got[0], want)


_BRANCHES = """
func.func @f(%p: i1, %x: tensor<2xf32>,
             %w: !hyperoffload.remote<tensor<2xf32>>) -> tensor<2xf32> {
  %y = scf.if %p -> (tensor<2xf32>) {
    %v = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<2xf32>> -> tensor<2xf32>
    %s = arith.addf %x, %v : tensor<2xf32>
    scf.yield %s : tensor<2xf32>
  } else {
    %s = arith.mulf %x, %x : tensor<2xf32>
    scf.yield %s : tensor<2xf32>
  }
  func.return %y : tensor<2xf32>
}
"""


def test_evaluator_runs_the_branch_taken(ctx: Context) -> None:
    module = parse_mlir(ctx, _BRANCHES, "<branches>")
    x, w = np.array([1.0, 3.0], np.float32), np.array([2.0, 5.0], np.float32)
    (taken,) = evaluate(module, [np.array(True), x, w]).outputs
    np.testing.assert_array_equal(taken, [3.0, 8.0])
    (other,) = evaluate(module, [np.array(False), x, w]).outputs
    np.testing.assert_array_equal(other, [1.0, 9.0])


_REMOTE_READ = """
func.func @f(%p: i1, %x: tensor<2xf32>,
             %w: !hyperoffload.remote<tensor<2xf32>>) -> tensor<2xf32> {
  %y = scf.if %p -> (tensor<2xf32>) {
    %s = "arith.addf"(%x, %w) : (tensor<2xf32>, !hyperoffload.remote<tensor<2xf32>>) -> tensor<2xf32>
    scf.yield %s : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  func.return %y : tensor<2xf32>
}
"""


def test_evaluator_checks_residency_inside_a_branch(ctx: Context) -> None:
    """A remote copy read in the branch taken is an error; in the other, nothing."""
    module = parse_mlir(ctx, _REMOTE_READ, "<remote read>")
    x = np.array([1.0, 3.0], np.float32)
    with pytest.raises(NumericError, match=r"<remote read>:5:\d+: .*%w, a remote copy"):
        evaluate(module, [np.array(True), x, x])
    (other,) = evaluate(module, [np.array(False), x, x]).outputs
    np.testing.assert_array_equal(other, x)
