"""
Benchmark pictures: peak HBM against slowdown for every setting each policy
tried, the lengths each policy fits in a fixed HBM, and the KV memory of a
generation against its throughput.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hyperoffload.benchmark.peers import Point
from hyperoffload.sim.plot import figure_bytes
from hyperoffload.support.outputs import write_output

_COLORS = {
    "none": "black",
    "reactive-lru": "tab:red",
    "runtime-prefetch": "tab:green",
    "distance": "tab:orange",
    "activation-pass": "tab:purple",
    "hyperoffload": "tab:blue",
    "hyperoffload, arguments in tier": "tab:cyan",
    "checkpoint-blocks": "tab:olive",
    "megatron-selective": "tab:pink",
    "memory-budget": "darkgoldenrod",
    "plan": "tab:blue",
    "flexgen": "tab:brown",
    "ours": "tab:blue",
    "all-resident": "black",
    "on-demand": "tab:gray",
    "lru": "tab:red",
    "moe-infinity": "tab:green",
}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    return pyplot


_Series = dict[str, list[tuple[float, int, bool]]]
"""Per policy: (x, peak HBM bytes, filled marker) points."""


def _write_scatter(
    series: _Series,
    path: Path,
    title: str,
    xlabel: str,
    log_base: int,
    mark: Callable[[Any], object],
) -> None:
    """Peak HBM (GB) against x, one colour per policy, `mark` draws the reference."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(7, 4.5))
    for policy, color in _COLORS.items():
        for filled in (True, False):
            chosen = [(x, y) for x, y, f in series.get(policy, []) if f == filled]
            if chosen:
                axis.scatter(
                    [x for x, _ in chosen],
                    [y / 1e9 for _, y in chosen],
                    s=20,
                    label=policy if filled else None,
                    facecolors=color if filled else "none",
                    edgecolors=color,
                )
    mark(axis)
    axis.set_xscale("log", base=log_base)
    axis.set_xlabel(xlabel)
    axis.set_ylabel("peak HBM (GB)")
    axis.set_title(title, fontsize="medium")
    _save(plt, figure, axis, path)


def _save(plt: Any, figure: Any, axis: Any, path: Path) -> None:
    """The legend, then the PNG written into place."""
    axis.legend(fontsize="small")
    figure.tight_layout()
    write_output(path, figure_bytes(plt, figure, path, dpi=90))


def write_tradeoff_plot(
    points: list[Point], path: Path, title: str, limit: float
) -> None:
    """Peak vs slowdown per policy (out-of-memory runs hollow), the limit dashed."""
    series: _Series = {}
    for p in points:
        series.setdefault(p.policy, []).append(
            (max(p.slowdown, 1e-4) * 100, p.peak_hbm_bytes, not p.oom)
        )
    _write_scatter(
        series,
        path,
        title,
        "slowdown over none (%, log scale; hollow: out of memory)",
        10,
        lambda axis: axis.axvline(
            limit * 100, color="grey", linestyle="--", label=f"{limit:.0%} slowdown"
        ),
    )


def write_longest_plot(
    tried: list[dict[str, Any]], capacity: int, path: Path, title: str
) -> None:
    """Peak HBM of each policy at each length tried, against the fixed capacity."""
    series: _Series = {}
    for t in tried:
        if "peak_hbm_bytes" in t:
            series.setdefault(t["policy"], []).append(
                (t["length"], t["peak_hbm_bytes"], t["fits"])
            )
    _write_scatter(
        series,
        path,
        title,
        "length (tokens; hollow: does not fit)",
        2,
        lambda axis: axis.axhline(
            capacity / 1e9, color="grey", linestyle="--", label="HBM capacity"
        ),
    )


def write_kv_throughput_plot(
    points: dict[str, list[tuple[int, float]]], path: Path, title: str
) -> None:
    """Tokens/s against the KV cache bytes in HBM, for every run of each policy."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(7, 4.5))
    for policy, runs in points.items():
        if runs:
            axis.scatter(
                [kv / 1e9 for kv, _ in runs],
                [rate for _, rate in runs],
                s=20,
                label=policy,
                color=_COLORS.get(policy),
            )
    axis.set_xlabel("KV cache in HBM at the peak (GB)")
    axis.set_ylabel("tokens/s")
    axis.set_title(title, fontsize="medium")
    _save(plt, figure, axis, path)


def write_budget_throughput_plot(
    curves: dict[str, list[tuple[int, float]]], path: Path, title: str
) -> None:
    """Tokens/s against the HBM budget for experts, a line per policy."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(7, 4.5))
    for policy, points in curves.items():
        axis.plot(
            [budget / 1e9 for budget, _ in points],
            [rate for _, rate in points],
            marker="o",
            label=policy,
            color=_COLORS.get(policy),
        )
    axis.set_xlabel("HBM budget for routed experts (GB)")
    axis.set_ylabel("tokens/s (log scale)")
    axis.set_yscale("log")
    axis.set_title(textwrap.fill(title, 70), fontsize="medium")
    _save(plt, figure, axis, path)


def write_curves_plot(
    curves: dict[str, list[tuple[float, int]]],
    floor: int,
    path: Path,
    title: str,
) -> None:
    """
    Each policy's trade-off curve (`hyperoffload.benchmark.tradeoff`): at
    each target it meets, its peak HBM against its slowdown, one line per
    policy; the return floor dashed.
    """
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(7, 4.5))
    for policy, points in curves.items():
        if points:
            axis.plot(
                [max(slowdown, 1e-4) * 100 for slowdown, _ in points],
                [peak / 1e9 for _, peak in points],
                marker="o",
                markersize=4,
                linewidth=2.5 if policy == "hyperoffload" else 1.2,
                label=policy,
                color=_COLORS.get(policy),
            )
    axis.axhline(
        floor / 1e9, color="grey", linestyle="--", label="results held at return"
    )
    axis.set_xscale("log", base=10)
    axis.set_xlabel("slowdown over none (%, log scale)")
    axis.set_ylabel("peak HBM (GB)")
    axis.set_title(textwrap.fill(title, 70), fontsize="medium")
    _save(plt, figure, axis, path)
