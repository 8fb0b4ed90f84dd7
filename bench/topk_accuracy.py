"""
What top-k block selection, a sliding window and INT8 KV cost in accuracy,
on the trained model of `hyperoffload.benchmark.tiny_lm` (2 layers, context
2048, bytes of the Python standard library; `bench/train_tiny_lm.py`).

For each of `PROMPTS` held-back windows: a prompt of `PROMPT` bytes is
prefilled with full attention (every variant starts from the same exact
cache), then `TOKENS` decode steps run under each variant against full
attention:

- top-1 agreement over `TOKENS` greedy tokens: full attention generates
  greedily; each variant is fed the same tokens (teacher-forced) and the
  fraction of steps whose argmax equals full attention's is reported;
- the cosine similarity of the logits over those steps (mean, and lowest);
- the perplexity of the held-back bytes that follow the prompt (each
  variant decoding the true text), beside full attention's.

Variants: top-k (`hyperoffload.frontend.topk_attention`: blocks of `BLOCK`,
`SINKS` sinks, `RECENT` recent positions, K blocks) at several K, the
sliding window of the same positions as top-k at `WINDOW_K` (sinks +
recent + K blocks), and INT8 KV (every cached entry round-tripped through
the quantiser of `compress = "int8"`, full attention). The selections of
top-k are written to `bench/topk/selections.json` for the generation
replay (`hyperoffload.policies.generation_topk`): for each step and layer, the
candidate blocks ranked by their bound (the selection is the first K).

    .venv/bin/python bench/topk_accuracy.py [--write-docs]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from hyperoffload.benchmark.tiny_lm import TINY_LM, corpus, load_checkpoint
from hyperoffload.frontend.configs import AttentionSpec
from hyperoffload.frontend.models import KVBlocks, Llama, PastCache
from hyperoffload.frontend.topk_attention import PooledCache
from hyperoffload.support.markers import write_between
from hyperoffload.support.outputs import write_output
from hyperoffload.support.quantize import round_trip

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "benchmarks.md"
SELECTIONS = ROOT / "bench" / "topk" / "selections.json"
BEGIN = "<!-- topk-accuracy:begin -->"
END = "<!-- topk-accuracy:end -->"

PROMPT = 1792
TOKENS = 256
PROMPTS = 2
BLOCK = 64
SINKS = 4
RECENT = 64
KS = (1, 2, 4, 8)
WINDOW_K = 4
TRACE_K = 4
"""The K whose selections are written for the replay."""

Cache = list[tuple[Tensor, Tensor]]
MakePast = Callable[[Tensor, Tensor], PastCache]


def _quantized(t: Tensor) -> Tensor:
    return torch.as_tensor(round_trip(t.numpy()))


def _decode(
    model: Llama,
    cache: Cache,
    tokens: Tensor,
    make_past: MakePast,
    lossy: bool = False,
) -> Tensor:
    """(len(tokens), vocab) logits: `tokens` decoded one at a time after `cache`."""
    k_v = [(_quantized(k), _quantized(v)) if lossy else (k, v) for k, v in cache]
    out: list[Tensor] = []
    for i in range(tokens.shape[0]):
        offset = k_v[0][0].shape[2]
        past = [make_past(k, v) for k, v in k_v]
        logits, new = model(tokens[None, i : i + 1], past, offset)
        out.append(logits[0, -1])
        appended: Cache = []
        for (k, v), entry in zip(k_v, new, strict=True):
            assert not isinstance(entry, KVBlocks)
            kn, vn = entry
            if lossy:
                kn, vn = _quantized(kn), _quantized(vn)
            appended.append((torch.cat([k, kn], 2), torch.cat([v, vn], 2)))
        k_v = appended
    return torch.stack(out)


def _greedy(model: Llama, cache: Cache, first: Tensor) -> Tensor:
    """`TOKENS` greedy tokens of full attention after `cache`, starting with `first`."""
    tokens = [int(first)]
    k_v = list(cache)
    for _ in range(TOKENS - 1):
        offset = k_v[0][0].shape[2]
        logits, new = model(torch.tensor([[tokens[-1]]]), k_v, offset)
        tokens.append(int(logits[0, -1].argmax()))
        k_v = [
            (torch.cat([k, e[0]], 2), torch.cat([v, e[1]], 2))
            for (k, v), e in zip(k_v, new, strict=True)
            if isinstance(e, tuple)
        ]
    return torch.tensor(tokens)


def _variants(
    window_model: Llama, recorder: list[list[Tensor] | None]
) -> dict[str, tuple[Llama | None, MakePast, bool]]:
    """
    name -> (model to decode with, None for the full one; past builder;
    lossy); top-`TRACE_K` records its selections into `recorder[0]` while
    that is a list.
    """
    variants: dict[str, tuple[Llama | None, MakePast, bool]] = {}
    for k in KS:
        spec = AttentionSpec("topk", BLOCK, sinks=SINKS, topk=k, recent=RECENT)

        def pooled(
            kk: Tensor, vv: Tensor, spec: AttentionSpec = spec, k: int = k
        ) -> PastCache:
            record = recorder[0] if k == TRACE_K else None
            return PooledCache.from_kv(kk, vv, spec, record)

        variants[f"top-{k}"] = (None, pooled, False)
    window = f"window {SINKS} + {RECENT + WINDOW_K * BLOCK}"
    variants[window] = (window_model, _pair, False)
    variants["INT8 KV"] = (None, _pair, True)
    return variants


def _pair(k: Tensor, v: Tensor) -> PastCache:
    return (k, v)


def measure() -> tuple[list[dict[str, float | str]], dict[str, object]]:
    """The table's rows and the rankings of top-`TRACE_K` on the first prompt."""
    model = load_checkpoint()
    spec = AttentionSpec("window", BLOCK, window=RECENT + WINDOW_K * BLOCK, sinks=SINKS)
    window_model = Llama(replace(TINY_LM, attention=spec))
    window_model.load_state_dict(model.state_dict())
    window_model.eval()
    _, held = corpus()
    starts = np.linspace(0, len(held) - PROMPT - TOKENS - 1, PROMPTS).astype(int)
    sums: dict[str, dict[str, float]] = {}
    trace: list[Tensor] = []
    recorder: list[list[Tensor] | None] = [None]
    variants = _variants(window_model, recorder)
    nll_full = 0.0
    with torch.no_grad():
        for n, start in enumerate(starts):
            window = held[start : start + PROMPT + TOKENS + 1].astype(np.int64)
            text = torch.tensor(window)
            logits, prefill = model(text[None, :PROMPT])
            cache: Cache = [c for c in prefill if isinstance(c, tuple)]
            greedy = _greedy(model, cache, logits[0, -1].argmax())
            truth_in = text[PROMPT : PROMPT + TOKENS]
            truth_out = text[PROMPT + 1 : PROMPT + TOKENS + 1]
            full_g = _decode(model, cache, greedy[:-1], _pair)
            full_t = _decode(model, cache, truth_in, _pair)
            nll_full += float(F.cross_entropy(full_t, truth_out, reduction="sum"))
            for name, (decoder, make_past, lossy) in variants.items():
                recorder[0] = trace if n == 0 else None
                got_g = _decode(decoder or model, cache, greedy[:-1], make_past, lossy)
                recorder[0] = None
                got_t = _decode(decoder or model, cache, truth_in, make_past, lossy)
                cos = F.cosine_similarity(got_g, full_g, dim=-1)
                entry = sums.setdefault(
                    name,
                    {
                        "agree": 0.0,
                        "agree_text": 0.0,
                        "gap": 0.0,
                        "cos": 0.0,
                        "cos_min": 1.0,
                        "nll": 0.0,
                    },
                )
                same = got_g.argmax(-1) == full_g.argmax(-1)
                entry["agree"] += float(same.float().sum())
                same_t = got_t.argmax(-1) == full_t.argmax(-1)
                entry["agree_text"] += float(same_t.float().sum())
                gap = (got_t - full_t).abs().amax()
                entry["gap"] = max(entry["gap"], float(gap))
                entry["cos"] += float(cos.sum())
                entry["cos_min"] = min(entry["cos_min"], float(cos.min()))
                nll = F.cross_entropy(got_t, truth_out, reduction="sum")
                entry["nll"] += float(nll)
    steps = (TOKENS - 1) * len(starts)
    count = TOKENS * len(starts)
    rows: list[dict[str, float | str]] = [
        {
            "variant": "full attention",
            "positions": PROMPT + TOKENS - 1,
            "agree": 1.0,
            "agree_text": 1.0,
            "gap": 0.0,
            "cos": 1.0,
            "cos_min": 1.0,
            "ppl": math.exp(nll_full / count),
        }
    ]
    for name, entry in sums.items():
        rows.append(
            {
                "variant": name,
                "positions": _positions(name),
                "agree": entry["agree"] / steps,
                "agree_text": entry["agree_text"] / count,
                "gap": entry["gap"],
                "cos": entry["cos"] / steps,
                "cos_min": entry["cos_min"],
                "ppl": math.exp(entry["nll"] / count),
            }
        )
    layers = TINY_LM.n_layers
    ranked: list[list[list[int]]] = [
        [[int(block) for block in trace[i + layer]] for layer in range(layers)]
        for i in range(0, len(trace), layers)
    ]
    selections: dict[str, object] = {
        "block": BLOCK,
        "sinks": SINKS,
        "recent": RECENT,
        "topk": TRACE_K,
        "layers": layers,
        "prompt": PROMPT,
        "steps": ranked,
    }
    return rows, selections


def _positions(name: str) -> int:
    """Cached positions a variant's step reads at the last step (at most)."""
    length = PROMPT + TOKENS - 1
    if name.startswith("top-"):
        k = int(name.split("-")[1])
        return SINKS + RECENT + k * BLOCK
    if name.startswith("window"):
        return SINKS + RECENT + WINDOW_K * BLOCK
    return length


def table(rows: list[dict[str, float | str]], seconds: float) -> str:
    lines = [
        "",
        f"Measured by `bench/topk_accuracy.py` in {seconds:.0f} s "
        f"({PROMPTS} held-back prompts of {PROMPT} bytes, {TOKENS} tokens each; "
        f"blocks of {BLOCK}, {SINKS} sinks, {RECENT} recent positions).",
        "",
        "| variant | positions read (of up to 2047) | top-1 agreement, greedy | "
        "top-1 agreement, held-back text | logit cosine (mean / lowest) | "
        "largest logit difference | perplexity |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        lines.append(
            f"| {row['variant']} | {row['positions']} | {float(row['agree']):.1%} | "
            f"{float(row['agree_text']):.1%} | "
            f"{float(row['cos']):.5f} / {float(row['cos_min']):.5f} | "
            f"{float(row['gap']):.3f} | {float(row['ppl']):.3f} |"
        )
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[1])
    parser.add_argument("--write-docs", action="store_true")
    options = parser.parse_args()
    torch.set_num_threads(1)  # faster than 2 on a loaded machine
    start = time.perf_counter()
    rows, selections = measure()
    text = table(rows, time.perf_counter() - start)
    print(text)
    SELECTIONS.parent.mkdir(exist_ok=True)
    write_output(SELECTIONS, json.dumps(selections, separators=(",", ":")) + "\n")
    if options.write_docs:
        write_between(DOCS, text, BEGIN, END)


if __name__ == "__main__":
    main()
