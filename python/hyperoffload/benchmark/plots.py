"""
Benchmark pictures: peak HBM against slowdown for every setting each policy
tried, and the lengths each policy fits in a fixed HBM.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hyperoffload.benchmark.peers import Point

_COLORS = {
    "none": "black",
    "reactive-lru": "tab:red",
    "distance": "tab:orange",
    "activation-pass": "tab:purple",
    "hyperoffload": "tab:blue",
}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    return pyplot


def write_tradeoff_plot(
    points: list[Point], path: Path, title: str, limit: float
) -> None:
    """Peak vs slowdown per policy (out-of-memory runs hollow), the limit dashed."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(7, 4.5))
    for policy, color in _COLORS.items():
        mine = [p for p in points if p.policy == policy]
        if not mine:
            continue
        for oom in (False, True):
            chosen = [p for p in mine if p.oom == oom]
            if chosen:
                axis.scatter(
                    [max(p.slowdown, 1e-4) * 100 for p in chosen],
                    [p.peak_hbm_bytes / 1e9 for p in chosen],
                    s=18,
                    label=None if oom else policy,
                    facecolors="none" if oom else color,
                    edgecolors=color,
                )
    axis.axvline(
        limit * 100, color="grey", linestyle="--", label=f"{limit:.0%} slowdown"
    )
    axis.set_xscale("log")
    axis.set_xlabel("slowdown over none (%, log scale; hollow: out of memory)")
    axis.set_ylabel("peak HBM (GB)")
    axis.set_title(title, fontsize="medium")
    axis.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(str(path), dpi=90)
    plt.close(figure)


def write_longest_plot(
    tried: list[dict[str, Any]], capacity: int, path: Path, title: str
) -> None:
    """Peak HBM of each policy at each length tried, against the fixed capacity."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(7, 4.5))
    for policy, color in _COLORS.items():
        mine = [t for t in tried if t["policy"] == policy and "peak_hbm_bytes" in t]
        if not mine:
            continue
        for fits in (True, False):
            chosen = [t for t in mine if t["fits"] == fits]
            if chosen:
                axis.scatter(
                    [t["length"] for t in chosen],
                    [t["peak_hbm_bytes"] / 1e9 for t in chosen],
                    s=24,
                    label=policy if fits else None,
                    facecolors=color if fits else "none",
                    edgecolors=color,
                )
    axis.axhline(capacity / 1e9, color="grey", linestyle="--", label="HBM capacity")
    axis.set_xscale("log", base=2)
    axis.set_xlabel("length (tokens; hollow: does not fit)")
    axis.set_ylabel("peak HBM (GB)")
    axis.set_title(title, fontsize="medium")
    axis.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(str(path), dpi=90)
    plt.close(figure)
