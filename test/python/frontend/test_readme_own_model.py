"""
The README's "Your own model" figures, measured again: the example CNN's
unconstrained peak, the peak and slowdown of its plan at 76KB, and the peaks
`hyperoffload-run` measures on the CPU for the plan and the original.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch_mlir")

from hyperoffload.support.units import format_bytes
from hyperoffload.tools import hyperoffload_opt, hyperoffload_run, hyperoffload_sim

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text()
_EXPORT = (
    "import sys; from hyperoffload.tools.hyperoffload_gen import main; "
    "sys.exit(main(['--module', 'examples.own_model:cnn', '--mode', 'train', "
    "'--optimizer', 'sgd', '--loss', 'cross_entropy', '-o', sys.argv[1]]))"
)


def _quoted(pattern: str) -> re.Match[str]:
    found = re.search(pattern, README)
    assert found is not None, f"the README no longer says {pattern!r}"
    return found


def test_the_readme_figures_of_the_example_cnn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "cnn_train.mlir"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *sys.path]))
    subprocess.run([sys.executable, "-c", _EXPORT, str(program)], check=True, env=env)
    assert hyperoffload_sim.main([str(program), "--json"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    peak = _quoted(r"hyperoffload-sim cnn_train\.mlir +# peak ([\d.]+ KB)").group(1)
    assert format_bytes(report["peak_hbm_bytes"]) == peak

    pipeline = "hyperoffload-pipeline{hbm-capacity=76KB}"
    planned = tmp_path / "cnn_planned.mlir"
    assert (
        hyperoffload_opt.main([str(program), "-p", pipeline, "-o", str(planned)]) == 0
    )
    remark = capsys.readouterr().err
    written = re.search(r"as written: peak ([\d.]+ KB), slowdown \+([\d.]+)%", remark)
    assert written is not None, remark
    quoted = _quoted(r"\(([\d.]+ KB) planned, \+([\d.]+)% simulated")
    assert written.group(1) == quoted.group(1)
    assert f"{float(written.group(2)):.1f}" == quoted.group(2)

    assert hyperoffload_run.main([str(planned), "--warmup", "0", "--json"]) == 0
    run: dict[str, Any] = json.loads(capsys.readouterr().out)
    measured = _quoted(
        r"`hyperoffload-run` measures ([\d.]+ KB) against the\s+original's ([\d.]+ KB)"
    )
    assert run["outputs_match_reference"]
    assert format_bytes(run["peak_hbm_bytes"]) == measured.group(1)
    assert format_bytes(run["reference"]["peak_hbm_bytes"]) == measured.group(2)
