"""
Differential testing of the planning passes and the lowering on random
programs (`fuzz.programs`: DAGs and transformer-like steps).

```
python -m fuzz.differential --cases 1000 --lowering-cases 200 --seed 1 --jobs 2
python -m fuzz.differential --seed 1 --only 17 --configs pipeline-50   # one case again
```

Program `i` of seed `s` is the same for every configuration. Each
configuration plans it (a pass pipeline, as `hyperoffload-opt -p` runs it)
and checks the result:

- `insert`: `hyperoffload-insert` at a random target between the largest
  single-op working set (fraction 0) and the unconstrained peak (1), some
  above it, with random options (detach, prefetch distance, categories,
  place-arguments);
- `move-window`: the same insertion, then `hyperoffload-move-window` with
  random weights and in-flight limit;
- `pipeline-0`, `-25`, `-50`, `-75`, `-100`: `hyperoffload-pipeline` at
  that percentage of the range; `pipeline-slowdown`: with `max-slowdown`;
- `lowering`: the pipeline at a random target, then
  `convert-hyperoffload-to-linalg`, run natively with the MLIR
  ExecutionEngine beside the program (as `hyperoffload-check` does); JIT
  compiling twice per program makes it ~1 s a case, hence its own count.

Checks, for the pass configurations: the output verifies (the residency
invariants of `hyperoffload.ir.diagnostics.verify_module`); the numeric
evaluator, which raises on any read of a value not resident in HBM, runs it
and its outputs equal the unplanned program's bit for bit (the generated
program has no offload ops: it is its own stripped reference); the
simulator runs it (`plan`) and its peak is not above the unplanned
program's; `move-window` does not raise its objective `alpha * T_exposed +
beta * M_peak` (each term relative to its input's) and keeps a target its
input met unless `beta=0` (`move_window_breaks`); one residency truth: the verifier, the
simulator, `hyperoffload-assign-offsets` and `convert-hyperoffload-to-linalg`
all accept the plan (`residency_verdicts`), and all reject it once a detach
is moved before a use of what it releases (`detach_too_early`). For
`lowering`: the outputs equal the original's bit for bit. A pass that fails with a diagnostic (a target below
what one op needs) is `diagnosed`; one that fails otherwise on these valid
programs (another diagnostic, IR that its own check rejects, a simulation
of its output that fails) breaks an `invariant`, as does a failed check;
outputs that differ are a `mismatch`.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import re
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdsl.utils.exceptions import (
    ArgSpecParseError,
    PassFailedException,
    VerifyException,
)

from fuzz.pool import STOP_SIGNALS, Died, run_cases, stop_on_sigterm
from fuzz.programs import Program, random_program
from fuzz.report import Tally, command_script, error_signature, preload

HARDWARE = "ascend-910c"
PASS_CONFIGS = [
    "insert",
    "move-window",
    "pipeline-0",
    "pipeline-25",
    "pipeline-50",
    "pipeline-75",
    "pipeline-100",
    "pipeline-slowdown",
]
CONFIGS = [*PASS_CONFIGS, "lowering"]
FLOAT_WEIGHTS = ["0", "0.5", "1", "4"]
PLAN_FAILURES = (PassFailedException, VerifyException, ValueError)
"""What a pass may raise on a valid program: a diagnostic (a target below
what one op needs), its check of the IR it wrote, or the simulation of it
(`SimulationError`, a `ValueError`)."""


@dataclass(frozen=True)
class Task:
    index: int
    seed: int
    config: str


@dataclass(frozen=True)
class Outcome:
    outcome: str
    signature: str
    detail: str
    spec: str
    kind: str
    seconds: float


def make_program(seed: int, index: int) -> Program:
    return random_program(random.Random(f"differential:{seed}:{index}"))


# --- one case (in a worker) ---------------------------------------------------------


class _Prepared:
    """A program parsed, evaluated and simulated once, for every configuration."""

    def __init__(self, program: Program):
        from hyperoffload.analysis import program as analysed
        from hyperoffload.analysis.extract import main_function
        from hyperoffload.evaluators.numeric import evaluate, random_inputs
        from hyperoffload.ir.context import make_context
        from hyperoffload.ir.parsing import parse_mlir
        from hyperoffload.model.hardware import load_hardware
        from hyperoffload.policies.peers import PolicyOptions, run_policy

        self.program = program
        self.ctx = make_context()
        self.module = parse_mlir(self.ctx, program.text, "program.mlir")
        self.inputs = random_inputs(main_function(self.module, None), 0)
        self.outputs = evaluate(self.module, self.inputs).outputs
        self.hardware = load_hardware(HARDWARE)
        self.stripped = analysed.Program(self.module, self.hardware).reference
        none = run_policy(
            "none", self.stripped, self.stripped, self.hardware, None, PolicyOptions()
        )
        self.peak = none.peak_hbm_bytes
        self.lowest = none.bound_peak_bytes

    def target(self, fraction: float) -> int:
        return int(self.lowest + fraction * (self.peak - self.lowest))


_PREPARED: dict[tuple[int, int], _Prepared] = {}


def _prepared(seed: int, index: int) -> _Prepared:
    key = (seed, index)
    if key not in _PREPARED:
        if len(_PREPARED) > 8:
            _PREPARED.pop(next(iter(_PREPARED)))
        _PREPARED[key] = _Prepared(make_program(seed, index))
    return _PREPARED[key]


def _insert_options(rng: random.Random) -> list[str]:
    options: list[str] = []
    if rng.random() < 0.3:
        options.append(f"detach={rng.choice(['eager', 'lazy'])}")
    if rng.random() < 0.3:
        options.append(f"prefetch-distance={rng.choice([0, 1, 2, 3])}")
    if rng.random() < 0.2:
        chosen = rng.sample(
            ["params", "activations", "optimizer", "kv"], rng.randint(1, 3)
        )
        options.append(f"categories={','.join(chosen)}")
    if rng.random() < 0.3:
        options.append("place-arguments=true")
    return options


def _move_options(rng: random.Random) -> list[str]:
    options: list[str] = []
    if rng.random() < 0.5:
        options.append(f"alpha={rng.choice(FLOAT_WEIGHTS)}")
    if rng.random() < 0.5:
        options.append(f"beta={rng.choice(FLOAT_WEIGHTS)}")
    if rng.random() < 0.3:
        options.append(f"max-inflight={rng.choice([1, 2, 8])}")
    return options


def pass_spec(
    prepared: _Prepared, config: str, rng: random.Random
) -> tuple[str, int | None]:
    """The pipeline of `config` for this program, and the target it plans for."""
    if config == "pipeline-slowdown":
        slowdown = rng.choice(["0", "0.01", "0.05", "0.25"])
        options = [f"max-slowdown={slowdown}", *_insert_options(rng)]
        return f"hyperoffload-pipeline{{{' '.join(options)}}}", None
    if config.startswith("pipeline-"):
        target = prepared.target(int(config.removeprefix("pipeline-")) / 100)
        options = [f"hbm-capacity={target}", *_insert_options(rng)]
        return f"hyperoffload-pipeline{{{' '.join(options)}}}", target
    target = prepared.target(rng.uniform(0.0, 1.2))
    insert = " ".join([f"hbm-capacity={target}", *_insert_options(rng)])
    if config == "insert":
        return f"hyperoffload-insert{{{insert}}}", target
    if config == "move-window":
        move = " ".join([f"hbm-capacity={target}", *_move_options(rng)])
        return (
            f"hyperoffload-insert{{{insert}}},hyperoffload-move-window{{{move}}}",
            target,
        )
    # lowering
    return f"hyperoffload-pipeline{{{insert}}},convert-hyperoffload-to-linalg", target


def _apply(prepared: _Prepared, spec: str, module: Any = None) -> Any:
    """
    `module` (default: a clone of the program) after `spec`; raises what the
    passes raise.
    """
    from xdsl.passes import PassPipeline

    from hyperoffload.ir.diagnostics import silence_diagnostics
    from hyperoffload.passes import all_passes

    module = prepared.module.clone() if module is None else module
    with silence_diagnostics():
        PassPipeline.parse_spec(all_passes(), spec).apply(prepared.ctx, module)
    return module


def _generic(module: Any) -> str:
    from xdsl.printer import Printer

    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(module)
    return stream.getvalue() + "\n"


def _simulate(prepared: _Prepared, module: Any, capacity: int | None) -> Any:
    """The `plan` run of `module` (the unplanned program's schedule is known)."""
    from hyperoffload.analysis.cost import CostModel
    from hyperoffload.analysis.extract import extract_schedule, main_function
    from hyperoffload.policies.peers import PolicyOptions, run_policy

    planned = extract_schedule(
        main_function(module, None), CostModel(prepared.hardware)
    )
    return run_policy(
        "plan", planned, prepared.stripped, prepared.hardware, capacity, PolicyOptions()
    )


def _plan_failure(config: str, err: Exception) -> tuple[str, str, str]:
    """The outcome of a pass that raised `err` on a generated (valid) program."""
    message = str(err).splitlines()[0] if str(err) else ""
    if isinstance(err, PassFailedException):
        if "no plan meets" in message:  # a target below what one op needs
            return "diagnosed", "", ""
        return "invariant", f"{config}: the pass fails: {message[:80]}", str(err)
    if isinstance(err, VerifyException):  # the pass's own check of what it wrote
        signature = f"{config}: the pass writes IR that does not verify"
        return "invariant", signature, str(err)
    signature = f"{config}: the pass raises {type(err).__name__}: {message[:60]}"
    return "invariant", signature, str(err)


def _check_passes(
    prepared: _Prepared, config: str, spec: str, target: int | None
) -> tuple[str, str, str]:
    """(outcome, signature, detail) of a pass configuration."""
    from xdsl.utils.exceptions import VerifyException

    from hyperoffload.evaluators.numeric import NumericError, evaluate
    from hyperoffload.ir.diagnostics import verify_module
    from hyperoffload.sim.simulator import SimulationError
    from hyperoffload.support.arrays import same_array

    before = None
    try:
        if config == "move-window":  # simulate the insertion alone too
            insert, move = spec.split(",hyperoffload-move-window")
            inserted = _apply(prepared, insert)
            try:
                before = _simulate(prepared, inserted, None)
            except SimulationError as err:
                signature = "move-window: the simulator rejects the insertion"
                return "invariant", signature, str(err)
            module = _apply(prepared, "hyperoffload-move-window" + move, inserted)
        else:
            module = _apply(prepared, spec)
    except PLAN_FAILURES as err:
        return _plan_failure(config, err)
    try:
        verify_module(module)
    except VerifyException as err:
        return "invariant", f"{config}: the output does not verify", str(err)
    try:
        outputs = evaluate(module, prepared.inputs).outputs
    except NumericError as err:
        return "invariant", f"{config}: the evaluator rejects the output", str(err)
    if len(outputs) != len(prepared.outputs) or not all(
        same_array(a, b) for a, b in zip(outputs, prepared.outputs, strict=True)
    ):
        return "mismatch", f"{config}: outputs differ from the unplanned program", ""
    try:
        after = _simulate(prepared, module, None)
    except SimulationError as err:
        return "invariant", f"{config}: the simulator rejects the output", str(err)
    if after.peak_hbm_bytes > prepared.peak:
        detail = (
            f"planned peak {after.peak_hbm_bytes} B > unplanned peak {prepared.peak} B"
        )
        return "invariant", f"{config}: peak above the unplanned program's", detail
    disagreement = residency_disagreement(prepared, module)
    if disagreement:
        return "invariant", f"{config}: the tools disagree on residency", disagreement
    broken = detach_too_early(module)
    if broken is not None:
        disagreement = residency_disagreement(prepared, broken, invalid=True)
        if disagreement:
            signature = f"{config}: the tools disagree on a use after its detach"
            return "invariant", signature, disagreement
    if before is not None:
        broken = move_window_breaks(before, after, target, *move_weights(spec))
        if broken:
            return "invariant", f"move-window: {broken[0]}", broken[1]
    return "ok", "", ""


def move_weights(spec: str) -> tuple[float, float]:
    """(alpha, beta) of the `hyperoffload-move-window` in `spec` (defaults 1, 1)."""
    options = spec.partition("hyperoffload-move-window")[2]
    alpha = re.search(r"\balpha=([0-9.]+)", options)
    beta = re.search(r"\bbeta=([0-9.]+)", options)
    return (
        float(alpha[1]) if alpha else 1.0,
        float(beta[1]) if beta else 1.0,
    )


def move_window_breaks(
    before: Any, after: Any, target: int | None, alpha: float, beta: float
) -> tuple[str, str] | None:
    """
    (signature, detail) of the move-window invariant that `after` (the
    simulation of the moved plan) breaks against `before` (its input), or
    `None`. Its objective is `alpha * T_exposed + beta * M_peak`, each term
    relative to the input's (exposed over compute time, peak over peak):

    - the placement costs no more than its input (with `alpha=0` it may
      expose more for no less memory: each fetch goes right before its user);
    - a target the input met stays met, unless memory carries no weight
      (`beta=0`: the least exposure, whatever the target).
    """
    exposed = (before.exposed_transfer_s, after.exposed_transfer_s)
    peak = (before.peak_hbm_bytes, after.peak_hbm_bytes)
    detail = (
        f"alpha={alpha} beta={beta}: exposed {exposed[0]:.4g} s before, "
        f"{exposed[1]:.4g} s after; peak {peak[0]} B before, {peak[1]} B after"
    )
    compute = max(before.compute_s, 1e-30)
    cost = [
        alpha * e / compute + beta * m / max(peak[0], 1)
        for e, m in zip(exposed, peak, strict=True)
    ]
    if cost[1] > cost[0] * (1 + 1e-6) + 1e-9:
        return "costs more than its input", detail
    if beta > 0 and target is not None and peak[0] <= target < peak[1]:
        return "breaks a target its input met", f"target {target} B: {detail}"
    return None


RESIDENCY_TOOLS = ("verify", "simulate", "assign-offsets", "lowering")


def residency_verdicts(prepared: _Prepared, module: Any) -> dict[str, str]:
    """
    What each tool that reads residency says of `module` (a clone each):
    `""` when it accepts, else the first line of its error. The verifier
    (`verify_module`), the simulator (the plan's schedule), the
    `hyperoffload-assign-offsets` pass and the lowering
    (`convert-hyperoffload-to-linalg`).
    """
    from hyperoffload.analysis.extract import ExtractionError
    from hyperoffload.ir.diagnostics import verify_module
    from hyperoffload.sim.simulator import SimulationError

    def first_line(err: Exception) -> str:
        return (str(err).splitlines() or [type(err).__name__])[0]

    verdicts: dict[str, str] = {}
    try:
        verify_module(module.clone())
        verdicts["verify"] = ""
    except VerifyException as err:
        verdicts["verify"] = first_line(err)
    try:
        _simulate(prepared, module.clone(), None)
        verdicts["simulate"] = ""
    except (SimulationError, ExtractionError) as err:
        verdicts["simulate"] = first_line(err)
    for tool, spec in (
        ("assign-offsets", "hyperoffload-assign-offsets"),
        ("lowering", "convert-hyperoffload-to-linalg"),
    ):
        try:
            _apply(prepared, spec, module.clone())
            verdicts[tool] = ""
        except PLAN_FAILURES as err:
            verdicts[tool] = first_line(err)
    return verdicts


_BLAMES = (
    re.compile(r"'(?P<op>[\w.]+)' reads (?P<value>%[\w.#-]+)"),
    re.compile(r"(?P<value>%[\w.#-]+) is still used by '(?P<op>[\w.]+)'"),
    re.compile(r"the (?P<op>store) of (?P<value>%[\w.#-]+)"),
    re.compile(r"(?P<value>%[\w.#-]+) is used after its detach"),
)


def blamed(verdict: str) -> tuple[str, str | None]:
    """
    (value, op) of the read a tool's rejection blames (`'op' reads %value`,
    `%value is still used by 'op'`; the op `None` where the message names
    only the value), else (the message, None).
    """
    for pattern in _BLAMES:
        if match := pattern.search(verdict):
            op = match.groupdict().get("op")
            return match["value"], op and op.removeprefix("hyperoffload.")
    return verdict, None


def same_read(verdicts: Sequence[str]) -> bool:
    """Do these rejections blame one read: one value, and one op where named?"""
    blames = [blamed(v) for v in verdicts]
    ops = {op for _, op in blames if op is not None}
    return len({value for value, _ in blames}) == 1 and len(ops) <= 1


def abstains(verdict: str) -> bool:
    """
    A tool that does not read this program at all (`... is not supported
    here`: the simulator and `hyperoffload-assign-offsets` follow one path,
    and reject a branch before any residency question) gives no verdict.
    """
    return "is not supported here" in verdict


def residency_disagreement(
    prepared: _Prepared, module: Any, invalid: bool = False
) -> str:
    """
    `""` when the four tools of `residency_verdicts` all accept `module`, or
    all reject it at the same read (`blamed`); else what each said. A tool
    that `abstains` is left out. An
    `invalid` module must be rejected. (The verifier and the passes read
    residency through one function, `verify_residency`, and say the same;
    the simulator reads the schedule, and blames the read where the verifier
    may blame the detach before it, naming the read.)
    """
    verdicts = residency_verdicts(prepared, module)
    said = {v for v in verdicts.values() if not abstains(v)}
    if not said:
        return ""
    if said == {""} and not invalid:
        return ""
    if "" not in said and same_read(list(said)):
        return ""
    return "; ".join(f"{tool}: {text or 'accepts'}" for tool, text in verdicts.items())


def detach_too_early(module: Any) -> Any | None:
    """
    A copy of `module` with one `hyperoffload.detach` moved before a use of
    the value it releases (a use after its detach: a plan every tool must
    reject at that use), or `None` when no detach has a use to jump.
    """
    from hyperoffload.dialects.hyperoffload import DetachOp

    broken = module.clone()
    for detach in [op for op in broken.walk() if isinstance(op, DetachOp)]:
        block = detach.parent_block()
        if block is None:
            continue
        users = {use.operation for use in detach.value.uses}
        first = next((op for op in block.ops if op in users and op is not detach), None)
        if first is None or not _before(first, detach):
            continue
        detach.detach()
        block.insert_op_before(detach, first)
        return broken
    return None


def _before(first: Any, second: Any) -> bool:
    """Does `first` come before `second` in their block?"""
    op = first.next_op
    while op is not None:
        if op is second:
            return True
        op = op.next_op
    return False


def _check_lowering(prepared: _Prepared, spec: str) -> tuple[str, str, str]:
    from hyperoffload.evaluators.execution import (
        ExecutionError,
        compare_outputs,
        run_upstream,
    )

    try:
        module = _apply(prepared, spec)
    except PLAN_FAILURES as err:
        return _plan_failure("lowering", err)
    try:
        original = run_upstream(
            _generic(prepared.module), prepared.inputs, None, "<original>"
        )
    except ExecutionError as err:
        return "execution-error", "lowering: the original does not run", str(err)
    try:
        lowered = run_upstream(_generic(module), prepared.inputs, None, "<lowered>")
    except ExecutionError as err:
        return "invariant", "lowering: the lowered program does not run", str(err)
    comparison = compare_outputs(original, lowered)
    if not comparison.match:
        detail = f"max |diff| = {comparison.max_abs_diff}"
        return "mismatch", "lowering: outputs differ from the original", detail
    return "ok", "", ""


def run_task(task: Task) -> Outcome:
    """Plan program `task.index` with `task.config` and check it (in a worker)."""
    start = time.perf_counter()
    spec, kind = "", "?"
    try:
        prepared = _prepared(task.seed, task.index)
        kind = prepared.program.kind
        rng = random.Random(f"options:{task.seed}:{task.index}:{task.config}")
        spec, target = pass_spec(prepared, task.config, rng)
        if task.config == "lowering":
            outcome, signature, detail = _check_lowering(prepared, spec)
        else:
            outcome, signature, detail = _check_passes(
                prepared, task.config, spec, target
            )
    except (Exception, ArgSpecParseError) as err:  # noqa: BLE001 -- the outcome
        import traceback

        outcome = "traceback"
        signature = f"{task.config}: {error_signature(err)}"
        detail = "".join(traceback.format_exception(err))
    return Outcome(outcome, signature, detail, spec, kind, time.perf_counter() - start)


# --- the driver -------------------------------------------------------------------


def _tasks(
    seed: int,
    cases: int,
    lowering_cases: int,
    configs: Sequence[str],
    only: Sequence[int] | None,
) -> Iterator[Task]:
    indices = list(only) if only is not None else range(max(cases, lowering_cases))
    for index in indices:
        for config in configs:
            limit = lowering_cases if config == "lowering" else cases
            if only is not None or index < limit:
                yield Task(index, seed, config)


def _reproducer(task: Task, result: Outcome | Died) -> dict[str, str]:
    program = make_program(task.seed, task.index)
    files = {"program.mlir": program.text}
    spec = result.spec if isinstance(result, Outcome) else ""
    if task.config == "lowering" and spec:
        pipeline = spec.removesuffix(",convert-hyperoffload-to-linalg")
        files["cmd.sh"] = command_script(
            "hyperoffload-check", ["program.mlir", "--pipeline", pipeline, "-q"]
        )
    elif spec:
        files["cmd.sh"] = (
            command_script(
                "hyperoffload-opt", ["program.mlir", "-p", spec, "-o", "planned.mlir"]
            )
            + "hyperoffload-sim planned.mlir --execute --policy plan\n"
        )
    about = [
        f"program {task.index} of seed {task.seed} ({program.kind}), configuration {task.config}",
        f"again: python -m fuzz.differential --seed {task.seed} --only {task.index} "
        f"--configs {task.config}",
        f"pipeline: {spec}",
    ]
    if isinstance(result, Died):
        about.append(f"{result.outcome}: {result.detail}")
    else:
        about.append(f"{result.outcome}: {result.signature}")
        files["detail.txt"] = result.detail
    files["case.txt"] = "\n".join(about) + "\n"
    return files


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m fuzz.differential", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument(
        "--cases", type=int, default=100, help="programs per pass configuration"
    )
    parser.add_argument(
        "--lowering-cases", type=int, default=None,
        help="programs for the ExecutionEngine configuration (default: --cases / 5)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("build/fuzz"))
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    parser.add_argument(
        "--configs", help=f"comma-separated subset of {', '.join(CONFIGS)}"
    )
    parser.add_argument("--only", help="comma-separated program indices to run (again)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    options = parser.parse_args(argv)
    configs = options.configs.split(",") if options.configs else CONFIGS
    unknown = sorted(set(configs) - set(CONFIGS))
    if unknown:
        parser.error(f"unknown configuration(s) {', '.join(unknown)}")
    lowering = (
        options.lowering_cases
        if options.lowering_cases is not None
        else options.cases // 5
    )
    only = [int(i) for i in options.only.split(",")] if options.only else None

    stop_on_sigterm()
    preload()
    start = time.monotonic()
    out: Path = options.out / f"differential-seed{options.seed}"
    tally = Tally(out)
    tasks = list(_tasks(options.seed, options.cases, lowering, configs, only))
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    stopped = None
    try:
        _run(tasks, tally, options)
    except KeyboardInterrupt:  # SIGINT or SIGTERM: record what finished
        stopped = (sum(tally.counts.values()), len(tasks))
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    seconds = time.monotonic() - start
    title = f"differential testing, seed {options.seed}"
    if stopped:
        title += f", stopped after {stopped[0]} of {stopped[1]} cases"
    tally.print_summary(title, seconds)
    tally.write_json(out / "summary.json", seconds, stopped)
    return 1 if tally.bad() or stopped else 0


def _run(tasks: list[Task], tally: Tally, options: argparse.Namespace) -> None:
    """Run `tasks` in the pool, each result into `tally` (and a line if asked)."""
    start = time.monotonic()
    results = run_cases(tasks, run_task, options.jobs, options.timeout, recycle=400)
    for done, (task, result) in enumerate(results, start=1):
        if isinstance(result, Died):
            outcome, signature, spent = (
                result.outcome,
                f"{task.config}: {result.detail}",
                0.0,
            )
        else:
            outcome, signature, spent = result.outcome, result.signature, result.seconds
        save = None if outcome in ("ok", "diagnosed") else _reproducer(task, result)
        output = "" if isinstance(result, Died) else result.detail
        tally.add(task.config, outcome, signature, save, f"{task.index}", spent, output)
        if not options.quiet and save is not None:
            print(
                f"program {task.index} [{task.config}]: {outcome}: {signature}",
                flush=True,
            )
        if not options.quiet and done % 500 == 0:
            counts = ", ".join(f"{o} {c}" for o, c in sorted(tally.counts.items()))
            print(
                f"[{done} cases, {time.monotonic() - start:.0f} s] {counts}", flush=True
            )
        if STOP_SIGNALS:  # a signal a case in-process took for its own
            raise KeyboardInterrupt


__all__ = ["CONFIGS", "Outcome", "Task", "main", "make_program", "run_task"]

if __name__ == "__main__":
    sys.exit(main())
