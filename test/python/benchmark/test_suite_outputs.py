"""
A suite writes its plots and results together once every scenario has run:
an interrupted run leaves the folder's files byte-identical and no staging
folder behind; a merge replaces the scenarios it runs and keeps the others.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from hyperoffload.benchmark import suite
from hyperoffload.benchmark.suites import Scenario
from hyperoffload.benchmark.workloads import BenchError


def _drawing(
    scenario: Scenario, work: Path, out: Path, started: float
) -> dict[str, Any]:
    (out / f"{scenario.name}-timeline.png").write_bytes(b"new plot")
    return {
        "name": scenario.name,
        "kind": "failed",
        "title": scenario.title,
        "paper": scenario.paper,
        "error": "not run in this test",
        "wall_s": 0.0,
    }


def _markdown(summary: dict[str, Any]) -> str:
    return f"# {len(summary['scenarios'])} scenarios\n"


def _interrupted(
    scenario: Scenario, work: Path, out: Path, started: float
) -> dict[str, Any]:
    _drawing(scenario, work, out, started)
    raise KeyboardInterrupt


def test_a_suite_writes_its_plots_and_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(suite, "_run_one", _drawing)
    monkeypatch.setattr(suite, "suite_markdown", _markdown)
    summary = suite.run_suite("quick", tmp_path, tmp_path / "work", jobs=1)
    names = {s["name"] for s in summary["scenarios"]}
    written = {p.name for p in tmp_path.iterdir()}
    assert {f"{n}-timeline.png" for n in names} | {
        "results.json",
        "results.md",
    } <= written
    assert not [p for p in written if p.startswith(".staging-")]


def test_an_interrupted_suite_leaves_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    name = suite.select("quick")[0].name
    before = {"results.json": "old results\n", f"{name}-timeline.png": "old plot\n"}
    for file, text in before.items():
        (tmp_path / file).write_text(text)
    monkeypatch.setattr(suite, "_run_one", _interrupted)
    with pytest.raises(KeyboardInterrupt):
        suite.run_suite("quick", tmp_path, tmp_path / "work", jobs=1)
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == before


def test_a_merge_replaces_the_scenarios_run_and_keeps_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(suite, "_run_one", _drawing)
    monkeypatch.setattr(suite, "suite_markdown", _markdown)
    first, second = (s.name for s in suite.select("quick")[:2])
    kept = {"name": "kept", "kind": "failed", "error": "from before", "wall_s": 9.0}
    old = {"name": first, "kind": "failed", "error": "old", "wall_s": 1.0}
    earlier = {"suite": "quick", "jobs": 2, "wall_s": 60.0, "scenarios": [old, kept]}
    (tmp_path / "results.json").write_text(json.dumps(earlier))
    summary = suite.run_suite(
        "quick", tmp_path, tmp_path / "work", jobs=1, only=[first, second], merge=True
    )
    assert [s["name"] for s in summary["scenarios"]] == [first, "kept", second]
    assert summary["scenarios"][0]["error"] == "not run in this test"
    assert summary["scenarios"][1] == kept
    assert summary["wall_s"] == 60.0  # the whole run's, the merge's in `merged`
    assert summary["merged"][0]["scenarios"] == [first, second]
    assert json.loads((tmp_path / "results.json").read_text()) == summary
    # another suite's results are not merged into
    earlier["suite"] = "default"
    (tmp_path / "results.json").write_text(json.dumps(earlier))
    with pytest.raises(BenchError, match="holds suite 'default'"):
        suite.run_suite("quick", tmp_path, tmp_path / "work", 1, [first], merge=True)
