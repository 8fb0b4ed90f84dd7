"""
Just-in-time selection, as a runtime cache that knows the step's access
sequence evicts (MindSpore's `MemCountedCache`, Capuchin): walking the ops
in order, wherever the bytes live exceed the target, the candidate that is
out of HBM there and read again furthest in the future is taken first, then
the next, until the op fits. A candidate is a value plan over one gap (or an
argument retired after its last use: never read again); it is out of HBM
from the op after its store is done and the use before its gap has run, to
the op its fetch is issued before, as late as the fetch still hides behind
the compute before the use (`fetch_ops`). Unlike the runtime, the plan
releases a value right after the use before its gap and stores it as soon as
it is made (the compute stream does not wait), and what it writes is the
program simulated. A value taken again at a later op (its fetch issued later)
keeps its store, and the link time its earlier fetch took is given back.
With `wait_for_stores`, a candidate whose store is not done by the op over the
target may be taken there too, the compute stream waiting for its store,
and a fetch is issued at most twice its time ahead (`Selection._issued`).

```python
taken = select_by_next_use(candidates, graph.timeline, graph.prefix, target, timing)
[(p.info.name, [(g.after, g.before) for g in p.gaps], p.fetch_ops) for p in taken]
```
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support.serial_link import EPSILON_S, issue_just_in_time, lead

Timing = Callable[[ValuePlan], tuple[float, float]]
"""A candidate's store and fetch seconds."""

Updates = Mapping[int, tuple[int, int]]
"""
For each argument that takes its update along (written back to its tier
where the argument stays there), by the identity of its info: the op the
update is out of HBM from (after its last use before the return), and its
bytes.
"""


@dataclass
class _LinkEdit:
    """To-device link time from the op `low` on: what is left, or what a fetch took."""

    low: int
    free: np.ndarray


@dataclass
class Taken:
    """A candidate taken, or tried: its store and the ops it is out of HBM over."""

    plan: ValuePlan
    store_s: float
    issue: int
    """The op the store is queued after (its producer; -1: at entry)."""
    spans: list[tuple[int, int]]
    """The ops [from, to) it is out of HBM over (a stored one: from once stored)."""
    fetch_ops: list[int]
    """The op each gap's fetch is issued before."""
    start: int = 0
    """Where it is out of HBM from, its store done (set once taken)."""
    order: int = 0
    """When it was taken: of two stores queued after one op, the earlier goes first."""
    store_end_s: float = 0.0
    """When its store ends on the link (a stored one, once taken)."""
    fetched: _LinkEdit | None = None
    """The link time its fetches took, from the op `low` on (None: none)."""
    update: tuple[int, int] | None = None
    """
    An argument left in its tier whose update goes back there with it: the
    op the update is out of HBM from, and its bytes (None: none).
    """
    due: int | None = None
    """The op the compute stream waits for its store before (None: none)."""

    def out_from(self, done: int) -> int:
        """Where it is out of HBM from, its store done by the op `done`."""
        if self.due is not None:
            done = min(done, self.due)
        return max(self.spans[0][0], done)

    def out_until(self, op: int) -> int | None:
        """
        The end of its stretch out of HBM where that ends after `op` (of an
        argument left in its tier: the stretch holding `op`); None: none.
        """
        if self.plan.initially_out:
            return next((high for low, high in self.spans if low <= op < high), None)
        return self.spans[0][1] if self.spans[0][1] > op else None

    def queue_key(self) -> tuple[int, int]:
        return self.issue, self.order

    def segments(self, start: int) -> list[tuple[int, int]]:
        """The ops [from, to) it is out of HBM over, out from `start`."""
        return [(start, self.spans[0][1]), *self.spans[1:]]


def _out(plan: ValuePlan, ops: int) -> tuple[int, int]:
    """The ops [from, to) `plan` may keep its value out of HBM over, at most."""
    if plan.initially_out:
        return 0, ops
    if plan.gaps:
        return plan.gaps[0].after + 1, plan.gaps[0].before
    return plan.info.last_use_before(ops - 1) + 1, ops


def _overlap(plan: ValuePlan, other: ValuePlan, ops: int) -> bool:
    """Whether two plans of one value would keep it out over the same ops."""
    (low, high), (start, end) = _out(plan, ops), _out(other, ops)
    return low < end and start < high


def _next_use(plan: ValuePlan, op: int, ops: int) -> int:
    """The first use after op `op` that ends one of `plan`'s gaps (`ops`: none)."""
    return min((g.before for g in plan.gaps if g.before > op), default=ops)


@dataclass
class _Change:
    """A candidate taken, tried: what the store queue and HBM would be with it."""

    start: int
    """Where the candidate is out of HBM from."""
    first: int
    """The queue's position its store joins at (the queue's length: none)."""
    resumed: int
    """The queue's position from which the rest runs as before."""
    ends: list[float]
    """When its store and those at `first` up to `resumed` end."""
    starts: list[tuple[int, int]]
    """The queue's positions whose store now ends at another op, and that op."""
    low: int = 0
    """The first op whose bytes live change."""
    memory: np.ndarray | None = None
    """Bytes live at each op from `low` on, where they change (None: nowhere)."""
    excess_bytes: int = 0
    """`Selection.excess` with the candidate taken."""

    def memory_at(self, memory: np.ndarray, op: int) -> int:
        """Bytes live at `op` with the candidate taken (`memory`: without)."""
        if self.memory is not None and self.low <= op < self.low + self.memory.size:
            return int(self.memory[op - self.low])
        return int(memory[op])


class Selection:
    """
    The candidates taken so far, their stores one queue, first in first
    out. A store taken changes the queue only from where it joins, and only
    until a store ends when it ended before: that stretch is walked, once
    per candidate while the queue stays as it is (a value taken again keeps
    its store); the bytes live and the link time are priced only over the
    ops they change.
    """

    def __init__(
        self,
        timeline: Sequence[int],
        prefix: Sequence[float],
        target: int,
        updates: Updates | None = None,
        wait_for_stores: bool = False,
    ):
        self.timeline = np.asarray(timeline, dtype=np.int64)
        self.prefix = prefix
        self.target = target
        self.updates = updates or {}
        self.wait_for_stores = wait_for_stores
        """A store not done by the op over the target may be waited for."""
        self.ops = len(timeline)
        self.taken: dict[int, Taken] = {}
        """The entries taken, in the order taken (by identity)."""
        self.by_value: dict[int, list[Taken]] = {}
        """The taken ones of each value (by the identity of its info)."""
        self.queue: list[Taken] = []
        """The stores taken, in the order the link runs them."""
        self.keys: list[tuple[int, int]] = []
        """`queue`'s entries' queue keys."""
        self.ends: list[float] = []
        """When each of `queue`'s stores ends."""
        self.version = 0
        """New entries taken so far (the queue changes only with those): the
        next one's `Taken.order`."""
        self.walks: dict[int, tuple[int, _Change]] = {}
        """Each candidate's walk of the queue (by plan identity), at a `version`."""
        self.memory = self.timeline.copy()
        self.excess_bytes = self.excess(self.memory)
        self.fetch_link = np.diff(np.asarray(prefix, dtype=np.float64))
        """To-device link time left at each op."""

    def queued(self, entry: Taken) -> _Change:
        """The store queue with `entry` taken (walked once per queue)."""
        if not entry.plan.stored:
            return _Change(entry.spans[0][0], len(self.queue), len(self.queue), [], [])
        walked = self.walks.get(id(entry.plan))
        if walked is None or walked[0] != self.version:
            walked = (self.version, self._walk(entry))
            self.walks[id(entry.plan)] = walked
        return replace(walked[1])

    def _walk(self, entry: Taken) -> _Change:
        """`queued`'s change, made: the queue from where `entry`'s store joins it."""
        first, link_free, start = self._joined(entry)
        ends = [link_free]
        starts: list[tuple[int, int]] = []
        position = first
        while position < len(self.queue):
            item = self.queue[position]
            link_free = max(self.prefix[item.issue + 1], link_free) + item.store_s
            done = bisect_left(self.prefix, link_free - 1e-12)
            ends.append(link_free)
            moved = item.out_from(done)
            if moved != item.start:
                starts.append((position, moved))
            position += 1
            if link_free == item.store_end_s:
                break  # the rest of the queue runs as before
        return _Change(start, first, position, ends, starts)

    def priced(self, change: _Change, entry: Taken) -> None:
        """`change`'s bytes live and their excess, over the ops they change."""
        shifts = [(entry.segments(change.start), -entry.plan.info.bytes)]
        if entry.update is not None:
            shifts.append(([(entry.update[0], self.ops)], -entry.update[1]))
        for position, moved in change.starts:
            item = self.queue[position]
            shifts.append((item.segments(item.start), item.plan.info.bytes))
            shifts.append((item.segments(moved), -item.plan.info.bytes))
        change.excess_bytes = self.excess_bytes
        shifted = self._shifted(shifts)
        if shifted is not None:
            change.low, change.memory, lower = shifted
            change.excess_bytes += lower

    def _shifted(
        self, shifts: list[tuple[list[tuple[int, int]], int]]
    ) -> tuple[int, np.ndarray, int] | None:
        """
        The bytes live with each of `shifts` (ops [from, to) and the bytes
        they change by) applied, over the ops they change: the first such op,
        the bytes from it on, and the change in excess (None: none change).
        """
        points: dict[int, int] = {}  # the change in bytes live from each op on
        for segments, size in shifts:
            for low, high in segments:
                if low < high:
                    points[low] = points.get(low, 0) + size
                    points[high] = points.get(high, 0) - size
        points = {op: size for op, size in points.items() if size}
        if not points:
            return None
        first, last = min(points), max(points)
        steps = np.zeros(last - first + 1, dtype=np.int64)
        for op, size in points.items():
            steps[op - first] = size
        before = self.memory[first:last]
        after = before + np.cumsum(steps)[:-1]
        return first, after, self.excess(after) - self.excess(before)

    def commit(self, entry: Taken, change: _Change) -> None:
        """Take `entry` as `change` tried it."""
        self.taken[id(entry)] = entry
        self.by_value.setdefault(id(entry.plan.info), []).append(entry)
        entry.start = change.start
        for position, moved in change.starts:
            self.queue[position].start = moved
        low, high = change.first, change.resumed
        if entry.plan.stored:
            stretch = [entry, *self.queue[low:high]]
            for item, end in zip(stretch, change.ends, strict=True):
                item.store_end_s = end
            self.queue[low:high] = stretch
            self.ends[low:high] = change.ends
            self.keys[low:high] = [item.queue_key() for item in stretch]
        if change.memory is not None:
            self.memory[change.low : change.low + change.memory.size] = change.memory
        self.excess_bytes = change.excess_bytes
        self.version += 1

    def excess(self, memory: np.ndarray) -> int:
        """Bytes over the target, summed over the ops."""
        return int(np.maximum(memory - self.target, 0).sum())

    def entry(
        self, plan: ValuePlan, op: int, timing: Timing, again: Taken | None = None
    ) -> tuple[Taken, _LinkEdit | None] | None:
        """
        `plan` out of HBM at `op` (its fetches as late as they hide, in the
        link time left, with what `again`'s fetch took given back), and the
        link time left after them; or None.
        """
        store, fetch = timing(plan)
        if plan.initially_out:  # in its tier: out until each cluster's fetch
            lows = [max(g.after + 1, 0) for g in plan.gaps]
            edit = self._edit(
                min(lows, default=0), max((g.before for g in plan.gaps), default=0)
            )
            self._given_back(edit, again)
            left = edit.free.copy()
            issues = [
                self._issued(edit, self._fetch_low(low, g.before, op), g.before, fetch)
                for low, g in zip(lows, plan.gaps, strict=True)
            ]
            spans = list(zip(lows, issues, strict=True))
            spans.append((plan.info.last_use + 1, self.ops))
            taken = Taken(plan, 0.0, -1, spans, issues)
            taken.update = self.updates.get(id(plan.info))
            taken.fetched = _LinkEdit(edit.low, left - edit.free)
            return taken, edit
        issue = max(plan.info.producer, -1)
        if not plan.gaps:  # retired after its last use
            last = plan.info.last_use_before(self.ops - 1)
            return Taken(plan, store, issue, [(last + 1, self.ops)], []), None
        gap = plan.gaps[0]
        if gap.before <= op:
            return None
        low = max(gap.after + 1, op + 1)
        edit = self._edit(low, gap.before)
        self._given_back(edit, again)
        left = edit.free.copy()
        end = self._issued(edit, low, gap.before, fetch)
        taken = Taken(plan, store, issue, [(gap.after + 1, end)], [end])
        taken.fetched = _LinkEdit(low, left - edit.free)
        return taken, edit

    @staticmethod
    def _given_back(edit: _LinkEdit, again: Taken | None) -> None:
        """`edit` with the link time `again`'s fetches took given back (in place)."""
        if again is None or again.fetched is None:
            return
        given = again.fetched
        low = max(edit.low, given.low)
        high = min(edit.low + edit.free.size, given.low + given.free.size)
        if low < high:
            edit.free[low - edit.low : high - edit.low] += given.free[
                low - given.low : high - given.low
            ]

    def _fetch_low(self, low: int, before: int, op: int) -> int:
        """
        The first op a fetch for op `before` of a value out of HBM from `low`
        may be issued before, the value taken at `op`: where stores may be
        waited for, after `op` if `op` is in that stretch (its fetch waited
        for, if need be, rather than the value in HBM where it was taken).
        """
        if self.wait_for_stores and low <= op < before:
            return op + 1
        return low

    def _issued(self, edit: _LinkEdit, low: int, before: int, seconds: float) -> int:
        """
        The op a fetch of `seconds` for op `before` is issued before, as late
        as the link time left in `edit` from op `low` lets it end in time
        (taken from it). Where stores may be waited for, at most twice its
        time ahead (as the ranked plans reserve it), and where that does not
        hide it, as late as its own time would, the compute stream waiting
        for the rest (as a runtime fetches what its next ops read): issued
        far ahead, it would hold HBM over every op between.
        """
        if not self.wait_for_stores:
            return edit.low + issue_just_in_time(
                edit.free, low - edit.low, before - edit.low, seconds
            )
        low = max(low, lead(self.prefix, before, 2 * seconds))
        window = edit.free[low - edit.low : before - edit.low]
        hides = window.sum() >= seconds - EPSILON_S
        issue = edit.low + issue_just_in_time(
            edit.free, low - edit.low, before - edit.low, seconds
        )
        return issue if hides else max(low, lead(self.prefix, before, seconds))

    def _edit(self, low: int, high: int) -> _LinkEdit:
        """The link time left over ops [low, high), to take from."""
        return _LinkEdit(low, self.fetch_link[low : max(low, high)].copy())

    def take(
        self, plan: ValuePlan, op: int, timing: Timing, again: Taken | None = None
    ) -> bool:
        """
        Take `plan` if it is out of HBM at `op` and lowers the bytes over the
        target summed over the ops (its store delays those queued after it).
        `again`: its own entry, taken before, whose fetch is issued later
        instead.
        """
        made = self.entry(plan, op, timing, again)
        if made is None:
            return False
        entry, edit = made
        if again is not None:
            if not self._retaken(entry, again, op):
                return False
        else:
            entry.order = self.version
            change = self.queued(entry)
            if not any(low <= op < high for low, high in entry.segments(change.start)):
                if (
                    not self.wait_for_stores
                    or not entry.spans[0][0] <= op < entry.spans[0][1]
                ):
                    return False  # not out of HBM at `op` (its store not done)
                entry.due = change.start = op  # the compute stream waits for it
            self.priced(change, entry)
            if (
                change.memory_at(self.memory, op) >= self.memory[op]
                or change.excess_bytes >= self.excess_bytes
            ):
                return False  # its store holds back others' more than it frees
            self.commit(entry, change)
        given = None if again is None else again.fetched
        if given is not None:
            self.fetch_link[given.low : given.low + given.free.size] += given.free
        if edit is not None:
            self.fetch_link[edit.low : edit.low + edit.free.size] = edit.free
        return True

    def _joined(self, entry: Taken) -> tuple[int, float, int]:
        """
        Where `entry`'s store joins the queue, when it ends there, and where
        `entry` is out of HBM from.
        """
        first = bisect_right(self.keys, entry.queue_key())
        link_free = self.ends[first - 1] if first else 0.0
        end = max(self.prefix[entry.issue + 1], link_free) + entry.store_s
        done = bisect_left(self.prefix, end - 1e-12)
        return first, end, entry.out_from(done)

    def _retaken(self, entry: Taken, again: Taken, op: int) -> bool:
        """
        Take `entry` in place of `again`, the same value and store with a
        fetch issued later, if it is out of HBM at `op` and that lowers the
        bytes over the target: it is then out longer, over ops whose bytes
        drop by its own, `op` among them (so where `op` is over the target,
        it is taken).
        """
        if again.start > op:
            return False
        size = entry.plan.info.bytes
        shifts = [
            (again.segments(again.start), size),
            (entry.segments(again.start), -size),
        ]
        shifted = self._shifted(shifts)
        if shifted is None or shifted[2] >= 0:
            return False
        low, after, lower = shifted
        entry.start, entry.order = again.start, again.order
        entry.store_end_s, entry.due = again.store_end_s, again.due
        self.memory[low : low + after.size] = after
        self.excess_bytes += lower
        del self.taken[id(again)]
        self.taken[id(entry)] = entry
        self.by_value[id(again.plan.info)].remove(again)
        self.by_value[id(entry.plan.info)].append(entry)
        if again.plan.stored:
            self.queue[bisect_left(self.keys, again.queue_key())] = entry
        return True


def select_by_next_use(
    candidates: Sequence[ValuePlan],
    timeline: Sequence[int],
    prefix: Sequence[float],
    target: int,
    timing: Timing,
    updates: Updates | None = None,
    wait_for_stores: bool = False,
) -> list[ValuePlan]:
    """
    The candidates taken, furthest next use first wherever `timeline` (bytes
    live at each op) exceeds `target` (of two, the one that needs no store),
    each with its fetches issued as late as they hide in the link time the
    ones taken before left, its store queued behind the stores issued before
    it; one plan per value. An argument left in its tier takes its update
    along (`updates`).
    """
    ops = len(timeline)
    selection = Selection(timeline, prefix, target, updates, wait_for_stores)
    times: dict[int, tuple[float, float]] = {}

    def timed(plan: ValuePlan) -> tuple[float, float]:
        if id(plan) not in times:
            times[id(plan)] = timing(plan)
        return times[id(plan)]

    order = sorted(range(len(candidates)), key=lambda i: _out(candidates[i], ops)[0])
    waiting: list[tuple[int, bool, int, int]] = []  # -next use, stores, -bytes, index
    sleeping: list[tuple[int, tuple[int, bool, int, int]]] = []  # (until op, entry)
    position = 0
    for op in range(ops):
        if selection.memory[op] <= target:
            continue
        while position < len(order) and _out(candidates[order[position]], ops)[0] <= op:
            plan = candidates[order[position]]
            key = (-_next_use(plan, op, ops), plan.stored, -plan.info.bytes)
            heapq.heappush(waiting, (*key, order[position]))
            position += 1
        while sleeping and sleeping[0][0] <= op:
            heapq.heappush(waiting, heapq.heappop(sleeping)[1])
        skipped: list[tuple[int, bool, int, int]] = []
        while selection.memory[op] > target and waiting:
            entry = heapq.heappop(waiting)
            plan = candidates[entry[-1]]
            mine = selection.by_value.get(id(plan.info), [])
            again = next((t for t in mine if t.plan is plan), None)
            if any(t.plan is not plan and _overlap(plan, t.plan, ops) for t in mine):
                continue  # out of HBM over another gap that overlaps
            if again is not None and not plan.gaps:
                continue  # retired: taken whole already
            if again is not None and plan.initially_out and not wait_for_stores:
                continue  # in its tier: its fetches as late as they hide already
            if not plan.initially_out and plan.gaps and plan.gaps[0].before <= op:
                continue  # its gap is over: it cannot be taken at any later op
            until = None if again is None else again.out_until(op)
            if until is not None:
                # out of HBM here already, until then (only its own plan,
                # taken again, changes that)
                heapq.heappush(sleeping, (until, entry))
                continue
            skipped.append(entry)  # considered again at later ops
            selection.take(plan, op, timed, again)
        for entry in skipped:
            heapq.heappush(waiting, entry)
    return [
        replace(t.plan, fetch_ops=t.fetch_ops) if t.plan.gaps else t.plan
        for t in selection.taken.values()
    ]
