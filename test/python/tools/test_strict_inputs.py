"""
The tools read hardware files strictly and write strict JSON: each bad input
is a located diagnostic with exit status 1, never a traceback or a silent
answer (a bare-number bandwidth, an unknown key, a figure so small that
times overflow, a program that needs an `f32` peak the file lacks).
"""

import json
from pathlib import Path

import pytest

from hyperoffload.tools.hyperoffload_opt import main as opt_main
from hyperoffload.tools.hyperoffload_sim import main as sim_main

ROOT = Path(__file__).resolve().parents[3]
ROUND = (ROOT / "test" / "inputs" / "round.toml").read_text()
MLP = ROOT / "examples" / "offload_mlp.mlir"


def _hardware(tmp_path: Path, old: str, new: str) -> Path:
    assert old in ROUND
    path = tmp_path / "hw.toml"
    path.write_text(ROUND.replace(old, new))
    return path


CASES = {
    "bare-bandwidth": (
        'hbm_bandwidth = "1GB/s"',
        "hbm_bandwidth = 10",
        "hw.toml: error: malformed hardware file: [device] hbm_bandwidth: "
        "invalid rate 10: 10 what? write 10GB/s",
    ),
    "bare-capacity": (
        'capacity = "1GB"',
        'capacity = "1000"',
        "hw.toml: error: malformed hardware file: [tiers.remote] capacity: "
        "invalid size 1000: 1000 what? write 1000GB",
    ),
    "unknown-key": (
        'latency = "0us"',
        'latncy = "0us"',
        "hw.toml:18: error: unknown key 'tiers.remote.latncy' (did you mean 'latency'?)",
    ),
    "missing-key": (
        'bandwidth_to_device = "100MB/s"\n',
        "",
        "hw.toml: error: malformed hardware file: missing key "
        "'bandwidth_to_device' in [tiers.remote]",
    ),
    "tiny-peak": (
        "f32 = 1e9",
        "f32 = 5e-324",
        "hw.toml: error: malformed hardware file: [device.peak_flops] f32 = "
        "4.94066e-324 is so small that times would overflow",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_hardware_file_is_located(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    old, new, message = CASES[case]
    path = _hardware(tmp_path, old, new)
    assert sim_main([str(MLP), "--hardware", str(path), "--json"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert f"{tmp_path}/{message}" in err
    spec = f'hyperoffload-pipeline{{hardware="{path}"}}'
    assert opt_main([str(MLP), "-p", spec]) == 1
    assert f"{tmp_path}/{message}" in capsys.readouterr().err


def test_a_missing_f32_peak_is_located_at_the_op_that_needs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    path = _hardware(tmp_path, "f32 = 1e9", "bf16 = 1e9")
    assert sim_main([str(MLP), "--hardware", str(path)]) == 1
    err = capsys.readouterr().err
    assert (
        f"{MLP}:12:3: error: 'linalg.matmul': hardware 'hw' has no "
        "[device.peak_flops] f32 (the vector units' rate" in err
    )
    assert "Traceback" not in err


def test_the_json_report_is_strict(capsys: pytest.CaptureFixture[str]):
    assert sim_main([str(MLP), "--json", "--policy", "all"]) == 0

    def refuse(constant: str) -> float:
        raise AssertionError(f"{constant} in the report")

    report = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert report["results"]


def test_a_size_option_in_bytes_takes_a_bare_integer(
    capsys: pytest.CaptureFixture[str],
):
    assert sim_main([str(MLP), "--hbm-capacity", "700000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hbm_capacity_bytes"] == 700000
    assert sim_main([str(MLP), "--hbm-capacity", "1.5"]) == 1
    assert "invalid size 1.5: 1.5 what?" in capsys.readouterr().err


def test_a_time_that_overflows_is_named_not_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    step = {"kind": "compute", "name": "a", "flops": 0, "bytes": 0, "time_s": 1e308}
    schedule = {
        "version": 2,
        "function": "f",
        "buffers": [],
        "steps": [{**step, "loc": "x:1:1"}, {**step, "loc": "x:2:1"}],
    }
    path = tmp_path / "schedule.json"
    path.write_text(json.dumps(schedule))
    assert sim_main([str(path), "--json"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "error: the report is not finite: makespan_s is inf" in err
    trace = tmp_path / "trace.json"
    trace.write_text("kept\n")
    assert sim_main([str(path), "--trace", str(trace)]) == 1
    err = capsys.readouterr().err
    assert f"{trace}: error: cannot write --trace: traceEvents[2].dur is inf" in err
    assert trace.read_text() == "kept\n"
