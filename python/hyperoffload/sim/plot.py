"""
Memory timelines: HBM bytes over time, the capacity line, and the transfer
intervals of each copy stream underneath; rendered as the bytes of an image
whose format the output's suffix names (PNG by default).

```python
check_plot_path(Path("timeline.png"))  # before the run: a format matplotlib writes
write_output(Path("timeline.png"), plot_image(runs, Path("timeline.png"), "title"))
```
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, cast

from hyperoffload.sim.simulator import SimResult
from hyperoffload.support.outputs import OutputError


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    return plt


def plot_format(path: Path) -> str:
    """The image format of `path` (its suffix; `png` without one)."""
    return path.suffix[1:].lower() or "png"


def check_plot_path(path: Path, flag: str = "--plot") -> None:
    """An `OutputError` if matplotlib cannot write the format `path` names."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    formats = FigureCanvasAgg.get_supported_filetypes()
    if plot_format(path) not in formats:
        raise OutputError(
            path,
            f"cannot write {flag}: no image format '{plot_format(path)}' "
            f"(known: {', '.join(sorted(formats))})",
        )


def figure_bytes(plt: Any, figure: Any, path: Path, dpi: int) -> bytes:
    """`figure` rendered in the format of `path`, then closed."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format=plot_format(path), dpi=dpi)
    plt.close(figure)
    return buffer.getvalue()


def plot_image(runs: list[tuple[str, SimResult]], path: Path, title: str) -> bytes:
    """One memory timeline per run (policy name, result), sharing the axes."""
    plt = _pyplot()

    figure, (memory_axis, transfer_axis) = plt.subplots(
        2, 1, figsize=(10, 6), sharex=True, height_ratios=(3, 1)
    )
    tracks: list[str] = []
    largest = max((r.peak_hbm_bytes for _, r in runs), default=0)
    scale, unit = (1e9, "GB") if largest >= 1e9 else (1e6, "MB")
    for label, result in runs:
        samples = sorted(result.memory)
        times = [t * 1e3 for t, _ in samples]
        occupancy = [b / scale for _, b in samples]
        memory_axis.step(
            times,
            occupancy,
            where="post",
            label=f"{label} (peak {max(occupancy, default=0):.2f} {unit})",
        )
        for interval in result.intervals:
            if interval.track == "compute":
                continue
            track = f"{label}: {interval.track}"
            if track not in tracks:
                tracks.append(track)
            transfer_axis.broken_barh(
                [(interval.start * 1e3, (interval.end - interval.start) * 1e3)],
                (tracks.index(track) - 0.4, 0.8),
            )
    capacity = runs[0][1].hbm_capacity_bytes if runs else None
    if capacity is not None:
        memory_axis.axhline(
            capacity / scale, color="red", linestyle="--", label="HBM capacity"
        )
    memory_axis.set_ylabel(f"HBM ({unit})")
    memory_axis.set_title(title)
    memory_axis.legend(loc="upper right", fontsize="small")
    transfer_axis.set_yticks(range(len(tracks)), tracks, fontsize="x-small")
    transfer_axis.set_xlabel("time (ms)")
    transfer_axis.set_ylabel("transfers")
    figure.tight_layout()
    return figure_bytes(plt, figure, path, dpi=110)


def peak_per_token_image(
    runs: list[tuple[str, list[int]]], path: Path, title: str, capacity: int | None
) -> bytes:
    """The HBM peak of each decode call against the tokens generated, per policy."""
    plt = _pyplot()

    figure, axis = cast(tuple[Any, Any], plt.subplots(figsize=(8, 4.5)))
    largest = max((max(p, default=0) for _, p in runs), default=0)
    scale, unit = (
        (1e9, "GB")
        if largest >= 1e9
        else (1e6, "MB")
        if largest >= 1e6
        else (1e3, "KB")
    )
    for label, peaks in runs:
        tokens = range(1, len(peaks) + 1)
        axis.step(tokens, [p / scale for p in peaks], where="post", label=label)
    if capacity is not None and capacity < 4 * largest:
        axis.axhline(
            capacity / scale, color="red", linestyle="--", label="HBM capacity"
        )
    axis.set_xlabel("tokens generated")
    axis.set_ylabel(f"peak HBM of the call ({unit})")
    axis.set_title(title)
    axis.legend(fontsize="small")
    figure.tight_layout()
    return figure_bytes(plt, figure, path, dpi=110)
