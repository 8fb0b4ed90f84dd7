"""
`hyperoffload-run`, `hyperoffload-calibrate` and `hyperoffload-validate` on
the CPU: reports in `hyperoffload-sim`'s keys, a preset the simulator
accepts, the modelled-vs-measured table, and errors as diagnostics.
"""

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

import torch

from hyperoffload.model.hardware import load_hardware
from hyperoffload.tools import (
    hyperoffload_calibrate,
    hyperoffload_opt,
    hyperoffload_run,
    hyperoffload_sim,
    hyperoffload_validate,
)

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
FORWARD = str(EXAMPLES / "tiny_llama_forward.mlir")
MLP = str(EXAMPLES / "offload_mlp.mlir")
CPU = ["--device", "cpu", "--threads", "1"]


@pytest.fixture(scope="module")
def preset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("calibrate") / "cpu.toml"
    status = hyperoffload_calibrate.main([*CPU, "--quick", "-o", str(path)])
    assert status == 0
    return path


def _keys_of_sim_json(capsys: pytest.CaptureFixture[str]) -> set[str]:
    assert hyperoffload_sim.main([MLP, "--json"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return set(report)


def test_run_reports_in_the_simulators_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sim_keys = _keys_of_sim_json(capsys)
    planned = tmp_path / "planned.mlir"
    target = "hyperoffload-pipeline{hbm-capacity=248KB}"  # 60% of the modelled peak
    assert hyperoffload_opt.main([FORWARD, "-p", target, "-o", str(planned)]) == 0
    capsys.readouterr()
    status = hyperoffload_run.main([str(planned), *CPU, "--warmup", "0", "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    report: dict[str, Any] = json.loads(captured.out)
    assert sim_keys <= set(report)
    assert report["outputs_match_reference"] is True
    assert report["policy"] == "plan"
    assert report["device"] == "cpu"
    assert report["bytes_to_device"] > 0
    assert report["peak_hbm_bytes"] < report["reference"]["peak_hbm_bytes"]


def test_run_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert hyperoffload_run.main([MLP, *CPU, "--warmup", "0"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].split()[:4] == ["run", "peak", "reserved", "makespan"]
    assert "outputs_match_reference: True" in out


def test_calibrated_preset_loads_and_simulates(
    preset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hardware = load_hardware(str(preset))
    assert hardware.peak("f32") > 0
    assert {"remote", "host"} <= set(hardware.links)
    assert hyperoffload_sim.main([MLP, "--hardware", str(preset), "--json"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert report["hardware"] == "cpu"
    assert report["makespan_s"] > 0


def test_every_figure_of_the_preset_says_where_it_was_measured(preset: Path) -> None:
    text = preset.read_text()
    stamp = re.search(r"measured on (.+?), (\d{4}-\d{2}-\d{2})", text)
    assert stamp is not None
    figures = [
        line
        for line in text.splitlines()
        if "=" in line.split("#")[0] and not line.startswith("description")
    ]
    assert len(figures) >= 12
    for line in figures:
        assert f"# measured on {stamp[1]}, {stamp[2]}" in line, line


def test_validate_prints_modelled_and_measured(
    preset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = hyperoffload_validate.main(
        [FORWARD, *CPU, "--hardware", str(preset), "--warmup", "0"]
    )
    captured = capsys.readouterr()
    assert status == 0, captured.err
    table = [line for line in captured.out.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    for quantity in ("makespan", "peak", "exposed"):
        assert f"{quantity} modelled" in header
        assert f"{quantity} measured" in header
    rows = [line.split("|")[1].strip() for line in table[2:]]
    assert rows == ["none", "plan at 80%", "plan at 60%"]
    assert all(line.rstrip(" |").endswith("yes") for line in table[2:])


def test_validate_json_has_both_reports(
    preset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = hyperoffload_validate.main(
        [MLP, *CPU, "--hardware", str(preset), "--warmup", "0", "--json"]
    )
    assert status == 0
    rows: list[dict[str, Any]] = json.loads(capsys.readouterr().out)["rows"]
    assert [r["fraction"] for r in rows] == [None, 0.8, 0.6]
    for row in rows:
        assert row["modelled"]["makespan_s"] > 0
        assert row["measured"]["makespan_s"] > 0
        assert row["outputs_match_reference"] is True


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        (hyperoffload_run, ["missing.mlir", *CPU], "No such file"),
        (hyperoffload_run, [MLP, "--device", "tpu"], "unknown device 'tpu'"),
        (hyperoffload_calibrate, ["--device", "tpu", "--quick"], "unknown device"),
        (
            hyperoffload_validate,
            ["missing.mlir", *CPU, "--hardware", "ascend-910c"],
            "No such file",
        ),
    ],
)
def test_bad_input_is_a_diagnostic(
    tool: Any, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tool.main(args) == 1
    err = capsys.readouterr().err
    assert "error:" in err
    assert message in err
    assert "Traceback" not in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_without_a_gpu_is_a_diagnostic(capsys: pytest.CaptureFixture[str]) -> None:
    assert hyperoffload_run.main([MLP, "--device", "cuda"]) == 1
    err = capsys.readouterr().err
    assert "error: --device cuda: no CUDA device is available" in err


def test_missing_torch_is_a_diagnostic(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    find_spec = importlib.util.find_spec

    def without_torch(name: str, package: str | None = None) -> Any:
        return None if name == "torch" else find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", without_torch)
    assert hyperoffload_run.main([MLP, *CPU]) == 1
    err = capsys.readouterr().err
    assert "hyperoffload-run: error: PyTorch is not installed" in err
