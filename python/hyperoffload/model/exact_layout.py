"""
Exact static layout: a branch-and-bound search for offsets within a
capacity, after MiniMalloc (Moffitt, ASPLOS'23; github.com/google/minimalloc,
`src/solver.cc`), and the smallest arena it can find and prove within a
time limit.

The search places allocations in a *canonical* order, by non-decreasing
offset (ties: a static preorder), each at its lowest offset above the
conflicting allocations already placed; every layout can be pushed down into
one of these, so the search is complete. It prunes with MiniMalloc's rules:

- *spatial inference*: the time axis is cut into sections at every claim and
  release; the allocations still to place in a section must fit between the
  lowest offset any of them can take and the capacity;
- *dominance*: an allocation is not placed at or above the top another one
  could reach at its own lowest offset (that one would fit below);
- *hatless pruning*: an allocation with nothing left to place above it is
  placed, never tried elsewhere;
- *dynamic decomposition*: where no allocation left crosses a section
  boundary (from the start, or once one is placed), the two sides are
  solved apart, each in its own preorder.

Three static preorders take turns, each search going on where it paused
(MiniMalloc restarts them under a node limit that doubles). They rank as
MiniMalloc's `WAT`, `TAW` and `TWA` do: by lifetime `W`idth, `A`rea (size
times width) and `T`otal, the most any of an allocation's sections holds of
what is left to place, ranked again for each part solved apart. The search
branches in the same order as MiniMalloc's in each preorder, visiting as many
nodes or fewer (its section floors can lag; here they are the lowest offset
left in the section): on MiniMalloc's challenging instances, against a
port of `solver.cc`, within 0.2% on eight, fewer on A (4,916 against
18,776 in `TWA`), F and K; it packs all eleven at the capacity.

```python
result = exact_layout(allocations, alignment=1, time_limit=10.0, incumbent=layout)
result.layout.arena_bytes   # never above the incumbent's
result.proven_optimal       # the arena meets the lower bound the search proved
```
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hyperoffload.model.allocations import Allocation, Layout, aligned, live_peak

PREORDERS = ("WAT", "TAW", "TWA")
"""MiniMalloc's preorders: keys by `W`idth of lifetime, `A`rea, section `T`otal."""

QUANTUM = 1000
"""Nodes each preorder's search visits in its turn."""

_Ints = np.ndarray[Any, np.dtype[np.int64]]

# (the ufuncs' reductions, without the array methods' wrappers: the search's hot loop)
_min = np.minimum.reduce
_max = np.maximum.reduce
_any = np.logical_or.reduce


class _Timeout(Exception):
    """The deadline passed, or the nodes ran out (`args[0]`: the nodes visited)."""


@dataclass(frozen=True)
class ExactLayout:
    """The best layout found and the lower bound proved on any arena."""

    layout: Layout
    lower_bound: int
    """No layout needs less (the live peak, raised by capacities proved too small)."""
    nodes: int
    """Search nodes visited, in all."""

    @property
    def proven_optimal(self) -> bool:
        return self.layout.arena_bytes <= self.lower_bound


class _Instance:
    """The allocations with a size, as sections of the time axis."""

    def __init__(self, allocations: Sequence[Allocation], alignment: int):
        for a in allocations:
            if a.end < a.start:
                raise ValueError(f"buffer {a.buffer} is released before it is claimed")
        sizes = [aligned(a.bytes, alignment) for a in allocations]
        self.members: list[int] = [i for i, s in enumerate(sizes) if s > 0]
        """The input index of each allocation searched (those with a size)."""
        # An empty stay at `t` must meet the stays around `t` only: `[2t, 2t + 1)`
        # against `[2s + 1, 2e)` for a stay from `s` to `e`.
        starts = [allocations[i].start for i in self.members]
        ends = [allocations[i].end for i in self.members]
        lower = np.array(
            [2 * s + (s < e) for s, e in zip(starts, ends, strict=True)], np.int64
        )
        upper = np.array(
            [2 * e + (s == e) for s, e in zip(starts, ends, strict=True)], np.int64
        )
        self.has_empty = any(s == e for s, e in zip(starts, ends, strict=True))
        count = len(self.members)
        self.count = count
        self.size: _Ints = np.array([sizes[i] for i in self.members], np.int64)
        times = np.unique(np.concatenate((lower, upper)))
        self.lo: _Ints = np.searchsorted(times, lower).astype(np.int64)
        self.hi: _Ints = np.searchsorted(times, upper).astype(np.int64)
        self.sections = max(0, len(times) - 1)
        self.total: _Ints = np.zeros(self.sections, np.int64)
        self.cuts: _Ints = np.zeros(self.sections, np.int64)
        """Allocations across each boundary between a section and the next."""
        rows: list[list[int]] = [[] for _ in range(self.sections)]
        for i, (low, high) in enumerate(
            zip(self.lo.tolist(), self.hi.tolist(), strict=True)
        ):
            self.total[low:high] += self.size[i]
            self.cuts[low : high - 1] += 1
            for section in range(low, high):
                rows[section].append(i)
        depth = max((len(row) for row in rows), default=0)
        self.section_members: _Ints = np.full((self.sections, depth), count, np.int64)
        """The allocations live in each section, padded with `count`."""
        for section, row in enumerate(rows):
            self.section_members[section, : len(row)] = row
        order = np.argsort(self.lo, kind="stable")
        self.neighbours: list[_Ints] = []
        """The allocations conflicting with each."""
        for i in range(count):
            others = order[
                (self.lo[order] < self.hi[i]) & (self.hi[order] > self.lo[i])
            ]
            self.neighbours.append(others[others != i])
        width = np.array(ends, np.int64) - np.array(starts, np.int64)
        self.keys: dict[str, _Ints] = {"W": -width, "A": -width * self.size}
        """Each allocation's static preorder keys (`T` depends on what is left)."""

    @property
    def peak(self) -> int:
        return int(self.total.max()) if self.sections else 0

    def rank(self, preorder: str, piece: _Ints, total: _Ints) -> _Ints:
        """
        The place of each of `piece` in `preorder` (ties: input order), with
        `T` the largest of `total` (what is left to place) over its sections,
        as MiniMalloc ranks each part it solves apart.
        """
        # each allocation's largest total: reduce over [lo, hi) pairs (a
        # sentinel after the last section keeps every index in range)
        bounds = np.stack((self.lo[piece], self.hi[piece]), axis=1).ravel()
        totals = np.maximum.reduceat(np.append(total, 0), bounds)[::2]
        keys = {"T": -totals, **{k: v[piece] for k, v in self.keys.items()}}
        columns = [piece] + [keys[k] for k in reversed(preorder)]
        rank = np.empty(len(piece), np.int64)
        rank[np.lexsort(columns)] = np.arange(len(piece))
        return rank


class _Search:
    """One depth-first search for offsets within `capacity`, in one preorder."""

    def __init__(
        self,
        instance: _Instance,
        capacity: int,
        preorder: str,
        deadline: float,
    ):
        self.instance = instance
        self.capacity = capacity
        self.preorder = preorder
        self.nodes = 0
        """Nodes it may visit before it pauses."""
        self.visited = 0
        self.deadline = deadline
        count = instance.count
        self.rank: _Ints = np.zeros(count + 1, np.int64)
        """Each allocation's place in the preorder of the part it is searched in."""
        self.total = instance.total.copy()
        self.cuts = instance.cuts.copy()
        self.never = np.iinfo(np.int64).max // (2 * count + 2)
        """Above any offset, and `never * count + count` is still an `int64`."""
        self.lowest: _Ints = np.zeros(count + 1, np.int64)
        """The lowest offset each allocation left can take (`never` once placed, and for the padding)."""
        self.lowest[count] = self.never
        self.offsets: list[int] = [0] * count
        self.lo: list[int] = instance.lo.tolist()
        self.hi: list[int] = instance.hi.tolist()
        self.sizes: list[int] = instance.size.tolist()

    def run(self) -> Generator[None, None, bool]:
        """
        Whether the allocations fit; pauses (yields) each time its `nodes`
        run out, to go on once given more; raises `_Timeout`.
        """
        every = np.arange(self.instance.count, dtype=np.int64)
        if self.instance.count == 0:
            return True
        bounds = (1 + np.flatnonzero(self.cuts == 0)).tolist()
        return (yield from self._pieces(every, 0, self.instance.sections, bounds))

    def _search(
        self, part: _Ints, first: int, stop: int, after: int
    ) -> Generator[None, None, bool]:
        """
        Place the rest of `part` (in sections `[first, stop)`), canonically
        after key `after` (an allocation's key: its lowest offset times the
        count, plus its rank).
        """
        self.nodes -= 1
        self.visited += 1
        while self.nodes < 0:
            yield
        if self.visited & 255 == 0 and time.perf_counter() > self.deadline:
            raise _Timeout(0)
        instance, lowest, total, cuts, capacity, count, never = (
            self.instance,
            self.lowest,
            self.total,
            self.cuts,
            self.capacity,
            self.instance.count,
            self.never,
        )
        # (placed allocations read as never: above any candidate, no lowest top)
        floors = lowest[part]
        lowest_top = int(_min(floors + instance.size[part]))
        if lowest_top >= never:
            return True
        # dominance: nothing goes at or above the lowest top any allocation
        # left can reach; inference: nor above the fullest section's room
        highest = min(lowest_top - 1, capacity - int(_max(total[first:stop])))
        keys = floors * count + self.rank[part]
        eligible = (keys > after) & (keys < (highest + 1) * count)
        candidates, keys = part[eligible], keys[eligible]
        order = keys.argsort()
        chosen: list[int] = candidates[order].tolist()
        chosen_keys: list[int] = keys[order].tolist()
        for b, key in zip(chosen, chosen_keys, strict=True):
            offset = key // count
            size, low, high = self.sizes[b], self.lo[b], self.hi[b]
            top = offset + size
            neighbours = instance.neighbours[b]
            raised = neighbours[lowest[neighbours] < top]
            was = lowest[raised]
            lowest[raised] = top
            lowest[b] = never
            self.offsets[b] = offset
            total[low:high] -= size
            # (the allocations left: all in the part, whose sections alone
            # are placed upwards from `offset`)
            window_low, window_high = low, high
            if len(raised):
                window_low = min(low, int(_min(instance.lo[raised])))
                window_high = max(high, int(_max(instance.hi[raised])))
            # a section can newly overflow only where it is this full
            suspect = total[window_low:window_high] > capacity - top
            suspect[low - window_low : high - window_low] = total[low:high] > 0
            sections = window_low + suspect.nonzero()[0]
            found = False
            if not (len(sections) and self._wasted(sections, offset)):
                # the boundaries no allocation left crosses split the part
                crossing = cuts[low : high - 1]
                crossing -= 1
                try:
                    if crossing.all():
                        found = yield from self._search(part, first, stop, key)
                    else:
                        bounds: list[int] = (
                            low + 1 + (crossing == 0).nonzero()[0]
                        ).tolist()
                        found = yield from self._pieces(part, first, stop, bounds)
                finally:
                    crossing += 1
            total[low:high] += size
            lowest[b] = offset
            lowest[raised] = was
            if found:
                return True
            # hatless: with nothing left above it, it goes here or nowhere
            if not len(neighbours) or _min(lowest[neighbours]) == never:
                break
        return False

    def _wasted(self, sections: _Ints, offset: int) -> bool:
        """Whether some of `sections` cannot hold what is left of it above its lowest offset."""
        members = self.instance.section_members[sections]
        floors = np.maximum(_min(self.lowest[members], axis=1), offset)
        return bool(_any(floors + self.total[sections] > self.capacity))

    def _pieces(
        self, part: _Ints, first: int, stop: int, bounds: list[int]
    ) -> Generator[None, None, bool]:
        """
        Place the rest of `part` apart between `bounds` (no allocation left
        crosses one), each piece in its own preorder, as MiniMalloc's
        dynamic decomposition does.
        """
        bounds = [first, *bounds, stop]
        left = part[self.lowest[part] != self.never]
        lo, hi = self.instance.lo[left], self.instance.hi[left]
        for begin, end in itertools.pairwise(bounds):
            piece = left[(lo < end) & (hi > begin)]
            if not len(piece):
                continue
            was = self.rank[piece]
            self.rank[piece] = self.instance.rank(self.preorder, piece, self.total)
            try:
                if not (yield from self._search(piece, begin, end, -1)):
                    return False
            finally:
                self.rank[piece] = was
        return True


class _Budget:
    """What a search may still spend: a deadline and, optionally, nodes."""

    def __init__(self, deadline: float, nodes: int | None):
        self.deadline = deadline
        self.nodes = nodes

    def share(self, fraction: float, now: float) -> _Budget:
        """`fraction` of what is left, for one try."""
        nodes = None if self.nodes is None else max(1, int(self.nodes * fraction))
        return _Budget(now + (self.deadline - now) * fraction, nodes)


def _fit(
    instance: _Instance, capacity: int, budget: _Budget
) -> tuple[_Ints | None, int]:
    """
    Offsets within `capacity` (None: proved impossible) and the nodes
    visited; raises `_Timeout` past the budget's deadline or nodes. The
    preorders' searches take turns of `QUANTUM` nodes, each going on from
    where it paused, until one of them finishes.
    """
    searches = [_Search(instance, capacity, p, budget.deadline) for p in PREORDERS]
    runs = [search.run() for search in searches]
    visited = 0
    while True:
        for search, run in zip(searches, runs, strict=True):
            quantum = QUANTUM
            if budget.nodes is not None:
                quantum = min(quantum, budget.nodes - visited)
                if quantum <= 0:
                    raise _Timeout(visited)
            search.nodes = quantum
            try:
                next(run)
            except StopIteration as done:
                visited += quantum - search.nodes
                return (
                    np.array(search.offsets, np.int64) if done.value else None
                ), visited
            except _Timeout:
                raise _Timeout(visited + quantum - search.nodes) from None
            visited += quantum


def exact_layout(
    allocations: Sequence[Allocation],
    alignment: int,
    incumbent: Layout,
    time_limit: float,
    *,
    target: int | None = None,
    node_budget: int | None = None,
) -> ExactLayout:
    """
    The smallest arena the search finds within `time_limit` seconds (and
    `node_budget` nodes, if given), never above `incumbent`'s. It tries a
    first capacity, then bisects between the capacities it could not pack
    (proved too small, or out of budget) and the arena it packed, each try
    with half the budget left. The first capacity is the live peak (with
    half the budget), or `target` (with 80% of it): with a target it stops
    at the first layout that fits it. `allocations` are in `incumbent`'s
    order.
    """
    start = time.perf_counter()
    budget = _Budget(start + time_limit, node_budget)
    instance = _Instance(allocations, alignment)
    lower = max(live_peak(allocations, alignment), instance.peak)
    best, visited, low = incumbent, 0, lower
    capacity = lower if target is None else max(lower, target)
    fraction = 0.5 if target is None else 0.8
    # the search's keys (offsets times the count) must fit an int64
    reach = best.arena_bytes + int(instance.size.max(initial=0))
    if reach * (2 * instance.count + 2) >= np.iinfo(np.int64).max:
        return ExactLayout(best, lower, 0)
    recursion = sys.getrecursionlimit()
    sys.setrecursionlimit(max(recursion, 3 * instance.count + 1000))
    try:
        while capacity < best.arena_bytes and time.perf_counter() < budget.deadline:
            if budget.nodes is not None and budget.nodes <= 0:
                break
            try:
                offsets, nodes = _fit(
                    instance, capacity, budget.share(fraction, time.perf_counter())
                )
            except _Timeout as out:
                offsets, nodes = None, int(out.args[0])
            else:
                # empty stays are searched more strictly than they are: no proof
                if offsets is None and not instance.has_empty:
                    lower = capacity + alignment
            visited += nodes
            if budget.nodes is not None:
                budget.nodes -= nodes
            fraction = 0.5
            if offsets is None:
                low = capacity + alignment
            else:
                best = _layout(instance, offsets, len(allocations))
                if target is not None and best.arena_bytes <= target:
                    break
            high = best.arena_bytes - alignment
            capacity = max(low, (low + high) // 2 // alignment * alignment)
    finally:
        sys.setrecursionlimit(recursion)
    return ExactLayout(best, lower, visited)


def _layout(instance: _Instance, offsets: _Ints, count: int) -> Layout:
    """The layout of all `count` allocations (those without a size at 0)."""
    every = [0] * count
    for position, index in enumerate(instance.members):
        every[index] = int(offsets[position])
    tops = offsets + instance.size
    return Layout(every, int(tops.max()) if len(tops) else 0, "exact")
