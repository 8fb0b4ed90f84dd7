"""
Mutation fuzzing of `hyperoffload-opt` and `hyperoffload-sim`.

```
python -m fuzz.run --cases 10000 --seed 1 --jobs 2 --out build/fuzz
python -m fuzz.run --seed 1 --only 4711 --out build/fuzz   # one case again
```

Each case takes a seed input (the examples, the lit tests' inputs, the
torch-mlir output of `test/inputs`, generated programs, the schedules
`hyperoffload-opt -t hyperoffload-schedule` writes for them, the hardware
presets), mutates it (`fuzz.mutate`) and calls the tool's `main(args)` in a
forked worker, stdout and stderr captured, with a timeout. Groups of cases:

- `opt-ir`: mutated IR through `hyperoffload-opt`, with no pass or with
  the pipeline, insert, move-window, the lowering, strip, verify, the
  lifetime printer or the schedule target, under random options;
- `sim-ir`: mutated IR through `hyperoffload-sim` under a random policy
  (sometimes `--execute`, `--json`, `--trace`);
- `sim-json`: a mutated schedule through `hyperoffload-sim`;
- `hardware`: a mutated hardware TOML through `hyperoffload-sim
  --hardware` or the pipeline's `hardware=` option.

Outcomes: `ok` (exit 0), `diagnosed` (exit 1 with a located `error:`
line), `unlocated` (an `error:` line that names no place in the input nor
the argument at fault: `unlocated`), `traceback` (an internal error or an
exception escaping `main`), `crash` (the worker died), `hang` (past the
timeout), `undiagnosed` (a failure without an `error:` line). Every case that is not ok or diagnosed is saved
under `--out` as a reproducer (`fuzz.report`). Case `i` of seed `s` is the
same on every run: `--only i` runs it again.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
import tomllib
import traceback
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fuzz import upstream_fork
from fuzz.mutate import mutate_ir, mutate_json, mutate_toml
from fuzz.pool import STOP_SIGNALS, Died, run_cases, stop_on_sigterm
from fuzz.programs import random_dag, random_transformer
from fuzz.report import Tally, command_script, error_signature, preload

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ROOT / "python" / "hyperoffload" / "model" / "presets"
IR_SEED_GLOBS = [
    "examples/*.mlir",
    "test/passes/*.mlir",
    "test/inputs/*.mlir",
    "test/conversions/*.mlir",
    "test/targets/*.mlir",
    "test/tools/hyperoffload-opt/*.mlir",
    "test/dialects/hyperoffload/*.mlir",
]
SMALL = 20_000
"""Seeds above this many characters are picked (and run with slow options) rarely."""

GROUPS = {"opt-ir": 0.5, "sim-ir": 0.2, "sim-json": 0.15, "hardware": 0.15}
PRESET_NAMES = [
    "ascend-910c",
    "ascend-910b",
    "h100-pcie5",
    "h200-pcie5",
    "gh200-c2c",
    "a100-pcie4",
]
POLICIES = [
    "plan",
    "none",
    "reactive-lru",
    "runtime-prefetch",
    "distance",
    "activation-pass",
    "all",
]


@dataclass(frozen=True)
class Seeds:
    ir: list[tuple[str, str]]
    """(name, text) of each IR seed."""
    schedules: list[tuple[str, str]]
    toml: list[tuple[str, dict[str, object]]]

    @property
    def small_ir(self) -> list[tuple[str, str]]:
        return [
            (n, t)
            for n, t in self.ir
            if len(t) <= SMALL and "hyperoffload-opt" not in n
        ]


@dataclass(frozen=True)
class Case:
    index: int
    group: str
    tool: str
    """`hyperoffload-opt` or `hyperoffload-sim`."""
    args: list[str]
    files: dict[str, str]
    seed_name: str
    mutations: list[str] = field(default_factory=list[str])


@dataclass(frozen=True)
class Result:
    outcome: str
    status: int | None
    stderr: str
    signature: str
    traceback: str
    seconds: float


# --- seeds --------------------------------------------------------------------


def _opt_output(args: list[str]) -> str | None:
    """What `hyperoffload-opt args` prints, or None if it fails (in-process)."""
    from hyperoffload.tools.hyperoffload_opt import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(args)
    return out.getvalue() if status == 0 else None


@functools.cache
def load_seeds(seed: int) -> Seeds:
    """
    The seed inputs of this checkout and the generated ones of `seed`, with
    the schedules the tools write for them: built once per process (a few
    seconds of planning), since a run and its tests read them unchanged.
    """
    ir: list[tuple[str, str]] = []
    for pattern in IR_SEED_GLOBS:
        for path in sorted(ROOT.glob(pattern)):
            ir.append((str(path.relative_to(ROOT)), path.read_text()))
    rng = random.Random(f"seeds:{seed}")
    for i in range(6):
        ir.append((f"generated-dag-{i}", random_dag(rng).text))
        ir.append((f"generated-transformer-{i}", random_transformer(rng).text))
    schedules: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="fuzz-seeds-") as folder:
        for name, text in ir:
            if len(text) > SMALL or "expected-error" in text or "// -----" in text:
                continue
            path = Path(folder, "seed.mlir")
            path.write_text(text)
            for passes in ([], ["-p", "hyperoffload-pipeline{hbm-capacity=2KB}"]):
                printed = _opt_output(
                    [
                        str(path),
                        *passes,
                        "-t",
                        "hyperoffload-schedule{hardware=ascend-910c}",
                    ]
                )
                if printed is not None:
                    schedules.append((f"{name} {' '.join(passes)}".strip(), printed))
    toml = [
        (p.name, tomllib.loads(p.read_text())) for p in sorted(PRESETS.glob("*.toml"))
    ]
    toml += [
        (p.name, tomllib.loads(p.read_text()))
        for p in sorted((ROOT / "test" / "inputs").glob("*.toml"))
    ]
    return Seeds(ir, schedules, toml)


# --- cases --------------------------------------------------------------------


def _capacity(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.75:
        return str(int(10 ** rng.uniform(2, 7)))
    if roll < 0.9:
        return rng.choice(["1KB", "4KiB", "512MiB", "32GB", "1.5MB", "0.5KB", "64GB"])
    return rng.choice(
        ["0", "-1", "abc", "1e3", "10XB", "1e400", "nan", "9" * 30, "1.5"]
    )


def _hardware(rng: random.Random) -> str:
    return (
        rng.choice(PRESET_NAMES)
        if rng.random() < 0.97
        else rng.choice(["nope", "x.toml"])
    )


def _insert_options(rng: random.Random) -> list[str]:
    options: list[str] = []
    if rng.random() < 0.3:
        options.append(f"min-bytes={rng.choice(['0', '64', '1KB', '1MB', '-3', 'x'])}")
    if rng.random() < 0.2:
        options.append(
            f"min-gap={rng.choice(['0', '1us', '50us', '1s', 'abc', '-1us'])}"
        )
    if rng.random() < 0.3:
        chosen = rng.sample(
            ["params", "activations", "optimizer", "kv"], rng.randint(1, 4)
        )
        if rng.random() < 0.05:
            chosen.append("bogus")
        options.append(f"categories={','.join(chosen)}")
    if rng.random() < 0.3:
        options.append(f"prefetch-distance={rng.choice([0, 1, 2, 3, 8, -1])}")
    if rng.random() < 0.3:
        options.append(f"detach={rng.choice(['eager', 'lazy', 'lazy', 'never'])}")
    if rng.random() < 0.3:
        options.append(f"place-arguments={rng.choice(['true', 'false'])}")
    return options


def _move_options(rng: random.Random) -> list[str]:
    options: list[str] = []
    for name in ("alpha", "beta"):
        if rng.random() < 0.3:
            options.append(f"{name}={rng.choice(['0', '0.5', '1', '2', '1e9', '-1'])}")
    if rng.random() < 0.3:
        options.append(f"max-inflight={rng.choice([0, 1, 2, 8, 100, -1])}")
    return options


def _pass(
    name: str, rng: random.Random, large: bool, hardware: str | None = None
) -> str:
    options = (
        [f"hardware={hardware or _hardware(rng)}"]
        if hardware or rng.random() < 0.4
        else []
    )
    if rng.random() < 0.85:
        options.append(f"hbm-capacity={_capacity(rng)}")
    if name in ("hyperoffload-insert", "hyperoffload-pipeline"):
        options += _insert_options(rng)
    if name in ("hyperoffload-move-window", "hyperoffload-pipeline"):
        options += _move_options(rng)
    if name == "hyperoffload-pipeline" and rng.random() < (0.02 if large else 0.2):
        options.append(
            f"max-slowdown={rng.choice(['0', '0.01', '0.05', '0.5', '-0.1'])}"
        )
    return f"{name}{{{' '.join(options)}}}" if options else name


def _opt_args(rng: random.Random, text: str, hardware: str | None = None) -> list[str]:
    large = len(text) > SMALL
    args = ["input.mlir"]
    choice = rng.choices(
        ["none", "pipeline", "insert", "insert-move", "move", "lower", "plan-lower",
         "strip", "verify", "lifetimes", "schedule"],
        [1, 5, 3, 2, 2, 2, 3, 1, 1, 1, 1],
    )[0]  # fmt: skip
    plan = {
        "pipeline": ["hyperoffload-pipeline"],
        "insert": ["hyperoffload-insert"],
        "insert-move": ["hyperoffload-insert", "hyperoffload-move-window"],
        "move": ["hyperoffload-move-window"],
        "plan-lower": ["hyperoffload-pipeline", "convert-hyperoffload-to-linalg"],
    }.get(choice, [])
    if hardware is not None and not plan:
        plan = ["hyperoffload-pipeline"]
    specs = [
        _pass(p, rng, large, hardware) if p.startswith("hyperoffload-") else p
        for p in plan
    ]
    specs += {
        "lower": ["convert-hyperoffload-to-linalg"],
        "strip": ["hyperoffload-strip"],
        "verify": ["hyperoffload-verify"],
        "lifetimes": [f"test-print-lifetimes{{hardware={_hardware(rng)}}}"],
    }.get(choice, [])
    if specs:
        args += ["-p", ",".join(specs)]
    if choice == "schedule" or (hardware is not None and rng.random() < 0.3):
        args += [
            "-t",
            f"hyperoffload-schedule{{hardware={hardware or _hardware(rng)}}}",
        ]
    elif rng.random() < 0.2:
        args.append("--print-op-generic")
    if "// -----" in text and rng.random() < 0.7:
        args.append("--split-input-file")
    if rng.random() < 0.05:
        args += ["-o", "out.mlir"]
    return args


def _sim_args(
    rng: random.Random, input_name: str, text: str, hardware: str | None = None
) -> list[str]:
    program = input_name.endswith(".mlir")
    policies = POLICIES if program else ["plan", "none", "plan", "none", "all"]
    args = [input_name, "--policy", rng.choice(policies)]
    args += ["--hardware", hardware or _hardware(rng)]
    if rng.random() < 0.5:
        args += ["--hbm-capacity", _capacity(rng)]
    if rng.random() < 0.3:
        args.append("--json")
    if program and len(text) < 8000 and rng.random() < 0.2:
        args.append("--execute")
    if rng.random() < 0.1:
        args.append("--resident-arguments")
    if rng.random() < 0.1:
        args += [rng.choice(["--select-distance", "--prefetch-distance", "--release-distance",
                             "--select-num", "--forward-end", "--horizon"]),
                 str(rng.choice([0, 1, 3, -1, 1000]))]  # fmt: skip
    if rng.random() < 0.05:
        args += ["--tag-fraction", rng.choice(["0", "0.5", "1", "-1", "2", "nan"])]
    if rng.random() < 0.05:
        args += ["--trace", "trace.json"]
    if rng.random() < 0.02:
        args += ["--plot", "plot.png"]
    if rng.random() < 0.05:
        args += ["--function", rng.choice(["f", "main", "nope", "mlp", "train_step"])]
    return args


def _pick_ir(seeds: Seeds, rng: random.Random) -> tuple[str, str]:
    weights = [1.0 if len(t) <= SMALL else 0.08 for _, t in seeds.ir]
    return rng.choices(seeds.ir, weights)[0]


def make_case(seeds: Seeds, seed: int, index: int) -> Case:
    """Case `index` of run `seed`: the same on every run."""
    rng = random.Random(f"{seed}:{index}")
    group = rng.choices(list(GROUPS), list(GROUPS.values()))[0]
    donors = [t for _, t in seeds.small_ir]
    if group in ("opt-ir", "sim-ir"):
        name, text = _pick_ir(seeds, rng)
        mutated, applied = mutate_ir(text, rng, donors)
        if group == "opt-ir":
            return Case(index, group, "hyperoffload-opt", _opt_args(rng, mutated),
                        {"input.mlir": mutated}, name, applied)  # fmt: skip
        args = _sim_args(rng, "input.mlir", mutated)
        return Case(
            index,
            group,
            "hyperoffload-sim",
            args,
            {"input.mlir": mutated},
            name,
            applied,
        )
    if group == "sim-json":
        name, text = rng.choice(seeds.schedules)
        mutated, applied = mutate_json(text, rng)
        args = _sim_args(rng, "schedule.json", mutated)
        return Case(
            index,
            group,
            "hyperoffload-sim",
            args,
            {"schedule.json": mutated},
            name,
            applied,
        )
    name, data = rng.choice(seeds.toml)
    hardware, applied = mutate_toml(data, rng)
    program_name, program = rng.choice(seeds.small_ir)
    files = {"hw.toml": hardware, "input.mlir": program}
    name = f"{name} on {program_name}"
    if rng.random() < 0.5:
        args = _sim_args(rng, "input.mlir", program, hardware="hw.toml")
        return Case(index, group, "hyperoffload-sim", args, files, name, applied)
    args = _opt_args(rng, program, hardware='"hw.toml"')
    return Case(index, group, "hyperoffload-opt", args, files, name, applied)


# --- running a case (in a worker) ------------------------------------------------


@contextlib.contextmanager
def _recording_internal_errors(found: list[BaseException]) -> Generator[None]:
    """Keep the exception behind each internal error the tools report."""
    from hyperoffload.tools import command_line, hyperoffload_opt

    original = command_line.report_error

    def recording(tool: str, err: BaseException) -> int:
        status = original(tool, err)
        if status == 2:
            found.append(err)
        return status

    command_line.report_error = recording
    hyperoffload_opt.report_error = recording
    try:
        yield
    finally:
        command_line.report_error = original
        hyperoffload_opt.report_error = original


def _tool_main(tool: str) -> Callable[[Sequence[str]], int]:
    if tool == "hyperoffload-opt":
        from hyperoffload.tools.hyperoffload_opt import main
    else:
        from hyperoffload.tools.hyperoffload_sim import main
    return main


_AT_LINE = re.compile(r"^(?P<file>[^\s:]+):\d+(:\d+)?: error: ")
_AT_FILE = re.compile(r"^(?P<file>[^\s:]+): error: ")
DATA_SUFFIXES = (".json", ".toml")
"""Inputs whose diagnostics may name a key path rather than a line."""


def unlocated(stderr: str, files: Sequence[str], args: Sequence[str]) -> str:
    """
    `""` when the first `error:` line of `stderr` is located, else that line.
    Located: it names an input file and a line in it (`input.mlir:7:3: error:`,
    `hw.toml:10: error:`), or a data file (JSON, TOML) by name, its key path
    in the message (`schedule.json: error: ... buffers[2]: ...`); an error
    of the command line (`hyperoffload-opt: error: ...`) quotes the option
    or value at fault (a word of the arguments that is not an input file).
    """
    lines = [x for x in stderr.splitlines() if "error:" in x]
    if not lines:
        return ""
    first = lines[0]
    if (match := _AT_LINE.match(first)) and match["file"] in files:
        return ""
    match = _AT_FILE.match(first)
    if match is None:
        return first
    if match["file"] in files:
        return "" if match["file"].endswith(DATA_SUFFIXES) else first
    words = {
        word
        for arg in args
        if arg not in files
        for word in re.split(r"[\s{}=,\"']+", arg)
        if len(word) > 1 and word not in files
    }
    return "" if any(word in stderr for word in words) else first


def classify(
    status: int | None,
    stderr: str,
    internal: Sequence[BaseException],
    escaped: BaseException | None,
    files: Sequence[str] = (),
    args: Sequence[str] = (),
) -> tuple[str, str, str]:
    """(outcome, signature, traceback) of a finished run."""
    error = escaped or (internal[0] if internal else None)
    if error is not None:
        text = "".join(traceback.format_exception(error))
        return "traceback", error_signature(error), text
    if "internal error" in stderr or "Traceback (most recent call last)" in stderr:
        line = next(
            (x for x in stderr.splitlines() if "internal error" in x), "Traceback"
        )
        return "traceback", line[:160], stderr
    if status == 0:
        return "ok", "", ""
    if "error:" in stderr:
        line = unlocated(stderr, files, args)
        if line:
            signature = re.sub(r"\d+", "N", line)[:160]
            return "unlocated", signature, stderr
        return "diagnosed", "", ""
    return "undiagnosed", f"exit {status} without an error line", ""


def run_case(case: Case) -> Result:
    """Run one case in this process: files in a fresh folder, output captured."""
    start = time.perf_counter()
    here = os.getcwd()
    folder = tempfile.mkdtemp(
        prefix=f"case{case.index}-", dir=os.environ.get("FUZZ_TMP")
    )
    out, err = io.StringIO(), io.StringIO()
    internal: list[BaseException] = []
    escaped: BaseException | None = None
    status: int | None = None
    try:
        for name, content in case.files.items():
            Path(folder, name).write_text(content)
        os.chdir(folder)
        main = _tool_main(case.tool)
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            _recording_internal_errors(internal),
        ):
            try:
                status = main(case.args)
            except SystemExit as exit_:  # argparse's usage errors
                status = exit_.code if isinstance(exit_.code, int) else 1
            except BaseException as error:  # noqa: BLE001 -- the outcome
                escaped = error
    finally:
        os.chdir(here)
        shutil.rmtree(folder, ignore_errors=True)
    stderr = err.getvalue()
    outcome, signature, text = classify(
        status, stderr, internal, escaped, list(case.files), case.args
    )
    return Result(
        outcome, status, stderr[-4000:], signature, text, time.perf_counter() - start
    )


# --- the driver -----------------------------------------------------------------


def _reproducer(case: Case, result: Result | Died) -> dict[str, str]:
    files = dict(case.files)
    files["cmd.sh"] = command_script(case.tool, case.args)
    about = [
        f"case {case.index} ({case.group}) from seed input {case.seed_name}",
        f"mutations: {', '.join(case.mutations)}",
    ]
    if isinstance(result, Died):
        about.append(f"{result.outcome}: {result.detail}")
    else:
        files["stderr.txt"] = result.stderr
        if result.traceback:
            files["traceback.txt"] = result.traceback
        about.append(f"exit status {result.status}, {result.seconds:.2f} s")
    files["case.txt"] = "\n".join(about) + "\n"
    return files


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m fuzz.run", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("build/fuzz"))
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per case")
    parser.add_argument("--only", help="comma-separated case indices to run (again)")
    parser.add_argument(
        "--groups", help=f"comma-separated subset of {', '.join(GROUPS)}"
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    parser.add_argument("--log", type=Path, help="write one JSON line per case here")
    parser.add_argument(
        "--spawn-upstream",
        action="store_true",
        help="workers start bare, importing the bindings at their first upstream "
        "parse (default: preloaded, see fuzz.upstream_fork)",
    )
    options = parser.parse_args(argv)

    stop_on_sigterm()
    preload()
    start = time.monotonic()
    initializer = None if options.spawn_upstream else upstream_fork.install
    seeds = load_seeds(options.seed)
    indices = (
        [int(i) for i in options.only.split(",")]
        if options.only
        else range(options.cases)
    )
    groups = set(options.groups.split(",")) if options.groups else set(GROUPS)
    cases = (
        case
        for case in (make_case(seeds, options.seed, i) for i in indices)
        if case.group in groups
    )
    out: Path = options.out / f"mutation-seed{options.seed}"
    tally = Tally(out)
    scratch = tempfile.mkdtemp(prefix="fuzz-run-")
    os.environ["FUZZ_TMP"] = scratch  # the cases' folders, removed at the end
    slowest: list[tuple[float, int, str]] = []
    log = options.log.open("w") if options.log else None
    done = 0
    stopped = False
    try:
        results = run_cases(
            cases, run_case, options.jobs, options.timeout, initializer=initializer
        )
        for done, (case, result) in enumerate(results, start=1):
            if isinstance(result, Died):
                signature = (
                    f"{result.outcome} in {case.tool} ({case.group}): {result.detail}"
                )
                outcome = result.outcome
            else:
                outcome, signature = result.outcome, result.signature
            save = None if outcome in ("ok", "diagnosed") else _reproducer(case, result)
            spent = 0.0 if isinstance(result, Died) else result.seconds
            about = f"{case.group} {case.seed_name}: {case.tool} {' '.join(case.args)}"
            slowest = sorted([*slowest, (spent, case.index, about)], reverse=True)[:8]
            output = "" if isinstance(result, Died) else result.stderr
            tally.add(
                case.group, outcome, signature, save, f"{case.index}", spent, output
            )
            if log is not None:
                entry = {"case": case.index, "group": case.group, "outcome": outcome}
                entry |= {"signature": signature, "seconds": round(spent, 3)}
                log.write(json.dumps(entry) + "\n")
            if not options.quiet and outcome not in ("ok", "diagnosed"):
                print(f"case {case.index}: {outcome}: {signature}", flush=True)
            if not options.quiet and done % 500 == 0:
                counts = ", ".join(f"{o} {c}" for o, c in sorted(tally.counts.items()))
                print(
                    f"[{done} cases, {time.monotonic() - start:.0f} s] {counts}",
                    flush=True,
                )
            if STOP_SIGNALS:  # a signal a tool in-process took for its own
                raise KeyboardInterrupt
    except KeyboardInterrupt:  # SIGINT or SIGTERM: record what finished
        stopped = True
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.environ.pop("FUZZ_TMP", None)
        shutil.rmtree(scratch, ignore_errors=True)
        if log is not None:
            log.close()
    seconds = time.monotonic() - start
    title = f"mutation fuzzing, seed {options.seed}"
    if stopped:
        title += f", stopped after {done} of {len(indices)} cases"
    tally.print_summary(title, seconds)
    print("  slowest cases:")
    for spent, index, about in slowest:
        print(f"    {spent:6.2f} s  case {index}: {about[:150]}")
    tally.write_json(
        out / "summary.json", seconds, (done, len(indices)) if stopped else None
    )
    return 1 if tally.bad() or stopped else 0


__all__ = [
    "Case",
    "Result",
    "classify",
    "load_seeds",
    "main",
    "make_case",
    "run_case",
    "unlocated",
]

if __name__ == "__main__":
    sys.exit(main())
