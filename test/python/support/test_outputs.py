"""
Nothing lost on failure: every tool writes its files under a temporary name
and renames them into place only when the run succeeds, so a failed run
leaves an existing file byte-identical.
"""

from pathlib import Path

import pytest

from hyperoffload.support.outputs import replaced, write_atomically
from hyperoffload.tools.hyperoffload_gen import main as gen_main
from hyperoffload.tools.hyperoffload_opt import main as opt_main
from hyperoffload.tools.hyperoffload_sim import main as sim_main

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "offload_mlp.mlir"
PREVIOUS = "the previous contents\n"


@pytest.fixture
def previous(tmp_path: Path) -> Path:
    path = tmp_path / "out.mlir"
    path.write_text(PREVIOUS)
    return path


def _unchanged(path: Path) -> bool:
    partials = [p for p in path.parent.iterdir() if "partial" in p.name]
    return path.read_text() == PREVIOUS and not partials


def _interrupted_write(path: Path) -> None:
    with replaced(path) as partial:
        partial.write_text("half")
        raise RuntimeError("interrupted")


def test_a_failed_block_leaves_the_file_and_no_partial(previous: Path):
    with pytest.raises(RuntimeError):
        _interrupted_write(previous)
    assert _unchanged(previous)
    write_atomically(previous, "new\n")
    assert previous.read_text() == "new\n"


def test_opt_failing_a_pass_keeps_the_output_file(previous: Path):
    args = [str(EXAMPLE), "-p", "hyperoffload-pipeline{hbm-capacity=1KB}"]
    assert opt_main([*args, "-o", str(previous)]) == 1
    assert _unchanged(previous)
    assert opt_main([str(EXAMPLE), "-o", str(previous)]) == 0
    assert "hyperoffload.prefetch" in previous.read_text()


def test_sim_failing_keeps_its_trace_and_plot(tmp_path: Path, previous: Path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(")
    plot = tmp_path / "plot.png"
    plot.write_text(PREVIOUS)
    args = [str(bad), "--trace", str(previous), "--plot", str(plot)]
    assert sim_main(args) == 1
    assert _unchanged(previous)
    assert plot.read_text() == PREVIOUS


def test_gen_failing_keeps_the_output_file(previous: Path):
    assert gen_main(["tiny-llama", "--layers", "0", "-o", str(previous)]) != 0
    assert _unchanged(previous)
