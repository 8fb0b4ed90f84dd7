"""
The exact layout search on MiniMalloc's eleven challenging instances
(google/minimalloc's `benchmarks/challenging`, capacity 1,048,576, read
from test/inputs/minimalloc, or `$MINIMALLOC_BENCHMARKS`) and on random instances with a
known zero-fragmentation packing (a time x address rectangle cut into
pieces, shuffled), each within the capacity as `hyperoffload-layout` lays it
out: today's heuristics (`static_layout(..., "auto")`), then the exact search
for at most `--time-limit` seconds (and `--nodes` search nodes, if given:
a bound that holds on a loaded machine too) where they do not fit. Seconds
are the process's CPU seconds (the search is single-threaded), so that other
work on the machine does not count. Prints markdown;
`--write docs/benchmarks.md` also replaces the text between the
`<!-- minimalloc:begin -->` and `<!-- minimalloc:end -->` markers there.

    .venv/bin/python bench/minimalloc.py [--time-limit 10] [--nodes N] [--seeds 5] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hyperoffload.model.exact_layout import exact_layout
from hyperoffload.model.layout import (
    Allocation,
    best_fit_by_size,
    check_layout,
    dynamic_best_fit,
    hill_climb,
    live_peak,
)
from hyperoffload.support.markers import write_between

ROOT = Path(__file__).resolve().parent.parent
INSTANCES = Path(
    os.environ.get("MINIMALLOC_BENCHMARKS", ROOT / "test" / "inputs" / "minimalloc")
)
CAPACITY = 1_048_576
BEGIN, END = "<!-- minimalloc:begin -->", "<!-- minimalloc:end -->"
SIZES = (100, 250, 500, 1000)
"""Pieces of the random instances."""


@dataclass(frozen=True)
class Row:
    name: str
    buffers: int
    peak: int
    heuristic: int
    arena: int
    seconds: float
    """CPU seconds, heuristics and search."""
    nodes: int
    """Nodes the exact search visited (0: the heuristics fit)."""
    optimal: bool


def read_instance(path: Path) -> list[Allocation]:
    with path.open() as rows:
        return [
            Allocation(i, int(r["size"]), int(r["lower"]), int(r["upper"]))
            for i, r in enumerate(csv.DictReader(rows))
        ]


def packable(pieces: int, seed: int, unit: int = 1024) -> list[Allocation]:
    """
    `[0, 4 * pieces) x [0, CAPACITY)` cut into `pieces` rectangles, each cut
    splitting a piece drawn by area across time or addresses (sizes in
    multiples of `unit`), in random order: a packing at the capacity exists.
    """
    rng = np.random.default_rng(seed)
    rectangles: list[tuple[int, int, int, int]] = [(0, 4 * pieces, 0, CAPACITY // unit)]
    while len(rectangles) < pieces:
        areas = np.array([(e - s) * (h - lo) for s, e, lo, h in rectangles], float)
        k = int(rng.choice(len(rectangles), p=areas / areas.sum()))
        start, end, low, high = rectangles[k]
        across_time = end - start > 1 and (high - low == 1 or rng.random() < 0.5)
        if across_time:
            cut = int(rng.integers(start + 1, end))
            rectangles[k : k + 1] = [(start, cut, low, high), (cut, end, low, high)]
        elif high - low > 1:
            cut = int(rng.integers(low + 1, high))
            rectangles[k : k + 1] = [(start, end, low, cut), (start, end, cut, high)]
    order: list[int] = rng.permutation(len(rectangles)).tolist()
    shuffled = [rectangles[k] for k in order]
    return [
        Allocation(i, (high - low) * unit, start, end)
        for i, (start, end, low, high) in enumerate(shuffled)
    ]


def solve(
    name: str, allocations: list[Allocation], time_limit: float, nodes: int | None
) -> Row:
    start = time.process_time()
    heuristic = min(
        (
            best_fit_by_size(allocations, 1),
            hill_climb(allocations, 1),
            dynamic_best_fit(allocations, 1),
        ),
        key=lambda layout: layout.arena_bytes,
    )
    layout, optimal, visited = heuristic, False, 0
    peak = live_peak(allocations, 1)
    if heuristic.arena_bytes > CAPACITY:
        result = exact_layout(
            allocations, 1, heuristic, time_limit, target=CAPACITY, node_budget=nodes
        )
        layout, optimal, visited = result.layout, result.proven_optimal, result.nodes
    optimal = optimal or layout.arena_bytes == peak
    seconds = time.process_time() - start
    check_layout(allocations, layout, alignment=1)
    assert peak <= layout.arena_bytes <= heuristic.arena_bytes
    return Row(
        name,
        len(allocations),
        peak,
        heuristic.arena_bytes,
        layout.arena_bytes,
        seconds,
        visited,
        optimal,
    )


def challenging_table(rows: list[Row]) -> list[str]:
    lines = [
        "| instance | buffers | live peak | heuristics' arena | arena | within 1,048,576 | CPU seconds | nodes | proven optimal |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r.name} | {r.buffers} | {r.peak:,} | {r.heuristic:,} "
            f"({r.heuristic / CAPACITY:.2f}x) | {r.arena:,} ({r.arena / CAPACITY:.2f}x) "
            f"| {'yes' if r.arena <= CAPACITY else 'no'} | {r.seconds:.2f} "
            f"| {r.nodes:,} | {'yes' if r.optimal else 'no'} |"
        )
    return lines


def random_table(rows: list[Row], seeds: int) -> list[str]:
    lines = [
        "| pieces | instances | at capacity | heuristics' arena (median, max) | arena (median, max) | CPU seconds (median, max) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for size in SIZES:
        group = [r for r in rows if r.buffers == size]
        heuristic = [r.heuristic / CAPACITY for r in group]
        arena = [r.arena / CAPACITY for r in group]
        seconds = [r.seconds for r in group]
        lines.append(
            f"| {size} | {len(group)} | {sum(r.arena <= CAPACITY for r in group)} "
            f"| {statistics.median(heuristic):.3f}x, {max(heuristic):.3f}x "
            f"| {statistics.median(arena):.3f}x, {max(arena):.3f}x "
            f"| {statistics.median(seconds):.2f}, {max(seconds):.2f} |"
        )
    return lines


def section(
    challenging: list[Row], random: list[Row], options: argparse.Namespace
) -> str:
    packed = sum(r.arena <= CAPACITY for r in challenging)
    nodes = "" if options.nodes is None else f"--nodes {options.nodes} "
    load = os.getloadavg()[0]
    lines = [
        "",
        f"Measured with `python bench/minimalloc.py --time-limit {options.time_limit:g} "
        f"{nodes}--seeds {options.seeds}` on {os.cpu_count()} cores "
        f"(load average {load:.1f} at the end): "
        f"{packed} of {len(challenging)} challenging instances within the capacity. "
        "Each instance: the heuristics first (the smallest arena of best fit, "
        "the hill-climb and the allocator replay), then the exact search from "
        "there until a layout fits the capacity (CPU seconds: both, in all, "
        "on one core; nodes: the search's). "
        "*Proven optimal*: the arena is the live peak.",
        "",
        *challenging_table(challenging),
        "",
        f"Random instances with a packing at the capacity ({options.seeds} seeds "
        "per size; a `4 * pieces` x 1,048,576 rectangle cut into pieces):",
        "",
        *random_table(random, options.seeds),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--nodes", type=int, help="search nodes per instance")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--write", type=Path, help="the markdown file to update")
    options = parser.parse_args()
    if not sorted(INSTANCES.glob("*.1048576.csv")):
        parser.error(
            f"no MiniMalloc instances in {INSTANCES}: set MINIMALLOC_BENCHMARKS "
            "to google/minimalloc's benchmarks/challenging"
        )
    challenging: list[Row] = []
    for path in sorted(INSTANCES.glob("*.1048576.csv")):
        name = path.name.split(".")[0]
        row = solve(name, read_instance(path), options.time_limit, options.nodes)
        challenging.append(row)
        print(challenging_table([row])[-1], flush=True)
    random: list[Row] = []
    for size in SIZES:
        for seed in range(options.seeds):
            row = solve(
                f"{size}/{seed}",
                packable(size, seed),
                options.time_limit,
                options.nodes,
            )
            random.append(row)
            print(
                f"random {row.name}: {row.arena / CAPACITY:.3f}x, "
                f"{row.seconds:.2f} s, {row.nodes} nodes",
                flush=True,
            )
    text = section(challenging, random, options)
    print(text)
    if options.write:
        write_between(options.write, text, BEGIN, END)


if __name__ == "__main__":
    main()
