"""
The trade-off curves of the 2-layer versions of the suite's training rows,
of the tiny steps, of the seeds' long-sequence step with 4 layers and of
DeepSeek-V3's training step with 2 (`hyperoffload.benchmark.tradeoff`; the
settings of test/python/benchmark/test_tradeoff.py, which holds the tiny and
2-layer LLaMA and GPT programs to them): at each target from the
unconstrained peak down to the largest single-op working set, each policy's
least slowdown among its runs that meet it. Writes one plot per program
(docs/benchmarks/<name>-curves.png) and docs/benchmarks/tradeoff-curves.md,
each program's table and the targets where ours loses (slower by more than
half a point than a peer that meets the target, targets below the return
floor left out).

    .venv/bin/python bench/tradeoff_curves.py [--targets 6] [--only NAME]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from hyperoffload.benchmark.plots import write_curves_plot
from hyperoffload.benchmark.suites import (
    DEEPSEEK_SEED_STEP,
    SEED_STEP,
    TINY_SEED_STEP,
)
from hyperoffload.benchmark.tradeoff import TradeoffSweep, targets
from hyperoffload.benchmark.workloads import Export, load_workload
from hyperoffload.model.hardware import load_hardware
from hyperoffload.support.outputs import write_output
from hyperoffload.support.units import format_bytes

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "benchmarks"
TOLERANCE = 0.005
PROGRAMS: dict[str, tuple[Export, bool]] = {
    "tiny-llama-train": (Export("tiny-llama", "train", seq=16, dtype="f32"), False),
    "llama3-8b-train-2-layers": (
        Export("llama3-8b", "train", layers=2, seq=2048),
        True,
    ),
    "llama3-8b-train-2-layers-seq128": (
        Export("llama3-8b", "train", layers=2, seq=128),
        True,
    ),
    "gpt3-175b-layer-train-2-layers": (
        Export("gpt3-175b", "train", layers=2, seq=2048),
        True,
    ),
    # the seeds' long-sequence step (seq 8192, batch 2, AdamW states in the
    # pool, chunked loss, each parameter updated as its gradient completes)
    # with 4 of its 32 layers, as the seeds suite's 4-layer row runs it
    "llama3-8b-seed-training-4-layers": (
        replace(SEED_STEP, layers=4, optimizer_in_backward=True),
        True,
    ),
    # the quick suite's seed training row (AdamW, chunked loss)
    "tiny-llama-seed-training": (TINY_SEED_STEP, True),
    # one device of DeepSeek-V3's training with 2 of its stage's 4 MoE layers
    "deepseek-v3-seed-training-2-layers": (replace(DEEPSEEK_SEED_STEP, layers=2), True),
}
"""Name: the export and whether arguments are placed (as the suite row plans it)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip())
    parser.add_argument("--targets", type=int, default=6)
    parser.add_argument("--only", action="append", choices=list(PROGRAMS))
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "bench")
    args = parser.parse_args()
    hardware = load_hardware("ascend-910c")
    sections: list[str] = []
    for name, (export, place) in PROGRAMS.items():
        if args.only and name not in args.only:
            continue
        start = time.perf_counter()
        workload = load_workload(export.on(hardware), args.work, lambda _: None)
        baseline = workload.baseline(hardware)
        sweep = TradeoffSweep(workload, baseline, place, lambda _: None)
        curves = sweep.run(targets(baseline.none, args.targets))
        plot = f"{name}-curves.png"
        title = f"{workload.spec.command} on {hardware.name}"
        write_curves_plot(curves.series(), curves.floor, DOCS / plot, title)
        losses = curves.losses(TOLERANCE)
        lines = [
            f"## {name}",
            "",
            f"`{workload.spec.command}`, "
            f"{'place-arguments' if place else 'arguments in their tier'}; "
            f"return floor {format_bytes(curves.floor)}. "
            f"![{name}]({plot})",
            "",
            curves.table(),
            "",
            f"Where ours loses ({len(losses)}):" if losses else "Ours loses nowhere.",
            *(f"- {loss.describe()}" for loss in losses),
            "",
        ]
        sections.append("\n".join(lines))
        print(f"{name}: {len(losses)} losses, {time.perf_counter() - start:.0f} s")
    text = "\n".join(
        [
            "# Trade-off curves (training steps, ascend-910c)",
            "",
            "Written by `bench/tradeoff_curves.py`: each policy's least slowdown "
            "over `none` at each HBM target it meets (peak within the target, no "
            "out-of-memory), ours planned for the target, the runtimes run in an "
            "HBM of the target at every setting, the compiled peers at every "
            "setting of their grid. A peer meeting a target below the return "
            "floor ends results in the pool. Ours meets a target in addresses "
            "(its static layout's arena within it); a runtime in live bytes, "
            "and where the arena its best-fit allocator reaches is above the "
            "target the cell gives it (the runtime would have to compact). "
            "For every policy, the update of an argument that entered outside "
            "HBM ends in that argument's tier, where the next call reads it "
            "(`Schedule.updates`).",
            "",
            *sections,
        ]
    )
    if not args.only:
        write_output(DOCS / "tradeoff-curves.md", text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
