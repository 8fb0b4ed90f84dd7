"""
Move-window placement: where each offload op goes inside its legal window,
computed on arrays (op times, the memory timeline), never by re-simulating
the program per candidate.

Positions are indices into the *skeleton*: the function's top-level ops that
are not offload ops. A prefetch issued "before skeleton op f" starts at the
compute time `start[f]`; its transfer must end by the start of its first
user `u`. Each prefetch is placed just in time: as late as the link allows
it to finish by `start[u]`, after the transfers queued behind it on the same
copy stream are accounted for (the streams are first come, first served, so
a backward pass in deadline order gives every transfer the latest slot that
still hides it: the least exposure). It is issued at least `distance` ops
before `u` (the pipeline's `prefetch-distance`). With `beta > 0` a prefetch
is never placed so early that the memory timeline would pass the target
(that wins over `distance`); with `alpha == 0` (exposure carries no weight)
it goes `distance` ops before its user, the least memory. At most
`max_inflight` prefetches are in flight at once.

The objective is the seeds' `C = alpha * T_exposed + beta * M_peak`, each
term relative to the input (`placement_cost`: exposed time over the
compute time, peak over the input's peak); `keeps` decides between a
placement and the input order with it: the cheaper is kept, and a target
the input met stays met unless `beta == 0`.

```python
placement = place_prefetches(windows, start, live, target, options)
keeps(before, after, target, options)   # simulations of the input and the placement
```
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hyperoffload.sim.simulator import SimResult
from hyperoffload.support.serial_link import issue_just_in_time


@dataclass(frozen=True)
class PrefetchWindow:
    """A prefetch that may be issued before skeleton ops `earliest..latest`."""

    earliest: int
    latest: int
    """Its first user: issuing before it is the latest legal position."""
    bytes: int
    duration_s: float
    link: str
    current: int
    """Where it is now."""


@dataclass(frozen=True)
class MoveOptions:
    alpha: float = 1.0
    """Weight of exposed transfer time (0: each prefetch `distance` ops before its user)."""
    beta: float = 1.0
    """Weight of peak memory (0: the least exposure, whatever the target)."""
    max_inflight: int = 8
    distance: int = 0
    """Ops at least between a prefetch and its first user (unless the target forbids)."""


def placement_cost(
    result: SimResult, reference: SimResult, options: MoveOptions
) -> float:
    """
    `alpha * T_exposed + beta * M_peak` of `result`, each term relative to
    `reference` (the input): exposed time over its compute time, peak over
    its peak.
    """
    exposed = result.exposed_transfer_s / max(reference.compute_s, 1e-30)
    peak = result.peak_hbm_bytes / max(reference.peak_hbm_bytes, 1)
    return options.alpha * exposed + options.beta * peak


def keeps(
    before: SimResult, after: SimResult, target: int | None, options: MoveOptions
) -> bool:
    """
    Whether the placement simulated as `after` is kept over the input order
    (`before`): it costs no more (`placement_cost`), and it stays within a
    target the input met unless memory carries no weight (`beta == 0`).
    """
    if (
        options.beta > 0
        and target is not None
        and before.peak_hbm_bytes <= target < after.peak_hbm_bytes
    ):
        return False
    cost = placement_cost(after, before, options)
    return cost <= placement_cost(before, before, options) * (1 + 1e-9) + 1e-12


def place_prefetches(
    windows: list[PrefetchWindow],
    start: npt.NDArray[np.float64],
    live: npt.NDArray[np.int64],
    target: int | None,
    options: MoveOptions,
) -> list[int]:
    """
    New positions for `windows`. `start[i]` is the compute time at which
    skeleton op i starts (len = ops + 1, the last entry is the end);
    `live[i]` the HBM bytes while op i runs with every prefetch counted only
    from its current position. `live` is updated in place to the
    positions returned.
    """
    positions = [w.current for w in windows]
    base = live.copy()
    for w in windows:  # take each prefetched copy out before its user
        base[w.current : w.latest] -= w.bytes
    without = base.copy()
    wanted = _just_in_time(windows, start, options)
    order = sorted(range(len(windows)), key=lambda k: -windows[k].latest)
    for k in order:
        w = windows[k]
        position = wanted[k]
        if options.beta > 0 and target is not None:
            position = _within_target(base, position, w, target)
        base[position : w.latest] += w.bytes
        positions[k] = position
    _limit_inflight(windows, positions, options.max_inflight)
    for w, position in zip(windows, positions, strict=True):
        without[position : w.latest] += w.bytes
    live[:] = without
    return positions


def _just_in_time(
    windows: list[PrefetchWindow], start: npt.NDArray[np.float64], options: MoveOptions
) -> list[int]:
    """
    Each prefetch's position just in time on its link's copy stream
    (`issue_just_in_time`, latest user first), at least `distance` ops ahead.
    """
    ahead = [max(w.earliest, w.latest - options.distance) for w in windows]
    if options.alpha == 0:
        return [min(a, w.latest) for a, w in zip(ahead, windows, strict=True)]
    wanted = [w.latest for w in windows]
    free: dict[str, npt.NDArray[np.float64]] = {}
    for k in sorted(range(len(windows)), key=lambda k: -windows[k].latest):
        w = windows[k]
        if w.link not in free:
            free[w.link] = np.diff(start)
        link = free[w.link]
        issue = issue_just_in_time(link, 0, w.latest, w.duration_s)
        wanted[k] = min(max(issue, w.earliest), w.latest, ahead[k])
        # issued earlier for `distance`, it holds the link from then
        if wanted[k] < issue:
            link[wanted[k] : w.latest] = 0.0
    return wanted


def _within_target(
    base: npt.NDArray[np.int64], position: int, w: PrefetchWindow, target: int
) -> int:
    """The earliest position at or after `position` that keeps the timeline within target."""
    if position >= w.latest:
        return w.latest
    over = np.nonzero(base[position : w.latest] + w.bytes > target)[0]
    if over.size == 0:
        return position
    return min(position + int(over[-1]) + 1, w.latest)


def _limit_inflight(
    windows: list[PrefetchWindow], positions: list[int], limit: int
) -> None:
    """Delay issues so that at most `limit` prefetches are in flight at any op."""
    if limit <= 0:
        return
    order = sorted(range(len(windows)), key=lambda k: positions[k])
    inflight: list[int] = []  # users of the prefetches issued and not yet consumed
    for k in order:
        inflight = [u for u in inflight if u > positions[k]]
        if len(inflight) >= limit:
            earliest_user = min(inflight)
            positions[k] = min(max(positions[k], earliest_user), windows[k].latest)
            inflight.remove(earliest_user)
        inflight.append(windows[k].latest)
