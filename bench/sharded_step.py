"""
A sharded AdamW step (`hyperoffload-gen --shard N`, ZeRO-1/2) beside the
unsharded one: the optimizer states each device holds, the bytes and time of
its collectives on the device interconnect, and the simulated step (the
program as exported, unlimited HBM) on each hardware preset.

    .venv/bin/python bench/sharded_step.py [--model llama3-8b] [--layers 1]
        [--seq 8192] [--batch 2] [--shards 1,8]
        [--hardware ascend-910c,h200-pcie5] [--write-docs]

`--write-docs` writes the table into docs/frontend.md between its markers.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from xdsl.dialects.builtin import DictionaryAttr, StringAttr

from hyperoffload.analysis.cost import CostModel, tensor_bytes
from hyperoffload.analysis.extract import extract_schedule, main_function
from hyperoffload.ir.context import make_context
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.sim.simulator import simulate
from hyperoffload.support.markers import write_between
from hyperoffload.support.units import format_bytes, format_seconds

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "frontend.md"
BEGIN = "<!-- bench/sharded_step.py: begin -->"
END = "<!-- bench/sharded_step.py: end -->"


@dataclass
class Row:
    shard: int
    hardware: str
    states: int
    """Bytes of the optimizer-state arguments (master weights and moments)."""
    peak: int
    makespan_s: float
    compute_s: float
    interconnect_s: float
    interconnect_bytes: int


def _export(args: argparse.Namespace, shard: int, out: Path) -> str:
    command = [
        sys.executable,
        "-m",
        "hyperoffload.tools.hyperoffload_gen",
        args.model,
        "--mode",
        "train",
        "--layers",
        str(args.layers),
        "--seq",
        str(args.seq),
        "--batch",
        str(args.batch),
        "--dtype",
        "bf16",
        "--optimizer",
        "adamw",
        "--loss",
        "chunked",
        "--shard",
        str(shard),
        "-o",
        str(out),
    ]
    subprocess.run(command, check=True)
    return out.read_text()


def measure(args: argparse.Namespace, shard: int, directory: Path) -> list[Row]:
    """The step sharded over `shard` devices, simulated on each preset."""
    text = _export(args, shard, directory / f"shard{shard}.mlir")
    module = parse_mlir(make_context(), text, f"shard{shard}.mlir")
    function = main_function(module)
    attrs = function.arg_attrs.data if function.arg_attrs else ()
    states = 0
    for arg, dictionary in zip(function.args, attrs, strict=False):
        assert isinstance(dictionary, DictionaryAttr)
        if dictionary.data.get("hyperoffload.category") == StringAttr("optimizer"):
            states += tensor_bytes(arg, function)
    rows: list[Row] = []
    for name in args.hardware.split(","):
        hardware = load_hardware(name)
        result = simulate(extract_schedule(function, CostModel(hardware)), hardware)
        rows.append(
            Row(
                shard,
                name,
                states,
                result.peak_hbm_bytes,
                result.makespan_s,
                result.compute_s,
                result.interconnect_s,
                result.interconnect_bytes,
            )
        )
    return rows


def table(rows: list[Row]) -> str:
    lines = [
        "| shard | hardware | optimizer states | peak HBM | step | compute "
        "| interconnect busy | sent each way |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r.shard} | {r.hardware} | {format_bytes(r.states)} "
            f"| {format_bytes(r.peak)} | {format_seconds(r.makespan_s)} "
            f"| {format_seconds(r.compute_s)} | {format_seconds(r.interconnect_s)} "
            f"| {format_bytes(r.interconnect_bytes)} |"
        )
    return "\n".join(lines)


def section(rows: list[Row], args: argparse.Namespace, seconds: float) -> str:
    command = " ".join(["bench/sharded_step.py", *sys.argv[1:]])
    intro = (
        f"`.venv/bin/python {command}` ({seconds:.0f} s, written by the script): "
        f"`hyperoffload-gen {args.model} --mode train --layers {args.layers} "
        f"--seq {args.seq} --batch {args.batch} --dtype bf16 --optimizer adamw "
        "--loss chunked --shard N`, each program simulated as exported "
        "(unlimited HBM; `step` is the makespan, `compute` the compute "
        "stream's busy time, the collectives running beside it)."
    )
    wrapped = textwrap.fill(intro, 78, break_long_words=False, break_on_hyphens=False)
    return "\n".join(["", wrapped, "", table(rows), ""])


def main() -> None:
    parser = argparse.ArgumentParser(description="A sharded AdamW step.")
    parser.add_argument("--model", default="llama3-8b")
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--seq", type=int, default=8192)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--shards", default="1,8")
    parser.add_argument("--hardware", default="ascend-910c,h200-pcie5")
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="write the table into docs/frontend.md between its markers",
    )
    args = parser.parse_args()
    start = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as directory:
        for shard in (int(s) for s in args.shards.split(",")):
            rows += measure(args, shard, Path(directory))
            print(table(rows), file=sys.stderr)
    text = section(rows, args, time.perf_counter() - start)
    print(text)
    if args.write_docs:
        write_between(DOC, text, BEGIN, END)


if __name__ == "__main__":
    main()
