"""
A lower bound on the peak that counts the link: the LP relaxation of
offload and recomputation planning for a fixed op order, solved with HiGHS.

`M_LB` (`hyperoffload.analysis.bounds`) lets every tensor leave HBM whose
own store and fetch fit around its idle gap, as if each had the link to
itself. Here the transfers share it. The ops are cut into windows of
consecutive ops; in the LP, each idle gap of a value may be out of HBM by a
fraction in each window it covers, and

- a fraction out in window `t` must have been stored before the end of `t`
  (in the store's traffic over windows up to `t`; nothing to store for an
  argument that lives in a tier) and must be fetched after the start of `t`
  (in the gap's fetch traffic over windows from `t` to its use);
- the bytes each direction moves in a window are at most what every link
  (each tier the hardware offers) together moves in the window's compute
  time plus the extra time spent there (stalls, recomputation), and the
  extra time of the whole program is at most `max_slowdown` x its compute;
- a value the program holds to its end (an argument) may also be out
  after its last use, once stored, and is never fetched back (runtimes
  evict such a value; `M_LB` and the planner keep it); so may a value it
  returns at a result tagged with a tier (written back there, as the
  planner writes an updated optimizer state), after its last use before
  the return;
- a fraction of a gap may instead be recomputed: out of HBM over the whole
  gap, at the cost of at least its producer's time (in the extra time);
- the live bytes of the unplanned timeline, less what is out, are at most
  the peak `P` at each op kept as a row (the ops with the most live bytes of
  each window, and the highest overall).

Every plan the planner can write (a value out over idle gaps, a store after
its producer, fetches before the use, any tiers, recomputation), and every
run of a runtime or static peer on the same op order, within the slowdown
gives a feasible point, each relaxation (fluid, pooled links, no
latency, no duplex penalty, fewer rows, windows) only widens the LP: its
optimum, rounded down, is never above the simulated peak of such a plan.
Compressed transfers (`compress-kv`) move fewer bytes than counted here, so
the bound is for plans without them. It is at least the largest single-op
working set.

```python
bound = link_lower_bound(ProgramGraph.build(function, costs), hardware, max_slowdown=0.02)
bound.bytes, bound.status, bound.windows
```
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import reduce
from math import ceil, gcd

import numpy as np

from hyperoffload.analysis.lifetimes import Gap, ProgramGraph, ValueInfo
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.schedule import Compute, Free
from hyperoffload.support.positions import OpIndex
from hyperoffload.support.tiers import Tier

WINDOWS = 64
"""Windows the ops are cut into by default (fewer: a smaller, weaker LP)."""
ROWS_PER_WINDOW = 4
"""Memory rows kept per window: its ops with the most live bytes."""
TOP_ROWS = 64
"""Memory rows kept overall: the ops with the most live bytes."""
_IPM_COLUMNS = 20_000
"""LPs with more columns are solved by the interior point method."""
_TOLERANCE = 1e-6
"""Taken off the LP's optimum (in units of the unplanned peak) before rounding."""


@dataclass(frozen=True)
class LinkBound:
    bytes: int
    """The bound on the peak (at least the largest single-op working set)."""
    lp_bytes: int
    """The LP's own optimum, rounded down (0 when not solved)."""
    status: str
    """HiGHS's model status (`Optimal`), or why it was not solved."""
    windows: int
    columns: int
    rows: int
    seconds: float


@dataclass
class _Lp:
    """Columns and rows of an LP, passed to HiGHS at once."""

    upper: list[float] = field(default_factory=list[float])
    cost: list[float] = field(default_factory=list[float])
    row_upper: list[float] = field(default_factory=list[float])
    rows: list[int] = field(default_factory=list[int])
    cols: list[int] = field(default_factory=list[int])
    values: list[float] = field(default_factory=list[float])

    def column(self, upper: float = np.inf, cost: float = 0.0) -> int:
        self.upper.append(upper)
        self.cost.append(cost)
        return len(self.upper) - 1

    def at_most(self, terms: list[tuple[int, float]], upper: float) -> None:
        index = len(self.row_upper)
        self.row_upper.append(upper)
        for col, value in terms:
            self.rows.append(index)
            self.cols.append(col)
            self.values.append(value)

    def solve(self, time_limit_s: float) -> tuple[str, float]:
        """
        HiGHS's status and objective, one thread: the simplex, or on a large
        LP (the 32-layer steps': about 10^5 rows and columns) the interior
        point method with crossover.
        """
        import highspy

        solver = highspy.Highs()
        solver.setOptionValue("output_flag", False)
        solver.setOptionValue("threads", 1)
        solver.setOptionValue("random_seed", 0)
        solver.setOptionValue("time_limit", time_limit_s)
        num_cols, num_rows = len(self.upper), len(self.row_upper)
        solver.setOptionValue("solver", "ipm" if num_cols > _IPM_COLUMNS else "simplex")
        order = np.lexsort((np.array(self.cols), np.array(self.rows)))
        rows = np.array(self.rows, dtype=np.int32)[order]
        starts = np.searchsorted(rows, np.arange(num_rows + 1)).astype(np.int32)
        solver.passModel(
            num_cols,
            num_rows,
            len(self.values),
            int(highspy.MatrixFormat.kRowwise),
            int(highspy.ObjSense.kMinimize),
            0.0,
            np.array(self.cost),
            np.zeros(num_cols),
            np.array(self.upper),
            np.array([-np.inf] * num_rows),
            np.array(self.row_upper),
            starts,
            np.array(self.cols, dtype=np.int32)[order],
            np.array(self.values)[order],
            np.zeros(num_cols, dtype=np.int32),  # continuous: the relaxation
        )
        solver.run()
        status = solver.modelStatusToString(solver.getModelStatus())
        if status != "Optimal":  # no bound from it
            return status, 0.0
        return status, float(solver.getInfo().objective_function_value)


def _movable(graph: ProgramGraph, info: ValueInfo) -> bool:
    """A value whose buffer could leave HBM (as `M_LB` counts them)."""
    if info.buffer is None:
        return False
    buffer = graph.schedule.buffers[info.buffer]
    return buffer.tier == Tier.HBM and buffer.kind != "constant"


class _Windows:
    """Consecutive ops cut into windows of about equal count."""

    def __init__(self, graph: ProgramGraph, count: int):
        n = len(graph.ops)
        self.count = max(1, min(count, n))
        self.starts = [n * t // self.count for t in range(self.count)] + [n]
        self.of = np.repeat(np.arange(self.count), np.diff(self.starts))
        prefix = graph.prefix
        self.compute = [
            prefix[self.starts[t + 1]] - prefix[self.starts[t]]
            for t in range(self.count)
        ]

    def span(self, first: int, last: int) -> range:
        """The windows holding ops `first` to `last` (inclusive)."""
        return range(int(self.of[first]), int(self.of[last]) + 1)


def _rows(
    graph: ProgramGraph, windows: _Windows, per_window: int, top: int
) -> set[int]:
    """The ops kept as memory rows."""
    live = np.asarray(graph.timeline, dtype=np.int64)
    kept: set[int] = set(np.argsort(-live, kind="stable")[:top].tolist())
    for t in range(windows.count):
        a, b = windows.starts[t], windows.starts[t + 1]
        order = np.argsort(-live[a:b], kind="stable")[:per_window]
        kept.update((a + order).tolist())
    return kept


def link_lower_bound(
    graph: ProgramGraph,
    hardware: Hardware,
    max_slowdown: float = 0.0,
    windows: int = WINDOWS,
    recompute: bool = True,
    time_limit_s: float = 60.0,
    release_held: bool = True,
) -> LinkBound:
    """
    The LP bound on the peak of any plan within `max_slowdown` (see the
    module docstring), for the graph of an unplanned program; the LP at
    `windows` windows. Without `recompute`, for plans that only offload;
    without `release_held`, for plans that keep what the program holds to
    its end (an untagged argument) in HBM after its last use, as `M_LB` and
    the planner do.
    """
    start = time.perf_counter()
    n = len(graph.ops)
    floor = graph.schedule.largest_working_set()
    if n == 0 or not hardware.links:
        return LinkBound(floor, 0, "nothing to move", 0, 0, 0, 0.0)
    cut = _Windows(graph, windows)
    kept = _rows(graph, cut, ROWS_PER_WINDOW, TOP_ROWS)
    total = graph.prefix[-1] or 1.0
    scale = float(max(graph.timeline)) or 1.0  # bytes in units of the peak
    lp = _Lp()
    peak = lp.column(cost=1.0)
    extra = [lp.column() for _ in range(cut.count)]  # stalls, recomputation
    # bytes out at each kept op: (column, bytes / scale)
    out: dict[int, list[tuple[int, float]]] = {j: [] for j in kept}
    traffic = _Traffic(cut.count)
    slack = max_slowdown * total  # the most extra time any plan has
    recomputed: list[tuple[int, float]] = []
    removable = np.zeros(n + 1, dtype=np.int64)
    kept_to_end = _held_to_end(graph) if release_held else set[int]()
    written_back = graph.returned_to_tiers()
    for info in graph.values:
        if not _movable(graph, info):
            continue
        size = info.bytes / scale
        resident = info.tier == Tier.HBM
        if not resident and info.last_use < n - 1:
            # it lives outside HBM: nothing holds it after its last use
            removable[info.last_use + 1] += info.bytes
            removable[n] -= info.bytes
        links = list(hardware.links.values())
        if not resident and info.tier in hardware.links:
            links = [hardware.link(info.tier)]  # fetched from its own tier
        fetch = min(link.transfer_time(info.bytes, True) for link in links) / total
        duration = 0.0
        if resident:
            duration = min(
                link.transfer_time(info.bytes, False)
                for link in hardware.links.values()
            )
        gaps = [g for g in info.gaps() if g.ops >= 1]
        if resident and info.buffer in kept_to_end and info.last_use < n - 1:
            # held to the end (an argument): out after its last use once stored,
            # never fetched
            gaps.append(Gap(info.last_use, OpIndex(n), n - 1 - info.last_use, 0.0))
        elif resident and (after := graph.written_back_gap(info, written_back)):
            gaps.append(after)  # returned to a tier: out once stored, never fetched
        # the kept ops of each gap, and those a whole transfer frees
        within = [
            [j for j in range(g.after + 1, min(g.before, n)) if j in kept] for g in gaps
        ]
        rows_of = [
            [
                j
                for j in rows
                if _whole(
                    graph,
                    info,
                    g.before,
                    j,
                    fetch * total if g.before < n else 0.0,
                    duration,
                    slack,
                )
            ]
            for g, rows in zip(gaps, within, strict=True)
        ]
        again_too = recompute and info.producer >= 0
        store: _Running | None = None
        if resident and any(rows_of):
            last = max(g.before for g, r in zip(gaps, rows_of, strict=True) if r)
            stored = {
                t: traffic.add(lp, t, False, duration / total, size)
                for t in cut.span(max(info.producer, 0), min(last, n - 1))
            }
            store = _Running(lp, stored, later=False)
        for gap, all_rows, rows in zip(gaps, within, rows_of, strict=True):
            shares: list[int] = []
            if rows:
                fetches = (
                    _Running(
                        lp,
                        {
                            t: traffic.add(lp, t, True, fetch, size)
                            for t in cut.span(gap.after + 1, gap.before)
                        },
                        later=True,
                    )
                    if gap.before < n
                    else None  # never fetched back
                )
                shares = _shares(lp, cut, rows, size, store, fetches, out)
            if again_too and all_rows:
                # out over the whole gap, for at least its producer's time
                cost = graph.op_time[info.producer] / total
                again = lp.column(upper=1.0)
                recomputed.append((again, cost))
                for j in all_rows:
                    out[j].append((again, size))
                for share in shares:  # the same bytes out once
                    lp.at_most([(share, 1.0), (again, 1.0)], 1.0)
    traffic.rows(lp, hardware, cut, total, scale, extra)
    lp.at_most([(e, 1.0) for e in extra], max_slowdown)
    # recomputation time is extra time: sum c y <= sum extra
    if recomputed:
        lp.at_most([*recomputed, *[(e, -1.0) for e in extra]], 0.0)
    base = np.asarray(graph.timeline, dtype=np.int64) - np.cumsum(removable)[:n]
    for j, terms in out.items():
        merged: dict[int, float] = {}
        for column, value in terms:
            merged[column] = merged.get(column, 0.0) + value
        # base - out <= P
        lp.at_most(
            [(peak, -1.0), *[(c, -v) for c, v in merged.items()]],
            -float(base[j]) / scale,
        )
    status, value = lp.solve(time_limit_s)
    # less the solver's tolerance, up to a granule: every peak is a sum of
    # buffer sizes, so a multiple of their greatest common divisor
    sizes = [b.bytes for b in graph.schedule.buffers if b.bytes > 0]
    granule = reduce(gcd, sizes, 0) or 1
    lp_bytes = max(0, ceil((value - _TOLERANCE) * scale / granule) * granule)
    return LinkBound(
        max(lp_bytes, floor),
        lp_bytes,
        status,
        cut.count,
        len(lp.upper),
        len(lp.row_upper),
        time.perf_counter() - start,
    )


def _held_to_end(graph: ProgramGraph) -> set[int]:
    """
    The buffers the program never frees (its arguments, those it returns):
    live to the end in the timeline, after their last use too.
    """
    freed: set[int] = set()
    for step in graph.schedule.steps:
        if isinstance(step, Compute):
            freed.update(step.frees)
        elif isinstance(step, Free):
            freed.add(step.buffer)
    return set(range(len(graph.schedule.buffers))) - freed


def _whole(
    graph: ProgramGraph,
    info: ValueInfo,
    use: int,
    op: int,
    fetch: float,
    store: float,
    slack: float,
) -> bool:
    """
    Whether a whole transfer lets `info` be out of HBM while `op` runs: its
    store (`store` seconds; 0 for a value with a copy) in the compute from
    the end of its producer to the start of `op`, its fetch from the end of
    `op` to the start of the `use`, each with the `slack` of extra time.
    """
    prefix = graph.prefix
    since = prefix[op] - prefix[max(info.producer, -1) + 1]
    until = prefix[use] - prefix[op + 1]
    return since + slack >= store and until + slack >= fetch


class _Running:
    """
    Columns bounded by the running sums of one transfer's fractions per
    window (window -> column): `later`, the sum over windows from `t` on;
    else over windows up to `t`. One column and one row a window, where
    each share's row over the fractions themselves would grow with the
    square of the windows a gap spans.
    """

    def __init__(self, lp: _Lp, fractions: dict[int, int], later: bool):
        self.windows = sorted(fractions)
        self.later = later
        self.sums: dict[int, int] = {}
        previous: int | None = None
        for w in reversed(self.windows) if later else self.windows:
            column = lp.column()
            terms = [(column, 1.0), (fractions[w], -1.0)]
            if previous is not None:
                terms.append((previous, -1.0))
            lp.at_most(terms, 0.0)
            self.sums[w] = previous = column

    def at(self, t: int) -> int | None:
        """The running sum's column at window `t` (None: nothing there, 0)."""
        if self.later:
            i = bisect_left(self.windows, t)
            return self.sums[self.windows[i]] if i < len(self.windows) else None
        i = bisect_right(self.windows, t)
        return self.sums[self.windows[i - 1]] if i > 0 else None


def _shares(
    lp: _Lp,
    cut: _Windows,
    rows: list[int],
    size: float,
    store: _Running | None,
    fetch: _Running | None,
    out: dict[int, list[tuple[int, float]]],
) -> list[int]:
    """
    The fraction of one gap out in each window holding one of its `rows`
    (each `size`: bytes / scale): out in window `t` needs as large a
    fraction of the fetch in windows `t`.. (`None`: never fetched) and of
    the store in windows ..`t` (`None`: nothing to store). Returns the
    fractions' columns.
    """
    shares: list[int] = []
    by_window: dict[int, list[int]] = {}
    for j in rows:
        by_window.setdefault(int(cut.of[j]), []).append(j)
    for t in sorted(by_window):
        share = lp.column(upper=1.0)
        shares.append(share)
        for j in by_window[t]:
            out[j].append((share, size))
        for running in (fetch, store):
            if running is None:
                continue
            total = running.at(t)
            lp.at_most([(share, 1.0)] + ([] if total is None else [(total, -1.0)]), 0.0)
    return shares


class _Traffic:
    """
    Transfers' fractions per window and direction: a column is the fraction
    of one transfer's duration spent in a window, with the least duration
    any link gives it (latency included) and its size.
    """

    def __init__(self, windows: int):
        self.by_window: list[dict[bool, list[tuple[int, float, float]]]] = [
            {True: [], False: []} for _ in range(windows)
        ]

    def add(
        self, lp: _Lp, window: int, to_device: bool, duration: float, size: float
    ) -> int:
        column = lp.column()
        self.by_window[window][to_device].append((column, duration, size))
        return column

    def rows(
        self,
        lp: _Lp,
        hardware: Hardware,
        cut: _Windows,
        total: float,
        scale: float,
        extra: list[int],
    ) -> None:
        """
        Per window and direction, in the window's compute plus extra time
        `T`: each transfer's time is at most `T` (one copy stream runs it);
        all of them together at most `T` per link (each link one stream a
        direction); their bytes at most what all links move in `T`.
        """
        links = list(hardware.links.values())
        streams = float(len(links))
        for t, directions in enumerate(self.by_window):
            window = cut.compute[t] / total
            for to_device, columns in directions.items():
                if not columns:
                    continue
                rate = sum(
                    link.bandwidth_to_device
                    if to_device
                    else link.bandwidth_from_device
                    for link in links
                )
                rate *= total / scale  # bytes / scale per unit of compute time
                for column, duration, _ in columns:
                    lp.at_most([(column, duration), (extra[t], -1.0)], window)
                lp.at_most(
                    [*[(c, d) for c, d, _ in columns], (extra[t], -streams)],
                    streams * window,
                )
                lp.at_most(
                    [*[(c, size) for c, _, size in columns], (extra[t], -rate)],
                    rate * window,
                )
