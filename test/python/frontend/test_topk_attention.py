"""
Top-k block selection (`--attention topk`, `hyperoffload.frontend.topk_attention`):

* the eager step equals a plain masked softmax whose visible set (sinks,
  recent positions, the blocks of highest summary bound) is computed here
  independently of the frontend;
* the exported tiny-llama decode step, run by the numpy evaluator, computes
  what the eager model computes with the same rule (logits and new entries),
  its pools tagged for the pool and its summaries in HBM;
* `hyperoffload-gen` rejects top-k flags without `--attention topk`.

The export runs in a child process (torch-mlir and the MLIR bindings cannot
share one).
"""

import math
import subprocess
import sys
from dataclasses import replace
from importlib import import_module
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr
from xdsl.dialects.func import FuncOp

from hyperoffload.evaluators.numeric import evaluate
from hyperoffload.frontend import get_config
from hyperoffload.frontend.configs import AttentionSpec
from hyperoffload.frontend.models import build_model
from hyperoffload.frontend.topk_attention import PooledCache
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.support.topk_blocks import topk_layout
from hyperoffload.tools.hyperoffload_gen import main as gen_main

torch: Any = import_module("torch")

SPEC = AttentionSpec("topk", block=4, sinks=2, topk=2, recent=5)
"""At 44 cached positions: blocks 0 (sinks), 9 and 10 (recent 39..43) fixed,
two of the candidates 1..8 selected."""
KV_LEN = 44
LAYERS = 2

_EXPORT = """
import sys
from hyperoffload.tools.hyperoffload_gen import main
sys.exit(main(["tiny-llama", "--mode", "decode", "--layers", "2", "--kv-len", "44",
               "--attention", "topk", "--kv-block", "4", "--topk", "2",
               "--sinks", "2", "--recent", "5", "-o", sys.argv[1]]))
"""


def _plain(q: Any, k: Any, v: Any, kn: Any, vn: Any) -> Any:
    """Softmax over the visible positions and the new entry, selection written here."""
    b, heads, _, hd = q.shape
    kv = k.shape[1]
    rep = heads // kv
    length = k.shape[2]
    layout = topk_layout(SPEC.block, SPEC.sinks, SPEC.recent, length)
    qg = q.reshape(b, kv, rep, hd)
    bounds: dict[int, float] = {}
    for j in layout.candidates:
        keys = k[:, :, j * SPEC.block : (j + 1) * SPEC.block]
        low, high = keys.amin(2)[:, :, None], keys.amax(2)[:, :, None]
        bounds[j] = float(torch.maximum(qg * low, qg * high).sum(-1).max())
    chosen = sorted(bounds, key=lambda j: (-bounds[j], j))[: SPEC.topk]
    visible = torch.tensor(
        [layout.visible(p) or p // SPEC.block in chosen for p in range(length)]
    )
    keys = torch.cat([k, kn], 2).repeat_interleave(rep, 1)
    values = torch.cat([v, vn], 2).repeat_interleave(rep, 1)
    scores = q @ keys.transpose(-2, -1) / math.sqrt(hd)
    mask = torch.cat([visible, torch.tensor([True])])
    p = scores.masked_fill(~mask, float("-inf")).softmax(-1)
    return p @ values


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_step_matches_masked_softmax(seed: int) -> None:
    torch.manual_seed(seed)
    b, heads, kv, hd = 2, 4, 2, 8
    k, v = torch.randn(b, kv, KV_LEN, hd), torch.randn(b, kv, KV_LEN, hd)
    q = torch.randn(b, heads, 1, hd)
    kn, vn = torch.randn(b, kv, 1, hd), torch.randn(b, kv, 1, hd)
    cache = PooledCache.from_kv(k, v, SPEC)
    got = cache.attend(q, kn, vn)
    torch.testing.assert_close(got, _plain(q, k, v, kn, vn), rtol=1e-5, atol=1e-6)
    # the ranking a generation replays selects what the step selects
    assert torch.equal(cache.ranking(q)[: SPEC.topk], cache.select(q))


def test_layout_rule() -> None:
    layout = topk_layout(block=4, sinks=2, recent=5, length=KV_LEN)
    assert layout.fixed == (0, 9, 10)
    assert layout.candidates == tuple(range(1, 9))
    # the tail block holds the newest position: never a candidate
    assert topk_layout(block=4, sinks=0, recent=1, length=9).fixed == (2,)
    with pytest.raises(ValueError, match="recent >= 1"):
        topk_layout(block=4, sinks=0, recent=0, length=9)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("topk") / "decode.mlir"
    subprocess.run([sys.executable, "-c", _EXPORT, str(path)], check=True)
    return Path(path).read_text()


def test_export_matches_eager(exported: str, ctx: Context) -> None:
    torch.manual_seed(3)
    cfg = replace(get_config("tiny-llama"), n_layers=LAYERS)
    model = build_model(cfg)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.2 * torch.randn(p.shape))
        tokens = torch.randint(0, cfg.vocab_size, (1, KV_LEN + 1))
        _, cache = model(tokens[:, :KV_LEN])
        pools = [PooledCache.from_kv(k, v, SPEC) for k, v in cache]
        logits, new = model(tokens[:, KV_LEN:], pools, KV_LEN)
        full, _ = model(tokens)
    # the selection bites: top-k is not full attention here
    assert not torch.allclose(logits[:, -1], full[:, -1], atol=1e-3)
    module = parse_mlir(ctx, exported, "<export>")
    verify_module(module)
    (func,) = [op for op in module.walk() if isinstance(op, FuncOp)]
    assert func.arg_attrs is not None
    attrs = func.arg_attrs.data
    pool = attrs[1]
    summary = attrs[3]
    assert isinstance(pool, DictionaryAttr)
    assert isinstance(summary, DictionaryAttr)
    assert "hyperoffload.tier" in pool.data
    assert "hyperoffload.tier" not in summary.data
    tag = pool.data["hyperoffload.kv_pool"]
    assert isinstance(tag, DenseArrayBase)
    assert tuple(int(x) for x in tag.get_values()) == (0, 0)
    inputs = [tokens[:, KV_LEN:]]
    for layer in pools:
        inputs += [layer.keys, layer.values, layer.key_min, layer.key_max]
    inputs += [p.detach() for p in model.parameters()]
    got = evaluate(module, [t.numpy() for t in inputs]).outputs
    np.testing.assert_allclose(got[0], logits.numpy(), rtol=1e-4, atol=1e-5)
    entries = [t for pair in new for t in pair]
    for value, want in zip(got[1:], entries, strict=True):
        np.testing.assert_allclose(value, want.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--topk", "2"], "need --attention topk"),
        (
            ["--attention", "window", "--window", "4", "--recent", "2"],
            "need --attention topk",
        ),
        (["--attention", "topk"], "needs --topk"),
        (
            ["--attention", "topk", "--topk", "2", "--window", "4"],
            "needs --attention window",
        ),
        (["--attention", "topk", "--topk", "0"], "at least 1 block"),
    ],
)
def test_gen_rejects_bad_topk_flags(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert gen_main(["tiny-llama", "--mode", "decode", *argv]) == 1
    err = capsys.readouterr().err
    assert "error:" in err
    assert message in err


def test_gen_rejects_topk_prefill(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tiny-llama", "--mode", "prefill", "--attention", "topk", "--topk", "1"]
    assert gen_main(argv) == 1
    assert "applies to the decode mode" in capsys.readouterr().err
