"""The checked-in IRDL file is what the xDSL definition exports today."""

from pathlib import Path

from hyperoffload.ir.irdl_export import irdl_text
from hyperoffload.tools.export_irdl import DEFAULT_OUTPUT, main


def test_checked_in_irdl_is_current() -> None:
    assert DEFAULT_OUTPUT.read_text() == irdl_text(), (
        "dialects/hyperoffload.irdl.mlir is stale: run `make irdl`"
    )


def test_check_mode_detects_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "stale.irdl.mlir"
    stale.write_text(irdl_text().replace("irdl.type @remote", "irdl.type @old"))
    assert main(["--check", "-o", str(stale)]) == 1
    fresh = tmp_path / "fresh.irdl.mlir"
    assert main(["-o", str(fresh)]) == 0
    assert main(["--check", "-o", str(fresh)]) == 0


def test_types_are_exported_as_types() -> None:
    text = irdl_text()
    assert "irdl.type @remote" in text
    assert "irdl.attribute @tier" in text
    for op in ("prefetch", "store", "detach"):
        assert f"irdl.operation @{op}" in text
