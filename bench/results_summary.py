"""
The tables of docs/benchmarks.md read from the default suite's results
(`docs/benchmarks/results.json`), each written between its markers:

- `results-summary`: "Results beside the seeds' figures", one row per
  scenario, ours and the best peer beside the seeds' figure;
- `recomputation`: every recomputing policy and ours on the LLaMA-3-8B step;
- `compile-time`: parse, pipeline and target search of ours on each step;
- `arena`: ours and the peers in addresses (static layout, runtime allocator);
- `blocks`: generations over a KV cache in blocks, and the longest cache;
- `physics`: the steps' times against their FLOPs and bytes at the peaks
  (`bench/calibration.py`'s counts from the models' dimensions);
- `bounds`: where the link, and the state a step holds, stop every plan.

    .venv/bin/python bench/results_summary.py [--check] [--lp-bound NAME]

`--check` writes nothing and exits 1 where the page differs from the results.
`--lp-bound NAME` first computes the LP bound of a peak scenario whose
results predate it (`PeakAtSlowdown.lp_bounds`: the program the run cached
in `build/bench`, refused if its `none` peak is not the run's) and writes
it into results.json and results.md, dated.
The seeds' figures are quotes (DESIGN.md section 1), not runs; the routed
row is `bench/routed_moe.py`'s.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from calibration import Export, export_work, parameter_count
from routed_moe import results_row

from hyperoffload.benchmark.bound_words import lp_bound_words
from hyperoffload.benchmark.markdown import suite_markdown
from hyperoffload.benchmark.scenarios import Context, PeakAtSlowdown, lp_bound_fields
from hyperoffload.benchmark.suites import SUITES
from hyperoffload.frontend.configs import get_config
from hyperoffload.model.hardware import Link, load_hardware
from hyperoffload.support.markers import MarkerError, between, replace_between
from hyperoffload.support.outputs import Outputs, write_output
from hyperoffload.support.strict_json import strict_dumps
from hyperoffload.support.tiers import Tier
from hyperoffload.support.units import format_bytes, format_seconds

Json = dict[str, Any]
ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
RESULTS = ROOT / "docs" / "benchmarks" / "results.json"
WORK = ROOT / "build" / "bench"
SECTIONS = (
    "results-summary",
    "recomputation",
    "compile-time",
    "arena",
    "blocks",
    "physics",
    "bounds",
)
"""The marked sections: `<!-- NAME:begin -->` ... `<!-- NAME:end -->`."""
OURS = "hyperoffload"
NOT_PEERS = ("none", "hyperoffload", "plan")
SEEDS_LONGEST = 8192
"""The seeds' longest LLaMA-65B prompt with HyperOffload."""


MINUS = "\u2212"
"""The pages' minus sign."""
TIE = 5e-4
"""A peak reduction below this share of `none`'s is none."""


def _minus(text: str) -> str:
    return text.replace("-", MINUS)


def pct(fraction: float, digits: int = 1) -> str:
    """A signed percentage, with a typographic minus."""
    return _minus(f"{100 * fraction:+.{digits}f}%")


def reduction(row: Json) -> str:
    """A row's peak change against `none` (a reduction is negative)."""
    return pct(-row["peak_reduction"])


def slowdown(row: Json) -> str:
    return pct(row["slowdown"], 2)


def _preset(scenario: Json, hardware: str) -> Json:
    return next(p for p in scenario["presets"] if p["hardware"] == hardware)


def _rows(preset: Json) -> dict[str, Json]:
    return {r["policy"]: r for r in preset["rows"]}


def _best_peers(rows: dict[str, Json]) -> list[Json]:
    """The peers within the limit that lower the peak most (ties all)."""
    within = [
        r
        for name, r in rows.items()
        if name not in NOT_PEERS and not name.startswith(OURS) and r["within"]
    ]
    most = max((r["peak_reduction"] for r in within), default=0.0)
    return [r for r in within if most > TIE and r["peak_reduction"] == most]


def _peer_cell(rows: dict[str, Json], limit: float) -> str:
    best = _best_peers(rows)
    if not best:
        return f"none reduces the peak within {limit:.0%}"
    names = " and ".join(f"`{r['policy']}`" for r in best)
    slowdowns = " / ".join(slowdown(r) for r in best)
    return f"{names} {reduction(best[0])} at {slowdowns}"


def lp_bound(preset: Json, limit: float) -> str:
    """
    A peak row's LP bound that counts the link (`lp_bound_bytes`, computed by
    the benchmark at the scenario's limit), and the share of the saving it
    allows that ours achieves (ours within the limit only).
    """
    rows = _rows(preset)
    ours = rows[OURS]
    return lp_bound_words(
        preset.get("lp_bound_bytes"),
        preset.get("lp_bound"),
        rows["none"]["peak_hbm_bytes"],
        limit,
        ours["peak_hbm_bytes"] if ours["within"] else None,
        minus=MINUS,
    )


def _link_bytes(hardware: str, step_s: float, limit: float) -> float:
    """What the pool's link moves each way in a step stretched to the limit."""
    link = load_hardware(hardware).links[Tier.REMOTE]
    return link.bandwidth_to_device * step_s * (1 + limit)


def training_row(scenario: Json) -> str:
    """The LLaMA-3-8B training step: both levers, each alone, and every weight out."""
    hardware, limit = "ascend-910c", scenario["limit"]
    preset = _preset(scenario, hardware)
    rows = _rows(preset)
    none, ours = rows["none"], rows[OURS]
    offload, recompute = rows[f"{OURS}, offload only"], rows[f"{OURS}, recompute only"]
    in_tier = rows[f"{OURS}, arguments in tier"]
    link = _link_bytes(hardware, none["makespan_s"], limit)
    return (
        f"| LLaMA-3-8B training step, 32 layers, seq 2048, bf16, `{hardware}`, "
        f"within {limit:.0%} | peak {MINUS}42% at +1.3% | **{reduction(ours)} at "
        f"{slowdown(ours)}** ({format_bytes(none['peak_hbm_bytes'])} → "
        f"{format_bytes(ours['peak_hbm_bytes'])}: recomputation and offload "
        f"together, weights kept in HBM where it pays); offload alone "
        f"{reduction(offload)}, recomputation alone {reduction(recompute)}; with "
        f"every weight in the pool: {reduction(in_tier)} at {slowdown(in_tier)} | "
        f"{_peer_cell(rows, limit)} | not reached: the weights and gradients the "
        f"step returns bound what recomputation frees, and the link moves at most "
        f"{format_bytes(link)} each way within {limit:.0%} (below); "
        f"{lp_bound(preset, limit)} |"
    )


def _longest(preset: Json) -> dict[str, Json]:
    return {name: entry for name, entry in preset["longest"].items() if entry}


def _lengths(longest: dict[str, Json]) -> str:
    """`none`'s length and the offloading policies', grouped by length."""
    none = longest["none"]
    said = ["none: no length" if none["length"] is None else f"none {none['length']:,}"]
    by_length: dict[int | None, list[str]] = {}
    for name, entry in longest.items():
        if name != "none":
            label = "**ours" if name == OURS else f"`{name}`"
            by_length.setdefault(entry["length"], []).append(label)
    for length, names in by_length.items():
        fits = "no length" if length is None else f"{length:,}"
        joined = (
            ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
        )
        said.append(f"{joined} {fits}{'**' if '**ours' in names else ''}")
    return "; ".join(said)


def _runtime(longest: dict[str, Json]) -> Json:
    """The faster runtime at its longest length."""
    runtimes = [
        longest[n] | {"policy": n} for n in ("reactive-lru", "runtime-prefetch")
    ]
    return max(runtimes, key=lambda e: (e["length"] or 0, e["tokens_per_s"]))


def prefill_rows(scenario: Json, blocked: Json) -> list[str]:
    """LLaMA-65B's longest prompt on each preset, and with block-wise attention."""
    rows: list[str] = []
    for index, preset in enumerate(scenario["presets"]):
        longest = _longest(preset)
        ours, runtime = longest[OURS], _runtime(longest)
        label = (
            f"LLaMA-65B prefill, longest prompt, `{preset['hardware']}` "
            f"({format_bytes(preset['hbm_capacity_bytes'])})"
            if index == 0
            else f"the same on `{preset['hardware']}` "
            f"({format_bytes(preset['hbm_capacity_bytes'])})"
        )
        seeds = "1024 / 4096 / 8192 (HBM only / runtime / ours)" if index == 0 else ""
        verdict = ""
        if index == 0:
            arenas = " / ".join(
                format_bytes(longest[n]["arena_bytes"])
                for n in ("reactive-lru", "runtime-prefetch")
            )
            verdict = (
                f"{ours['length'] // SEEDS_LONGEST}x the seeds' length for ours: "
                "attention no longer holds s² scores in HBM; the runtimes fit only "
                f"in live bytes (their runs need {arenas} of addresses, ours "
                f'{format_bytes(ours["arena_bytes"])}; "Static memory layout")'
            )
        rows.append(
            f"| {label} | {seeds} | {_lengths(longest)}, ours at {slowdown(ours)} "
            f"over `none` ({ours['tokens_per_s']:.1f} tokens/s) | "
            f"`{runtime['policy']}` {slowdown(runtime)} "
            f"({runtime['tokens_per_s']:.1f} tokens/s) | {verdict} |"
        )
    for preset in blocked["presets"]:
        longest = _longest(preset)
        ours, runtime = longest[OURS], _runtime(longest)
        rows.append(
            "| the same with block-wise attention (each block's KV its own "
            f"result), `{preset['hardware']}` | | {_lengths(longest)}, ours at "
            f"{slowdown(ours)} ({ours['tokens_per_s']:.1f} tokens/s, "
            f"{format_bytes(ours['peak_hbm_bytes'])}) | `{runtime['policy']}` "
            f"{slowdown(runtime)} ({runtime['tokens_per_s']:.1f} tokens/s) | as above |"
        )
    return rows


def decode_row(scenario: Json) -> str:
    """Decode at a 123K-token cache on each preset."""
    limit = scenario["limit"]
    ours: list[str] = []
    peers: list[str] = []
    bounds: list[str] = []
    for preset in scenario["presets"]:
        rows = _rows(preset)
        none, plan = rows["none"], rows[OURS]
        ours.append(
            f"`{preset['hardware']}`: {format_bytes(none['peak_hbm_bytes'])} → "
            f"{format_bytes(plan['peak_hbm_bytes'])} ({reduction(plan)}) at "
            f"{slowdown(plan)}"
        )
        if _best_peers(rows):
            peers.append(f"`{preset['hardware']}`: {_peer_cell(rows, limit)}")
        bounds.append(f"`{preset['hardware']}`: {lp_bound(preset, limit)}")
    peer = "; ".join(peers) or f"none moves anything within {limit:.0%}"
    return (
        f"| decode at a 123K-token cache, LLaMA-2-7B shape, fp16, within "
        f"{limit:.0%} | 61.2 → 45.0 GB ({MINUS}26%) at 99% throughput | "
        f"{'; '.join(ours)} | {peer} | not reached: link-bound (below); "
        f"{'; '.join(bounds)} |"
    )


def longest_cache_row(results: dict[str, Json]) -> str:
    """The longest KV cache in a fixed HBM, one tensor per layer and in blocks."""
    tensor = _longest(results["long-context-max"]["presets"][0])
    full = _longest(results["longest-generation-full"]["presets"][0])
    int8 = _longest(results["longest-generation-int8"]["presets"][0])
    window = _longest(results["longest-generation-window"]["presets"][0])
    preset = results["longest-generation-full"]["presets"][0]
    lengths = {e["length"] for group in (tensor, full, int8) for e in group.values()}
    flexgen = full.get("flexgen")
    flex = "no length" if flexgen is None else f"{flexgen['length']:,}"
    ours = (
        f"{lengths.pop():,} for every policy, `none` included (one tensor per "
        "layer, and in blocks, plain or INT8)"
        if len(lengths) == 1
        else "; ".join(f"{n} {e['length']:,}" for n, e in full.items())
    )
    fits = {n: e["length"] for n, e in window.items() if e["length"] is not None}
    who = (
        "every policy but FlexGen's"
        if set(window) - set(fits) <= {"flexgen"} and "flexgen" not in fits
        else ", ".join("ours" if n == "plan" else f"`{n}`" for n in sorted(fits))
    )
    longest_window = max(fits.values())
    return (
        f"| longest KV cache at {format_bytes(preset['hbm_capacity_bytes'])} within "
        f"{results['longest-generation-full']['limit']:.0%}, same model | 71K → 123K "
        f"tokens (1.73x) | {ours} | FlexGen's schedule: {flex} | not reached: "
        f"link-bound (below); through a window and sinks {who} fits "
        f"{longest_window:,} (the longest tried), "
        "at the cost of changing the model |"
    )


def _kv(scenario: Json, hardware: str, policy: str) -> Json:
    return next(r for r in _preset(scenario, hardware)["rows"] if r["policy"] == policy)


def blocks_row(full: Json, window: Json) -> str:
    """Decode in blocks: the KV ours keeps in HBM, full attention and a window."""
    presets = [p["hardware"] for p in full["presets"]]

    def kept(scenario: Json) -> str:
        return ", ".join(
            f"{pct(_kv(scenario, h, 'plan')['kv_vs_none'] - 1)} (`{h}`)"
            for h in presets
        )

    runtime = [
        f"{pct(_kv(window, h, 'runtime-prefetch')['kv_vs_none'] - 1)} on the `{h}` window"
        for h in presets
        if _kv(window, h, "runtime-prefetch")["within"]
    ]
    misses = all(not _kv(full, h, "runtime-prefetch")["within"] for h in presets)
    peer = "; ".join(
        (["`runtime-prefetch` misses 1% on full attention"] if misses else []) + runtime
    )
    return (
        f"| decode in blocks at 123K, within {full['limit']:.0%} (full / window + "
        f'sinks, "Long-context decode in blocks") | 61.2 → 45.0 GB ({MINUS}26%) | '
        f"full: {kept(full)}; **window + sinks: {kept(window)}** | {peer} | the "
        "window changes the model's outputs; full attention is link-bound |"
    )


def layer_row(scenario: Json, label: str) -> str:
    """A training or prefill layer within the limit, beside the LP bound."""
    limit = scenario["limit"]
    preset = scenario["presets"][0]
    rows = _rows(preset)
    none, ours = rows["none"], rows[OURS]
    in_tier = rows.get(f"{OURS}, arguments in tier")
    pool = (
        f"; in the pool: {reduction(in_tier)} at {slowdown(in_tier)}"
        if in_tier and in_tier["peak_reduction"] > ours["peak_reduction"]
        else ""
    )
    bound = lp_bound(preset, limit)
    return (
        f"| {label} | - | {reduction(ours)} at {slowdown(ours)} "
        f"({format_bytes(none['peak_hbm_bytes'])} → "
        f"{format_bytes(ours['peak_hbm_bytes'])}){pool} | "
        f"{_peer_cell(rows, limit)} | {bound} |"
    )


RECOMPUTING = {
    "checkpoint-blocks": "`checkpoint-blocks` (PyTorch `torch.utils.checkpoint` "
    "per block; Megatron `--recompute-method block`)",
    "megatron-selective": "`megatron-selective` (`--recompute-modules`)",
    "memory-budget": "`memory-budget` (PyTorch `activation_memory_budget`)",
    "activation-pass": "`activation-pass` (PyTorch activation offloading)",
    f"{OURS}, recompute only": "ours, recompute only (`offload=false`)",
    f"{OURS}, offload only": "ours, offload only (`recompute=none`)",
    OURS: "**ours, both** (the default)",
}
"""The rows of the recomputation table, in order, and how each is named."""


def recomputation(scenario: Json) -> str:
    """Each recomputing policy and ours at its best setting on the training step."""
    hardware, limit = "ascend-910c", scenario["limit"]
    preset = _preset(scenario, hardware)
    rows = _rows(preset)
    none = rows["none"]
    lp = preset.get("lp_bound_bytes")
    lines = [
        f"The step of the first row on `{hardware}` within {limit:.0%} of `none` "
        f"({format_bytes(none['peak_hbm_bytes'])}, "
        f"{format_seconds(none['makespan_s'])}), from the run above; "
        f"{lp_bound(preset, limit)} (the last column: each row's saving as a "
        "share of that one, rows within the limit):",
        "",
        f"| policy | best setting within {limit:.0%} | peak | vs none | slowdown | moved "
        "| of the possible saving |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for policy, label in RECOMPUTING.items():
        row = rows[policy]
        peak, change = format_bytes(row["peak_hbm_bytes"]), reduction(row)
        if policy == OURS:
            peak, change = f"**{peak}**", f"**{change}**"
        moved = format_bytes(row["bytes_moved"]) if row["bytes_moved"] else "0"
        within = "" if row["within"] else " (not within)"
        saving = none["peak_hbm_bytes"] - (lp or 0)
        share = (
            f"{(none['peak_hbm_bytes'] - row['peak_hbm_bytes']) / saving:.1%}"
            if lp is not None and row["within"] and saving > 0
            else "-"
        )
        lines.append(
            f"| {label} | {row['setting']}{within} | {peak} | {change} | "
            f"{slowdown(row)} | {moved} | {share} |"
        )
    return "\n".join(lines)


TIMED = {
    "llama3-8b-train": "LLaMA-3-8B train, 32 layers",
    "deepseek-v3-moe-layer": "DeepSeek-V3 MoE layer",
    "long-context-decode": "LLaMA-2-7B decode, 123K",
    "gpt3-175b-layer-train": "GPT-3 175B layer",
}
"""The steps of the compile-time table, and how each is named."""


def compile_time(found: dict[str, Json]) -> str:
    """Ours on each step: its parse, the pipeline at the target, the target search."""
    lines = [
        "| program | preset | ops | parse | pipeline at the target | target search |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, label in TIMED.items():
        scenario = found[name]
        for preset in scenario["presets"]:
            ours = _rows(preset)[OURS]
            lines.append(
                f"| {label} | `{preset['hardware']}` | {scenario['ops']:,} | "
                f"{ours['parse_s']:.1f} s | {ours['passes_s']:.1f} s | "
                f"{ours['target_search_s']:.1f} s |"
            )
    return "\n".join(lines)


def _arena(row: Json, peak: bool = False) -> str:
    """A row's arena and fragmentation, after its live peak if `peak`."""
    arena = f"{format_bytes(row['arena_bytes'])} ({pct(row['fragmentation'], 2)})"
    return f"{format_bytes(row['peak_hbm_bytes'])} → {arena}" if peak else arena


def _arena_rows(label: str, preset: Json, ours_policy: str) -> str:
    """Ours and the peers that lower the peak within the limit, in addresses."""
    rows = _rows(preset)
    ours = rows[ours_policy]
    peers = [rows["none"]] + [
        r
        for n, r in rows.items()
        if n not in NOT_PEERS
        and not n.startswith(OURS)
        and r["within"]
        and r["peak_reduction"] > TIE
    ]
    peer_cell = "; ".join(f"`{r['policy']}` {_arena(r)}" for r in peers)
    if ours_policy != OURS:
        peer_cell = ""
    return (
        f"| {label} | {_arena(ours, peak=True)} | "
        f"{format_bytes(ours['dynamic_arena_bytes'])} | {peer_cell} |"
    )


def arena(found: dict[str, Json]) -> str:
    """Ours and the peers in addresses: the static layout against a runtime allocator."""
    lines = [
        "| scenario | ours: peak → arena (frag.) | ours under a runtime allocator "
        "| peers (frag.) |",
        "| --- | --- | --- | --- |",
    ]
    training = _preset(found["llama3-8b-train"], "ascend-910c")
    lines.append(_arena_rows("LLaMA-3-8B step", training, OURS))
    lines.append(
        _arena_rows("the same, offload only", training, f"{OURS}, offload only")
    )
    for name, label in (
        ("deepseek-v3-moe-layer", "DeepSeek-V3 MoE layer"),
        ("long-context-decode", "decode at 123K"),
        ("gpt3-175b-layer-train", "GPT-3 175B layer"),
    ):
        for preset in found[name]["presets"]:
            lines.append(_arena_rows(f"{label} (`{preset['hardware']}`)", preset, OURS))
    for preset in found["llama-65b-inference"]["presets"]:
        longest = _longest(preset)
        ours = longest[OURS]
        runtimes = "; ".join(
            f"`{n}` {_arena(longest[n], peak=True)}"
            for n in ("reactive-lru", "runtime-prefetch")
            if longest[n]["length"] == ours["length"]
        )
        lines.append(
            f"| LLaMA-65B prefill at {ours['length']:,} tokens, "
            f"{format_bytes(preset['hbm_capacity_bytes'])} (`{preset['hardware']}`) "
            f"| {_arena(ours, peak=True)} | | {runtimes} |"
        )
    return "\n".join(lines)


GENERATIONS = {
    "long-context-generation-full": "full attention, 16384-token blocks",
    "long-context-generation-int8": "full + INT8 transfers",
    "long-context-generation-window": "4096-token window + 4 sinks, 1024-token blocks",
}
"""The generation scenarios of the blocks table, and how each is named."""
LONGEST = {
    "longest-generation-full": "full attention",
    "longest-generation-int8": "INT8 transfers",
    "longest-generation-window": "the window",
}
"""The longest-cache scenarios, and how each is named."""


def _generation_peer(rows: list[Json], limit: float) -> str:
    """The peer keeping the most of `none`'s tokens/s, and its KV."""
    peers = [r for r in rows if r["policy"] not in NOT_PEERS]
    best = max(peers, key=lambda r: r["throughput_vs_none"])
    kv, speed = (
        format_bytes(best["kv_peak_bytes"]),
        pct(best["throughput_vs_none"] - 1, 2),
    )
    if best["within"]:
        return f"`{best['policy']}` {kv} ({pct(best['kv_vs_none'] - 1)}) at {speed}"
    return f"`{best['policy']}` misses {limit:.0%} ({speed} at {kv})"


def blocks(found: dict[str, Json]) -> str:
    """Generations over a cache in blocks: the KV each policy keeps in HBM."""
    lines = [
        "| variant | preset | `none` KV | ours: KV (vs none), tokens/s | best peer | seeds |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    seeds = f"61.2 → 45.0 GB ({MINUS}26%)"
    for name, label in GENERATIONS.items():
        scenario = found[name]
        for index, preset in enumerate(scenario["presets"]):
            rows = {r["policy"]: r for r in preset["rows"]}
            none, plan = rows["none"], rows["plan"]
            ours = (
                f"{format_bytes(plan['kv_peak_bytes'])} ({pct(plan['kv_vs_none'] - 1)}), "
                f"{pct(plan['throughput_vs_none'] - 1, 2)}"
            )
            lines.append(
                f"| {label if index == 0 else 'the same'} | `{preset['hardware']}` | "
                f"{format_bytes(none['kv_peak_bytes'])} | {ours} | "
                f"{_generation_peer(preset['rows'], scenario['limit'])} | {seeds} |"
            )
            seeds = ""
    said: list[str] = []
    for name, label in LONGEST.items():
        scenario = found[name]
        for preset in scenario["presets"]:
            fits = {n: e for n, e in preset["longest"].items() if e}
            by_length: dict[int, list[str]] = {}
            for policy, entry in fits.items():
                by_length.setdefault(entry["length"], []).append(
                    "ours" if policy == "plan" else f"`{policy}`"
                )
            left = sorted(set(preset["longest"]) - set(fits))
            lengths = "; ".join(
                f"{length:,} for {', '.join(names)}"
                for length, names in sorted(by_length.items())
            )
            none = " and ".join(f"`{n}`" for n in left)
            said.append(
                f"{label} on `{preset['hardware']}` in "
                f"{format_bytes(preset['hbm_capacity_bytes'])}: {lengths}"
                + (f" ({none} fits none)" if left else "")
                + f", ours with {format_bytes(fits['plan']['kv_peak_bytes'])} of KV"
            )
    full = found["long-context-generation-full"]
    bound: list[str] = []
    flexgen: list[str] = []
    for preset in full["presets"]:
        rows = {r["policy"]: r for r in preset["rows"]}
        call = 1 / rows["none"]["tokens_per_s"]
        bandwidth = _link(preset["hardware"]).bandwidth_to_device
        saved = rows["none"]["kv_peak_bytes"] - rows["plan"]["kv_peak_bytes"]
        bound.append(
            f"on `{preset['hardware']}` a call takes {format_seconds(call)} and the "
            f"link moves {_gbps(bandwidth)} x {format_seconds(call)} = "
            f"{format_bytes(bandwidth * call)}, and ours saves {format_bytes(saved)}"
        )
        flexgen.append(f"{rows['flexgen']['tokens_per_s']:.2f}")
    physics = (
        "- **Physics.** Full attention reads every block every call, so the KV a "
        "plan can keep out of HBM is bounded by what the link moves in one call: "
        f"{'; '.join(bound)}. The seeds' {MINUS}26% at 99% is out of reach of full "
        "attention on either link. FlexGen's schedule (every block streamed) is "
        f"link-bound: {' and '.join(flexgen)} tokens/s."
    )
    return "\n".join(
        [
            *lines,
            "",
            f"Longest cache within 1% of `none`'s tokens/s: {'; '.join(said)}.",
            "",
            physics,
            _longest_bound(found["longest-generation-full"]),
            _int8_streams(full, found["long-context-generation-int8"]),
        ]
    )


def _longest_bound(scenario: Json) -> str:
    """Why `none`'s longest cache is where ours stops too: the next length's block."""
    preset = scenario["presets"][0]
    fits = preset["longest"]["none"]
    probes = sorted(
        (p for p in preset["probes"] if p["policy"] == "none"),
        key=lambda p: p["length"],
    )
    after = next(p for p in probes if p["length"] > fits["length"])
    capacity = preset["hbm_capacity_bytes"]
    over = after["peak_hbm_bytes"] - capacity
    call = 1 / after["tokens_per_s"]
    link = _link(preset["hardware"]).bandwidth_to_device
    return (
        f"- **The longest cache** is bounded the same way. `none` fits "
        f"{fits['length']:,} positions ({format_bytes(fits['peak_hbm_bytes'])}, "
        f"{format_bytes(fits['kv_peak_bytes'])} of it KV) and not "
        f"{after['length']:,}: there the first token opens a new block of keys and "
        f"values for every layer at once, and the step needs "
        f"{format_bytes(after['peak_hbm_bytes'])}. Keeping {format_bytes(over)} out "
        "of HBM means streaming it every call, "
        f"{over / (link * call):.1f} times what the link moves in one "
        f"({format_bytes(link * call)} in a {format_seconds(call)} call); lengths "
        f"between {fits['length']:,} and {after['length']:,} are not on the grid."
    )


def _int8_streams(plain: Json, int8: Json) -> str:
    """How many blocks a token streams within the limit, plain and INT8."""
    hardware = plain["presets"][0]["hardware"]

    def ours(scenario: Json) -> Json:
        preset = _preset(scenario, hardware)
        return next(r for r in preset["rows"] if r["policy"] == "plan")

    compressed, full = ours(int8), ours(plain)
    return (
        "- **INT8 costs more than it saves here.** Ours compresses only the "
        "blocks it streams (a block kept wherever it is read moves as it is, so "
        "keeping the whole cache costs no codec). Each streamed block's "
        "(de)quantisation is an HBM-roofline kernel on the compute stream "
        "(`hyperoffload.model.compression`), so the "
        f"{int8['limit']:.0%} budget runs out after "
        f"{compressed['blocks_moved_per_token']:.0f} streamed blocks "
        f"({format_bytes(compressed['bytes_moved_per_token'])} a token on "
        f"`{hardware}`), where plain transfers stream "
        f"{full['blocks_moved_per_token']:.0f} "
        f"({format_bytes(full['bytes_moved_per_token'])})."
    )


def _link(hardware: str) -> Link:
    """The link to the tier a preset offloads to (the pool, or host memory)."""
    model = load_hardware(hardware)
    return model.links[model.offload_tier]


def _gbps(bandwidth: float) -> str:
    return f"{bandwidth / 1e9:g} GB/s"


def physics(found: dict[str, Json]) -> str:
    """Each step's time against its FLOPs at the peak and its bytes at the HBM rate."""
    hardware = "ascend-910c"
    peak = load_hardware(hardware).peak("bf16")
    train = _rows(_preset(found["llama3-8b-train"], hardware))["none"]
    flops = export_work(Export("llama3-8b", "train", seq=2048)).flops
    decode = _rows(_preset(found["long-context-decode"], hardware))["none"]
    read = export_work(Export("llama2-7b", "decode", kv_len=123000, dtype="f16")).bytes
    hbm = load_hardware(hardware).hbm_bandwidth
    said = [
        f"Sanity checks against physics: the LLaMA-3-8B step does {flops:.3g} "
        "FLOPs (3x its forward pass: every matmul and causal attention, "
        f"`bench/calibration.py`'s count) in {format_seconds(train['makespan_s'])}, "
        f"{flops / train['makespan_s'] / peak:.0%} of `{hardware}`'s "
        f"{peak / 1e12:g} TFLOPS bf16 peak; the FLOP bound alone is "
        f"{format_seconds(flops / peak)}. The 123K decode step reads at least "
        f"{format_bytes(read)} (every weight and the cache) in "
        f"{format_seconds(decode['makespan_s'])}, "
        f"{read / decode['makespan_s'] / 1e12:.2f} TB/s, "
        f"{read / decode['makespan_s'] / hbm:.0%} of {hbm / 1e12:g} TB/s."
    ]
    config = get_config("llama-65b")
    tokens = 131072
    prefill = export_work(Export("llama-65b", "prefill", seq=tokens, dtype="f16"))
    kv = 2 * config.n_layers * config.n_kv_heads * config.head_dim * 2 * tokens
    weights = 2 * parameter_count(config)
    times: list[str] = []
    links: list[str] = []
    for preset in found["llama-65b-inference"]["presets"]:
        name = preset["hardware"]
        ours = preset["longest"][OURS]
        if ours is None or ours["length"] != tokens:
            continue
        bound = prefill.flops / load_hardware(name).peak("bf16")
        times.append(
            f"{format_seconds(ours['makespan_s'])} on `{name}` is "
            f"{bound / ours['makespan_s']:.0%} of peak (bound {format_seconds(bound)})"
        )
        link = _link(name).bandwidth_to_device
        links.append(
            f"{format_seconds(kv / _link(name).bandwidth_from_device)} and "
            f"{format_seconds(weights / link)} over `{name}`'s {_gbps(link)}"
        )
    said.append(
        f"The {tokens:,}-token LLaMA-65B prefill does {prefill.flops:.3g} FLOPs "
        "(causal attention; the interpreter charges the full masked square): "
        f"{', '.join(times)}; the KV cache it writes back "
        f"({format_bytes(kv)}) and the weights it fetches ({format_bytes(weights)}) "
        f"take {'; '.join(links)}, so they hide in the step."
    )
    return " ".join(said)


SEEDS_CUT = 0.42
"""The seeds' peak reduction on the LLaMA-8B step."""


def _seeds_reach(preset: Json, limit: float) -> str:
    """`M_LB`, the LP bound, and whether either rules the seeds' reduction out."""
    m_lb, lp = preset["bound_peak_bytes"], preset.get("lp_bound_bytes")
    none = _rows(preset)["none"]["peak_hbm_bytes"]
    said = (
        f"`M_LB` ({format_bytes(m_lb)}) ignores that all of these transfers "
        f"share one link; {lp_bound(preset, limit)}."
    )
    if lp is not None and lp <= none * (1 - SEEDS_CUT):
        return (
            f"{said} Counting the link, the LP still allows "
            f"{pct(lp / none - 1)} (it may recompute any share of a value and "
            "let an argument go after its last use), so no bound here rules the "
            f"seeds' {MINUS}{SEEDS_CUT:.0%} out: the plans found stop short of it."
        )
    return (
        f"{said} The seeds' {MINUS}{SEEDS_CUT:.0%} at +1.3% needs a step several "
        "times longer than a realistic one at this bandwidth, or a faster link."
    )


def bounds(found: dict[str, Json]) -> str:
    """Where the link, and the state a step holds, stop every plan."""
    hardware = "ascend-910c"
    scenario = found["llama3-8b-train"]
    limit, preset = scenario["limit"], _preset(scenario, "ascend-910c")
    rows = _rows(preset)
    none, offload = rows["none"], rows[f"{OURS}, offload only"]
    in_tier, activations = rows[f"{OURS}, arguments in tier"], rows["activation-pass"]
    link = _link(hardware).bandwidth_to_device
    budget = link * none["makespan_s"] * (1 + limit)
    params = parameter_count(get_config("llama3-8b"))
    floor = min(
        rows[p]["peak_hbm_bytes"]
        for p in ("checkpoint-blocks", "megatron-selective", "memory-budget")
    )
    training = (
        f"- **The link bound (training).** Within +{limit:.0%}, the {_gbps(link)} "
        f"link moves at most {_gbps(link)} x {format_seconds(none['makespan_s'])} x "
        f"{1 + limit:g} = {format_bytes(budget)} each way per step. Fetching the "
        "weights for the forward and again for the backward is what `hyperoffload, "
        f"arguments in tier` does ({format_bytes(in_tier['bytes_moved'])} moved, "
        f"{slowdown(in_tier)}). Keeping them resident leaves the link to "
        "activations: ours with offload alone moves "
        f"{format_bytes(offload['bytes_moved'])} and saves "
        f"{format_bytes(none['peak_hbm_bytes'] - offload['peak_hbm_bytes'])} "
        f"({reduction(offload)}), `activation-pass` "
        f"{format_bytes(none['peak_hbm_bytes'] - activations['peak_hbm_bytes'])}. "
        f"{_seeds_reach(preset, limit)} "
        "Recomputation does not need the link, but it cannot go below the state "
        f"the step must hold: the {params / 1e9:.2f} B parameters and their "
        f"gradients (returned by the step) are 2 x {format_bytes(2 * params)} = "
        f"{format_bytes(4 * params)} in bf16 at the end of the backward, which is "
        f"where the recomputing peers stop ({format_bytes(floor)} at best, "
        '"Recomputation beside offload" below). Ours goes under it only by moving '
        "weights over the link too."
    )
    decode = found["long-context-decode"]
    said: list[str] = []
    for preset in decode["presets"]:
        rows = _rows(preset)
        none, ours = rows["none"], rows[OURS]
        bandwidth = _link(preset["hardware"]).bandwidth_to_device
        step = none["makespan_s"] * (1 + decode["limit"])
        said.append(
            f"on `{preset['hardware']}` {_gbps(bandwidth)} x "
            f"{format_seconds(none['makespan_s'])} x {1 + decode['limit']:g} = "
            f"{format_bytes(bandwidth * step)}, and ours saves "
            f"{format_bytes(none['peak_hbm_bytes'] - ours['peak_hbm_bytes'])} "
            f"({format_bytes(ours['bytes_moved'])} moved)"
        )
    ascend = _rows(_preset(decode, hardware))["none"]
    seeds_saving = 16.2e9
    needed = seeds_saving / (ascend["makespan_s"] * (1 + decode["limit"]))
    config = get_config("llama2-7b")
    length = 98304
    layer_kv = 2 * config.n_kv_heads * config.head_dim * 2 * length
    decoding = (
        "- **The link bound (decode).** A decode step reads every weight and "
        "every cached token once; whatever is out of HBM must cross the link "
        f"within the step to cost nothing: {'; '.join(said)}. The seeds' "
        f"{MINUS}16.2 GB in this step would need about {needed / 1e9:.0f} GB/s "
        f"on `{hardware}`. For the longest cache the same bound holds with "
        f"per-layer blocks: at {length:,} tokens one layer's K and V are "
        f"{format_bytes(layer_kv)}, {format_seconds(layer_kv / _link(hardware).bandwidth_to_device)} "
        f"of `{hardware}`'s link against a {format_seconds(ascend['makespan_s'])} "
        "step at 123K, so a block is out of HBM for too short a time to lower "
        "the peak; windows inside a layer's cache are the way past it."
    )
    gpt = found["gpt3-175b-layer-train"]
    preset = gpt["presets"][0]
    rows = _rows(preset)
    none, ours = rows["none"], rows[OURS]
    bandwidth = _link(preset["hardware"]).bandwidth_to_device
    recomputing = sorted(
        {
            format_bytes(rows[p]["peak_hbm_bytes"])
            for p in ("checkpoint-blocks", "megatron-selective", "memory-budget")
        }
    )
    layer = (
        f"- **GPT-3 175B layer.** `M_LB` allows {format_bytes(preset['bound_peak_bytes'])} "
        f"({pct(preset['bound_peak_bytes'] / none['peak_hbm_bytes'] - 1)}) and a "
        f"{format_seconds(none['makespan_s'])} step moves "
        f"{format_bytes(bandwidth * none['makespan_s'] * (1 + gpt['limit']))} each way "
        f"within {gpt['limit']:.0%}; ours reaches {format_bytes(ours['peak_hbm_bytes'])} "
        f"({reduction(ours)}); {lp_bound(preset, gpt['limit'])}. Recomputation "
        "does not help: the step peaks at "
        "its return, where the gradients it returns and the weights are all live, "
        "and no activation is; the recomputing peers (`checkpoint-blocks`, "
        "`megatron-selective`, `memory-budget`) stay at "
        f"{' / '.join(recomputing)}."
    )
    return "\n".join([training, decoding, layer])


HEADER = (
    "| scenario | seeds' figure | ours (this run) | best peer (this run) | verdict |\n"
    "| --- | --- | --- | --- | --- |"
)


def summary(results: Json) -> str:
    """The results-summary table, from `results`."""
    found = _found(results)
    rows: list[Callable[[], str | list[str]]] = [
        lambda: training_row(found["llama3-8b-train"]),
        lambda: prefill_rows(
            found["llama-65b-inference"], found["llama-65b-inference-blocked"]
        ),
        lambda: decode_row(found["long-context-decode"]),
        lambda: longest_cache_row(found),
        lambda: blocks_row(
            found["long-context-generation-full"],
            found["long-context-generation-window"],
        ),
        lambda: results_row(results),
        lambda: layer_row(
            found["gpt3-175b-layer-train"],
            "GPT-3 175B training step, one layer, seq 2048, bf16",
        ),
        lambda: layer_row(
            found["deepseek-v3-moe-layer"],
            "DeepSeek-V3 prefill, one MoE layer (256 experts, top-8), seq 2048, bf16",
        ),
    ]
    lines = [_runs(results), "", HEADER]
    for row in rows:
        made = row()
        lines += made if isinstance(made, list) else [made]
    return "\n".join(lines)


def _processes(jobs: int) -> str:
    return "one process" if jobs == 1 else f"{jobs} processes"


def _runs(results: Json) -> str:
    """The suite's run and the reruns merged into it, as `results.json` records them."""
    merged = "; ".join(
        f"{', '.join(f'`{n}`' for n in m['scenarios'])} on {m['date']} "
        f"({m['wall_s'] / 60:.1f} min, {_processes(m['jobs'])})"
        for m in results.get("merged", [])
    )
    return (
        f"The suite `{results['suite']}` ran in {results['wall_s'] / 60:.1f} min "
        f"({_processes(results['jobs'])})"
        + (f"; merged in since, as recorded: {merged}" if merged else "")
        + "."
    )


def _found(results: Json) -> dict[str, Json]:
    return {s["name"]: s for s in results["scenarios"] if "error" not in s}


def sections(results: Json) -> dict[str, str]:
    """The text between each section's markers, from `results`."""
    found = _found(results)
    made = {
        "results-summary": summary(results),
        "recomputation": recomputation(found["llama3-8b-train"]),
        "compile-time": compile_time(found),
        "arena": arena(found),
        "blocks": blocks(found),
        "physics": physics(found),
        "bounds": bounds(found),
    }
    return {name: f"\n{text}\n" for name, text in made.items()}


class StaleProgram(Exception):
    """The program cached for a scenario is not the one its results ran."""


def add_lp_bounds(results: Json, name: str, work: Path = WORK) -> None:
    """
    The LP bound of each preset of peak scenario `name` into `results`, where
    the run predates it: computed on the program the run cached, refused
    (`StaleProgram`) where that program's `none` peak is not the run's; the
    share of the possible saving read against it, and the date it was added.
    """
    scenario = next(s for s in SUITES[results["suite"]] if s.name == name)
    assert isinstance(scenario, PeakAtSlowdown), f"{name}: not a peak scenario"
    found = _found(results)[name]
    ctx = Context(work=work, out=work, log=lambda line: print(f"{name}: {line}"))
    for hardware, none_peak, link in scenario.lp_bounds(ctx):
        preset = _preset(found, hardware)
        rows = _rows(preset)
        ran = rows["none"]["peak_hbm_bytes"]
        if none_peak != ran:
            raise StaleProgram(
                f"{name} on {hardware}: the cached program's none peaks at "
                f"{format_bytes(none_peak)}, the run's at {format_bytes(ran)}"
            )
        preset.update(lp_bound_fields(link))
        preset["lp_bound"]["added"] = datetime.date.today().isoformat()
        saving = ran - link.bytes
        achieved = ran - rows[OURS]["peak_hbm_bytes"]
        preset["fraction_of_possible_saving"] = (
            achieved / saving if saving > 0 else None
        )
        print(
            f"{name} on {hardware}: {lp_bound_words(link.bytes, preset['lp_bound'], ran, found['limit'])}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").strip().splitlines()[0]
    )
    parser.add_argument("--check", action="store_true", help="compare only")
    parser.add_argument(
        "--lp-bound",
        action="append",
        default=[],
        metavar="NAME",
        help="first add the LP bound to peak scenario NAME's results (slow)",
    )
    options = parser.parse_args(argv)
    results = json.loads(RESULTS.read_text())
    if options.lp_bound and not options.check:
        try:
            for name in options.lp_bound:
                add_lp_bounds(results, name)
        except StaleProgram as err:
            print(f"bench/results_summary.py: error: {err}", file=sys.stderr)
            return 1
        outputs = Outputs()
        outputs.put(RESULTS, strict_dumps(results, indent=1))
        outputs.put(RESULTS.parent / "results.md", suite_markdown(results))
        outputs.write()
    made = sections(results)
    page = written = DOC.read_text()
    stale: list[str] = []
    for name, text in made.items():
        begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
        try:
            if between(written, begin, end) != text:
                stale.append(name)
                written = replace_between(written, text, begin, end)
        except MarkerError as err:
            print(f"bench/results_summary.py: error: {DOC}: {err}", file=sys.stderr)
            return 1
    if options.check:
        for name in stale:
            print(f"{DOC}: {name} is stale: run bench/results_summary.py")
        return 1 if stale else 0
    if written != page:
        write_output(DOC, written)
    return 0


if __name__ == "__main__":
    sys.exit(main())
