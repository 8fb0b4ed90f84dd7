"""
A suite writes its plots and results together once every scenario has run:
an interrupted run leaves the folder's files byte-identical and no staging
folder behind.
"""

from pathlib import Path
from typing import Any

import pytest

from hyperoffload.benchmark import suite
from hyperoffload.benchmark.suites import Scenario


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
