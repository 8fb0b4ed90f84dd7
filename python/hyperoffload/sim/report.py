"""
Reports of simulation runs: a JSON-ready dict per run and a readable table.

```
policy        peak HBM   arena      makespan  compute   exposed   vs none
none          803.35 KB  812.54 KB  2.014 ms  2.014 ms  0.0 us    -
reactive-lru  699.91 KB  779.01 KB  2.559 ms  2.014 ms  544.7 us  peak -12.9%, time +27.0%
```

A program with collectives (a sharded training step) adds a line: the time
its interconnect stream was busy and the bytes it sent (the same under every
policy).

The arena is what the device must have once addresses are assigned: for
`plan` (a compiled program, every lifetime known) a static layout, for every
other policy a best-fit allocator running online, as a runtime's does
(`hyperoffload.sim.arena`).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from hyperoffload.sim.arena import fragmentation, planned_arena, runtime_arena
from hyperoffload.sim.simulator import SimResult
from hyperoffload.support.units import format_bytes, format_seconds


def report_dict(
    policy: str,
    hardware: str,
    result: SimResult,
    reference: SimResult | None = None,
) -> dict[str, Any]:
    """The fields of one run; `reference` is the `none` run of the same program."""
    arena = (
        planned_arena(result).arena_bytes
        if policy == "plan"
        else runtime_arena(result).arena_bytes
    )
    report: dict[str, Any] = {
        "policy": policy,
        "hardware": hardware,
        "hbm_capacity_bytes": result.hbm_capacity_bytes,
        "peak_hbm_bytes": result.peak_hbm_bytes,
        "arena_bytes": arena,
        "fragmentation": fragmentation(arena, result.peak_hbm_bytes),
        "makespan_s": result.makespan_s,
        "compute_s": result.compute_s,
        "exposed_transfer_s": result.exposed_transfer_s,
        "bytes_to_device": result.bytes_to_device,
        "bytes_to_remote": result.bytes_to_remote,
        "transfers": result.transfers,
        "oom": result.oom is not None,
        "bound_time_s": result.bound_time_s,
        "bound_peak_bytes": result.bound_peak_bytes,
    }
    if result.interconnect_s:
        report["interconnect_s"] = result.interconnect_s
        report["interconnect_bytes"] = result.interconnect_bytes
    if result.oom is not None:
        report["oom_at"] = asdict(result.oom)
    if reference is not None:
        report["slowdown_vs_none"] = _change(result.makespan_s, reference.makespan_s)
        report["peak_vs_none"] = _change(
            result.peak_hbm_bytes, reference.peak_hbm_bytes
        )
    return report


def _change(value: float, reference: float) -> float | None:
    """`value / reference - 1`; None where that is undefined (`reference` is 0)."""
    if reference == 0:
        return 0.0 if value == 0 else None
    return value / reference - 1


def _percent(change: float | None) -> str:
    return "n/a" if change is None else f"{change:+.1%}"


def _versus(report: dict[str, Any]) -> str:
    if "slowdown_vs_none" not in report or report["policy"] == "none":
        return "-"
    peak, time = report["peak_vs_none"], report["slowdown_vs_none"]
    return f"peak {_percent(peak)}, time {_percent(time)}"


def format_table(reports: list[dict[str, Any]]) -> str:
    """One row per run, then the bounds and any out-of-memory details."""
    header = (
        "policy",
        "peak HBM",
        "arena",
        "makespan",
        "compute",
        "exposed",
        "moved",
        "vs none",
        "OOM",
    )
    rows: list[tuple[str, ...]] = [header]
    for r in reports:
        rows.append(
            (
                r["policy"],
                format_bytes(r["peak_hbm_bytes"]),
                format_bytes(r["arena_bytes"]),
                format_seconds(r["makespan_s"]),
                format_seconds(r["compute_s"]),
                format_seconds(r["exposed_transfer_s"]),
                format_bytes(r["bytes_to_device"] + r["bytes_to_remote"]),
                _versus(r),
                "yes" if r["oom"] else "no",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    first = reports[0]
    collectives = next((r for r in reports if "interconnect_s" in r), None)
    capacity = first["hbm_capacity_bytes"]
    lines.insert(
        0,
        f"hardware {first['hardware']}, HBM capacity "
        f"{format_bytes(capacity) if capacity is not None else 'unlimited'}",
    )
    lines.append(
        f"bounds: time >= {format_seconds(first['bound_time_s'])} "
        f"({'the busiest stream' if collectives else 'compute'}), "
        f"peak >= {format_bytes(first['bound_peak_bytes'])} (largest single-op working set)"
    )
    if collectives is not None:  # the same collectives whatever the policy
        lines.append(
            f"interconnect: busy {format_seconds(collectives['interconnect_s'])} "
            f"({format_bytes(collectives['interconnect_bytes'])} sent each way, "
            "beside compute)"
        )
    for r in reports:
        if "oom_at" in r:
            oom = r["oom_at"]
            live = ", ".join(
                f"{name} ({format_bytes(size)})" for name, size in oom["live"]
            )
            lines.append(
                f"{r['policy']}: out of memory at {oom['loc']} '{oom['step']}' "
                f"(t = {format_seconds(oom['time_s'])}, needs {format_bytes(oom['needed_bytes'])}); "
                f"largest live: {live}"
            )
    return "\n".join(lines)
