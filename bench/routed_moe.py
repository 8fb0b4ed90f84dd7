"""
The routed MoE decode rows, from the default suite's routed scenarios
(`deepseek-v3-routed-decode`, `mixtral-8x7b-routed-decode` in
`docs/benchmarks/results.json`), written where they are read:

- `docs/benchmarks/seeds-inference/routed-moe.json` (`bench/seed_inference.py`
  reads its `rows`): at half the routed experts' weights in HBM with
  zipf:1.0 routing, the tokens/s of ours, of the best peer (named) and of
  all-resident, and whether ours is within 5% of all-resident; beside them
  the all-resident token (grouped expert kernels), its launches and its
  bandwidth floor;
- docs/benchmarks.md between `<!-- routed-experts:begin/end -->`: the
  tokens/s of every policy at every budget and routing, and the figures
  of the step.

The routed row of the results table (`results_row`) is written with the
rest of that table by `bench/results_summary.py`, from the same results.

    .venv/bin/python bench/routed_moe.py --run --write-docs   # run both scenarios first
    .venv/bin/python bench/routed_moe.py --write-docs         # from results.json alone
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hyperoffload.model.hardware import load_hardware
from hyperoffload.support.markers import replace_between
from hyperoffload.support.outputs import Outputs
from hyperoffload.support.strict_json import strict_dumps

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "benchmarks"
DOCUMENT = ROOT / "docs" / "benchmarks.md"
SEEDS = RESULTS / "seeds-inference" / "routed-moe.json"
WORK = ROOT / "build" / "bench"
SCENARIOS = ("deepseek-v3-routed-decode", "mixtral-8x7b-routed-decode")
BEGIN = "<!-- routed-experts:begin -->"
END = "<!-- routed-experts:end -->"
ROW = '| routed MoE decode at half the experts\' weights in HBM, zipf:1.0 ("Routed experts") |'
"""How the results table's routed row starts."""
SEED_ROW = "MoE-Infinity: 2-20x over DeepSpeed-Inference, llama.cpp, Mixtral-offloading"
BUDGET = 0.5
TIE = 5e-4
"""Ours within this fraction of a peer is tied with it."""
ROUTING = "zipf:1.0"
PEERS = ("lru", "moe-infinity", "on-demand")
COLUMNS = ("ours", "lru", "moe-infinity")
NAMES = {"lru": "`lru` (Mixtral-offloading)", "moe-infinity": "`moe-infinity`"}

Json = dict[str, Any]


def scenarios(results: Json) -> list[Json]:
    """The routed scenarios of a suite's results, in `SCENARIOS` order; an error if one is missing."""
    found = {s["name"]: s for s in results["scenarios"]}
    missing = [name for name in SCENARIOS if name not in found]
    if missing:
        raise SystemExit(f"routed_moe: {', '.join(missing)} not in the results")
    return [found[name] for name in SCENARIOS]


def _model(scenario: Json) -> str:
    return str(scenario["title"]).split(" decode")[0]


def _at(routing: Json, budget: float) -> dict[str, float]:
    return {
        r["policy"]: r["tokens_per_s"]
        for r in routing["runs"]
        if abs(r["budget"] - budget) < 1e-9
    }


def seed_rows(scenario: Json) -> list[Json]:
    """The rows of `routed-moe.json`: zipf:1.0 at half the experts' weights."""
    rows: list[Json] = []
    limit = float(scenario["limit"])
    for preset in scenario["presets"]:
        for routing in preset["routings"]:
            if routing["routing"] != ROUTING:
                continue
            at = _at(routing, BUDGET)
            peers = {p: at[p] for p in PEERS if p in at}
            peer = max(peers, key=lambda p: peers[p])
            full = at["all-resident"]
            rows.append(
                {
                    "model": _model(scenario),
                    "scenario": scenario["name"],
                    "hardware": preset["hardware"],
                    "routing": ROUTING,
                    "budget": BUDGET,
                    "ours": at["ours"],
                    "peer": peer,
                    "peer_tokens_per_s": peers[peer],
                    "all_resident": full,
                    "within_5pct": at["ours"] >= (1 - limit) * full,
                    "token_s": preset["token_s"],
                    "launches": preset["launches"],
                    "bandwidth_floor_s": preset["bandwidth_floor_s"],
                }
            )
    return rows


def seeds_json(results: Json) -> Json:
    chosen = scenarios(results)
    return {
        "source": "docs/benchmarks/results.json (hyperoffload-bench --suite default "
        + " ".join(f"--only {name}" for name in SCENARIOS)
        + ")",
        "routing": ROUTING,
        "budget": BUDGET,
        "rows": [row for scenario in chosen for row in seed_rows(scenario)],
        "trained_routing": None,
        "trained_routing_note": "no routed scenario replays a trained router's "
        "trace: the recorded traces of these models come from random weights "
        "(bench/routing/README.md)",
    }


def _cells(routing: Json, budgets: list[float]) -> dict[str, list[str]]:
    """Each policy's tokens/s at each budget, the best of the non-references bold."""
    cells: dict[str, list[str]] = {p: [] for p in COLUMNS}
    for budget in budgets:
        at = _at(routing, budget)
        best = max(at[p] for p in COLUMNS)
        for policy in COLUMNS:
            text = f"{at[policy]:.2f}"
            cells[policy].append(f"**{text}**" if at[policy] == best else text)
    return cells


def section(results: Json) -> str:
    """The text between the markers: the table and the step's figures."""
    chosen = scenarios(results)
    budgets = sorted(
        {r["budget"] for r in chosen[0]["presets"][0]["routings"][0]["runs"]}
    )
    lines = [
        "Tokens/s at "
        + " / ".join(f"{b:.1%}".replace(".0%", "%") for b in budgets)
        + " of the routed experts' weights (all-resident: every expert in HBM):",
        "",
        "| model, routing | all-resident | ours | "
        + " | ".join(NAMES[p] for p in COLUMNS[1:])
        + " |",
        "| --- | --- | --- | --- | --- |",
    ]
    notes: list[str] = []
    for scenario in chosen:
        for preset in scenario["presets"]:
            for routing in preset["routings"]:
                at = _at(routing, budgets[0])
                cells = _cells(routing, budgets)
                lines.append(
                    f"| {_model(scenario)}, {routing['routing']} | "
                    f"{at['all-resident']:.1f} | "
                    + " | ".join(" / ".join(cells[p]) for p in COLUMNS)
                    + " |"
                )
            demand = _at(preset["routings"][0], budgets[0])["on-demand"]
            floor = preset["bandwidth_floor_s"]
            notes.append(
                f"- {_model(scenario)} on `{preset['hardware']}` "
                f"({preset['expert_weight_bytes'] / 1e9:.2f} GB of routed experts' "
                "weights): an all-resident "
                f"token takes {preset['token_s'] * 1e3:.2f} ms in "
                f"{preset['launches']:,} launches (one launch per expert: "
                f"{preset['per_expert_token_s'] * 1e3:.2f} ms, "
                f"{preset['per_expert_launches']:,} launches); it must read "
                f"{preset['read_bytes'] / 1e9:.2f} GB, {floor * 1e3:.2f} ms at the "
                f"datasheet HBM bandwidth ({preset['token_s'] / floor:.2f}x that "
                f"floor), and its launches take {preset['launch_floor_s'] * 1e3:.2f} "
                f"ms; `on-demand` (no cache) {demand:.2f} tokens/s at every budget."
            )
    for scenario in chosen:
        for preset in scenario["presets"]:
            notes.extend(
                _standing(scenario, routing, budgets) for routing in preset["routings"]
            )
            notes.append(_physics(scenario, preset))
    within = [
        f"{row['model']} ({row['ours'] / row['all_resident'] - 1:+.1%})"
        for scenario in chosen
        for row in seed_rows(scenario)
        if row["within_5pct"]
    ]
    notes.append(
        f"- Within 5% of all-resident at {BUDGET:.0%}, {ROUTING}: "
        + (", ".join(within) if within else "neither model")
        + "."
    )
    return "\n".join([*lines, "", *notes]) + "\n"


def _standing(scenario: Json, routing: Json, budgets: list[float]) -> str:
    """Where ours stands against the best peer at the budgets below every expert."""
    below = [b for b in budgets if b < 1.0]
    gaps: list[tuple[float, float, str]] = []  # (ours / best - 1, budget, peer)
    for budget in below:
        at = _at(routing, budget)
        peer = max(PEERS, key=lambda p: at[p])
        gaps.append((at["ours"] / at[peer] - 1, budget, peer))
    ahead = sum(1 for gap, _, _ in gaps if gap > -TIE)
    worst, best = min(gaps), max(gaps)
    return (
        f"- {_model(scenario)}, {routing['routing']}: ours against the best peer "
        f"at each budget below 100%, from {worst[0]:+.1%} (`{worst[2]}`, "
        f"{worst[1]:.1%}) to {best[0]:+.1%} (`{best[2]}`, {best[1]:.1%}); ahead or "
        f"tied at {ahead} of {len(below)}."
    ).replace(".0%)", "%)")


def _physics(scenario: Json, preset: Json) -> str:
    """Ours at half the experts' weights, zipf:1.0, against its two bounds."""
    hardware = load_hardware(preset["hardware"])
    link = hardware.links[hardware.offload_tier]
    routing = next(r for r in preset["routings"] if r["routing"] == ROUTING)
    run = next(
        r
        for r in routing["runs"]
        if r["policy"] == "ours" and abs(r["budget"] - BUDGET) < 1e-9
    )
    moved = run["bytes_moved_per_token"]
    link_s = moved / link.bandwidth_to_device
    token_s = 1 / run["tokens_per_s"]
    bound = max(link_s, preset["token_s"])
    return (
        f"- Physics, {_model(scenario)}: ours at {BUDGET:.0%}, {ROUTING}, moves "
        f"{moved / 1e9:.2f} GB a token ({link_s * 1e3:.1f} ms of link at "
        f"{link.bandwidth_to_device / 1e9:.1f} GB/s) and takes {token_s * 1e3:.1f} ms "
        f"against {preset['token_s'] * 1e3:.2f} ms resident: "
        + (
            "no faster than either bound."
            if token_s >= bound * (1 - 1e-9)
            else "FASTER THAN A BOUND (the model is wrong)."
        )
    )


def results_row(results: Json) -> str:
    """The routed row of the results table."""
    rows = [row for s in scenarios(results) for row in seed_rows(s)]
    ours = ", ".join(f"{r['model']} **{r['ours']:.2f}** tokens/s" for r in rows)
    peers = "; ".join(
        f"{r['model']}: `{r['peer']}` {r['peer_tokens_per_s']:.2f}" for r in rows
    )
    verdict = "; ".join(
        f"{r['model']}: all-resident {r['all_resident']:.2f}, "
        + ("within 5%" if r["within_5pct"] else "not within 5%")
        for r in rows
    )
    return f"{ROW} {SEED_ROW} | {ours} | {peers} | {verdict} |"


def replace_marked(document: str, text: str) -> str:
    """`document` with `text` as the routed-experts section."""
    return replace_between(document, f"\n{text}", BEGIN, END)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The routed MoE decode rows.")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--run", action="store_true", help="run both scenarios first")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    options = parser.parse_args(argv)
    if options.run:
        from hyperoffload.benchmark.suite import run_suite

        run_suite(
            "default", options.results, WORK, options.jobs, list(SCENARIOS), merge=True
        )
    results = json.loads((options.results / "results.json").read_text())
    seeds = seeds_json(results)
    text = section(results)
    print(text)
    print(strict_dumps(seeds, indent=1))
    if options.write_docs:
        document = replace_marked(DOCUMENT.read_text(), text)
        outputs = Outputs()
        outputs.put(SEEDS, strict_dumps(seeds, indent=1) + "\n")
        outputs.put(DOCUMENT, document)
        outputs.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
