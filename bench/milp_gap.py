"""
The heuristic planner against the exact reference (`solver=milp`,
`hyperoffload.planning.milp`): on seeded random DAGs of linalg ops and on the
tiny LLaMA and GPT training steps, the smallest peak each reaches within the
same slowdown limit, both plans judged by the simulator.

- heuristic: `hyperoffload-pipeline{max-slowdown=S}` as the pass runs it
  (the target search over the planning loop, fetches moved within their
  windows, recomputation beside offload);
- MILP: the least peak with exposed transfer and recomputation time at most
  S x compute time in its model, choosing from every candidate gap
  (recomputations included), started from the heuristic's plan, within the
  time limit; the better of its plans and the heuristic's in the simulator
  is its answer, so it is never above the heuristic.

"heuristic / optimum" is given only where the answer is proven optimal: the
solver closed its gap and the answer's simulated peak meets the model's
bound (a lower bound over plans of the model's form). Other rows say why
they are not proven and are left out of the averages.

    .venv/bin/python bench/milp_gap.py [--dags 24] [--slowdown 0.05]
        [--time-limit 10] [--step-time-limit 60] [--no-steps] [--write-docs]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.analysis.link_bound import link_lower_bound
from hyperoffload.ir.context import make_context
from hyperoffload.ir.diagnostics import silence_diagnostics
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import Hardware, load_hardware
from hyperoffload.planning.loop import LoopOptions, PlanningLoop
from hyperoffload.planning.milp import MilpOptions, MilpResult, plan_milp
from hyperoffload.planning.placement import MoveOptions
from hyperoffload.planning.planner import PlanError, PlanOptions
from hyperoffload.planning.search import smallest_target
from hyperoffload.sim.simulator import simulate
from hyperoffload.support.markers import write_between
from hyperoffload.support.units import format_bytes

ROOT = Path(__file__).resolve().parents[1]
HARDWARE = "ascend-910c"

T = "tensor<64x64xf32>"
ID = "affine_map<(d0, d1) -> (d0, d1)>"
ELEMENTWISE = (
    f'{{indexing_maps = [{ID}, {ID}, {ID}], iterator_types = ["parallel", "parallel"]}}'
)
UNARY = f'{{indexing_maps = [{ID}, {ID}], iterator_types = ["parallel", "parallel"]}}'
MATMUL = (
    "{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, "
    "affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], "
    'iterator_types = ["parallel", "parallel", "reduction"]}'
)


def _op(index: int, kind: str, a: str, b: str) -> list[str]:
    """One op of a random DAG (as `test/python/passes/test_insert_properties.py`)."""
    out, empty = f"%v{index}", f"%e{index}"
    lines = [f"  {empty} = tensor.empty() : {T}"]
    if kind in ("addf", "mulf"):
        return [
            *lines,
            f"  {out} = linalg.generic {ELEMENTWISE} ins({a}, {b} : {T}, {T}) "
            f"outs({empty} : {T}) {{",
            "  ^bb0(%p: f32, %q: f32, %o: f32):",
            f"    %s = arith.{kind} %p, %q : f32",
            "    linalg.yield %s : f32",
            f"  }} -> {T}",
        ]
    if kind == "negf":
        return [
            *lines,
            f"  {out} = linalg.generic {UNARY} ins({a} : {T}) outs({empty} : {T}) {{",
            "  ^bb0(%p: f32, %o: f32):",
            "    %s = arith.negf %p : f32",
            "    linalg.yield %s : f32",
            f"  }} -> {T}",
        ]
    return [
        *lines,
        f"  %z{index} = linalg.fill ins(%zero : f32) outs({empty} : {T}) -> {T}",
        f"  {out} = linalg.generic {MATMUL} ins({a}, {b} : {T}, {T}) "
        f"outs(%z{index} : {T}) {{",
        "  ^bb0(%p: f32, %q: f32, %o: f32):",
        "    %m = arith.mulf %p, %q : f32",
        "    %s = arith.addf %o, %m : f32",
        "    linalg.yield %s : f32",
        f"  }} -> {T}",
    ]


def _operand(rng: random.Random, values: list[str]) -> str:
    """One of the last three values half of the time, else any."""
    return rng.choice(values[-3:] if rng.random() < 0.5 else values)


def random_dag(seed: int, min_ops: int = 12, max_ops: int = 40) -> str:
    """
    A random DAG of linalg ops on 64x64 f32 tensors (16 KiB): 1-3 arguments,
    some tagged for the remote pool; each operand is one of the last three
    values half of the time, else any earlier value (long idle gaps). The last
    value is returned.
    """
    rng = random.Random(seed)
    num_args = rng.randint(1, 3)
    tag = " {hyperoffload.tier = #hyperoffload.tier<remote>}"
    args = ", ".join(
        f"%a{i}: {T}{tag if rng.random() < 0.4 else ''}" for i in range(num_args)
    )
    lines = [
        f"func.func @dag{seed}({args}) -> {T} {{",
        "  %zero = arith.constant 0.0 : f32",
    ]
    count = rng.randint(min_ops, max_ops)
    for index in range(count):
        values = [f"%a{i}" for i in range(num_args)] + [f"%v{j}" for j in range(index)]

        kind = rng.choice(["addf", "mulf", "negf", "matmul"])
        lines += _op(index, kind, _operand(rng, values), _operand(rng, values))
    lines += [f"  func.return %v{count - 1} : {T}", "}"]
    return "\n".join(lines)


@dataclass
class Row:
    name: str
    steps: int
    unplanned_peak: int
    heuristic_peak: int
    heuristic_slowdown: float
    heuristic_seconds: float
    milp: MilpResult | None
    """None: the MILP refused the program (too large, no solver)."""
    heuristic_within: bool = True
    lp_bound: int = 0
    """
    `hyperoffload.analysis.link_bound` at the same slowdown, for plans that
    keep arguments in HBM after their last use (the heuristic's and the
    MILP's do; a runtime that evicts them may go below it).
    """
    limit: float = 0.0
    """The slowdown limit."""
    note: str = ""

    @property
    def proven(self) -> bool:
        """Both within the limit and the MILP's answer proven optimal (gap 0)."""
        return self.milp is not None and self.milp.proven and self.heuristic_within

    @property
    def excess(self) -> float:
        """How much higher the heuristic's peak is than the MILP's answer."""
        if self.milp is None or not self.milp.plan.peak_after:
            return 0.0
        return self.heuristic_peak / self.milp.plan.peak_after - 1


def compare(
    name: str, text: str, hardware: Hardware, slowdown: float, time_limit: float
) -> Row:
    """Both planners on the main function of `text`, judged by the simulator."""
    function = main_function(parse_mlir(make_context(), text, f"{name}.mlir"))
    graph = ProgramGraph.build(function, CostModel(hardware))
    reference = simulate(graph.schedule, hardware, None, record=False)
    # both with recomputation, as the pipeline plans by default
    options = PlanOptions(target=0, recompute="auto", recompute_budget=slowdown)
    loop = PlanningLoop(function, graph, hardware, LoopOptions(options, MoveOptions()))
    start = time.perf_counter()
    with silence_diagnostics():
        heuristic = smallest_target(loop, hardware.hbm_capacity, slowdown)
    seconds = time.perf_counter() - start
    heuristic_slowdown = heuristic.result.makespan_s / reference.makespan_s - 1
    row = Row(
        name,
        len(graph.compute_of_op),
        reference.peak_hbm_bytes,
        heuristic.result.peak_hbm_bytes,
        heuristic_slowdown,
        seconds,
        None,
        heuristic_within=heuristic_slowdown <= slowdown + 1e-9,
        # for plans that keep arguments after their last use, as both do
        lp_bound=link_lower_bound(graph, hardware, slowdown, release_held=False).bytes,
        limit=slowdown,
    )
    try:
        row.milp = plan_milp(
            graph,
            hardware,
            options,
            MilpOptions(time_limit_s=time_limit, max_slowdown=slowdown),
            start_plan=heuristic.plan,
            start_schedule=heuristic.schedule,
        )
    except PlanError as err:
        row.note = str(err).split(": ", 2)[-1]
        return row
    if not row.heuristic_within:
        row.note = "heuristic over the limit (no target within it)"
    elif row.milp.slowdown > slowdown + 1e-9:
        row.note = "no plan within the limit in the simulator"
    elif row.milp.plan.peak_after > row.heuristic_peak:
        row.note = "the heuristic's plan simulates otherwise than it was searched"
    return row


def training_steps() -> list[tuple[str, str]]:
    """The tiny LLaMA training step of `examples/`, and tiny GPT's, exported now."""
    steps = [
        ("tiny-llama-train", (ROOT / "examples" / "tiny_llama_train.mlir").read_text())
    ]
    gen = Path(sys.executable).parent / "hyperoffload-gen"
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "tiny_gpt_train.mlir"
        done = subprocess.run(
            [str(gen), "tiny-gpt", "--mode", "train", "-o", str(out)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0:
            steps.append(("tiny-gpt-train", out.read_text()))
        else:
            print(f"tiny-gpt skipped: {done.stderr.strip()}", file=sys.stderr)
    return steps


def _status(r: Row) -> str:
    m = r.milp
    if m is None:
        return "refused"
    if r.proven:
        return "proven optimal"
    if m.proven:
        return "proven optimal (the heuristic over the limit)"
    if m.gap < 0:
        return "not proven: the plan kept is below the model's bound (another form)"
    return f"not proven ({m.status})"


def table(rows: list[Row]) -> str:
    lines = [
        "| program | steps | unplanned peak | heuristic peak (slowdown, time) "
        "| MILP peak (slowdown), whose | heuristic / optimum | model bound | gap "
        "| LP bound | MILP time (bound solve / all), solves | status |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        note = f" ({r.note})" if r.note else ""
        heuristic = (
            f"{format_bytes(r.heuristic_peak)} ({r.heuristic_slowdown:+.2%}, "
            f"{r.heuristic_seconds:.1f} s)"
        )
        m = r.milp
        if m is None:
            lines.append(
                f"| {r.name} | {r.steps} | {format_bytes(r.unplanned_peak)} "
                f"| {heuristic} | none{note} | | | | {format_bytes(r.lp_bound)} "
                "| | refused |"
            )
            continue
        whose = "MILP" if m.source == "milp" else "heuristic's"
        ratio = f"{r.excess:+.1%}" if r.proven else ""
        within = m.slowdown <= r.limit + 1e-9
        bound = format_bytes(m.bound_bytes) if m.bound_bytes else "none"
        gap = f"{m.gap:.2%}" if m.bound_bytes and within else ""
        lines.append(
            f"| {r.name} | {r.steps} | {format_bytes(r.unplanned_peak)} "
            f"| {heuristic} "
            f"| {format_bytes(m.plan.peak_after)} ({m.slowdown:+.2%}), {whose}{note} "
            f"| {ratio} | {bound} | {gap} | {format_bytes(r.lp_bound)} "
            f"| {m.peak_seconds:.1f} s / {m.seconds:.1f} s, {m.rounds} "
            f"| {_status(r)} |"
        )
    return "\n".join(lines)


def summary(rows: list[Row], slowdown: float) -> str:
    proven = [r for r in rows if r.proven]
    equal = sum(r.excess <= 0 for r in proven)
    worst = max(proven, key=lambda r: r.excess, default=None)
    mean = sum(r.excess for r in proven) / len(proven) if proven else 0.0
    above = [
        r.name for r in rows if r.milp and r.milp.plan.peak_after > r.heuristic_peak
    ]
    over = [r.name for r in rows if not r.heuristic_within]
    unproven = [r.name for r in rows if not r.proven and r.heuristic_within]
    text = (
        f"Slowdown limit {slowdown:.0%}, {len(rows)} programs. The MILP's answer "
        f"is proven optimal (gap 0, within the limit in the simulator) on "
        f"{len(proven)} of the {len(rows) - len(over)} where the heuristic "
        f"has a plan within the limit; on those the heuristic reaches the "
        f"optimum on {equal}, and its peak is {mean:+.1%} above it on average"
    )
    if worst is not None:
        text += f", {worst.excess:+.1%} at worst ({worst.name})"
    text += "."
    if unproven:
        text += f" Not proven, not averaged: {', '.join(unproven)}."
    if over:
        text += f" The heuristic over the limit: {', '.join(over)}."
    text += (
        " The MILP's answer above the heuristic's peak: "
        f"{', '.join(above) if above else 'none'}."
    )
    planned = [r for r in rows if r.milp is not None and r.milp.slowdown <= slowdown]
    broken = [r.name for r in planned if r.milp and r.lp_bound > r.milp.plan.peak_after]
    tight = sum(
        r.milp is not None and r.lp_bound == r.milp.plan.peak_after for r in proven
    )
    text += (
        " The LP bound (for plans that keep arguments in HBM after their last"
        f" use, as both do) is at most the peak of every plan within the limit "
        f"({len(planned) - len(broken)} of {len(planned)}"
        + (f"; above it: {', '.join(broken)}" if broken else "")
        + f") and meets the proven optimum on {tight} of {len(proven)}."
    )
    return text


BEGIN = "<!-- bench/milp_gap.py: begin -->"
END = "<!-- bench/milp_gap.py: end -->"


def _wrap(text: str) -> str:
    """A paragraph of docs/benchmarks.md, at most 78 columns where words allow."""
    return textwrap.fill(text, 78, break_long_words=False, break_on_hyphens=False)


def section(rows: list[Row], args: argparse.Namespace, seconds: float) -> str:
    """The text docs/benchmarks.md holds between `BEGIN` and `END`."""
    import highspy

    version = highspy.Highs().version()
    dags = [r.steps for r in rows if r.name.startswith("dag-")]
    command = " ".join(["bench/milp_gap.py", *sys.argv[1:]])
    span = f" ({min(dags)} to {max(dags)} compute steps)" if dags else ""
    intro = (
        f"`.venv/bin/python {command}` ({seconds:.0f} s, written by the "
        f"script): {args.dags} seeded random DAGs of linalg ops on 64x64 f32 "
        f"tensors{span}"
        + ("" if args.no_steps else ", the tiny LLaMA and tiny GPT training steps")
        + f", on {HARDWARE}, each planned for the least peak within a "
        f"{args.slowdown:.0%} slowdown by the heuristic "
        f"(`hyperoffload-pipeline{{max-slowdown={args.slowdown:g}}}`) and by the "
        f"MILP (HiGHS {version}, one thread, {args.time_limit:g} s per DAG"
        + ("" if args.no_steps else f", {args.step_time_limit:g} s per step")
        + "), started from the heuristic's plan; both judged by the simulator."
    )
    return "\n".join(
        ["", _wrap(intro), "", table(rows), "", _wrap(summary(rows, args.slowdown)), ""]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="The heuristic against the MILP.")
    parser.add_argument("--dags", type=int, default=24)
    parser.add_argument("--slowdown", type=float, default=0.05)
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--step-time-limit", type=float, default=60.0)
    parser.add_argument("--no-steps", action="store_true")
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="write the table into docs/benchmarks.md between its markers",
    )
    args = parser.parse_args()
    hardware = load_hardware(HARDWARE)
    start = time.perf_counter()
    rows: list[Row] = []
    programs = [
        (f"dag-{seed}", random_dag(seed), args.time_limit) for seed in range(args.dags)
    ]
    if not args.no_steps:
        programs += [(n, t, args.step_time_limit) for n, t in training_steps()]
    for name, text, limit in programs:
        rows.append(compare(name, text, hardware, args.slowdown, limit))
        print(table(rows[-1:]).splitlines()[-1], file=sys.stderr)
    text = section(rows, args, time.perf_counter() - start)
    print(text)
    if args.write_docs:
        write_between(ROOT / "docs" / "benchmarks.md", text, BEGIN, END)


if __name__ == "__main__":
    main()
