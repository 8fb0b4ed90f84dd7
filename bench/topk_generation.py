"""
The seeds' long-context decode rows with top-k block selection: LLaMA-2-7B
shape, fp16, a 123K-token cache in blocks of 4096 tokens (the seeds' block),
4 sinks, the 4096 newest positions and K = 4 selected blocks per step
(`hyperoffload-gen ... --attention topk`), replayed over the block rankings
the trained model of `bench/topk_accuracy.py` made
(`bench/topk/selections.json`, mapped in proportion onto this cache's
candidate blocks; each of the 32 layers replays one of the model's 2 layers'
rankings in turn). `hyperoffload.policies.generation_topk`.

Rows:

- at 123K tokens: the KV bytes each policy holds in HBM at its fewest hot
  blocks within 1% of `none`'s tokens/s (ours: the heat table with blocks
  fetched ahead; the peer: the on-demand LRU cache), hit rates and bytes
  moved per token;
- the longest cache at 64 GB within 1% (lengths 64K to 123K): the step's
  compute priced at 123K is reused at the other lengths (the summaries'
  scoring grows with the length, by far the smallest term); the rankings
  are mapped onto each length's candidates. The recorded model ranks 25 to
  28 candidates over its generation; mapped onto many more (hundreds of
  blocks) the mapping itself would move the working set, so longer
  lengths are not replayed.

    .venv/bin/python bench/topk_generation.py [--write-docs]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from hyperoffload.analysis.topk_cache import topk_step
from hyperoffload.benchmark.seeds_inference import rankings
from hyperoffload.ir.context import make_context
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.policies.generation_topk import (
    TopkResult,
    TopkStep,
    least_hot,
    replay,
)
from hyperoffload.support.markers import write_between
from hyperoffload.support.units import format_bytes

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "benchmarks.md"
SELECTIONS = ROOT / "bench" / "topk" / "selections.json"
PROGRAM = ROOT / "build" / "topk" / "llama2_7b_topk4_123k.mlir"
BEGIN = "<!-- topk-generation:begin -->"
END = "<!-- topk-generation:end -->"
GEN = [
    "llama2-7b",
    "--mode",
    "decode",
    "--kv-len",
    "123000",
    "--dtype",
    "f16",
    "--attention",
    "topk",
    "--kv-block",
    "4096",
    "--topk",
    "4",
    "--sinks",
    "4",
    "--recent",
    "4096",
]
PRESETS = ("ascend-910c", "gh200-c2c")
WARMUP = 15
"""Calls run before the measured ones: the hot set starts empty."""
TOKENS = 240
LIMIT = 0.01
CAPACITY = 64 * 10**9
LENGTHS = (65_536, 81_920, 90_112, 98_304, 106_496, 114_688, 123_000)


def _rankings(step: TopkStep) -> list[list[list[int]]]:
    return rankings(step, json.loads(SELECTIONS.read_text()))


def _fewest(step: TopkStep, policy: str, hardware_name: str) -> TopkResult:
    hardware = load_hardware(hardware_name)
    return least_hot(
        step, _rankings(step), TOKENS, hardware, LIMIT, policy=policy, warmup=WARMUP
    )


def _gb(n: int) -> str:
    return f"{n / 1e9:.1f} GB"


def rows(steps: dict[str, TopkStep]) -> list[str]:
    lines = [
        "| hardware | one call | `none`: KV in HBM, tokens/s | ours: hot blocks, KV in HBM (saved), tokens/s (of `none`'s), hit rate, on-demand fetches/token, bytes moved/token | on-demand LRU within 1%: hot blocks, KV in HBM, hit rate | seeds |",
        "| --- | ---: | --- | --- | --- | --- |",
    ]
    for name, step in steps.items():
        hardware = load_hardware(name)
        none = replay(step, _rankings(step), TOKENS, "none", 0, hardware, warmup=WARMUP)
        ours = _fewest(step, "plan", name)
        peer = _fewest(step, "on-demand", name)
        saved = 1 - ours.kv_hbm_bytes / none.kv_hbm_bytes
        peer_ok = peer.tokens_per_s >= none.tokens_per_s * (1 - LIMIT)
        lines.append(
            f"| `{name}` | {step.compute_s * 1e3:.1f} ms | "
            f"{_gb(none.kv_hbm_bytes)}, {none.tokens_per_s:.2f} | "
            f"{ours.hot}, **{_gb(ours.kv_hbm_bytes)} (-{saved:.0%})**, "
            f"{ours.tokens_per_s:.2f} ({ours.tokens_per_s / none.tokens_per_s:.1%}), "
            f"{ours.hit_rate:.1%}, {ours.on_demand / ours.tokens:.2f}, "
            f"{format_bytes(int(ours.bytes_per_token))} | "
            + (
                f"{peer.hot}, {_gb(peer.kv_hbm_bytes)}, {peer.hit_rate:.1%}"
                if peer_ok
                else f"never (every block: {peer.tokens_per_s / none.tokens_per_s:.1%})"
            )
            + " | 61.2 → 45.0 GB (-26%) at 99% |"
        )
    return lines


def longest(step: TopkStep, name: str) -> list[str]:
    lines = [
        f"| length | blocks | `none`: HBM | ours (`{name}`): hot blocks, HBM, tokens/s of `none`'s | within 1% and 64 GB |",
        "| ---: | ---: | ---: | --- | --- |",
    ]
    hardware = load_hardware(name)
    for length in LENGTHS:
        blocks = -(-length // step.block)
        at = replace(step, blocks=blocks, kv_len=length)
        at = replace(at, fixed=blocks - len(at.candidate_blocks()))
        none = replay(at, _rankings(at), TOKENS, "none", 0, hardware, warmup=WARMUP)
        ours = _fewest(at, "plan", name)
        none_hbm = none.kv_hbm_bytes + at.other_hbm_bytes
        fits = ours.hbm_bytes <= CAPACITY and ours.tokens_per_s >= none.tokens_per_s * (
            1 - LIMIT
        )
        lines.append(
            f"| {length:,} | {blocks} | {_gb(none_hbm)} | {ours.hot}, "
            f"{_gb(ours.hbm_bytes)}, {ours.tokens_per_s / none.tokens_per_s:.1%} | "
            f"`none`: {'yes' if none_hbm <= CAPACITY else 'no'}; ours: "
            f"{'yes' if fits else 'no'} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[1])
    parser.add_argument("--write-docs", action="store_true")
    options = parser.parse_args()
    start = time.perf_counter()
    if not PROGRAM.exists():
        PROGRAM.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "hyperoffload.tools.hyperoffload_gen",
                *GEN,
                "-o",
                str(PROGRAM),
            ],
            check=True,
        )
    module = parse_mlir(make_context(), PROGRAM.read_text(), str(PROGRAM))
    steps = {name: topk_step(module, load_hardware(name)) for name in PRESETS}
    step = steps[PRESETS[0]]
    text = "\n".join(
        [
            "",
            f"Written by `bench/topk_generation.py` in {time.perf_counter() - start:.0f} s "
            f"(`hyperoffload-gen {' '.join(GEN)}`; {WARMUP} calls, then {TOKENS} "
            f"measured; a call with every block resident as priced for each "
            f"preset; a block is {format_bytes(step.block_bytes)} per layer, "
            f"{format_bytes(step.block_bytes * step.layers)} over the "
            f"{step.layers} layers; {step.fixed} fixed blocks per layer, "
            f"{step.blocks - step.fixed} candidates; K = {step.topk}).",
            "",
            *rows(steps),
            "",
            *longest(steps[PRESETS[1]], PRESETS[1]),
            "",
            *longest(step, PRESETS[0]),
            "",
        ]
    )
    print(text)
    if options.write_docs:
        write_between(DOCS, text, BEGIN, END)


if __name__ == "__main__":
    main()
