"""
The seeds' inference claims at their own setting (DESIGN.md §1).

- `SEEDS_INFERENCE`: the suite `seeds-inference`, LLaMA-65B on one device
  (`LongestSequence` runs): the longest prompt of HBM only (`none`), the
  runtimes and ours with each one's tokens/s and peak, `none` at every
  length tried (what HBM only would need there: memory saved); the
  long-prefill cost (a prompt whose runtime-offload prefill lands near the
  seeds' 129.33 s on `ascend-910c`); the short-decode cost (one decode step
  at a 1,024-token cache, HBM only's length in the seeds' table).
- `TopkDecode`: the 123K decode with top-k block selection (LLaMA-2-7B
  shape, fp16, the seeds' 4096-token blocks), replayed over the rankings a
  trained model made (`hyperoffload.policies.generation_topk`): the least KV in
  HBM at 99% of `none`'s tokens/s for ours (the heat table, blocks fetched
  ahead) and the on-demand peer, and the longest cache at 64 GB within 1%.

```python
scenario = TopkDecode(presets=("ascend-910c",), lengths=(98_304,))
result = scenario.run(Path("build/bench"), Path("bench/topk/selections.json"), print)
result["presets"][0]["at_length"]["ours"]["kv_hbm_bytes"]
```
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hyperoffload.analysis.topk_cache import topk_step
from hyperoffload.benchmark.scenarios import LongestSequence
from hyperoffload.benchmark.workloads import Export, Log, export_program
from hyperoffload.ir.context import make_context
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.model.topk_step import TopkStep
from hyperoffload.policies.generation_topk import (
    TopkResult,
    least_hot,
    map_ranking,
    replay,
)
from hyperoffload.support.tiers import Tier
from hyperoffload.support.topk_blocks import topk_layout

SEED_LLAMA65B = (
    "max length 1,024 / 4,096 / 8,192; 125 / 89 / 132 tokens/s; memory saved "
    "0 / 38 / 52% (HBM only / runtime offload / HyperOffload)"
)
SEED_COST = (
    "long-sequence prefill 129.33 -> 99.41 s (-23%); short-sequence decode "
    "0.117 -> 0.146 s (+25%)"
)
PREFILL_COST_LENGTH = 86_016
"""The prompt of the long-prefill row: on `ascend-910c`, LLaMA-65B's
runtime-offload prefill takes 87.5 s at 65,536 tokens and 263.6 s at
131,072 (the default suite, 2026-12-02); with a linear term and a
quadratic (attention) term fitted to `none`, 86,016 (21 x 4096) is the
length whose runtime prefill lands nearest 129 s."""
SHORT_DECODE_KV = 1024
"""The short sequence of the decode-cost row: HBM only's longest length in
the seeds' table."""

_PREFILL = Export("llama-65b", "prefill", seq=1024, dtype="f16")

SEEDS_INFERENCE: tuple[LongestSequence, ...] = (
    LongestSequence(
        "llama-65b-seed-inference",
        "LLaMA-65B prefill (80 layers, fp16) on one device: the longest prompt "
        "of HBM only, the runtimes and ours, with tokens/s and what HBM only "
        "would need at each length",
        _PREFILL,
        "seq",
        (1024, 2048, 8192, 131_072),
        8192,
        ("ascend-910c", "h200-pcie5"),
        paper=SEED_LLAMA65B,
    ),
    LongestSequence(
        "llama-65b-seed-prefill-cost",
        f"LLaMA-65B prefill of {PREFILL_COST_LENGTH:,} tokens in 64 GB: the "
        "long-sequence prefill time of each policy",
        replace(_PREFILL, seq=PREFILL_COST_LENGTH),
        "seq",
        (PREFILL_COST_LENGTH,),
        PREFILL_COST_LENGTH,
        ("ascend-910c",),
        paper=SEED_COST,
    ),
    LongestSequence(
        "llama-65b-seed-decode-cost",
        f"LLaMA-65B decode at a {SHORT_DECODE_KV:,}-token KV cache (batch 1, "
        "fp16): the short-sequence decode latency of each policy",
        Export("llama-65b", "decode", kv_len=SHORT_DECODE_KV, dtype="f16"),
        "kv_len",
        (SHORT_DECODE_KV,),
        SHORT_DECODE_KV,
        ("ascend-910c", "h200-pcie5"),
        paper=SEED_COST,
        place_arguments=True,
    ),
)
"""The LLaMA-65B rows (`hyperoffload-bench --suite seeds-inference`)."""


@dataclass(frozen=True)
class TopkExport:
    """`hyperoffload-gen MODEL --mode decode --attention topk ...` (an `Exportable`)."""

    model: str = "llama2-7b"
    kv_len: int = 123_000
    dtype: str = "f16"
    kv_block: int = 4096
    topk: int = 4
    sinks: int = 4
    recent: int = 4096

    def argv(self) -> list[str]:
        return [
            self.model,
            "--mode",
            "decode",
            "--kv-len",
            str(self.kv_len),
            "--dtype",
            self.dtype,
            "--attention",
            "topk",
            "--kv-block",
            str(self.kv_block),
            "--topk",
            str(self.topk),
            "--sinks",
            str(self.sinks),
            "--recent",
            str(self.recent),
        ]

    def file_name(self) -> str:
        return "_".join(a.lstrip("-") for a in self.argv()) + ".mlir"

    @property
    def command(self) -> str:
        return "hyperoffload-gen " + " ".join(self.argv())


def rankings(step: TopkStep, recorded: dict[str, Any]) -> list[list[list[int]]]:
    """
    The recorded rankings (`bench/topk/selections.json`) mapped in
    proportion onto `step`'s candidate blocks, call by call.
    """
    block, sinks, recent, prompt = (
        int(recorded[k]) for k in ("block", "sinks", "recent", "prompt")
    )
    candidates = step.candidate_blocks()
    return [
        [
            map_ranking(
                ranks,
                topk_layout(block, sinks, recent, prompt + i).candidates,
                candidates,
            )
            for ranks in call
        ]
        for i, call in enumerate(recorded["steps"])
    ]


def _report(result: TopkResult, none: TopkResult) -> dict[str, Any]:
    return result.report() | {
        "of_none": result.tokens_per_s / none.tokens_per_s,
        "kv_saved": 1 - result.kv_hbm_bytes / none.kv_hbm_bytes,
    }


@dataclass(frozen=True)
class TopkDecode:
    """The seeds' 123K decode and longest cache with top-k block selection."""

    kv_len: int = 123_000
    presets: tuple[str, ...] = ("ascend-910c", "gh200-c2c")
    lengths: tuple[int, ...] = (65_536, 81_920, 90_112, 98_304, 106_496, 114_688)
    """Lengths of the longest-cache search below `kv_len` (itself included)."""
    capacity: str = "64GB"
    limit: float = 0.01
    tokens: int = 240
    warmup: int = 15
    """Calls before the measured ones: the hot set starts empty."""
    topk: int = 4
    kv_block: int = 4096

    def run(self, work: Path, selections: Path, log: Log) -> dict[str, Any]:
        recorded: dict[str, Any] = json.loads(selections.read_text())
        if int(recorded["topk"]) != self.topk:
            raise ValueError(
                f"{selections}: rankings recorded at K = {recorded['topk']}, "
                f"the replay selects K = {self.topk}"
            )
        spec = TopkExport(kv_len=self.kv_len, kv_block=self.kv_block, topk=self.topk)
        path, _ = export_program(spec, work, log)
        start = time.perf_counter()
        module = parse_mlir(make_context(), path.read_text(), str(path))
        parse_s = time.perf_counter() - start
        presets: list[dict[str, Any]] = []
        for name in self.presets:
            hardware = load_hardware(name)
            step = topk_step(module, hardware)
            log(f"{name}: one call {step.compute_s * 1e3:.1f} ms")
            presets.append(
                {
                    "hardware": name,
                    "remote_gb_per_s": _link_gb_per_s(name),
                    "step": _step_fields(step),
                    "at_length": self._at(step, recorded, name),
                    "longest": self._longest(step, recorded, name, log),
                }
            )
        return {
            "name": "llama2-7b-topk-seed-decode",
            "kind": "seed-topk-decode",
            "command": spec.command,
            "kv_len": self.kv_len,
            "topk": self.topk,
            "block": self.kv_block,
            "limit": self.limit,
            "tokens": self.tokens,
            "warmup": self.warmup,
            "capacity_bytes": load_hardware(
                self.presets[0], self.capacity
            ).hbm_capacity,
            "recorded": {
                k: recorded[k] for k in ("block", "sinks", "recent", "topk", "layers")
            },
            "parse_s": parse_s,
            "presets": presets,
        }

    def _policies(
        self, step: TopkStep, recorded: dict[str, Any], name: str
    ) -> dict[str, TopkResult]:
        hardware = load_hardware(name)
        ranks = rankings(step, recorded)
        none = replay(step, ranks, self.tokens, "none", 0, hardware, warmup=self.warmup)

        def fewest(policy: str, compressed: bool = False) -> TopkResult:
            return least_hot(
                step,
                ranks,
                self.tokens,
                hardware,
                self.limit,
                compressed,
                policy=policy,
                warmup=self.warmup,
            )

        return {
            "none": none,
            "ours": fewest("plan"),
            "ours-int8": fewest("plan", compressed=True),
            "on-demand": fewest("on-demand"),
        }

    def _at(
        self, step: TopkStep, recorded: dict[str, Any], name: str
    ) -> dict[str, Any]:
        runs = self._policies(step, recorded, name)
        none = runs["none"]
        return {policy: _report(r, none) for policy, r in runs.items()}

    def _longest(
        self, step: TopkStep, recorded: dict[str, Any], name: str, log: Log
    ) -> list[dict[str, Any]]:
        """
        Each length: the step's compute as priced at `kv_len` (the summaries'
        scoring grows with the length, by far the smallest term), its blocks
        and fixed blocks at that length.
        """
        capacity = load_hardware(name, self.capacity).hbm_capacity
        out: list[dict[str, Any]] = []
        for length in sorted({*self.lengths, self.kv_len}):
            blocks = -(-length // step.block)
            at = replace(step, blocks=blocks, kv_len=length)
            at = replace(at, fixed=blocks - len(at.candidate_blocks()))
            runs = self._policies(at, recorded, name)
            none, ours = runs["none"], runs["ours"]
            entry: dict[str, Any] = {"length": length, "blocks": blocks}
            for policy, r in runs.items():
                within = r.tokens_per_s >= none.tokens_per_s * (1 - self.limit)
                entry[policy] = _report(r, none) | {
                    "fits": r.hbm_bytes <= capacity and within
                }
            log(
                f"{name}: {length}: none {none.hbm_bytes / 1e9:.1f} GB, ours "
                f"{ours.hbm_bytes / 1e9:.1f} GB"
            )
            out.append(entry)
        return out


def _step_fields(step: TopkStep) -> dict[str, Any]:
    return {
        "compute_s": step.compute_s,
        "layers": step.layers,
        "block_bytes": step.block_bytes,
        "blocks": step.blocks,
        "fixed": step.fixed,
        "topk": step.topk,
        "other_hbm_bytes": step.other_hbm_bytes,
    }


def _link_gb_per_s(name: str) -> float:
    hardware = load_hardware(name)
    link = hardware.links.get(Tier.REMOTE) or next(iter(hardware.links.values()))
    return link.bandwidth_to_device / 1e9


def longest_fitting(entries: Sequence[dict[str, Any]], policy: str) -> int | None:
    """The longest length at which `policy` fits (None: none of those tried)."""
    fits = [e["length"] for e in entries if e[policy]["fits"]]
    return max(fits) if fits else None
