"""
Schedule JSON is read strictly: an unknown field names the nearest known
one and where it is; an unknown compression scheme, a free of a pinned
buffer and a buffer allocated twice are errors; the schedules our tools
write still read back; and a schedule is written as strict JSON.
"""

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hyperoffload.analysis.program import Program
from hyperoffload.ir.context import make_context
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.model.schedule import Compute, Schedule, ScheduleError
from hyperoffload.passes.pipeline import PipelinePass
from hyperoffload.support.strict_json import NonFiniteError
from hyperoffload.tools.hyperoffload_sim import main as sim_main

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _schedule(name: str, capacity: str | None = None) -> Schedule:
    path = EXAMPLES / name
    module = parse_mlir(make_context(), path.read_text(), str(path))
    if capacity is not None:
        PipelinePass(hbm_capacity=capacity, place_arguments=True).apply(
            make_context(), module
        )
    return Program(module, load_hardware("ascend-910c")).planned


@pytest.fixture(scope="module")
def mlp() -> dict[str, Any]:
    """The planned MLP's schedule: arguments in three tiers, prefetches, frees."""
    return _schedule("offload_mlp.mlir").to_json()


def _first(data: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(s for s in data["steps"] if s["kind"] == kind)


def _rename(table: dict[str, Any], old: str, new: str) -> None:
    table[new] = table.pop(old)


def _pinned(data: dict[str, Any]) -> int:
    return next(b["id"] for b in data["buffers"] if b["pinned"] and b["tier"] == "hbm")


def _allocated(data: dict[str, Any]) -> int:
    return next(b for s in data["steps"] if s["kind"] == "compute" for b in s["allocs"])


MUTATIONS: dict[str, tuple[Callable[[dict[str, Any]], object], str]] = {
    "top-level": (
        lambda d: _rename(d, "forward_end", "forwardend"),
        r"schedule: unknown field 'forwardend' \(did you mean 'forward_end'\?\)",
    ),
    "buffer": (
        lambda d: _rename(d["buffers"][1], "bytes", "byte"),
        r"buffers\[1\]: unknown field 'byte' \(did you mean 'bytes'\?\)",
    ),
    "step": (
        lambda d: _rename(_first(d, "compute"), "allocs", "alloc"),
        r"steps\[\d+\]: unknown field 'alloc' \(did you mean 'allocs'\?\)",
    ),
    "far-from-any": (
        lambda d: d["buffers"][0].__setitem__("zzz", 1),
        r"unknown field 'zzz' \(known: bytes, home, id, initial",
    ),
    "compress": (
        lambda d: _first(d, "transfer").__setitem__("compress", "zstd"),
        r"steps\[\d+\]: 'compress' must be \"int8\" or null, not \"zstd\"",
    ),
    "free-pinned": (
        lambda d: d["steps"].append({"kind": "free", "buffer": _pinned(d)}),
        r"frees buffer \d+ \(%\w+\), which is pinned \(arguments, constants",
    ),
    "allocated-twice": (
        lambda d: d["steps"].append(
            {**_first(d, "compute"), "allocs": [_allocated(d)], "reads": []}
        ),
        r"allocates buffer \d+ \(%\w+\) again \(allocated steps\[\d+\]\)",
    ),
    "initial-allocated": (
        lambda d: _first(d, "compute").__setitem__("allocs", [_pinned(d)]),
        r"allocates buffer \d+ \(%\w+\) again \(allocated at entry\)",
    ),
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_strict_reading_names_what_is_wrong(
    mutation: str, mlp: dict[str, Any]
) -> None:
    mutate, message = MUTATIONS[mutation]
    data = json.loads(json.dumps(mlp))
    mutate(data)
    with pytest.raises(ValueError, match=message):
        Schedule.from_json(data)


def test_the_cli_locates_the_error_at_the_file(
    mlp: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(json.dumps(mlp))
    _first(data, "transfer")["compress"] = "zstd"
    path = tmp_path / "schedule.json"
    path.write_text(json.dumps(data))
    assert sim_main([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{path}: error: malformed schedule: steps[")
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("program", "capacity"),
    [("offload_mlp.mlir", None), ("tiny_llama_train.mlir", "500KB")],
)
def test_the_schedules_we_write_read_back(program: str, capacity: str | None) -> None:
    schedule = _schedule(program, capacity)
    assert Schedule.loads(schedule.dumps()) == schedule


def test_a_schedule_is_written_as_strict_json() -> None:
    schedule = Schedule("f", [], [Compute("op", "f.mlir:1:1", math.inf, 0.0, 0)])
    with pytest.raises(NonFiniteError, match=r"steps\[0\]\.time_s is inf"):
        schedule.dumps()


def test_a_schedule_error_without_a_file_is_unlocated() -> None:
    with pytest.raises(ScheduleError) as raised:
        Schedule.loads("[]")
    assert str(raised.value) == "malformed schedule: expected an object, not an array"
