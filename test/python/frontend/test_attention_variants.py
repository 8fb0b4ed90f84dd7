"""
Attention variants of `hyperoffload.frontend` (`--attention blocked|window`):
the KV cache in blocks, an online softmax over them, a sliding window with
sinks. Each exported program, run by the numpy evaluator, computes what a
plain eager reference computes: full attention (``blocked``) or full
attention under the window-and-sinks mask (``window``), the mask written here
independently of the frontend. A decode step reads the cache its own
variant's prefill wrote, so prefill and decode are checked against one
reference over the whole sequence.

As in `test_frontend.py`, every export runs in one child process
(torch-mlir and the MLIR bindings cannot share one).
"""

import json
import subprocess
import sys
from dataclasses import replace
from importlib import import_module
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, IntegerAttr, ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp

from hyperoffload.analysis.cost import tensor_bytes
from hyperoffload.dialects.hyperoffload import DetachOp, PrefetchOp, RemoteType
from hyperoffload.dialects.views import VIEW_OPS
from hyperoffload.evaluators.numeric import evaluate, outputs_match_reference
from hyperoffload.frontend import ModelConfig, get_config
from hyperoffload.frontend.configs import AttentionSpec, BlockTag, KVKind
from hyperoffload.frontend.models import build_model
from hyperoffload.frontend.torch_export import Shapes, Signature, program
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.passes.pipeline import PipelinePass
from hyperoffload.tools.hyperoffload_gen import main as gen_main

torch: Any = import_module("torch")
models: Any = import_module("hyperoffload.frontend.models")

Array = np.ndarray[Any, Any]

LAYERS = {"tiny-llama": 2, "tiny-gpt": 1}
"""Decoder layers per model: with two, the second layer's cache depends on the
first's attention; one for gpt keeps parsing (the run time) short."""
SEQ = 15
"""Prompt of the prefill; the decode step reads SEQ - 1 positions, decodes the last."""
PREFILL = Shapes(batch=2, seq=SEQ)
DECODE = Shapes(batch=2, kv_len=SEQ - 1)
VARIANTS = {
    # blocks 0..3 of 4, 4, 4, 3 (prefill) or 2 (decode) positions
    "blocked": AttentionSpec("blocked", block=4),
    # decode at 14: sinks {0, 1} and window 11..13 -> blocks 0, 2, 3 (not 1)
    "window": AttentionSpec("window", block=4, window=3, sinks=2),
}
MODELS = ("tiny-llama", "tiny-gpt")

_EXPORT_SCRIPT = """
import json, sys
from pathlib import Path
from hyperoffload.frontend import get_config
from hyperoffload.frontend.configs import AttentionSpec
from hyperoffload.frontend.torch_export import Shapes, export
from hyperoffload.tools.hyperoffload_gen import main as gen_main

out = Path(sys.argv[1])
layers, variants, shapes = json.loads(sys.argv[2])
for model in layers:
    for name, spec in variants.items():
        for mode, dims in shapes.items():
            exported = export(
                get_config(model),
                mode,
                shapes=Shapes(*dims),
                n_layers=layers[model],
                attention=AttentionSpec(*spec),
            )
            (out / f"{model}_{name}_{mode}.mlir").write_text(exported.text)
argv = ["tiny-llama", "--mode", "decode", "--layers", "1", "--kv-len", "10",
        "--attention", "window", "--window", "3", "--sinks", "1", "--kv-block", "4"]
status = gen_main([*argv, "-o", str(out / "gen.mlir")])
(out / "gen.status").write_text(str(status))
"""


def _dims(shapes: Shapes) -> list[int]:
    return [shapes.batch, shapes.seq, shapes.kv_len]


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every export of this module, made by one child process."""
    out = tmp_path_factory.mktemp("attention")
    variants = {
        name: [s.kind, s.block, s.window, s.sinks] for name, s in VARIANTS.items()
    }
    shapes = {"prefill": _dims(PREFILL), "decode": _dims(DECODE)}
    spec = json.dumps([LAYERS, variants, shapes])
    subprocess.run([sys.executable, "-c", _EXPORT_SCRIPT, str(out), spec], check=True)
    return out


def _config(model: str, variant: str | None = None) -> ModelConfig:
    cfg = replace(get_config(model), n_layers=LAYERS[model])
    return cfg if variant is None else replace(cfg, attention=VARIANTS[variant])


def _signature(model: str, variant: str, mode: str) -> Signature:
    shapes = DECODE if mode == "decode" else PREFILL
    with torch.device("meta"):
        module = build_model(_config(model, variant))
    return program(module, _config(model, variant), mode, shapes, torch.float32)[1]


def _allowed(variant: str, n: int) -> Any:
    """(n, n) booleans: may the query at p see the key at j (written here)."""
    p = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    causal = j <= p
    if variant == "blocked":
        return causal
    spec = VARIANTS[variant]
    return causal & ((j < spec.sinks) | (j >= p - spec.window))


def _reference(
    model: str, variant: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[Any], Any, list[tuple[Any, Any]]]:
    """
    Parameters, logits and per-layer (k, v) of a random model over a random
    batch of SEQ tokens: eager PyTorch with plain full attention (softmax of
    every score, K/V repeated per head), under the variant's mask.
    """
    torch.manual_seed(7)
    cfg = _config(model)
    eager = build_model(cfg)
    with torch.no_grad():
        for p in eager.parameters():
            p.add_(0.1 * torch.randn(p.shape))
    tokens = torch.randint(0, cfg.vocab_size, (PREFILL.batch, SEQ))
    mask = _allowed(variant, SEQ)

    def window_mask(seq: int, device: Any) -> Any:
        return mask[:seq, :seq]

    monkeypatch.setattr(models, "causal_mask", window_mask)
    with torch.no_grad():
        logits, cache = eager(tokens)
    params = [p.detach() for p in eager.parameters()]
    return [tokens, *params], logits, cache


def _func(ctx: Context, text: str) -> tuple[ModuleOp, FuncOp]:
    module = parse_mlir(ctx, text, "<export>")
    verify_module(module)
    funcs = [op for op in module.walk() if isinstance(op, FuncOp)]
    assert len(funcs) == 1
    return module, funcs[0]


def _block_tag(attrs: Any) -> BlockTag:
    assert isinstance(attrs, DictionaryAttr)
    tag = attrs.data["hyperoffload.kv_block"]
    assert isinstance(tag, DenseArrayBase)
    layer, kind, block = (int(v) for v in tag.get_values())
    return BlockTag(layer, KVKind(kind), block)


def _close(got: Array, want: Any) -> None:
    expected: Array = want.numpy()
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("model", MODELS)
def test_prefill_matches_masked_full_attention(
    model: str,
    variant: str,
    exports: Path,
    ctx: Context,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inputs, logits, cache = _reference(model, variant, monkeypatch)
    text = (exports / f"{model}_{variant}_prefill.mlir").read_text()
    module, func = _func(ctx, text)
    sig = _signature(model, variant, "prefill")
    assert func.res_attrs is not None
    tags = [_block_tag(attrs) for attrs in func.res_attrs.data[1:]]
    assert tags == list(sig.result_blocks)
    assert len(tags) == LAYERS[model] * 4 * 2  # 4 blocks of k and v per layer
    # each block is its own buffer, not a view of the layer's whole k or v
    returned = func.body.block.ops.last
    assert isinstance(returned, ReturnOp)
    for value in returned.operands[1:]:
        root = value
        while isinstance(root.owner, VIEW_OPS):
            root = root.owner.operands[0]
        assert tensor_bytes(root, returned) == tensor_bytes(value, returned)
    got: list[Array] = evaluate(module, [t.numpy() for t in inputs]).outputs
    _close(got[0], logits)
    for tag, block in zip(tags, got[1:], strict=True):
        rows = VARIANTS[variant].bounds(tag.block, SEQ)
        want = cache[tag.layer][tag.kind][:, :, rows.start : rows.stop]
        _close(block, want)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("model", MODELS)
def test_decode_matches_masked_full_attention(
    model: str,
    variant: str,
    exports: Path,
    ctx: Context,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The step at position SEQ - 1 over the cache of the positions before it."""
    (tokens, *params), logits, cache = _reference(model, variant, monkeypatch)
    text = (exports / f"{model}_{variant}_decode.mlir").read_text()
    module, func = _func(ctx, text)
    sig = _signature(model, variant, "decode")
    assert func.arg_attrs is not None
    kv_attrs = func.arg_attrs.data[sig.first_kv : sig.first_param]
    tags = [_block_tag(attrs) for attrs in kv_attrs]
    assert tags == list(sig.kv_blocks)
    read = [0, 1, 2, 3] if variant == "blocked" else [0, 2, 3]
    assert [t.block for t in tags] == [
        b for _ in range(LAYERS[model]) for b in read for _ in KVKind
    ]
    blocks: list[Any] = []
    for tag in tags:
        rows = VARIANTS[variant].bounds(tag.block, DECODE.kv_len)
        blocks.append(cache[tag.layer][tag.kind][:, :, rows.start : rows.stop])
    inputs = [tokens[:, SEQ - 1 :], *blocks, *params]
    got: list[Array] = evaluate(module, [t.numpy() for t in inputs]).outputs
    _close(got[0], logits[:, SEQ - 1 :])
    for i, entry in enumerate(got[1:]):
        _close(entry, cache[i // 2][i % 2][:, :, SEQ - 1 :])


def test_window_is_not_full_attention(monkeypatch: pytest.MonkeyPatch) -> None:
    """The window reference differs from full attention (the mask bites)."""
    _, window, _ = _reference("tiny-llama", "window", monkeypatch)
    _, full, _ = _reference("tiny-llama", "blocked", monkeypatch)
    assert not torch.allclose(window[:, SEQ - 1], full[:, SEQ - 1], atol=1e-3)


def test_cache_attribute_and_gen_tool(exports: Path, ctx: Context) -> None:
    assert (exports / "gen.status").read_text() == "0"
    text = (exports / "gen.mlir").read_text()
    assert "attention window 3 + 1 sinks, blocks of 4" in text.splitlines()[0]
    assert "%arg1: k_cache.0.0" in text
    _, func = _func(ctx, text)
    attr = func.attributes["hyperoffload.kv_cache"]
    assert isinstance(attr, DictionaryAttr)
    values: dict[str, int] = {}
    for key, value in attr.data.items():
        if isinstance(value, IntegerAttr):
            values[key] = cast(IntegerAttr[Any], value).value.data
    assert values == {"block": 4, "window": 3, "sinks": 1, "kv_len": 10}
    assert 'attention = "window"' in text
    # kv_len 10: sinks in block 0, window 7..9 in blocks 1 and 2
    assert func.arg_attrs is not None
    tags = [_block_tag(a) for a in func.arg_attrs.data[1:7]]
    assert [(t.kind, t.block) for t in tags] == [
        (kind, block) for block in (0, 1, 2) for kind in KVKind
    ]


def test_planned_block_stream_is_bit_identical(exports: Path, ctx: Context) -> None:
    """
    The blocked decode step planned at a small HBM target: its block
    arguments are remote, each prefetched and detached, and the planned
    program computes exactly what the unplanned one does.
    """
    text = (exports / "tiny-llama_blocked_decode.mlir").read_text()
    original, _ = _func(ctx, text)
    module = original.clone()
    (func,) = [op for op in module.walk() if isinstance(op, FuncOp)]
    PipelinePass(hbm_capacity=48 * 1024).apply(ctx, module)
    verify_module(module)
    assert func.arg_attrs is not None
    fetched = 0
    for arg, attrs in zip(func.args, func.arg_attrs.data, strict=True):
        assert isinstance(attrs, DictionaryAttr)
        if "hyperoffload.kv_block" not in attrs.data:
            continue
        assert isinstance(arg.type, RemoteType)
        prefetches = [
            u.operation for u in arg.uses if isinstance(u.operation, PrefetchOp)
        ]
        assert prefetches
        for prefetch in prefetches:
            users = [u.operation for u in prefetch.results[0].uses]
            assert any(isinstance(user, DetachOp) for user in users)
        fetched += 1
    assert fetched == LAYERS["tiny-llama"] * 4 * 2
    rng = np.random.default_rng(0)
    inputs: list[Array] = []
    for dtype_shape in _signature("tiny-llama", "blocked", "decode").arg_specs:
        shape, dtype = dtype_shape
        if dtype.is_floating_point:
            inputs.append(rng.standard_normal(shape).astype(np.float32))
        else:
            inputs.append(rng.integers(0, 128, shape))
    planned = evaluate(module, inputs).outputs
    unplanned = evaluate(original, inputs).outputs
    assert len(planned) == len(unplanned)
    for a, b in zip(planned, unplanned, strict=True):
        assert a.dtype == b.dtype
        assert np.array_equal(a, b)
    assert outputs_match_reference(module, inputs)


def test_visibility_agrees_with_the_rule() -> None:
    """`AttentionSpec.visibility` (closed form) == every pair through `sees`."""
    specs = [AttentionSpec("blocked", 3)] + [
        AttentionSpec("window", 3, window, sinks)
        for window in (1, 2, 4, 7)
        for sinks in (0, 1, 4)
    ]
    for spec in specs:
        for q0 in range(12):
            for q1 in range(q0 + 1, 13):
                for k0 in range(12):
                    for k1 in range(k0 + 1, 13):
                        seen = [
                            spec.sees(p, j)
                            for p in range(q0, q1)
                            for j in range(k0, k1)
                        ]
                        want = "all" if all(seen) else "some" if any(seen) else "none"
                        got = spec.visibility(range(q0, q1), range(k0, k1))
                        assert got == want, (spec, q0, q1, k0, k1)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--attention", "blocked", "--kv-block", "0"], "at least 1 token, not 0"),
        (["--attention", "window", "--window", "0"], "sliding window holds at least 1"),
        (["--attention", "window", "--window", "4", "--sinks", "-1"], "non-negative"),
        (["--attention", "blocked", "--window", "4"], "need --attention window"),
        (["--attention", "blocked", "--sinks", "4"], "need --attention window"),
        (["--kv-block", "4"], "needs --attention blocked or window"),
        (["--window", "4"], "need --attention window"),
        (["--attention", "window"], "needs --window"),
    ],
)
def test_gen_rejects_bad_combinations(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert gen_main(["tiny-llama", "--mode", "decode", *argv]) == 1
    err = capsys.readouterr().err
    assert "error:" in err
    assert message in err


def test_gen_rejects_variants_of_other_modes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Checked before tracing (no torch-mlir load in this process)."""
    for mode in ("forward", "train"):
        assert gen_main(["tiny-llama", "--mode", mode, "--attention", "blocked"]) == 1
        assert "prefill and decode modes" in capsys.readouterr().err
