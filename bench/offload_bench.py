"""
HyperOffload against its peers on training steps, side by side in one run:
peak HBM, makespan and exposed transfer time for `none`, `reactive-lru`,
`distance`, `activation-pass` (each at its best setting within a 2%
slowdown over `none`) and ours (`hyperoffload-pipeline{max-slowdown=0.02}`),
the memory bound `M_LB(T_exposed = 0)`, and compile time (parse vs passes).

    .venv/bin/python bench/offload_bench.py [--hardware ascend-910c] [--all] [--json FILE]

Workloads: the tiny LLaMA training step (examples/), and the LLaMA-3-8B
training step with 1 and (with --all) 32 decoder layers at real shapes
(bench/inputs/, exported by bench/generate_llama3_8b.py).
"""

import argparse
import gzip
import json
import sys
import time
from itertools import product
from pathlib import Path
from typing import Any

from hyperoffload.bounds import memory_lower_bound
from hyperoffload.cost import CostModel
from hyperoffload.extract import main_function, program_schedules
from hyperoffload.hardware import Hardware, load_hardware
from hyperoffload.lifetimes import ProgramGraph
from hyperoffload.parsing import parse_mlir
from hyperoffload.passes.pipeline import PipelinePass
from hyperoffload.policies import PolicyOptions, run_policy
from hyperoffload.schedule import Schedule
from hyperoffload.simulator import SimResult
from hyperoffload.tools.hyperoffload_opt import HyperoffloadOptMain
from hyperoffload.units import format_bytes, format_seconds

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = {
    "tiny-llama-train": ROOT / "examples" / "tiny_llama_train.mlir",
    "llama3-8b-1layer-train": ROOT
    / "bench"
    / "inputs"
    / "llama3_8b_1layer_train.mlir.gz",
    "llama3-8b-32layer-train": ROOT
    / "bench"
    / "inputs"
    / "llama3_8b_32layer_train.mlir.gz",
}
SLOWDOWN = 0.02


def progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def read(path: Path) -> str:
    if path.suffix == ".gz":
        with gzip.open(path, "rt") as stream:
            return stream.read()
    return path.read_text()


def within(result: SimResult, none: SimResult) -> bool:
    return result.oom is None and result.makespan_s <= none.makespan_s * (1 + SLOWDOWN)


def best_reactive(
    stripped: Schedule, hardware: Hardware, none: SimResult
) -> tuple[SimResult | None, str]:
    """The smallest capacity at which runtime swapping stays within the slowdown."""
    low, high = none.bound_peak_bytes, none.peak_hbm_bytes
    options = PolicyOptions()
    best = run_policy(
        "reactive-lru", stripped, stripped, hardware, high, options, False
    )
    if not within(
        best, none
    ):  # tagged parameters start remote: misses even at full size
        slowdown = best.makespan_s / none.makespan_s - 1
        return None, f"none within 2% ({slowdown:+.1%} at the unconstrained peak)"
    while high - low > max(1, none.peak_hbm_bytes // 1000):
        middle = (low + high) // 2
        result = run_policy(
            "reactive-lru", stripped, stripped, hardware, middle, options, False
        )
        if within(result, none):
            best, high = result, middle
        else:
            low = middle
    return best, f"capacity {format_bytes(high)}"


def best_distance(
    stripped: Schedule, hardware: Hardware, none: SimResult
) -> tuple[SimResult | None, str]:
    """The grid point of select/prefetch/release distances with the least peak."""
    best: tuple[SimResult | None, str] = (None, "")
    for select, prefetch, release in product(
        (2, 4, 8, 16, 32, 64), (1, 2, 4, 8, 16), (0, 1, 2)
    ):
        options = PolicyOptions(select, prefetch, release)
        result = run_policy(
            "distance", stripped, stripped, hardware, None, options, False
        )
        if within(result, none) and (
            best[0] is None or result.peak_hbm_bytes < best[0].peak_hbm_bytes
        ):
            best = (result, f"select {select}, prefetch {prefetch}, release {release}")
    return best


def row(
    name: str, result: SimResult | None, none: SimResult, setting: str
) -> dict[str, Any]:
    if result is None:
        return {"policy": name, "setting": setting or "no setting within 2%"}
    return {
        "policy": name,
        "setting": setting,
        "peak_hbm_bytes": result.peak_hbm_bytes,
        "makespan_s": result.makespan_s,
        "exposed_transfer_s": result.exposed_transfer_s,
        "compute_s": result.compute_s,
        "slowdown": result.makespan_s / none.makespan_s - 1,
        "peak_reduction": 1 - result.peak_hbm_bytes / none.peak_hbm_bytes,
    }


def run_workload(name: str, path: Path, hardware: Hardware) -> dict[str, Any]:
    progress(f"{name}: parsing {path.name}")
    ctx = HyperoffloadOptMain(args=[]).ctx
    start = time.perf_counter()
    module = parse_mlir(ctx, read(path), str(path))
    parse_s = time.perf_counter() - start
    ops = sum(1 for _ in main_function(module).body.block.ops)
    progress(f"{name}: {ops} ops parsed in {parse_s:.1f} s")
    _, stripped, _ = program_schedules(module, hardware)
    none = run_policy("none", stripped, stripped, hardware, None, PolicyOptions())
    graph = ProgramGraph.build(main_function(module), CostModel(hardware))
    bound = memory_lower_bound(graph, hardware)

    progress(f"{name}: searching the smallest target within {SLOWDOWN:.0%}")
    pipeline = PipelinePass(hardware=hardware.name)
    start = time.perf_counter()
    target = pipeline.smallest_target(ctx, module, SLOWDOWN)
    search_s = time.perf_counter() - start
    planned_module = module.clone()
    start = time.perf_counter()
    PipelinePass(hardware=hardware.name, hbm_capacity=target).apply(ctx, planned_module)
    passes_s = time.perf_counter() - start
    planned, _, _ = program_schedules(planned_module, hardware)
    ours = run_policy("plan", planned, stripped, hardware, target, PolicyOptions())

    progress(f"{name}: peers")
    rows = [row("none", none, none, "unlimited HBM")]
    reactive, setting = best_reactive(stripped, hardware, none)
    rows.append(row("reactive-lru", reactive, none, setting))
    distance, setting = best_distance(stripped, hardware, none)
    rows.append(row("distance", distance, none, setting))
    try:
        activation = run_policy(
            "activation-pass", stripped, stripped, hardware, None, PolicyOptions()
        )
        slowdown = activation.makespan_s / none.makespan_s - 1
        rows.append(
            row(
                "activation-pass",
                activation if within(activation, none) else None,
                none,
                "-"
                if within(activation, none)
                else f"none within 2% ({slowdown:+.1%})",
            )
        )
    except ValueError as err:
        rows.append({"policy": "activation-pass", "setting": str(err)})
    setting = f"target {format_bytes(target)}"
    if not within(ours, none):
        setting += " (the least slowdown found; none within 2%)"
    rows.append(row("hyperoffload", ours, none, setting))
    saving = none.peak_hbm_bytes - bound
    return {
        "workload": name,
        "ops": ops,
        "parse_s": parse_s,
        "passes_s": passes_s,
        "target_search_s": search_s,
        "bound_peak_bytes": bound,
        "bound_time_s": none.bound_time_s,
        "fraction_of_possible_saving": (none.peak_hbm_bytes - ours.peak_hbm_bytes)
        / saving
        if saving > 0
        else None,
        "rows": rows,
    }


def markdown(report: dict[str, Any], hardware: Hardware) -> str:
    lines = [
        f"### {report['workload']} on {hardware.name} ({report['ops']} ops)",
        "",
        "| policy | best setting within 2% | peak HBM | peak vs none | makespan | slowdown | exposed transfer |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in report["rows"]:
        if "peak_hbm_bytes" not in r:
            lines.append(f"| {r['policy']} | {r['setting']} | - | - | - | - | - |")
            continue
        lines.append(
            f"| {r['policy']} | {r['setting']} | {format_bytes(r['peak_hbm_bytes'])} | "
            f"{-r['peak_reduction']:+.1%} | {format_seconds(r['makespan_s'])} | "
            f"{r['slowdown']:+.2%} | {format_seconds(r['exposed_transfer_s'])} "
            f"({r['exposed_transfer_s'] / r['compute_s']:.2%} of compute) |"
        )
    fraction = report["fraction_of_possible_saving"]
    lines += [
        "",
        f"- memory bound M_LB(T_exposed = 0): {format_bytes(report['bound_peak_bytes'])}; "
        f"time bound: {format_seconds(report['bound_time_s'])}",
        f"- fraction of the possible saving achieved: "
        f"{'n/a' if fraction is None else f'{fraction:.1%}'}",
        f"- compile time: parse {report['parse_s']:.2f} s, pipeline at the target "
        f"{report['passes_s']:.2f} s (target search {report['target_search_s']:.2f} s)",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hardware", default="ascend-910c")
    parser.add_argument("--all", action="store_true", help="include the 32-layer step")
    parser.add_argument("--json", type=Path, help="also write the results as JSON")
    parser.add_argument("workloads", nargs="*", help=f"any of {', '.join(WORKLOADS)}")
    args = parser.parse_args()
    hardware = load_hardware(args.hardware)
    names = args.workloads or [n for n in WORKLOADS if args.all or "32layer" not in n]
    reports = [run_workload(name, WORKLOADS[name], hardware) for name in names]
    for report in reports:
        print(markdown(report, hardware))
    if args.json:
        args.json.write_text(json.dumps(reports, indent=1))


if __name__ == "__main__":
    main()
