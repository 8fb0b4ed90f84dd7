"""
Static layout time against parse time, side by side in one run, on the
LLaMA-3-8B training step that `make run` plans (`hyperoffload-gen llama3-8b
--mode train --layers 32 --seq 2048 --dtype bf16`; an export under build/ is
reused, else it is made, about a minute): the program is parsed, planned with
`hyperoffload-pipeline{hbm-capacity=32GB place-arguments=true}`, and laid out
by `hyperoffload-assign-offsets` with each strategy. Also prints the arena
of each layout against the live-byte peak, and a best-fit allocator's arena
replayed over the same run.

    .venv/bin/python bench/layout_speed.py [--layers 32] [--capacity 32GB] [--write-docs]

`--write-docs` writes the table into docs/benchmarks.md between
`<!-- layout-speed:begin/end -->` (wall-clock seconds: read the ratios).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import extract, main_function
from hyperoffload.ir.context import make_context
from hyperoffload.ir.diagnostics import silence_diagnostics
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.passes.assign_offsets import AssignOffsetsPass
from hyperoffload.passes.pipeline import PipelinePass
from hyperoffload.sim.arena import fragmentation, planned_arena, runtime_arena
from hyperoffload.sim.simulator import simulate
from hyperoffload.support.markers import write_between
from hyperoffload.support.units import format_bytes

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- layout-speed:begin -->", "<!-- layout-speed:end -->"
TOOLS = Path(sys.executable).parent


def _export(layers: int) -> Path:
    path = ROOT / "build" / f"llama3_8b_train_{layers}l.mlir"
    if layers == 32 and (ROOT / "build" / "llama3_8b_train.mlir").exists():
        return ROOT / "build" / "llama3_8b_train.mlir"  # what `make run` wrote
    if not path.exists():
        path.parent.mkdir(exist_ok=True)
        command = [
            str(TOOLS / "hyperoffload-gen"),
            "llama3-8b",
            *("--mode", "train", "--layers", str(layers)),
            *("--seq", "2048", "--dtype", "bf16", "-o", str(path)),
        ]
        subprocess.run(command, check=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Static layout time against parse time."
    )
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--capacity", default="32GB")
    parser.add_argument("--write-docs", action="store_true")
    options = parser.parse_args()
    path = _export(options.layers)
    ctx = make_context()
    start = time.perf_counter()
    module = parse_mlir(ctx, path.read_text(), str(path))
    parse_s = time.perf_counter() - start
    hardware = "ascend-910c"
    pipeline = PipelinePass(
        hardware=hardware, hbm_capacity=options.capacity, place_arguments=True
    )
    with silence_diagnostics():
        pipeline.apply(ctx, module)
    model = pipeline.load_hardware()
    function = main_function(module)
    result = simulate(extract(function, CostModel(model)).schedule, model)
    peak = result.peak_hbm_bytes
    lines = [
        f"`{path.name}` planned with `hyperoffload-pipeline{{hbm-capacity="
        f"{options.capacity} place-arguments=true}}` on `{hardware}`: parse "
        f"{parse_s:.2f} s; {len(result.allocations):,} buffers, live peak "
        f"{format_bytes(peak)}.",
        "",
        "| layout | arena | vs live peak | seconds | vs parse |",
        "| --- | --- | --- | --- | --- |",
    ]
    layouts: list[tuple[str, Callable[[], int]]] = [
        ("best-fit", lambda: planned_arena(result, "best-fit").arena_bytes),
        ("hill-climb", lambda: planned_arena(result, "hill-climb").arena_bytes),
        ("dynamic best-fit (a runtime's)", lambda: runtime_arena(result).arena_bytes),
    ]
    for name, lay_out in layouts:
        start = time.perf_counter()
        arena = lay_out()
        layout_s = time.perf_counter() - start
        lines.append(
            f"| {name} | {format_bytes(arena)} | {fragmentation(arena, peak):+.3%} "
            f"| {layout_s:.2f} | {layout_s / parse_s:.3f}x |"
        )
    start = time.perf_counter()
    AssignOffsetsPass(hardware=hardware, hbm_capacity=options.capacity).apply(
        ctx, module
    )
    pass_s = time.perf_counter() - start
    lines += [
        "",
        "`hyperoffload-assign-offsets` (extraction, simulation, layout, "
        f"attributes): {pass_s:.2f} s, {pass_s / parse_s:.3f}x the parse.",
    ]
    text = "\n".join(lines)
    print(text)
    if options.write_docs:
        command = " ".join(["bench/layout_speed.py", *sys.argv[1:]])
        said = f"`.venv/bin/python {command}` (wall-clock seconds on a shared machine):"
        write_between(DOC, f"\n{said}\n\n{text}\n", BEGIN, END)


if __name__ == "__main__":
    main()
