"""
A seed training scenario run in parts, one process each, and merged into
the seeds' results: for a step whose full run (every peer's search, every
limit, the sweep) takes longer than one sitting, each part is one of
`SeedTraining`'s own measurements, saved to its own file as it finishes.

    .venv/bin/python bench/seed_parts.py --only llama3-8b-seed-training \\
        --part fixed-ours --part runtimes -o build/seed-parts/a.json
    .venv/bin/python bench/seed_parts.py --only llama3-8b-seed-training \\
        --part peak:0.013 -o build/seed-parts/b.json
    .venv/bin/python bench/seed_parts.py --only llama3-8b-seed-training \\
        --merge build/seed-parts/a.json build/seed-parts/b.json
    .venv/bin/python bench/seed_claims.py

Parts: `fixed-ours` (ours planned at the scenario's capacity), `runtimes`
(each runtime peer at its fastest setting in that capacity), `peers` (the
compiled peers' searches: their least peak within each of the scenario's
limits, and each recomputation peer's fastest setting in the capacity), `peak:LIMIT`
(the LP bound within LIMIT, and ours' target search within it, written into
the IR), `bound:LIMIT` (the LP bound alone, in place of a `peak` part's,
measured again with the code of its run), `twin` (`none` on
the same step updating after the backward pass), `sweep-fixed:GBPS` (ours at
the capacity with the remote link at GBPS; at the preset's own bandwidth,
`fixed-ours` stands for it where no part ran it). A result merged from
parts none of which is `peers` says `peers_searched: false`, and the claims
table says so. `--merge` combines the part files
(each part's wall time under `ran`) into one scenario of
docs/benchmarks/seeds/results.json, in place of the one of that name, and
writes results.md again.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from hyperoffload.benchmark.markdown import suite_markdown
from hyperoffload.benchmark.peers import PolicySearch
from hyperoffload.benchmark.scenarios import Context
from hyperoffload.benchmark.seeds import (
    SeedTraining,
    recomputing_at,
    runtimes_at,
    search_peers,
)
from hyperoffload.benchmark.suite import merge_results
from hyperoffload.benchmark.suites import SEEDS
from hyperoffload.support.outputs import Outputs
from hyperoffload.support.strict_json import strict_dumps

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "benchmarks" / "seeds"
WORK = ROOT / "build" / "bench"


def _scenario(name: str) -> SeedTraining:
    found = [s for s in SEEDS if s.name == name and isinstance(s, SeedTraining)]
    if not found:
        raise SystemExit(f"seed_parts: no seed training scenario '{name}'")
    return found[0]


def run_parts(scenario: SeedTraining, parts: list[str], out: Path) -> None:
    """Measure `parts` of `scenario` into `out`, saved after each part."""
    started = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - started:7.0f} s] {message}", flush=True)

    ctx = Context(WORK, out.parent, log)
    step = scenario.load(ctx)
    workload, baseline, states = step.workload, step.baseline, step.states
    unlimited, none, capacity = baseline.hardware, baseline.none, step.capacity
    result: dict[str, Any] = scenario.figures(step) | {
        "limits": [],
        "rejected": [],
        "fixed": {},
        "sweep": [],
        "peers_searched": False,
        "ran": [],
    }
    search = PolicySearch(
        workload, baseline, max(scenario.limits), log, scenario.place_arguments
    )
    for part in parts:
        start = time.perf_counter()
        name, _, value = part.partition(":")
        if name == "fixed-ours":
            result["fixed"]["hyperoffload"] = scenario.ours_at_capacity(
                workload, unlimited, capacity, none, states
            )
        elif name == "runtimes":
            result["fixed"] |= runtimes_at(search, capacity)
        elif name == "peers":
            peers = search_peers(search, scenario.limits)
            result["peers"] = [{"limit": k, "peer": v} for k, v in peers.items()]
            result["fixed"] |= recomputing_at(search, capacity)
            result["peers_searched"] = True
        elif name == "bound":
            limit = float(value)
            bound = scenario.lp_bound(search, limit, ctx)
            result["bounds"] = [*result.get("bounds", []), {"limit": limit, **bound}]
        elif name == "peak":
            limit = float(value)
            bound = scenario.lp_bound(search, limit, ctx)
            ours = scenario.ours_at_limit(workload, baseline, limit, states, ctx)
            entry = {"limit": limit, **bound, "ours": ours, "peer": None}
            result["limits"].append(entry)
        elif name == "twin":
            result["none_updates_after"] = scenario.updates_after(
                unlimited, states, ctx
            )
        elif name == "sweep-fixed":
            gb = float(value)
            fixed = scenario.sweep_fixed(workload, baseline, gb, capacity, states)
            result["sweep"].append({"gb_per_s": gb, "fixed": fixed, "peak": {}})
        else:
            raise SystemExit(f"seed_parts: unknown part '{part}'")
        wall = time.perf_counter() - start
        result["ran"].append({"part": part, "wall_s": wall})
        log(f"{part}: {wall:.0f} s")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(strict_dumps(result, indent=1))


def combine(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """
    One scenario's result from its part files (the first's figures of the
    step). A part run by several files is the first's (a file measured again
    goes first): its figures, and its wall time alone; the point at the
    preset's own bandwidth, where no part ran it, is `fixed-ours` (the same
    plan on the same hardware), marked so.
    """
    whole = dict(parts[0])
    limits = _first_of(parts, "limits", "limit")
    sweep = _first_of(parts, "sweep", "gb_per_s")
    ours = next(
        (p["fixed"]["hyperoffload"] for p in parts if "hyperoffload" in p["fixed"]),
        None,
    )
    preset = whole["remote_gb_per_s"]
    if sweep and ours is not None and all(e["gb_per_s"] != preset for e in sweep):
        sweep.append(
            {"gb_per_s": preset, "fixed": ours, "peak": {}, "from": "fixed-ours"}
        )
    peers = {e["limit"]: e["peer"] for e in _first_of(parts, "peers", "limit")}
    whole.pop("peers", None)
    whole["peers_searched"] = any(p.get("peers_searched") for p in parts)
    bounds = {e["limit"]: e for e in _first_of(parts, "bounds", "limit")}
    whole.pop("bounds", None)
    whole["limits"] = [
        entry
        | bounds.get(entry["limit"], {})
        | {"peer": peers.get(entry["limit"], entry["peer"])}
        for entry in sorted(limits, key=lambda e: e["limit"])
    ]
    whole["sweep"] = sorted(sweep, key=lambda e: e["gb_per_s"])
    whole["ran"] = _first_of(parts, "ran", "part")
    whole["fixed"] = {k: v for p in reversed(parts) for k, v in p["fixed"].items()}
    for p in parts:
        if p.get("none_updates_after"):
            whole["none_updates_after"] = p["none_updates_after"]
        if p["command"] != whole["command"] or p["none"] != whole["none"]:
            raise SystemExit("seed_parts: the parts ran different programs")
    whole["wall_s"] = sum(r["wall_s"] for r in whole["ran"]) + whole["parse_s"]
    return whole


def _first_of(parts: list[dict[str, Any]], field: str, key: str) -> list[Any]:
    """The entries of `field` in `parts`, the first of each `key`."""
    kept: dict[Any, Any] = {}
    for entry in (e for p in parts for e in p.get(field, ())):
        kept.setdefault(entry[key], entry)
    return list(kept.values())


def merge(files: list[Path]) -> None:
    """The scenario combined from `files`, in place of its own in the results."""
    scenario = combine([json.loads(f.read_text()) for f in files])
    path = RESULTS / "results.json"
    previous = json.loads(path.read_text())
    run = {"scenarios": [scenario], "jobs": len(files), "wall_s": scenario["wall_s"]}
    summary = merge_results(previous, run)
    outputs = Outputs()
    outputs.put(path, strict_dumps(summary, indent=1))
    outputs.put(RESULTS / "results.md", suite_markdown(summary))
    outputs.write()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="A seed training scenario run in parts, merged into its results."
    )
    parser.add_argument("--only", required=True, help="the scenario's name")
    parser.add_argument("--part", action="append", default=[])
    parser.add_argument("-o", "--output", type=Path)
    parser.add_argument("--merge", nargs="+", type=Path)
    options = parser.parse_args(argv)
    scenario = _scenario(options.only)
    if options.merge:
        merge(options.merge)
        return 0
    if not options.part or options.output is None:
        parser.error("give --part (one or more) and -o, or --merge")
    run_parts(scenario, options.part, options.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
