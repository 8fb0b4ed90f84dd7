"""
How compile time grows with program size, as growth exponents: the slope of
log(time) against log(ops) between consecutive sizes (1.0: linear), on

1. synthetic chains of 1k and 10k elementwise tensor ops reading 64
   weights that live in the remote pool (every 8th value read again 50 ops
   later), planned for a target that needs half the weights out;
2. LLaMA-3-8B training steps at seq 512 as `hyperoffload-gen llama3-8b --mode
   train --layers N --seq 512 --dtype bf16` exports them (2, 8, 32 and 64
   layers; exports under build/ are reused, a new one takes up to minutes),
   planned by `hyperoffload-pipeline{max-slowdown=0.02}`.

Each program runs through `hyperoffload-opt FILE -p PIPELINE -o OUT` in a
fresh process, which times each phase in CPU seconds (the machine may be
shared): parse, verify, print, and inside the pipeline the program graph,
the planner, the fetch placement, the simulation and the arena of each
trial, the plans priced as written (each written into the function,
extracted, and the function put back), writing the plan (with
move-window), and the final checks (the
written program simulated, the residency verified); a phase's time excludes
the phases it calls. A size whose run is cheap is run `--runs` times, each
column the minimum. Exponents are the headline; `--write docs/benchmarks.md`
replaces the text between the `<!-- scaling:begin -->` and
`<!-- scaling:end -->` markers there.

    .venv/bin/python bench/scaling.py [--sizes 1000 10000] [--layers 2 8 32 64] [--runs 3] [--write docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from compile_speed import llama_export

from hyperoffload.support.markers import write_between

WEIGHTS = 64
TENSOR = "tensor<64x64xf32>"
SEQ = 512
EXPORT_PIPELINE = "hyperoffload-pipeline{max-slowdown=0.02}"
GOAL = 1.15
"""The pipeline's growth exponent we aim at, between any two consecutive export sizes."""
CHEAP_S = 60.0
"""A size whose run takes fewer CPU seconds than this is run `--runs` times."""
BEGIN, END = "<!-- scaling:begin -->", "<!-- scaling:end -->"

PIPELINE_PHASES = (
    ("graph", "program graph"),
    ("plan", "planner"),
    ("place", "fetch placement"),
    ("simulate", "trial simulation"),
    ("arena", "trial arena"),
    ("priced", "plans priced as written"),
    ("write", "plan written"),
    ("check", "final checks"),
    ("other", "rest of the search"),
)
"""The phases of the pipeline, exclusive of each other; `other`: the rest."""
COLUMNS = ("parse", "verify", *(p for p, _ in PIPELINE_PHASES), "pipeline", "print")


ABSORBING = ("write", "check")
"""Phases whose time includes the phases they call (their simulation, say)."""


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children waited for (a parser's)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


class _Phases:
    """CPU seconds per phase; a phase's time excludes the phases it calls."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.stack: list[tuple[str, float]] = []  # open phases: (name, start)
        self.nested: list[float] = []  # of each open phase: seconds in those it called

    def timed(self, phase: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if self.stack and self.stack[-1][0] in ABSORBING:
                return function(*args, **kwargs)
            self.stack.append((phase, cpu_seconds()))
            self.nested.append(0.0)
            try:
                return function(*args, **kwargs)
            finally:
                _, start = self.stack.pop()
                spent = cpu_seconds() - start
                own = spent - self.nested.pop()
                self.seconds[phase] = self.seconds.get(phase, 0.0) + own
                if self.nested:
                    self.nested[-1] += spent

        return wrapper


def measure_here(path: str, passes: str) -> dict[str, Any]:
    """
    `hyperoffload-opt path -p passes` in this process, each phase timed (in
    a fresh process: the phases are timed by wrapping the functions).
    """
    from hyperoffload.passes import pipeline
    from hyperoffload.planning import loop
    from hyperoffload.tools import hyperoffload_opt

    phases = _Phases()
    collecting: list[float] = []

    def collected(stage: str, _: dict[str, int]) -> None:
        """CPU seconds in the garbage collector, in all (part of the phases)."""
        if stage == "start":
            collecting.append(cpu_seconds())
        elif collecting:
            phases.seconds["gc"] = (
                phases.seconds.get("gc", 0.0) + cpu_seconds() - collecting.pop()
            )

    gc.callbacks.append(collected)

    def wrap(owner: Any, name: str, phase: str) -> None:
        setattr(owner, name, phases.timed(phase, getattr(owner, name)))

    wrap(hyperoffload_opt, "parse_with_engine", "parse")
    wrap(hyperoffload_opt, "verify_module", "verify")
    wrap(hyperoffload_opt.HyperoffloadOptMain, "output_resulting_program", "print")
    wrap(pipeline.PipelinePass, "apply", "pipeline")
    graph = phases.timed("graph", loop.PlanningLoop.for_function)
    loop.PlanningLoop.for_function = staticmethod(graph)  # pyright: ignore[reportAttributeAccessIssue]
    wrap(loop, "plan_offload", "plan")
    wrap(loop, "place_fetches", "place")
    wrap(loop, "simulate", "simulate")
    wrap(loop, "planned_arena", "arena")
    wrap(loop.PlanningLoop, "_as_written", "priced")
    wrap(loop.PlanningLoop, "write", "write")
    wrap(pipeline, "move_window", "write")
    wrap(pipeline, "remark_written", "check")
    wrap(pipeline, "verify_offload", "check")
    module_ops: list[int] = []
    parse = hyperoffload_opt.parse_with_engine

    def counted(*args: Any, **kwargs: Any) -> Any:
        module = parse(*args, **kwargs)
        module_ops.append(sum(1 for _ in module.walk()) - 1)  # less the module
        return module

    hyperoffload_opt.parse_with_engine = counted
    with tempfile.TemporaryDirectory() as work:
        out = str(Path(work) / "out.mlir")
        status = hyperoffload_opt.main([path, "-p", passes, "-o", out])
    if status != 0:
        raise SystemExit(f"hyperoffload-opt {path} -p '{passes}' exited {status}")
    seconds = phases.seconds
    inside = sum(seconds.get(p, 0.0) for p, _ in PIPELINE_PHASES if p != "other")
    seconds["other"] = seconds["pipeline"]  # the pipeline's own time, less its phases
    seconds["pipeline"] += inside
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"ops": module_ops[0], **seconds, "peak_rss": rss}


def synthetic_program(ops: int) -> str:
    """`ops` elementwise ops in a chain; weights tagged remote; long-lived side values."""
    tier = "{hyperoffload.tier = #hyperoffload.tier<remote>}"
    args = [f"%x: {TENSOR}", *(f"%w{i}: {TENSOR} {tier}" for i in range(WEIGHTS))]
    lines = [f"func.func @chain({', '.join(args)}) -> {TENSOR} {{"]
    previous = "%x"
    for i in range(ops):
        other = f"%w{i % WEIGHTS}"
        if i >= 50 and (i - 50) % 8 == 0:
            other = f"%v{i - 50}"  # read again 50 ops after it was made
        op = "arith.mulf" if i % 2 else "arith.addf"
        lines.append(f"  %v{i} = {op} {previous}, {other} : {TENSOR}")
        previous = f"%v{i}"
    lines += [f"  func.return {previous} : {TENSOR}", "}"]
    return "\n".join(lines) + "\n"


def chain_pipeline() -> str:
    capacity = 16384 * (WEIGHTS // 2 + 8)  # half the weights and some values
    return f"hyperoffload-pipeline{{hardware=ascend-910c hbm-capacity={capacity}B}}"


@dataclass(frozen=True)
class Size:
    """One program measured: its label, and each column's minimum over its runs."""

    label: str
    ops: int
    seconds: dict[str, float]
    peak_rss: int
    runs: int


def progress(message: str) -> None:
    print(f"scaling: {message}", file=sys.stderr, flush=True)


def measure(label: str, path: Path, passes: str, runs: int) -> Size:
    """`path` through the pipeline in fresh processes: once, or `runs` times if cheap."""
    measured: list[dict[str, Any]] = []
    while True:
        done = subprocess.run(
            [sys.executable, __file__, "--measure", str(path), passes],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"measuring {path} failed:\n{done.stderr}")
        measured.append(json.loads(done.stdout.splitlines()[-1]))
        first = measured[0]
        spent = first["parse"] + first["pipeline"]
        progress(
            f"  {label}: parse {first['parse']:.1f} s, pipeline "
            f"{measured[-1]['pipeline']:.1f} s (CPU)"
        )
        if len(measured) >= (runs if spent < CHEAP_S else 1):
            break
    seconds = {c: min(m.get(c, 0.0) for m in measured) for c in COLUMNS}
    rss = min(m["peak_rss"] for m in measured)
    return Size(label, first["ops"], seconds, rss, len(measured))


def exponent(small: Size, large: Size, column: str) -> float:
    """Slope of log(time) against log(ops) from `small` to `large`."""
    low, high = small.seconds[column], large.seconds[column]
    if low <= 0 or high <= 0:
        return math.nan
    return math.log(high / low) / math.log(large.ops / small.ops)


def _figure(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f}"


def growth_table(sizes: Sequence[Size], columns: Sequence[str]) -> list[str]:
    """Exponents between consecutive sizes, then from the first to the last."""
    pairs = list(pairwise(sizes))
    if len(sizes) > 2:
        pairs.append((sizes[0], sizes[-1]))
    lines = [
        f"| sizes | ops | {' | '.join(columns)} |",
        f"| --- | ---: | {' | '.join('---:' for _ in columns)} |",
    ]
    for small, large in pairs:
        cells = [_figure(exponent(small, large, c)) for c in columns]
        lines.append(
            f"| {small.label} → {large.label} | {small.ops:,} → {large.ops:,} "
            f"| {' | '.join(cells)} |"
        )
    return lines


def times_table(sizes: Sequence[Size], columns: Sequence[str]) -> list[str]:
    lines = [
        f"| size | ops | runs | {' | '.join(columns)} | peak RSS |",
        f"| --- | ---: | ---: | {' | '.join('---:' for _ in columns)} | ---: |",
    ]
    for size in sizes:
        cells = [f"{size.seconds[c]:.2f}" for c in columns]
        lines.append(
            f"| {size.label} | {size.ops:,} | {size.runs} | {' | '.join(cells)} "
            f"| {size.peak_rss / 2**20:,.0f} MiB |"
        )
    return lines


def verdict(exports: Sequence[Size]) -> str:
    """Whether the pipeline's exponents meet `GOAL`, and what grows where not."""
    if len(exports) < 2:
        return "One export size only: no exponent."
    missed: list[str] = []
    for small, large in pairwise(exports):
        k = exponent(small, large, "pipeline")
        if k <= GOAL:
            continue
        total = large.seconds["pipeline"]
        phases = [p for p, _ in PIPELINE_PHASES if large.seconds[p] >= 0.1 * total]
        grows = max(phases, key=lambda p: exponent(small, large, p))
        name = dict(PIPELINE_PHASES)[grows]
        missed.append(
            f"from {small.label} to {large.label} the pipeline grows at {k:.2f}; "
            f"of its phases taking a tenth of it or more, the {name} "
            f"(`{grows}`) grows fastest, at {exponent(small, large, grows):.2f}"
        )
    span = f"from {exports[0].label} to {exports[-1].label}"
    if not missed:
        return (
            f"**Goal met**: the pipeline grows with exponent ≤ {GOAL} between "
            f"every two consecutive sizes {span}."
        )
    return f"**Goal (≤ {GOAL}) not met**: " + "; ".join(missed) + "."


def section(chains: Sequence[Size], exports: Sequence[Size], runs: int) -> str:
    """The markdown written between the markers."""
    columns = [c for c in COLUMNS if c not in ("verify", "print")]
    lines = ["", ""]
    if exports:
        lines += [
            f"LLaMA-3-8B training steps (seq {SEQ}, bf16) through `hyperoffload-opt "
            f"FILE -p '{EXPORT_PIPELINE}'`; growth exponents (time ~ ops^k; "
            f"goal: the pipeline ≤ {GOAL} between consecutive sizes):",
            "",
            *growth_table(exports, columns),
            "",
            verdict(exports),
            "",
        ]
    if chains:
        lines += [
            "Synthetic chains, growth exponents:",
            "",
            *growth_table(chains, ["parse", "pipeline"]),
            "",
        ]
    lines += [
        "CPU seconds on a shared machine (other work running beside it: "
        f"compare the exponents, not the times; a size whose run takes under "
        f"{CHEAP_S:.0f} s is run {runs} times, each column the minimum):",
        "",
        *times_table([*exports, *chains], COLUMNS),
        "",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--measure":
        print(json.dumps(measure_here(sys.argv[2], sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--layers", type=int, nargs="*", default=[2, 8, 32, 64])
    parser.add_argument("--runs", type=int, default=3, help="runs of a cheap size")
    parser.add_argument("--write", type=Path, help="the markdown file to update")
    args = parser.parse_args()
    exports = [llama_export(layers, SEQ) for layers in args.layers]  # first: minutes
    measured: list[Size] = []
    for layers, path in zip(args.layers, exports, strict=True):
        progress(f"{layers} layers ({path.name})")
        measured.append(measure(f"{layers} layers", path, EXPORT_PIPELINE, args.runs))
    chains: list[Size] = []
    with tempfile.TemporaryDirectory() as work:
        for ops in args.sizes:
            progress(f"chain of {ops} ops")
            path = Path(work) / f"chain_{ops}.mlir"
            path.write_text(synthetic_program(ops))
            chains.append(measure(f"{ops:,} ops", path, chain_pipeline(), args.runs))
    text = section(chains, measured, args.runs)
    print(text)
    if args.write is not None:
        write_between(args.write, text, BEGIN, END)


if __name__ == "__main__":
    main()
