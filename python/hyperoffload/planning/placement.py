"""
Move-window placement: where each offload op goes inside its legal window,
computed on arrays (op times, the memory timeline), never by re-simulating
the program per candidate.

Positions are indices into the *skeleton*: the function's top-level ops that
are not offload ops. A prefetch issued "before skeleton op f" starts at the
compute time `start[f]`; its transfer must end by the start of its first
user `u`. With `alpha > 0` (exposed time matters) each prefetch is placed
just in time: as late as the link allows it to finish by `start[u]`, after
the transfers queued behind it on the same copy stream are accounted for
(the streams are first come, first served, so a backward pass in deadline
order gives every transfer the latest slot that still hides it). With
`beta > 0` a prefetch is never placed so early that the memory timeline
would pass the target; with `alpha == 0` it goes right before its user
(least memory); with `beta == 0` as early as its window allows (least
exposure). At most `max_inflight` prefetches are in flight at once.

```python
placement = place_prefetches(windows, start, live, target, link_time, options)
```
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

_EPSILON_S = 1e-12
"""Slack for float sums of op times when matching a start time to an op boundary."""


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
    beta: float = 1.0
    max_inflight: int = 8


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
    if options.alpha == 0:
        return [w.latest for w in windows]
    if options.beta == 0:
        return [w.earliest for w in windows]
    wanted = [w.latest for w in windows]
    next_start: dict[str, float] = {}
    for k in sorted(range(len(windows)), key=lambda k: -windows[k].latest):
        w = windows[k]
        end = min(float(start[w.latest]), next_start.get(w.link, float("inf")))
        begin = end - w.duration_s
        next_start[w.link] = begin
        # the latest op boundary at or before `begin`
        issue = int(np.searchsorted(start, begin + _EPSILON_S, side="right")) - 1
        wanted[k] = min(max(issue, w.earliest), w.latest)
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
