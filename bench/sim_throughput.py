"""
Interpreter throughput on a synthetic 100k-step schedule, measured against a
trivial loop over the same steps in the same run (a ratio, since the machine
is shared and noisy), in CPU seconds of this process.

    .venv/bin/python bench/sim_throughput.py [--steps 100000] [--write-docs]

`--write-docs` writes the figures into docs/benchmarks.md and
docs/simulator.md between `<!-- sim-throughput:begin/end -->`.
"""

import argparse
import time
from pathlib import Path

from hyperoffload.model.hardware import load_hardware
from hyperoffload.model.schedule import (
    Buffer,
    Compute,
    Free,
    Schedule,
    Step,
    Transfer,
    Wait,
)
from hyperoffload.sim.simulator import simulate
from hyperoffload.support.markers import write_between
from hyperoffload.support.tiers import Tier

ROOT = Path(__file__).resolve().parent.parent
PAGES = (ROOT / "docs" / "benchmarks.md", ROOT / "docs" / "simulator.md")
BEGIN, END = "<!-- sim-throughput:begin -->", "<!-- sim-throughput:end -->"


def synthetic_schedule(steps: int) -> Schedule:
    """
    A chain of ops; every 10th op also produces a side tensor that is stored,
    freed, fetched back and read 5 ops later.
    """
    buffers = [Buffer(0, "%x", 4096, Tier.HBM, "argument", pinned=True, initial=True)]
    body: list[Step] = []
    transfers = 0
    previous = 0
    fetch_at: dict[int, tuple[int, int]] = {}  # compute index -> (side buffer, copy)

    def new_buffer(tier: Tier = Tier.HBM) -> int:
        kind = "activation" if tier == Tier.HBM else "copy"
        buffers.append(Buffer(len(buffers), f"%{len(buffers)}", 4096, tier, kind))
        return len(buffers) - 1

    index = 0
    while len(body) < steps:
        out = new_buffer()
        reads, allocs = [previous], [out]
        frees = [previous] if previous else []
        if index in fetch_at:
            side, copy = fetch_at.pop(index)
            body += [
                Transfer(transfers, copy, side, 4096, Tier.REMOTE, True),
                Wait(transfers),
            ]
            transfers += 1
            reads.append(side)
            frees.append(side)
        side = new_buffer() if index % 10 == 0 else None
        if side is not None:
            allocs.append(side)
        body.append(
            Compute("linalg.generic", "", 1e-6, 1e6, 8192, reads, allocs, frees)
        )
        if side is not None:
            copy = new_buffer(Tier.REMOTE)
            body += [
                Transfer(transfers, side, copy, 4096, Tier.REMOTE, False),
                Free(side),
            ]
            transfers += 1
            fetch_at[index + 5] = (side, copy)
        previous, index = out, index + 1
    return Schedule("synthetic", buffers, body)


def trivial_loop(schedule: Schedule) -> float:
    total = 0.0
    for step in schedule.steps:
        if isinstance(step, Compute):
            total += step.time_s
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    hardware = load_hardware("ascend-910c")
    schedule = synthetic_schedule(args.steps)
    start = time.process_time()
    trivial_loop(schedule)
    loop_s = time.process_time() - start
    start = time.process_time()
    result = simulate(schedule, hardware, hardware.hbm_capacity, record=False)
    sim_s = time.process_time() - start
    start = time.process_time()
    simulate(schedule, hardware, hardware.hbm_capacity, record=True)
    recorded_s = time.process_time() - start
    n = len(schedule.steps)
    print(f"steps: {n}, transfers: {result.transfers}, peak {result.peak_hbm_bytes} B")
    print(f"trivial loop:        {n / loop_s:12,.0f} steps/s")
    print(
        f"simulate:            {n / sim_s:12,.0f} steps/s  ({sim_s / loop_s:.1f}x the loop)"
    )
    print(
        f"simulate + timeline: {n / recorded_s:12,.0f} steps/s  ({recorded_s / loop_s:.1f}x the loop)"
    )
    if args.write_docs:
        said = (
            f"\n`.venv/bin/python bench/sim_throughput.py --steps {n} --write-docs` "
            f"(CPU time): {n / sim_s:,.0f} steps/s without recording the timeline "
            f"({sim_s / loop_s:.1f}x the cost of the trivial loop at "
            f"{n / loop_s / 1e6:.2f}M steps/s) and {n / recorded_s:,.0f} steps/s "
            "with the timeline recorded for traces and plots.\n"
        )
        for page in PAGES:
            write_between(page, said, BEGIN, END)


if __name__ == "__main__":
    main()
