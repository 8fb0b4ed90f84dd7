"""`hyperoffload-opt` as a user runs it: exit codes and diagnostics, no tracebacks."""

from pathlib import Path

import pytest

from hyperoffload.tools.hyperoffload_opt import main

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "offload_mlp.mlir"


def test_example_round_trips(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(EXAMPLE)]) == 0
    assert "hyperoffload.prefetch %w1" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "text", "message"),
    [
        (["missing.mlir"], None, "No such file or directory"),
        (
            ["bad.mlir"],
            "func.func @f() {\n  %0 = arith.addf %a, %a : f32\n}\n",
            "bad.mlir:2:",
        ),
        (
            ["bad.mlir"],
            "func.func @f(%x: tensor<4xf32>) {\n"
            "  hyperoffload.detach %x : tensor<4xf32>\n"
            "  hyperoffload.detach %x : tensor<4xf32>\n  func.return\n}\n",
            "bad.mlir:2:3: error: detach of live data",
        ),
        (["-p", "no-such-pass", "ok.mlir"], "", "Unrecognized passes"),
        (
            ["-p", "hyperoffload-insert{hardware=a/b.toml}", "ok.mlir"],
            "",
            "error: Error parsing pass pipeline specification",
        ),
    ],
)
def test_bad_input_is_a_diagnostic(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    text: str | None,
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    if text is not None:
        (tmp_path / args[-1]).write_text(text)
    assert main(args) == 1
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
