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
program simulated.

```python
taken = select_by_next_use(candidates, graph.timeline, graph.prefix, target, timing)
[(p.info.name, [(g.after, g.before) for g in p.gaps], p.fetch_ops) for p in taken]
```
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support.serial_link import issue_just_in_time

Timing = Callable[[ValuePlan], tuple[float, float]]
"""A candidate's store and fetch seconds."""


@dataclass
class _Taken:
    plan: ValuePlan
    store_s: float
    issue: int
    """The op the store is queued after (its producer; -1: at entry)."""
    spans: list[tuple[int, int]]
    """The ops [from, to) it is out of HBM over (a stored one: from once stored)."""
    fetch_ops: list[int]
    """The op each gap's fetch is issued before."""


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


class _Selection:
    """The candidates taken so far, their stores one queue, first in first out."""

    def __init__(self, timeline: Sequence[int], prefix: Sequence[float], target: int):
        self.timeline = np.asarray(timeline, dtype=np.int64)
        self.prefix = prefix
        self.target = target
        self.ops = len(timeline)
        self.taken: list[_Taken] = []
        self.memory = self.timeline.copy()
        self.fetch_link = np.diff(np.asarray(prefix, dtype=np.float64))
        """To-device link time left at each op."""

    def memory_with(self, taken: list[_Taken]) -> tuple[np.ndarray, list[int]]:
        """Bytes live at each op with `taken` out of HBM, and where each is out from."""
        link_free = 0.0
        starts = [t.spans[0][0] for t in taken]
        change = np.zeros(self.ops + 1, dtype=np.int64)
        stored = [i for i, t in enumerate(taken) if t.plan.stored]
        for index in sorted(stored, key=lambda i: (taken[i].issue, i)):
            entry = taken[index]
            begin = max(self.prefix[entry.issue + 1], link_free)
            link_free = begin + entry.store_s
            done = bisect_left(self.prefix, link_free - 1e-12)
            starts[index] = max(starts[index], done)
        for entry, start in zip(taken, starts, strict=True):
            size = entry.plan.info.bytes
            for low, high in [(start, entry.spans[0][1]), *entry.spans[1:]]:
                if low < high:
                    change[low] -= size
                    change[high] += size
        return self.timeline + np.cumsum(change)[:-1], starts

    def excess(self, memory: np.ndarray) -> int:
        """Bytes over the target, summed over the ops."""
        return int(np.maximum(memory - self.target, 0).sum())

    def entry(
        self, plan: ValuePlan, op: int, timing: Timing
    ) -> tuple[_Taken, np.ndarray] | None:
        """`plan` out of HBM at `op` (its fetches as late as they hide), or None."""
        store, fetch = timing(plan)
        link = self.fetch_link.copy()
        if plan.initially_out:  # in its tier: out until each cluster's fetch
            issues = [
                issue_just_in_time(link, max(g.after + 1, 0), g.before, fetch)
                for g in plan.gaps
            ]
            spans = [
                (max(g.after + 1, 0), i) for g, i in zip(plan.gaps, issues, strict=True)
            ]
            spans.append((plan.info.last_use + 1, self.ops))
            return _Taken(plan, 0.0, -1, spans, issues), link
        issue = max(plan.info.producer, -1)
        if not plan.gaps:  # retired after its last use
            last = plan.info.last_use_before(self.ops - 1)
            return _Taken(plan, store, issue, [(last + 1, self.ops)], []), link
        gap = plan.gaps[0]
        if gap.before <= op:
            return None
        end = issue_just_in_time(link, max(gap.after + 1, op + 1), gap.before, fetch)
        return _Taken(plan, store, issue, [(gap.after + 1, end)], [end]), link

    def take(
        self, plan: ValuePlan, op: int, timing: Timing, again: int | None = None
    ) -> bool:
        """
        Take `plan` if it is out of HBM at `op` and lowers the bytes over the
        target summed over the ops (its store delays those queued after it).
        `again`: the index of its own entry, taken before, whose fetch is
        issued later instead.
        """
        made = self.entry(plan, op, timing)
        if made is None:
            return False
        entry, link = made
        trial = [*self.taken, entry]
        if again is not None:
            entry.spans[0] = (self.taken[again].spans[0][0], entry.spans[0][1])
            trial = [*self.taken[:again], *self.taken[again + 1 :], entry]
        memory, starts = self.memory_with(trial)
        spans = [(starts[-1], entry.spans[0][1]), *entry.spans[1:]]
        if not any(low <= op < high for low, high in spans):
            return False
        if memory[op] >= self.memory[op] or self.excess(memory) >= self.excess(
            self.memory
        ):
            return False  # its store holds back others' more than it frees
        self.taken, self.memory, self.fetch_link = trial, memory, link
        return True


def select_by_next_use(
    candidates: Sequence[ValuePlan],
    timeline: Sequence[int],
    prefix: Sequence[float],
    target: int,
    timing: Timing,
) -> list[ValuePlan]:
    """
    The candidates taken, furthest next use first wherever `timeline` (bytes
    live at each op) exceeds `target` (of two, the one that needs no store),
    each with its fetches issued as late as they hide in the link time the
    ones taken before left, its store queued behind the stores issued before
    it; one plan per value.
    """
    ops = len(timeline)
    selection = _Selection(timeline, prefix, target)
    order = sorted(range(len(candidates)), key=lambda i: _out(candidates[i], ops)[0])
    waiting: list[tuple[int, bool, int, int]] = []  # -next use, stores, -bytes, index
    position = 0
    for op in range(ops):
        if selection.memory[op] <= target:
            continue
        while position < len(order) and _out(candidates[order[position]], ops)[0] <= op:
            plan = candidates[order[position]]
            key = (-_next_use(plan, op, ops), plan.stored, -plan.info.bytes)
            heapq.heappush(waiting, (*key, order[position]))
            position += 1
        skipped: list[tuple[int, bool, int, int]] = []
        while selection.memory[op] > target and waiting:
            entry = heapq.heappop(waiting)
            plan = candidates[entry[-1]]
            if _next_use(plan, op, ops) <= op:
                continue  # read again by now
            mine = [
                (i, t.plan)
                for i, t in enumerate(selection.taken)
                if t.plan.info is plan.info
            ]
            again = next((i for i, other in mine if other is plan), None)
            if any(
                other is not plan and _overlap(plan, other, ops) for _, other in mine
            ):
                continue  # out of HBM over another gap that overlaps
            if again is not None and (plan.initially_out or not plan.gaps):
                continue  # taken whole already
            skipped.append(entry)  # considered again at later ops
            if again is not None and selection.taken[again].spans[0][1] > op:
                continue  # out of HBM here already
            selection.take(plan, op, timing, again)
        for entry in skipped:
            heapq.heappush(waiting, entry)
    return [
        replace(t.plan, fetch_ops=t.fetch_ops) if t.plan.gaps else t.plan
        for t in selection.taken
    ]
