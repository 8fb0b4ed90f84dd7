"""
Outputs never clobber what is not ours, and a failed run touches none: a
regular file is replaced whole by a rename, a symbolic link is followed and
kept, a FIFO or a device is written in place, and every output path is
checked before anything is written; by `Outputs` itself and through the
tools (`hyperoffload-opt -o`, `hyperoffload-sim --trace/--plot`,
`hyperoffload-gen -o`, `hyperoffload-layout -o`).
"""

import os
import stat
import threading
from pathlib import Path

import pytest

from hyperoffload.support import outputs as outputs_module
from hyperoffload.support.outputs import OutputError, Outputs, write_output
from hyperoffload.tools.hyperoffload_gen import main as gen_main
from hyperoffload.tools.hyperoffload_layout import main as layout_main
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


def test_a_regular_file_is_replaced_whole_keeping_its_mode(previous: Path):
    previous.chmod(0o640)
    write_output(previous, "new\n")
    assert previous.read_text() == "new\n"
    assert stat.S_IMODE(previous.stat().st_mode) == 0o640
    assert [p.name for p in previous.parent.iterdir()] == [previous.name]


def test_a_new_path_is_created(tmp_path: Path):
    path = tmp_path / "new.json"
    write_output(path, b"{}")
    assert path.read_bytes() == b"{}"


def test_a_symlink_is_followed_and_kept(tmp_path: Path, previous: Path):
    link = tmp_path / "link.mlir"
    link.symlink_to(previous.name)
    write_output(link, "through the link\n")
    assert link.is_symlink()
    assert os.readlink(link) == previous.name
    assert previous.read_text() == "through the link\n"


def test_a_dangling_symlink_creates_its_target(tmp_path: Path):
    link = tmp_path / "link.mlir"
    link.symlink_to("target.mlir")
    write_output(link, "made\n")
    assert link.is_symlink()
    assert (tmp_path / "target.mlir").read_text() == "made\n"


def test_a_fifo_is_written_in_place(tmp_path: Path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with fifo.open("rb") as reader:
            received.append(reader.read())

    reader = threading.Thread(target=read)
    reader.start()
    write_output(fifo, "through the pipe\n")
    reader.join(timeout=60)
    assert received == [b"through the pipe\n"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_dev_null_stays_a_character_device():
    write_output(Path("/dev/null"), "discarded\n")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_character_device_node_is_written_in_place(tmp_path: Path):
    node = tmp_path / "null"
    null = os.stat("/dev/null")
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, null.st_rdev)
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD (root)")
    try:
        os.open(node, os.O_WRONLY)
    except PermissionError:
        pytest.skip("the temporary folder does not allow devices (mounted nodev)")
    assert opt_main([str(EXAMPLE), "-o", str(node)]) == 0
    assert stat.S_ISCHR(node.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]


def test_a_device_that_fails_is_reported(capsys: pytest.CaptureFixture[str]):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    assert opt_main([str(EXAMPLE), "-o", "/dev/full"]) == 1
    assert "/dev/full: error: cannot write -o: No space left on device" in (
        capsys.readouterr().err
    )
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_bad_paths_are_refused_before_anything_is_written(
    tmp_path: Path, previous: Path
):
    with pytest.raises(OutputError, match=r"no folder .* to write it in"):
        Outputs({"--plot": tmp_path / "missing" / "p.png"})
    with pytest.raises(OutputError, match="it is a folder"):
        Outputs({"-o": tmp_path})
    with pytest.raises(OutputError, match="--plot and --trace name the same file"):
        Outputs({"--trace": previous, "--plot": tmp_path / "." / previous.name})
    assert _unchanged(previous)


def test_a_failed_write_leaves_every_regular_file(tmp_path: Path, previous: Path):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    outputs = Outputs({"--trace": previous, "--plot": Path("/dev/full")})
    outputs.put(previous, "new\n")
    outputs.put(Path("/dev/full"), "does not fit\n")
    with pytest.raises(OutputError, match="No space left on device"):
        outputs.write()
    assert _unchanged(previous)


def test_a_temporary_file_that_fails_reaches_no_fifo(
    tmp_path: Path, previous: Path, monkeypatch: pytest.MonkeyPatch
):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()

    def full_disk(destination: Path, data: bytes) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs_module, "_write_beside", full_disk)
    outputs = Outputs({"--trace": fifo, "-o": previous})
    outputs.put(fifo, "the trace\n")  # put first, written after the files
    outputs.put(previous, "new\n")
    with pytest.raises(OSError, match="No space left"):
        outputs.write()
    with fifo.open("wb"):
        pass  # the reader sees the end of the pipe
    reader.join(timeout=60)
    assert received == [b""]
    assert _unchanged(previous)


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


@pytest.mark.parametrize("plot", ["missing/plot.png", "plot.xyz"])
def test_sim_with_a_bad_plot_keeps_its_trace(
    tmp_path: Path, previous: Path, plot: str, capsys: pytest.CaptureFixture[str]
):
    args = [str(EXAMPLE), "--trace", str(previous), "--plot", str(tmp_path / plot)]
    assert sim_main(args) == 1
    assert _unchanged(previous)
    err = capsys.readouterr().err
    assert f"{tmp_path / plot}: error: cannot write --plot" in err
    assert "remark: parsed" not in err  # refused before the run


def test_sim_writes_its_trace_and_plot_through_a_link(tmp_path: Path, previous: Path):
    link = tmp_path / "trace.json"
    link.symlink_to(previous)
    plot = tmp_path / "plot.svg"
    assert sim_main([str(EXAMPLE), "--trace", str(link), "--plot", str(plot)]) == 0
    assert link.is_symlink()
    assert previous.read_text().startswith('{"traceEvents"')
    assert plot.read_text().startswith("<?xml")


def test_gen_failing_keeps_the_output_file(previous: Path):
    assert gen_main(["tiny-llama", "--layers", "0", "-o", str(previous)]) != 0
    assert _unchanged(previous)


def test_gen_refuses_a_bad_output_before_exporting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    bad = tmp_path / "missing" / "out.mlir"
    assert gen_main(["tiny-llama", "-o", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}: error: cannot write -o: no folder" in err
    assert "tracing" not in err  # refused before the export


def _read_fifo(fifo: Path, received: list[bytes]) -> threading.Thread:
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    return reader


def test_opt_writes_its_output_into_a_fifo(tmp_path: Path):
    fifo = tmp_path / "out.mlir"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = _read_fifo(fifo, received)
    assert opt_main([str(EXAMPLE), "-o", str(fifo)]) == 0
    reader.join(timeout=60)
    assert b"func.func @mlp" in received[0]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["out.mlir"]


def test_opt_onto_dev_null_keeps_the_device():
    assert opt_main([str(EXAMPLE), "-o", "/dev/null"]) == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_sim_writes_its_trace_into_a_fifo(tmp_path: Path):
    fifo = tmp_path / "trace.json"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = _read_fifo(fifo, received)
    assert sim_main([str(EXAMPLE), "--trace", str(fifo)]) == 0
    reader.join(timeout=60)
    assert received[0].startswith(b'{"traceEvents"')
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_sim_failing_on_its_last_output_keeps_the_others(
    tmp_path: Path, previous: Path, capsys: pytest.CaptureFixture[str]
):
    """The plot, a link to a full device, fails after the run: the trace is kept."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    plot = tmp_path / "plot.svg"
    plot.symlink_to("/dev/full")
    args = [str(EXAMPLE), "--trace", str(previous), "--plot", str(plot)]
    assert sim_main(args) == 1
    assert f"{plot}: error: cannot write --plot: No space left on device" in (
        capsys.readouterr().err
    )
    assert _unchanged(previous)
    assert plot.is_symlink()
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_layout_refuses_a_bad_output_before_its_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    buffers = tmp_path / "buffers.csv"
    buffers.write_text("id,lower,upper,size\na,0,4,6\n")
    bad = tmp_path / "missing" / "offsets.json"
    assert layout_main([str(buffers), "--capacity", "6", "-o", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}: error: cannot write --output: no folder" in err
    assert "buffers, live peak" not in err  # refused before the search
    link = tmp_path / "offsets.json"
    link.symlink_to(tmp_path / "target.json")
    assert layout_main([str(buffers), "--capacity", "6", "-o", str(link)]) == 0
    assert link.is_symlink()
    assert '"arena": 6' in (tmp_path / "target.json").read_text()


def test_gen_module_refuses_a_bad_output_before_importing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    bad = tmp_path / "missing" / "out.mlir"
    assert gen_main(["--module", "no.such.package:factory", "-o", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}: error: cannot write -o: no folder" in err
    assert "no.such" not in err  # refused before the factory is looked for
