"""
How compile time and memory grow with program size: synthetic programs of
1k, 10k and 100k ops (a chain of elementwise tensor ops reading 64 weights
that live in the remote pool, every 8th value read again 50 ops later),
each parsed and planned by `hyperoffload-pipeline` in a fresh process, which
reports its wall time per stage and its peak resident memory. The growth
exponent is the slope of log(time) against log(ops) between sizes.

    .venv/bin/python bench/scaling.py [--sizes 1000 10000 100000]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

WEIGHTS = 64
TENSOR = "tensor<64x64xf32>"

_MEASURE = """
import json, resource, sys, time
from hyperoffload.ir.context import make_context
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.passes.pipeline import PipelinePass
start = time.perf_counter()
module = parse_mlir(make_context(), open(sys.argv[1]).read(), sys.argv[1])
parsed = time.perf_counter()
PipelinePass(hardware="ascend-910c", hbm_capacity=sys.argv[2]).apply(make_context(), module)
done = time.perf_counter()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"parse_s": parsed - start, "pipeline_s": done - parsed, "peak_rss": rss}))
"""


def synthetic_program(ops: int) -> str:
    """`ops` elementwise ops in a chain; weights tagged remote; long-lived side values."""
    tier = "{hyperoffload.tier = #hyperoffload.tier<remote>}"
    args = [f"%x: {TENSOR}", *(f"%w{i}: {TENSOR} {tier}" for i in range(WEIGHTS))]
    lines = [f"func.func @chain({', '.join(args)}) -> {TENSOR} {{"]
    previous = "%x"
    for i in range(ops):
        other = f"%w{i % WEIGHTS}"
        if i >= 50 and (i - 50) % 8 == 0:
            other = f"%v{i - 50}"  # read again 50 ops after it was made
        op = "arith.mulf" if i % 2 else "arith.addf"
        lines.append(f"  %v{i} = {op} {previous}, {other} : {TENSOR}")
        previous = f"%v{i}"
    lines += [f"  func.return {previous} : {TENSOR}", "}"]
    return "\n".join(lines) + "\n"


def measure(ops: int, work: Path) -> dict[str, float]:
    path = work / f"chain_{ops}.mlir"
    path.write_text(synthetic_program(ops))
    capacity = str(16384 * (WEIGHTS // 2 + 8))  # half the weights and some values
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path), capacity],
        capture_output=True,
        text=True,
        check=True,
    )
    return {"ops": ops, **json.loads(done.stdout.splitlines()[-1])}


def exponent(rows: list[dict[str, float]], key: str) -> float:
    """Slope of log(key) against log(ops) from the smallest to the largest size."""
    first, last = rows[0], rows[-1]
    return math.log(last[key] / first[key]) / math.log(last["ops"] / first["ops"])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    sizes = parser.parse_args().sizes
    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as work:
        for ops in sizes:
            print(f"scaling: {ops} ops...", file=sys.stderr, flush=True)
            rows.append(measure(ops, Path(work)))
    print("| ops | parse | pipeline | peak RSS |")
    print("| ---: | ---: | ---: | ---: |")
    for row in rows:
        print(
            f"| {int(row['ops']):,} | {row['parse_s']:.2f} s | "
            f"{row['pipeline_s']:.2f} s | {row['peak_rss'] / 2**20:,.0f} MiB |"
        )
    if len(rows) > 1:
        print(
            f"\ngrowth exponent (time ~ ops^k): parse {exponent(rows, 'parse_s'):.2f}, "
            f"pipeline {exponent(rows, 'pipeline_s'):.2f}"
        )


if __name__ == "__main__":
    main()
