"""
The seeded sample of the fuzzers that CI runs (`make fuzz` runs the full
campaign): a hundred mutation cases and a few random programs through every
differential configuration, the lowering through the ExecutionEngine
included; none may end in a traceback, crash, hang, mismatch or broken
invariant. Also: the mutators and generators are deterministic.
"""

import json
import random
import tomllib
from pathlib import Path

import pytest

from fuzz import differential
from fuzz import run as mutation
from fuzz.mutate import dump_toml, mutate_ir, mutate_json, mutate_toml
from fuzz.programs import random_dag, random_transformer
from fuzz.report import Tally
from hyperoffload.ir.context import make_context
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir

ROOT = Path(__file__).resolve().parents[3]
PRESETS = ROOT / "python" / "hyperoffload" / "model" / "presets"


def _summary(folder: Path) -> dict[str, int]:
    counts: dict[str, int] = json.loads((folder / "summary.json").read_text())["counts"]
    return counts


def test_mutation_sample_has_no_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = mutation.main(
        ["--cases", "100", "--seed", "1", "--jobs", "1", "--out", str(tmp_path), "-q"]
    )
    report = capsys.readouterr().out
    assert status == 0, report
    counts = _summary(tmp_path / "mutation-seed1")
    assert sum(counts.values()) == 100
    assert set(counts) <= {"ok", "diagnosed"}, report
    assert counts.get("ok", 0) > 0  # some mutants still plan and simulate


def test_differential_sample_has_no_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--cases", "3", "--lowering-cases", "1", "--seed", "1"]
    status = differential.main([*args, "--out", str(tmp_path), "-q"])
    report = capsys.readouterr().out
    assert status == 0, report
    counts = _summary(tmp_path / "differential-seed1")
    assert sum(counts.values()) == 3 * len(differential.PASS_CONFIGS) + 1
    assert set(counts) <= {"ok", "diagnosed"}, report


def test_cases_are_the_same_on_every_run() -> None:
    seeds = mutation.load_seeds(1)  # the mutation sample's, built once
    for index in (0, 7, 42):
        assert mutation.make_case(seeds, 3, index) == mutation.make_case(
            seeds, 3, index
        )
    assert differential.make_program(3, 5) == differential.make_program(3, 5)


def test_mutators_are_deterministic_and_change_their_input() -> None:
    text = (ROOT / "examples" / "offload_mlp.mlir").read_text()
    changed = 0
    for seed in range(20):
        first = mutate_ir(text, random.Random(seed), [text])
        assert first == mutate_ir(text, random.Random(seed), [text])
        changed += first[0] != text
    assert changed >= 15
    schedule = json.dumps({"version": 1, "function": "f", "buffers": [], "steps": []})
    assert mutate_json(schedule, random.Random(1)) == mutate_json(
        schedule, random.Random(1)
    )
    preset = tomllib.loads((PRESETS / "ascend-910c.toml").read_text())
    assert mutate_toml(preset, random.Random(2)) == mutate_toml(
        preset, random.Random(2)
    )


@pytest.mark.parametrize("preset", sorted(p.name for p in PRESETS.glob("*.toml")))
def test_the_toml_writer_round_trips_the_presets(preset: str) -> None:
    data = tomllib.loads((PRESETS / preset).read_text())
    assert tomllib.loads(dump_toml(data)) == data


@pytest.mark.parametrize("seed", range(6))
def test_generated_programs_verify(seed: int) -> None:
    ctx = make_context()
    for program in (
        random_dag(random.Random(seed)),
        random_transformer(
            random.Random(seed), ["forward", "decode", "train"][seed % 3]
        ),
    ):
        verify_module(parse_mlir(ctx, program.text, f"{program.kind}.mlir"))


def test_a_stopped_run_is_recorded_as_stopped() -> None:
    """`fuzz.record` says how many cases of how many a stopped run ran."""
    from fuzz.record import row

    counts = {"ok": 3, "diagnosed": 4}
    summary: dict[str, object] = {"seconds": 12.0, "counts": counts, "failures": []}
    assert "| 7 |" in row("m", summary)
    stopped = row("m", summary | {"stopped": [7, 10000]})
    assert "| 7 of 10,000 (stopped) |" in stopped


def test_a_stopped_differential_run_writes_what_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    A differential run stopped by SIGTERM or Ctrl-C (a KeyboardInterrupt in
    the driver) writes the counts of the cases that finished, as stopped.
    """

    def one_then_stopped(
        tasks: list[differential.Task], tally: Tally, _: object
    ) -> None:
        tally.add(tasks[0].config, "ok", "", None, "0", 0.1, "")
        raise KeyboardInterrupt

    monkeypatch.setattr(differential, "_run", one_then_stopped)
    argv = [
        "--cases",
        "3",
        "--lowering-cases",
        "1",
        "--seed",
        "2",
        "--out",
        str(tmp_path),
    ]
    assert differential.main([*argv, "-q"]) == 1
    summary = json.loads((tmp_path / "differential-seed2" / "summary.json").read_text())
    assert summary["stopped"] == [1, 3 * (len(differential.CONFIGS) - 1) + 1]
    assert summary["counts"] == {"ok": 1}
