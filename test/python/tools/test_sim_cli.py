"""`hyperoffload-sim` on the tiny LLaMA exports: every policy, report, trace, plot."""

import json
from pathlib import Path
from typing import Any

import pytest

from hyperoffload.policies.peers import POLICIES
from hyperoffload.tools.hyperoffload_sim import main

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _sim(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize(
    ("model", "capacity"),
    [("tiny_llama_train", 700_000), ("tiny_llama_forward", 400_000)],
)
def test_every_policy_reports_traces_and_plots(
    model: str, capacity: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace, plot = tmp_path / "trace.json", tmp_path / "timeline.png"
    program = str(EXAMPLES / f"{model}.mlir")
    status, out, err = _sim(
        capsys,
        program,
        "--policy",
        "all",
        "--hbm-capacity",
        str(capacity),
        "--json",
        "--trace",
        str(trace),
        "--plot",
        str(plot),
    )
    assert status == 0, err
    results: list[dict[str, Any]] = json.loads(out)["results"]
    by_policy = {r["policy"]: r for r in results}
    if model.endswith("forward"):  # no loss, so no forward/backward boundary
        assert set(by_policy) == set(POLICIES) - {"activation-pass"}
        assert "skipped 'activation-pass'" in err
    else:
        assert set(by_policy) == set(POLICIES)
    none = by_policy["none"]
    lru = by_policy["reactive-lru"]
    # runtime swapping under a capacity below the unconstrained peak is slower
    assert none["peak_hbm_bytes"] > capacity
    assert lru["peak_hbm_bytes"] <= capacity
    assert lru["makespan_s"] > none["makespan_s"]
    assert lru["slowdown_vs_none"] == pytest.approx(
        lru["makespan_s"] / none["makespan_s"] - 1
    )
    for report in results:
        assert report["bound_time_s"] <= report["makespan_s"] * (1 + 1e-9)
        assert report["bound_peak_bytes"] <= report["peak_hbm_bytes"]
    events = json.loads(trace.read_text())["traceEvents"]
    assert {e["ph"] for e in events} >= {"M", "X", "C"}
    assert all(e["dur"] >= 0 for e in events if e["ph"] == "X")
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_readable_table_says_how_much_slower(
    capsys: pytest.CaptureFixture[str],
) -> None:
    program = str(EXAMPLES / "tiny_llama_forward.mlir")
    status, out, _ = _sim(
        capsys, program, "--policy", "reactive-lru", "--hbm-capacity", "400KB"
    )
    assert status == 0
    row = next(line for line in out.splitlines() if line.startswith("reactive-lru"))
    assert "time +" in row


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--hardware", "tpu-v9"], "unknown hardware 'tpu-v9'"),
        (["--hbm-capacity", "lots"], "invalid size 'lots'"),
        (["--policy", "activation-pass"], "activation-pass needs a training step"),
    ],
)
def test_bad_options_are_diagnostics(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = _sim(capsys, str(EXAMPLES / "offload_mlp.mlir"), *args)
    assert status == 1
    assert message in err
    assert "Traceback" not in err


def test_execute_compares_with_the_stripped_program(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = _sim(
        capsys, str(EXAMPLES / "offload_mlp.mlir"), "--execute", "--json"
    )
    assert status == 0, err
    report = json.loads(out)
    assert report["outputs_match_reference"] is True
    assert report["transfers"] == 4


def test_peers_may_keep_tagged_arguments_resident(
    capsys: pytest.CaptureFixture[str],
) -> None:
    program = str(EXAMPLES / "tiny_llama_forward.mlir")
    fetched: dict[bool, int] = {}
    for resident in (False, True):
        flags = ["--resident-arguments"] if resident else []
        status, out, err = _sim(
            capsys,
            program,
            "--policy",
            "runtime-prefetch",
            "--horizon",
            "4",
            "--hbm-capacity",
            "400KB",
            "--json",
            *flags,
        )
        assert status == 0, err
        report = json.loads(out)
        assert report["peak_hbm_bytes"] <= 400_000
        fetched[resident] = report["bytes_to_device"]
    # in their tier, the weights are fetched; resident, only what was evicted
    assert fetched[True] < fetched[False]
