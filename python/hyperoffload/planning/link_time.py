"""
Link time left at each op in one direction of one link, taken greedily:
a fetch from the ops right before its use (nearest first), a store from
the ops right after its producer, a chunk of ops at a time. Ops whose time
is all taken are skipped (each points to the nearest op on either side with
time left, as a disjoint-set forest), so a link that is busy for most of a
long program costs each transfer the chunks it takes from, not its whole
window.

```python
link = LinkTime(np.array([1e-3, 1e-3, 1e-3]))
link.take(0, 3, 1.5e-3, backward=True)  # ops 2 and half of 1
link.free                               # [1e-3, 5e-4, 0.0]
link.total(0, 3)                        # 1.5e-3
```
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

_Floats = npt.NDArray[np.float64]

CHUNK = 64
"""Ops one look at the link time spans, at most."""


class LinkTime:
    """Seconds of link time left at each op (`free`)."""

    def __init__(self, times: _Floats):
        self.free = times.copy()
        ops = len(times)
        # slot k: op k - 1 in `_before` (slot 0: none), op k in `_after`
        # (slot `ops`: none); a slot not its own parent is an op all taken
        self._before = list(range(ops + 1))
        self._after = list(range(ops + 1))

    def total(self, low: int, high: int) -> float:
        """The link time left over ops `low` to `high` (excluded)."""
        return float(self.free[low:high].sum())

    def take(self, low: int, high: int, seconds: float, backward: bool) -> None:
        """
        Take `seconds` from ops `low` to `high` (excluded), from the last op
        back (`backward`) or from the first on; all that is left, if short.
        Each look spans up to `CHUNK` ops, from the nearest op with time left.
        """
        need = seconds
        if backward:
            slot = _root(self._before, high)
            while need > 0 and slot > low:
                start = max(low, slot - CHUNK)
                need = self._spend(start, slot, need, True)
                slot = _root(self._before, start)
        else:
            slot = _root(self._after, low)
            while need > 0 and slot < high:
                end = min(high, slot + CHUNK)
                need = self._spend(slot, end, need, False)
                slot = _root(self._after, end)

    def _spend(self, start: int, end: int, need: float, backward: bool) -> float:
        """
        Take up to `need` from ops `start` to `end` (excluded), from the end
        back or from the start on; what is still needed after them.
        """
        window = self.free[start:end][::-1] if backward else self.free[start:end]
        taken = np.cumsum(window)
        full = int(np.searchsorted(taken, need))
        spent = min(full, window.size)  # ops left with no time
        window[:spent] = 0.0
        if backward:
            self._all_taken(end - spent, end)
        else:
            self._all_taken(start, start + spent)
        if full < window.size:
            window[full] = taken[full] - need
            return 0.0
        return need - float(taken[-1])

    def _all_taken(self, start: int, end: int) -> None:
        """Ops `start` to `end` (excluded) have no time left: both walks skip them."""
        self._before[start + 1 : end + 1] = range(start, end)
        self._after[start:end] = range(start + 1, end + 1)


def _root(parent: list[int], slot: int) -> int:
    """The slot `slot` leads to (the nearest op with time left), paths halved."""
    while parent[slot] != slot:
        parent[slot] = parent[parent[slot]]
        slot = parent[slot]
    return slot
