"""The benchmark's export cache: an export is reused only if this exporter made it."""

import subprocess
from pathlib import Path
from typing import Any

import pytest

from hyperoffload.benchmark import workloads
from hyperoffload.benchmark.workloads import (
    Export,
    export_program,
    exporter_stamp,
    stamp_path,
)

SPEC = Export("tiny-llama", "forward")


@pytest.mark.parametrize("stamp", [None, "0" * 64], ids=["unstamped", "other"])
def test_only_an_export_stamped_by_this_exporter_is_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stamp: str | None
) -> None:
    exported: list[list[str]] = []

    def export(argv: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        Path(argv[-1]).write_text("// exported\n")
        exported.append(argv)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(workloads.subprocess, "run", export)
    cached = tmp_path / SPEC.file_name()
    cached.write_text("// made by other sources\n")
    if stamp is not None:
        stamp_path(cached).write_text(stamp)
    logged: list[str] = []
    export_program(SPEC, tmp_path, logged.append)
    assert len(exported) == 1
    assert "hyperoffload.tools.hyperoffload_gen" in exported[0]
    assert logged[0].startswith(f"exporting again: {cached}")
    assert cached.read_text() == "// exported\n"
    assert stamp_path(cached).read_text() == exporter_stamp()
    # stamped by this exporter, it is reused
    assert export_program(SPEC, tmp_path, logged.append) == (cached, 0.0)
    assert len(exported) == 1
    assert logged[-1] == f"reusing {cached}"


def test_the_stamp_changes_with_the_exporter_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "frontend").mkdir()
    (tmp_path / "tools").mkdir()
    source = tmp_path / "frontend" / "models.py"
    source.write_text("LAYERS = 32\n")
    monkeypatch.setattr(workloads, "PACKAGE", tmp_path)
    before = exporter_stamp()
    source.write_text("LAYERS = 33\n")
    assert exporter_stamp() != before
