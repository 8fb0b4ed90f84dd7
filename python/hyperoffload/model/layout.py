"""
Static memory layout: an offset in one HBM arena for every device buffer.

A simulation records each buffer's stay in HBM as an `Allocation` (the event
numbers at which it was claimed and released, in the order the simulator
changes occupancy). Two allocations conflict when their stays overlap; a
layout gives every allocation an offset so that conflicting ones never share
an address. `arena_bytes`, the layout's high-water mark, is what a device
must have; the live-byte peak is a lower bound on it.

```python
layout = static_layout(result.allocations)          # a compiler's: every lifetime known
layout.arena_bytes >= live_peak(result.allocations)
dynamic = dynamic_best_fit(result.allocations)      # a runtime allocator's: online
check_layout(result.allocations, layout)            # raises ValueError on an overlap
```

An empty stay (`start == end`) conflicts with the stays around it, as
`Allocation.conflicts` says, and is never live for `live_peak`.

The static strategies place allocations one at a time, each in a gap among
the already placed allocations that conflict with it. With thousands of
those for each of tens of thousands of allocations, a placement reads most
of them as cached unions of address ranges (see `_Index`), in numpy.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hyperoffload.model.allocations import (
    DEFAULT_ALIGNMENT,
    Allocation,
    Layout,
    aligned,
    live_peak,
)

STRATEGIES = ("auto", "best-fit", "hill-climb", "exact")
"""The strategies of `static_layout`; `auto` takes the smallest arena of the candidates."""

EXACT_TIME_LIMIT = 10.0
"""Seconds `strategy="exact"` searches by default."""

AUTO_EXACT_MAX = 2048
"""
`auto` runs the exact search on at most this many allocations (a training
step of a few layers: on DeepSeek-V3's 2-layer step, 1,700 allocations, it
packs the live peak where the heuristics leave 1.2-1.5 GB over, in 0.3-3.4 s;
on the 3,000 of a 32-layer LLaMA-3-8B step it took up to 15 s an arena, a
planning loop laying out dozens)...
"""

AUTO_EXACT_NODES = 10
"""...visiting at most this many search nodes per allocation (a bound independent of the machine)."""

_Ints = np.ndarray[Any, np.dtype[np.int64]]

_BLOCK = 512
"""Claims per block of the conflict index."""

_NO_GAP = np.iinfo(np.int64).max
"""Larger than any gap or offset."""

_MERGE = 32
"""Members placed since a cached union was built that make it be merged again."""

_HILL_CLIMB_WORK = 10_000
"""Placements the hill-climbing may redo, in all (less for large inputs)."""


class _Index:
    """
    The allocations in claim order (their positions), cut in blocks of
    `_BLOCK` claims, for the conflict queries of a placement.

    For each block, the allocations claimed before it and still live at its
    first claim are split into those that outlive its last claim (`covering`:
    they conflict with every non-empty allocation claimed in the block) and
    the others (`ending`). A non-empty allocation conflicts with those, with
    the allocations claimed in its own block and live at its claim, and with
    all those claimed before its release in later blocks: whole blocks of
    them are the `claimed_nodes` of a segment tree over the blocks.
    """

    def __init__(self, allocations: Sequence[Allocation], alignment: int):
        for a in allocations:
            if a.end < a.start:
                raise ValueError(f"buffer {a.buffer} is released before it is claimed")
        count = len(allocations)
        starts = np.fromiter((a.start for a in allocations), np.int64, count)
        ends = np.fromiter((a.end for a in allocations), np.int64, count)
        sizes = np.array([aligned(a.bytes, alignment) for a in allocations], np.int64)
        self.input: _Ints = np.argsort(starts, kind="stable")
        """The input index of each position."""
        self.start: _Ints = starts[self.input]
        self.end: _Ints = ends[self.input]
        self.size: _Ints = sizes[self.input]
        self.stop: _Ints = np.searchsorted(self.start, self.end)
        """For each position, the first position claimed at or after its release."""
        self.empty: _Ints = np.flatnonzero((self.end == self.start) & (self.size > 0))
        """The positions of empty stays (conflicting with the stays around them)."""
        self.covering: list[_Ints] = []
        self.near: list[_Ints] = []
        """For each block, the others live at its first claim, then its own claims."""
        self.near_ends: list[_Ints] = []
        self.ending: list[int] = []
        """For each block, how many of `near` are claimed before it."""
        live = np.zeros(0, np.int64)
        for first in range(0, count, _BLOCK):
            last = min(first + _BLOCK, count) - 1
            live = live[self.end[live] > self.start[first]]
            outlives = self.end[live] > self.start[last]
            self.covering.append(live[outlives])
            claims = np.arange(first, last + 1, dtype=np.int64)
            self.near.append(np.concatenate((live[~outlives], claims)))
            self.near_ends.append(self.end[self.near[-1]])
            self.ending.append(len(live) - int(outlives.sum()))
            live = np.concatenate((live, claims))
        blocks = len(self.covering)
        lasts = self.start[np.minimum(np.arange(1, blocks + 1) * _BLOCK, count) - 1]
        self.covered_from: list[int] = (np.arange(count) // _BLOCK + 1).tolist()
        self.covered_to: list[int] = np.searchsorted(lasts, self.end).tolist()
        """Each position is in `covering` of the blocks in `[covered_from, covered_to)`."""
        self.sizes: list[int] = self.size.tolist()
        self.stays: list[bool] = (self.end > self.start).tolist()
        """Whether each position's stay is non-empty."""
        self.stops: list[int] = self.stop.tolist()
        self.leaves = 1 << max(0, blocks - 1).bit_length()
        """The first node of the segment tree's leaves (node `n` has children `2n`, `2n+1`)."""

    def __len__(self) -> int:
        return len(self.start)

    def conflicts(self, j: int) -> _Ints:
        """The positions of the allocations conflicting with position `j`."""
        start, end = self.start[j], self.end[j]
        block = j // _BLOCK
        ending = self.near[block][: self.ending[block]]
        old = np.concatenate((self.covering[block], ending))
        old = old[self.end[old] > start]  # all claimed at or before `start`
        if end <= start:  # an empty stay: conflicts only with those around it
            old = old[self.start[old] < end]
        first, stop = j - j % _BLOCK, self.stops[j]
        live = self.end[first:stop] > start
        if j < stop:
            live[j - first] = False
        return np.concatenate((old, first + np.flatnonzero(live)))

    def nearby(self, j: int) -> _Ints:
        """
        The positions conflicting with the non-empty position `j`, or not
        placed yet, that are neither `covering` its block nor in `claimed_nodes`.
        """
        start, block = self.start[j], j // _BLOCK
        first, stop = j - j % _BLOCK, self.stops[j]
        end_of_block = min(stop, first + _BLOCK)
        near = self.ending[block] + end_of_block - first
        parts = [self.near[block][:near][self.near_ends[block][:near] > start]]
        last = max(end_of_block, stop - stop % _BLOCK)
        if last < stop:
            parts.append(last + np.flatnonzero(self.end[last:stop] > start))
        if self.empty.size and end_of_block < last:  # empty stays inside `j`'s
            low, high = self.empty.searchsorted((end_of_block, last)).tolist()
            inside = self.empty[low:high]
            parts.append(inside[self.start[inside] > start])
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def claimed_nodes(self, j: int) -> list[int]:
        """The tree nodes of the whole blocks claimed during non-empty `j`'s stay."""
        low = j // _BLOCK + 1 + self.leaves
        high = self.stops[j] // _BLOCK + self.leaves
        nodes: list[int] = []
        while low < high:
            if low & 1:
                nodes.append(low)
                low += 1
            if high & 1:
                high -= 1
                nodes.append(high)
            low >>= 1
            high >>= 1
        return nodes

    def node_positions(self, node: int) -> _Ints:
        """The non-empty positions claimed in the blocks of tree node `node`."""
        depth = node.bit_length() - self.leaves.bit_length()
        low = (node << -depth) - self.leaves
        first = min(low * _BLOCK, len(self))
        stop = min((low + (1 << -depth)) * _BLOCK, len(self))
        return first + np.flatnonzero(self.end[first:stop] > self.start[first:stop])

    def layout(self, offsets: _Ints, strategy: str) -> Layout:
        """The layout of positions at `offsets`, in input order."""
        by_input = np.empty_like(offsets)
        by_input[self.input] = offsets
        arena = int((offsets + self.size).max()) if len(self) else 0
        return Layout(by_input.tolist(), arena, strategy)


def _union(lows: _Ints, highs: _Ints) -> tuple[_Ints, _Ints]:
    """The union of the address ranges `[lows, highs)`, as sorted disjoint ranges."""
    if len(lows) == 0:
        return lows, highs
    by_low = np.argsort(lows)
    lows, highs = lows[by_low], np.maximum.accumulate(highs[by_low])
    runs = np.flatnonzero(lows[1:] > highs[:-1]) + 1  # where a new run starts
    firsts, lasts = np.concatenate(((0,), runs)), np.concatenate((runs, (0,))) - 1
    return lows[firsts], highs[lasts]


def _best_gap(lows: _Ints, highs: _Ints, size: int) -> int:
    """
    The offset for `size` bytes beside the address ranges `[lows, highs)`: the
    start of the smallest gap that fits (the lowest among equals), else the
    top of them all.
    """
    if len(lows) == 0:
        return 0
    by_low = np.argsort(lows)
    lows, highs = lows[by_low], np.maximum.accumulate(highs[by_low])
    gaps = lows[1:] - highs[:-1]  # gap `i` starts at `highs[i]`
    gaps[gaps < size] = _NO_GAP
    best = int(gaps.argmin()) if len(gaps) else 0
    smallest = int(gaps[best]) if len(gaps) else _NO_GAP
    if size <= int(lows[0]) <= smallest:  # the gap from 0
        return 0
    return int(highs[-1]) if smallest == _NO_GAP else int(highs[best])


class _Unions:
    """
    For sets of positions (by key), the union of the address ranges of
    their placed members: built when first asked for, then kept up to date
    with the members placed since (`pending`), merged once there are a few.
    """

    def __init__(self, count: int, members: Callable[[int], _Ints]):
        self.members = members
        self.unions: list[tuple[_Ints, _Ints] | None] = [None] * count
        self.pending: list[list[int]] = [[] for _ in range(count)]

    def get(
        self, key: int, offsets: _Ints, tops: _Ints, pending: list[int]
    ) -> tuple[_Ints, _Ints]:
        """The union for `key`, but for members placed lately: those go to `pending`."""
        union = self.unions[key]
        if union is None:
            members = self.members(key)
            members = members[tops[members] > 0]
            union = _union(offsets[members], tops[members])
        elif len(self.pending[key]) >= _MERGE:
            members = self.pending[key]
            union = _union(
                np.concatenate((union[0], offsets[members])),
                np.concatenate((union[1], tops[members])),
            )
            self.pending[key] = []
        else:
            pending += self.pending[key]
            return union
        self.unions[key] = union
        return union


class _Placement:
    """The address range `[offset, top)` of each position (`[0, 0)` if not placed)."""

    def __init__(self, index: _Index):
        self.index = index
        self.offsets: _Ints = np.zeros(len(index), np.int64)
        self.tops: _Ints = np.zeros(len(index), np.int64)

    def copy(self) -> _Placement:
        copy = _Placement(self.index)
        copy.offsets, copy.tops = self.offsets.copy(), self.tops.copy()
        return copy

    @property
    def arena(self) -> int:
        return int(self.tops.max()) if len(self.tops) else 0

    def place(self, order: list[int], first: int, limit: int) -> int:
        """
        Place `order[first:]` by best fit, the ones before staying. Returns
        the number placed: it stops after the first allocation reaching `limit`.
        """
        index, offsets, tops = self.index, self.offsets, self.tops
        rest = order[first:]
        offsets[rest] = 0
        tops[rest] = 0
        covering = _Unions(len(index.covering), index.covering.__getitem__)
        claimed = _Unions(2 * index.leaves, index.node_positions)
        sizes, stays, leaves = index.sizes, index.stays, index.leaves
        covered_from, covered_to = index.covered_from, index.covered_to
        placed = 0
        for j in rest:
            placed += 1
            size = sizes[j]
            if size == 0:
                continue
            if stays[j]:
                pending: list[int] = []
                parts = [covering.get(j // _BLOCK, offsets, tops, pending)]
                for node in index.claimed_nodes(j):
                    parts.append(claimed.get(node, offsets, tops, pending))
                near = index.nearby(j)
                if pending:
                    near = np.concatenate((near, pending))
                offset = _best_gap(
                    np.concatenate([lows for lows, _ in parts] + [offsets[near]]),
                    np.concatenate([highs for _, highs in parts] + [tops[near]]),
                    size,
                )
                node = j // _BLOCK + leaves
                while node:
                    if claimed.unions[node] is not None:
                        claimed.pending[node].append(j)
                    node >>= 1
            else:
                near = index.conflicts(j)
                offset = _best_gap(offsets[near], tops[near], size)
            offsets[j] = offset
            tops[j] = offset + size
            for block in range(covered_from[j], covered_to[j]):
                if covering.unions[block] is not None:
                    covering.pending[block].append(j)
            if offset + size >= limit:
                break
        return placed


def _size_order(index: _Index) -> list[int]:
    """Positions by decreasing size, then earlier claim, longer stay, input order."""
    keys = (index.input, index.start - index.end, index.start, -index.size)
    return np.lexsort(keys).tolist()


def _best_fit(index: _Index) -> tuple[list[int], _Placement]:
    order = _size_order(index)
    placement = _Placement(index)
    placement.place(order, 0, limit=_NO_GAP)
    return order, placement


def best_fit_by_size(
    allocations: Sequence[Allocation], alignment: int = DEFAULT_ALIGNMENT
) -> Layout:
    """
    Offline best fit, largest allocation first: each allocation (by decreasing
    aligned size; ties: earlier claim, longer stay, input order) goes in the
    smallest gap that fits among the already placed allocations it conflicts
    with (the lowest such gap), else right above them all. This is XLA's
    `GlobalDecreasingSizeBestFitHeap` (xla/service/heap_simulator) and TVM
    USMP's `greedy_by_size` (src/tir/usmp/algo/greedy.cc).
    """
    index = _Index(allocations, alignment)
    _, placement = _best_fit(index)
    return index.layout(placement.offsets, "best-fit")


def _hill_climb(
    index: _Index,
    order: list[int],
    placement: _Placement,
    floor: int,
    seed: int,
    budget: int,
) -> _Placement:
    """Improve on `placement`, of `order`; see `hill_climb`."""
    rng = random.Random(seed)
    arena = placement.arena
    rank = np.empty(len(index), np.int64)
    while arena > floor:
        rank[order] = np.arange(len(order))
        # The first allocation in the order to reach the arena's top: only
        # moving it or one before it can lower the arena.
        highs = np.maximum.accumulate(placement.tops[order])
        first = int(np.searchsorted(highs, arena))
        top = order[first]
        # Moving to `earliest` or later, the placements redone fit in the budget.
        earliest = max(0, len(order) - budget)
        below = index.conflicts(top)
        below = below[
            (rank[below] > earliest) & (rank[below] < first) & (index.size[below] > 0)
        ]
        if below.size and (rng.random() < 0.5 or first <= earliest):
            moved = int(below[rng.randrange(below.size)])
        elif first > earliest:
            moved = top
        else:
            break
        was = int(rank[moved])
        to = rng.randrange(earliest, was)
        trial_order = order.copy()
        trial_order.insert(to, trial_order.pop(was))
        trial = placement.copy()
        placed = trial.place(trial_order, to, limit=arena)
        budget -= placed
        if placed == len(order) - to and trial.arena < arena:
            order, placement, arena = trial_order, trial, trial.arena
    return placement


def _default_budget(count: int) -> int:
    """
    Placements to redo: 50 per allocation, but `_HILL_CLIMB_WORK` with best
    fit's at most, and a tenth of best fit's at least.
    """
    return max(count // 10, min(50 * count, _HILL_CLIMB_WORK - count))


def _static(
    allocations: Sequence[Allocation], alignment: int, seed: int, budget: int | None
) -> tuple[Layout, Layout]:
    """The best-fit layout and the hill-climbing one."""
    index = _Index(allocations, alignment)
    order, placement = _best_fit(index)
    best_fit = index.layout(placement.offsets, "best-fit")
    floor = live_peak(allocations, alignment)
    work = _default_budget(len(index)) if budget is None else budget
    climbed = _hill_climb(index, order, placement, floor, seed, work)
    return best_fit, index.layout(climbed.offsets, "hill-climb")


def hill_climb(
    allocations: Sequence[Allocation],
    alignment: int = DEFAULT_ALIGNMENT,
    *,
    seed: int = 0,
    budget: int | None = None,
) -> Layout:
    """
    Best fit, then a seeded hill-climbing over its placement order, as TVM
    USMP's `hill_climb` (src/tir/usmp/algo/hill_climb.cc) does: the first
    allocation in the order to reach the arena's top, or one conflicting with
    it and placed before it (a coin toss), moves to a random earlier place in
    the order; the allocations from there on are placed again by best fit,
    and the move is kept only if the arena shrinks.

    `budget` is the number of placements it may redo; by default 50 per
    allocation, but at most `_HILL_CLIMB_WORK` with best fit's own and at
    least a tenth of those. A move never redoes more than the budget left,
    so on a large input it tries only moves late in the order, if any. It
    stops at the live-byte peak. Never a larger arena than `best_fit_by_size`.
    """
    return _static(allocations, alignment, seed, budget)[1]


def static_layout(
    allocations: Sequence[Allocation],
    strategy: str = "auto",
    alignment: int = DEFAULT_ALIGNMENT,
    time_limit: float | None = None,
) -> Layout:
    """
    A layout by one of `STRATEGIES`. `auto` takes the smallest arena of
    best fit, the hill-climb and the best-fit allocator replayed in claim
    order (`dynamic_best_fit`: also one offset per allocation, so a compiler
    may use it too; on some patterns it fragments less than placing by size);
    on ties in that order of preference. Where that arena is above the live
    peak and there are at most `AUTO_EXACT_MAX` allocations, `auto` then runs
    the exact search (`hyperoffload.model.exact_layout`) for
    `AUTO_EXACT_NODES` nodes per allocation, so its result does not depend
    on the machine. `exact` runs it from `auto`'s layout for `time_limit`
    seconds (default `EXACT_TIME_LIMIT`); it is never worse than `auto`.
    """
    if strategy not in STRATEGIES:
        raise ValueError(
            f"unknown layout strategy {strategy!r}; known: {', '.join(STRATEGIES)}"
        )
    if strategy == "best-fit":
        return best_fit_by_size(allocations, alignment)
    best_fit, climbed = _static(allocations, alignment, seed=0, budget=None)
    if strategy == "hill-climb":
        return climbed
    replayed = dynamic_best_fit(allocations, alignment)
    best = min((best_fit, climbed, replayed), key=lambda layout: layout.arena_bytes)
    if strategy == "auto" and (
        len(allocations) > AUTO_EXACT_MAX
        or best.arena_bytes <= live_peak(allocations, alignment)
    ):
        return best
    # deferred: the exact search builds on this module's types
    from hyperoffload.model.exact_layout import exact_layout

    if strategy == "exact":
        limit = EXACT_TIME_LIMIT if time_limit is None else time_limit
        return exact_layout(allocations, alignment, best, limit).layout
    nodes = AUTO_EXACT_NODES * len(allocations)
    return exact_layout(
        allocations, alignment, best, EXACT_TIME_LIMIT, node_budget=nodes
    ).layout


class _FreeList:
    """Free blocks of an arena that grows at its top, taken by best fit."""

    def __init__(self) -> None:
        self.by_size: list[tuple[int, int]] = []  # (size, address), sorted
        self.at: dict[int, int] = {}  # address -> size
        self.ending: dict[int, int] = {}  # end address -> address
        self.top = 0

    def _add(self, address: int, size: int) -> None:
        bisect.insort(self.by_size, (size, address))
        self.at[address] = size
        self.ending[address + size] = address

    def _remove(self, address: int) -> int:
        size = self.at.pop(address)
        del self.ending[address + size]
        del self.by_size[bisect.bisect_left(self.by_size, (size, address))]
        return size

    def claim(self, size: int) -> int:
        """The address of a new block of `size` bytes."""
        i = bisect.bisect_left(self.by_size, (size, -1))
        if i < len(self.by_size):
            block, address = self.by_size[i]
            self._remove(address)
            if block > size:
                self._add(address + size, block - size)
            return address
        address = self.ending.get(self.top, self.top)  # extend a free block at the top
        if address < self.top:
            self._remove(address)
        self.top = address + size
        return address

    def release(self, address: int, size: int) -> None:
        """Free the block at `address`, merged with free neighbours."""
        end = address + size
        if end in self.at:
            end += self._remove(end)
        if address in self.ending:
            address = self.ending[address]
            self._remove(address)
        self._add(address, end - address)


def dynamic_best_fit(
    allocations: Sequence[Allocation], alignment: int = DEFAULT_ALIGNMENT
) -> Layout:
    """
    What a runtime allocator that cannot see the future gets: the claims and
    releases replayed in event order (releases first on ties), each claim
    taking the smallest free block that fits (the lowest address among
    equals), freed neighbours coalescing, and the arena growing at its top
    (into a free block touching it) when nothing fits. As the best-fit with
    coalescing allocators do: TensorFlow's BFC allocator
    (tensorflow/core/common_runtime/bfc_allocator.cc) and PyTorch's CUDA
    caching allocator (c10/cuda/CUDACachingAllocator.cpp), without their
    size classes and pools.
    """
    sizes = [aligned(a.bytes, alignment) for a in allocations]
    events: list[tuple[int, int, int]] = []  # (event, phase, allocation)
    for i, a in enumerate(allocations):
        if a.end < a.start:
            raise ValueError(f"buffer {a.buffer} is released before it is claimed")
        if sizes[i] == 0:
            continue
        if a.start == a.end:  # empty: claimed and released between the others
            events.append((a.start, 1, i))
        else:
            events.append((a.start, 2, i))
            events.append((a.end, 0, i))
    events.sort()
    free = _FreeList()
    offsets = [0] * len(allocations)
    for _, phase, i in events:
        if phase == 0:
            free.release(offsets[i], sizes[i])
        else:
            offsets[i] = free.claim(sizes[i])
            if phase == 1:
                free.release(offsets[i], sizes[i])
    return Layout(offsets, free.top, "dynamic-best-fit")


def check_layout(
    allocations: Sequence[Allocation],
    layout: Layout,
    alignment: int = DEFAULT_ALIGNMENT,
) -> None:
    """
    Raise `ValueError` on the first problem of `layout`: an offset that is
    negative or not aligned (in input order), an allocation ending above the
    arena, or two conflicting allocations sharing addresses: the first
    allocation, in claim order, to overlap one claimed before it, and the
    earliest claimed of those.
    """
    if len(layout.offsets) != len(allocations):
        raise ValueError(
            f"{len(layout.offsets)} offsets for {len(allocations)} allocations"
        )
    for a, offset in zip(allocations, layout.offsets, strict=True):
        size = aligned(a.bytes, alignment)
        if offset < 0 or offset % alignment:
            raise ValueError(
                f"buffer {a.buffer} at offset {offset}: not a multiple of {alignment}"
            )
        if offset + size > layout.arena_bytes:
            raise ValueError(
                f"buffer {a.buffer} at [{offset}, {offset + size}) ends above "
                f"the arena of {layout.arena_bytes} bytes"
            )
    index = _Index(allocations, alignment)
    offsets: _Ints = np.array(layout.offsets, np.int64)[index.input]
    tops: _Ints = offsets + index.size
    placed = index.size > 0
    for block, members in enumerate(index.covering):
        # The allocations covering the block, by offset, with the highest top
        # so far: one search tells if a range meets any of them.
        members = members[placed[members]]
        members = members[np.argsort(offsets[members], kind="stable")]
        lows, highs = offsets[members], np.maximum.accumulate(tops[members])
        first = block * _BLOCK
        for j in range(first, min(first + _BLOCK, len(index))):
            if not placed[j]:
                continue
            start = index.start[j]
            if index.end[j] > start:  # against those claimed before it
                below = int(lows.searchsorted(int(tops[j])))
                clash = below > 0 and highs[below - 1] > offsets[j]
                near = index.ending[block] + j - first  # claimed before `j`
                near = index.near[block][:near][index.near_ends[block][:near] > start]
            else:
                clash, near = False, index.conflicts(j)
                near = near[near < j]
            near = near[placed[near]]
            if clash or np.any((offsets[near] < tops[j]) & (offsets[j] < tops[near])):
                _overlap(allocations, index, offsets, j)


def _overlap(
    allocations: Sequence[Allocation], index: _Index, offsets: _Ints, j: int
) -> None:
    """Raise the error for position `j` overlapping one claimed before."""
    near = index.conflicts(j)
    near = near[(near < j) & (index.size[near] > 0)]
    tops = offsets + index.size
    i = int(near[(offsets[near] < tops[j]) & (offsets[j] < tops[near])].min())
    first, second = (
        (allocations[int(index.input[k])], int(offsets[k]), int(index.size[k]))
        for k in (i, j)
    )
    raise ValueError(
        "conflicting allocations overlap: "
        + " and ".join(
            f"buffer {a.buffer} (events [{a.start}, {a.end})) at offset "
            f"{offset}, {size} bytes"
            for a, offset, size in (first, second)
        )
    )
