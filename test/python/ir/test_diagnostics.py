"""The diagnostics channel: one format, stderr by default, collected or silenced on demand."""

import pytest

from hyperoffload.ir.diagnostics import (
    Diagnostic,
    Severity,
    collect_diagnostics,
    emit,
    format_diagnostic,
    silence_diagnostics,
)


def test_the_format_is_where_severity_message() -> None:
    assert format_diagnostic("a.mlir:3:5", Severity.ERROR, "bad") == (
        "a.mlir:3:5: error: bad"
    )
    assert str(Diagnostic("tool", Severity.REMARK, "step 1")) == "tool: remark: step 1"


def test_diagnostics_go_to_stderr_by_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    emit("hyperoffload-insert", Severity.WARNING, "@f: peak above target")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "hyperoffload-insert: warning: @f: peak above target\n"


def test_collected_diagnostics_are_not_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with collect_diagnostics() as collected:
        emit("p", Severity.REMARK, "one")
        with collect_diagnostics() as inner:
            emit("p", Severity.REMARK, "two")
        emit("p", Severity.WARNING, "three")
    assert [d.message for d in collected] == ["one", "three"]
    assert [d.message for d in inner] == ["two"]
    assert capsys.readouterr().err == ""


def test_silenced_diagnostics_vanish_and_the_default_returns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with silence_diagnostics():
        emit("p", Severity.WARNING, "hidden")
    emit("p", Severity.WARNING, "shown")
    assert capsys.readouterr().err == "p: warning: shown\n"
