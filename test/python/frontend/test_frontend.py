"""
`hyperoffload.frontend` and `hyperoffload-gen`: every family exports in every
mode, our tool parses and verifies the result, and the exported programs
compute what eager PyTorch computes. Needs the `torch` extra (`make test`
installs it); without it these tests fail rather than skip.

torch-mlir's MLIR libraries cannot share a process with the project's MLIR
bindings (the ExecutionEngine of `hyperoffload.evaluators.execution`), so every export
runs in one child process (`_EXPORT_SCRIPT`); this process only runs eager
PyTorch and the numpy evaluator.
"""

import json
import re
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
from xdsl.dialects.builtin import DictionaryAttr, StringAttr
from xdsl.dialects.func import FuncOp

from hyperoffload.evaluators.numeric import evaluate
from hyperoffload.frontend import CONFIGS, MODES, ModelConfig, get_config
from hyperoffload.frontend.models import MoE, build_model
from hyperoffload.frontend.torch_export import Shapes, Signature, program
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.tools.hyperoffload_gen import main as gen_main

torch: Any = import_module("torch")

Array = np.ndarray[Any, Any]

TINY = ("tiny-llama", "tiny-gpt", "tiny-moe")
SHAPES = Shapes(batch=2, seq=8, kv_len=8)
LAYERS = 1
"""Decoder layers of the exports under test (parsing dominates the run time)."""

_EXPORT_SCRIPT = """
import json, sys
from dataclasses import replace
from pathlib import Path
import torch
from hyperoffload.frontend import get_config
from hyperoffload.frontend.torch_export import ExportError, Shapes, export, lower
from hyperoffload.tools.hyperoffload_gen import main as gen_main

out = Path(sys.argv[1])
models, modes, layers = json.loads(sys.argv[2])
shapes = Shapes(*json.loads(sys.argv[3]))
for model in models:
    for mode in modes:
        exported = export(get_config(model), mode, shapes=shapes, n_layers=layers)
        (out / f"{model}_{mode}.mlir").write_text(exported.text)
real = export(
    get_config("llama3-8b"),
    "decode",
    shapes=Shapes(1, 1, 1024),
    n_layers=1,
    dtype=torch.bfloat16,
)
(out / "llama3-8b_decode.mlir").write_text(real.text)
dense = export(get_config("tiny-moe"), "forward", n_layers=1, n_dense_layers=1)
(out / "dense.json").write_text(json.dumps(dense.signature.arg_names))
dropping = replace(get_config("tiny-moe"), capacity_factor=0.5)
tight = export(dropping, "forward", shapes=shapes, n_layers=layers)
(out / "tiny-moe_dropping.mlir").write_text(tight.text)
with torch._subclasses.fake_tensor.FakeTensorMode() as mode:
    x = torch.empty(4, 8)
try:
    with mode:
        lower(lambda x: torch.topk(x, 2, dim=-1).values, [x], "top2")
except ExportError as err:
    (out / "topk.err").write_text(str(err))
argv = ["tiny-moe", "--mode", "decode", "--kv-len", "4", "--batch", "1"]
status = gen_main([*argv, "-o", str(out / "gen.mlir")])
(out / "gen.status").write_text(str(status))
"""


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directory of every export of this module, made by one child process."""
    out = tmp_path_factory.mktemp("frontend")
    spec = json.dumps([TINY, MODES, LAYERS])
    shapes = json.dumps([SHAPES.batch, SHAPES.seq, SHAPES.kv_len])
    subprocess.run(
        [sys.executable, "-c", _EXPORT_SCRIPT, str(out), spec, shapes], check=True
    )
    return out


def _config(model: str) -> ModelConfig:
    return replace(get_config(model), n_layers=LAYERS)


def _signature(model: str, mode: str) -> Signature:
    with torch.device("meta"):
        module = build_model(_config(model))
    return program(module, _config(model), mode, SHAPES, torch.float32)[1]


def _func(ctx: Context, text: str, func_name: str) -> FuncOp:
    module = parse_mlir(ctx, text, "<export>")
    verify_module(module)
    funcs = [op for op in module.walk() if isinstance(op, FuncOp)]
    assert [f.sym_name.data for f in funcs] == [func_name]
    return funcs[0]


def _arg_attrs(func: FuncOp) -> list[dict[str, Any]]:
    assert func.arg_attrs is not None
    out: list[dict[str, Any]] = []
    for attrs in func.arg_attrs.data:
        assert isinstance(attrs, DictionaryAttr)
        out.append(dict(attrs.data))
    return out


def test_configs_have_published_dimensions() -> None:
    llama = CONFIGS["llama3-8b"]
    dims = (llama.n_layers, llama.hidden, llama.n_heads, llama.n_kv_heads)
    assert dims == (32, 4096, 32, 8)
    assert (llama.ffn_hidden, llama.vocab_size) == (14336, 128256)
    assert CONFIGS["llama2-70b"].n_kv_heads == 8
    l7 = CONFIGS["llama2-7b"]
    dims = (l7.n_layers, l7.hidden, l7.n_heads, l7.n_kv_heads, l7.head_dim)
    assert dims == (32, 4096, 32, 32, 128)
    assert (l7.ffn_hidden, l7.vocab_size, l7.rope_theta) == (11008, 32000, 10000.0)
    assert CONFIGS["llama-65b"].ffn_hidden == 22016
    assert CONFIGS["gpt3-175b"].family == "gpt"
    ds = CONFIGS["deepseek-v3"]
    moe = (ds.n_experts, ds.top_k, ds.n_shared_experts, ds.expert_ffn)
    assert moe == (256, 8, 1, 2048)
    assert (ds.n_dense_layers, ds.capacity_factor) == (3, 1.25)
    with pytest.raises(ValueError, match="unknown model"):
        get_config("gpt-5")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("model", TINY)
def test_export_parses_and_verifies(
    model: str, mode: str, exports: Path, ctx: Context
) -> None:
    sig = _signature(model, mode)
    text = (exports / f"{model}_{mode}.mlir").read_text()
    func = _func(ctx, text, sig.func_name)
    attrs = _arg_attrs(func)
    inputs = func.function_type.inputs.data
    assert len(attrs) == len(inputs) == len(sig.arg_names)
    for i, arg in enumerate(attrs):
        tagged = "hyperoffload.tier" in arg
        assert tagged == (i >= sig.first_kv), sig.arg_names[i]
    outputs = func.function_type.outputs.data
    if mode == "train":
        assert len(outputs) == 1 + sig.n_params
        assert list(outputs[1:]) == list(inputs[2:])
    if mode in ("prefill", "decode"):
        assert len(outputs) == 1 + 2 * LAYERS


@pytest.mark.parametrize("model", TINY)
def test_decode_kv_arguments_are_tagged(
    model: str, exports: Path, ctx: Context
) -> None:
    sig = _signature(model, "decode")
    text = (exports / f"{model}_decode.mlir").read_text()
    attrs = _arg_attrs(_func(ctx, text, "decode"))
    assert sig.first_param - sig.first_kv == 2 * LAYERS
    assert attrs[0] == {}
    for arg in attrs[sig.first_kv : sig.first_param]:
        assert arg["hyperoffload.category"] == StringAttr("kv")
        assert "hyperoffload.tier" in arg
    for arg in attrs[sig.first_param :]:
        assert "hyperoffload.category" not in arg
        assert "hyperoffload.tier" in arg
    assert "#hyperoffload.tier<remote>" in text


_OUR_ATTRS = re.compile(r" \{hyperoffload\.[^{}]*\}")


def _evaluate(ctx: Context, text: str, inputs: list[Array]) -> Any:
    """The numpy evaluator on `text` with tier/category attributes removed."""
    module = parse_mlir(ctx, _OUR_ATTRS.sub("", text), "<export>")
    return evaluate(module, inputs).outputs


def _random_model(model: str | ModelConfig, seed: int) -> Any:
    torch.manual_seed(seed)
    eager = build_model(_config(model) if isinstance(model, str) else model)
    with torch.no_grad():
        for p in eager.parameters():  # non-trivial norms and biases too
            p.add_(0.1 * torch.randn(p.shape))
    return eager


def _random_inputs(model: str, mode: str, eager: Any) -> list[Any]:
    cfg = _config(model)
    sig = program(eager, cfg, mode, SHAPES, torch.float32)[1]
    params = [p.detach().clone() for p in eager.parameters()]
    args: list[Any] = []
    for shape, dtype in sig.arg_specs[: sig.first_param]:
        if dtype.is_floating_point:
            args.append(torch.randn(shape))
        else:
            args.append(torch.randint(0, cfg.vocab_size, shape))
    if mode == "train":
        params = [p.requires_grad_() for p in params]
    return args + params


@pytest.mark.parametrize(
    ("model", "mode"),
    [(m, mode) for m in TINY for mode in ("forward", "decode")]
    + [("tiny-llama", "train"), ("tiny-moe", "prefill")],
)
def test_export_matches_eager_pytorch(
    model: str, mode: str, exports: Path, ctx: Context
) -> None:
    eager = _random_model(model, seed=1)
    args = _random_inputs(model, mode, eager)
    fn: Callable[..., Any] = program(
        eager, _config(model), mode, SHAPES, torch.float32
    )[0]
    result: Any = fn(*args)
    want: list[Any] = (
        list(cast(tuple[Any, ...], result)) if isinstance(result, tuple) else [result]
    )
    text = (exports / f"{model}_{mode}.mlir").read_text()
    got: list[Array] = _evaluate(ctx, text, [a.detach().numpy() for a in args])
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        expected: Array = w.detach().numpy()
        assert g.shape == expected.shape
        np.testing.assert_allclose(g, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("model", TINY)
def test_decode_continues_the_prompt(model: str) -> None:
    """
    Eager semantics: prefill then decode == forward over the longer sequence,
    and decode returns only the new position's K/V, equal to the prefill's.
    """
    cfg = _config(model)
    if cfg.family == "moe":  # no token dropped: routing then ignores the batch
        cfg = replace(cfg, capacity_factor=cfg.n_experts / cfg.top_k)
    eager = _random_model(cfg, seed=2)
    params = [p.detach() for p in eager.parameters()]
    tokens = torch.randint(0, cfg.vocab_size, (2, 9))
    prefill = program(eager, cfg, "prefill", SHAPES, torch.float32)[0]
    decode = program(eager, cfg, "decode", SHAPES, torch.float32)[0]
    forward = program(eager, cfg, "forward", SHAPES, torch.float32)[0]
    _, *cache = prefill(tokens[:, :8], *params)
    logits, *new_entries = decode(tokens[:, 8:], *cache, *params)
    full = forward(tokens, *params)
    torch.testing.assert_close(logits[:, 0], full[:, 8], rtol=1e-4, atol=1e-5)
    _, *full_cache = prefill(tokens, *params)
    assert len(new_entries) == len(full_cache) == 2 * LAYERS
    for entry, whole in zip(new_entries, full_cache, strict=True):
        assert entry.shape == (2, cfg.n_kv_heads, 1, cfg.head_dim)
        torch.testing.assert_close(entry, whole[:, :, 8:], rtol=1e-4, atol=1e-5)


def test_decode_of_several_tokens_is_causal() -> None:
    """Two new tokens over a cache attend causally among themselves."""
    cfg = _config("tiny-llama")
    eager = _random_model(cfg, seed=4)
    tokens = torch.randint(0, cfg.vocab_size, (2, 10))
    with torch.no_grad():
        _, cache = eager(tokens[:, :8])
        logits, new = eager(tokens[:, 8:], past=cache, offset=8)
        full, _ = eager(tokens)
    torch.testing.assert_close(logits, full[:, 8:], rtol=1e-4, atol=1e-5)
    assert new[0][0].shape[2] == 2


def test_moe_drops_tokens_over_capacity() -> None:
    """Capacity dispatch == a loop over tokens that skips full experts."""
    cfg = replace(_config("tiny-moe"), capacity_factor=0.5)
    torch.manual_seed(3)
    moe = MoE(cfg)
    x = torch.randn(2, 8, cfg.hidden)
    flat = x.reshape(16, cfg.hidden)
    capacity = moe.capacity(16)
    assert capacity == 4  # ceil(16 * 2 / 4 * 0.5)
    with torch.no_grad():
        got = moe(x).reshape(16, cfg.hidden)
        scores = torch.sigmoid(moe.gate(flat))
        top = torch.topk(scores, cfg.top_k, dim=-1)
        load = [0] * cfg.n_experts
        dropped = 0
        want = torch.zeros_like(flat)
        for t in range(16):
            want[t] = sum(shared(flat[t]) for shared in moe.shared)
            gates = top.values[t] / top.values[t].sum()
            for e, gate in zip(top.indices[t].tolist(), gates, strict=True):
                load[e] += 1
                if load[e] > capacity:
                    dropped += 1
                    continue
                want[t] += gate * moe.experts[e](flat[t])
    assert dropped > 0
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_moe_export_drops_tokens_as_eager(exports: Path, ctx: Context) -> None:
    """The exported capacity dispatch drops the tokens eager PyTorch drops."""
    cfg = replace(_config("tiny-moe"), capacity_factor=0.5)
    eager = _random_model(cfg, seed=1)
    tokens = torch.randint(0, cfg.vocab_size, (SHAPES.batch, SHAPES.seq))
    params = [p.detach() for p in eager.parameters()]
    with torch.no_grad():
        want: Array = eager(tokens)[0].numpy()
    text = (exports / "tiny-moe_dropping.mlir").read_text()
    inputs = [tokens.numpy(), *(p.numpy() for p in params)]
    (got,) = _evaluate(ctx, text, inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_real_dimensions_export_without_weights(exports: Path) -> None:
    """One LLaMA-3-8B layer at bf16 traced on fake tensors."""
    text = (exports / "llama3-8b_decode.mlir").read_text()
    assert "tensor<128256x4096xbf16>" in text
    assert "tensor<1x8x1024x128xbf16>" in text
    # the cache is read in place: neither concatenated nor repeated per head
    assert not re.search(r"x1025x128xbf16>|x4x1024x128xbf16>|32x1024x128xbf16>", text)
    assert "tensor<1x8x1x128xbf16>" in text


def test_dense_layers_override(exports: Path) -> None:
    names: list[str] = json.loads((exports / "dense.json").read_text())
    assert "layers.0.feed_forward.w1.weight" in names
    assert not any("experts" in name for name in names)


def test_unsupported_op_is_named(exports: Path) -> None:
    assert "tm_tensor.sort" in (exports / "topk.err").read_text()


def test_gen_tool(exports: Path, ctx: Context) -> None:
    assert (exports / "gen.status").read_text() == "0"
    text = (exports / "gen.mlir").read_text()
    assert text.startswith("// tiny-moe decode")
    assert "tensor<1x4x4x16xf32>" in text
    verify_module(parse_mlir(ctx, text, "gen.mlir"))


def test_gen_tool_reports_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert gen_main(["no-such-model"]) == 1
    assert "unknown model" in capsys.readouterr().err
    assert gen_main(["tiny-gpt", "--mode", "decode", "--kv-len", "64"]) == 1
    assert "position table" in capsys.readouterr().err
    assert gen_main(["tiny-llama", "--dense-layers", "0"]) == 1
    assert "moe family only" in capsys.readouterr().err
