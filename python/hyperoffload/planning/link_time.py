"""
Link time left at each op in one direction of one link, taken greedily:
a fetch from the ops right before its use (nearest first), a store from
the ops right after its producer. Ops whose time is all taken are skipped
(each points to the nearest op on either side with time left, as a
disjoint-set forest), so a link that is busy for most of a long program
costs each transfer only the ops it takes from, not its whole window.

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
        """
        free = self.free
        need = seconds
        if backward:
            slot = _root(self._before, high)
            while need > 0 and slot > low:
                op = slot - 1
                have = float(free[op])
                if have > need:
                    free[op] = have - need
                    return
                need -= have
                self._taken(op)
                slot = _root(self._before, op)
        else:
            slot = _root(self._after, low)
            while need > 0 and slot < high:
                op = slot
                have = float(free[op])
                if have > need:
                    free[op] = have - need
                    return
                need -= have
                self._taken(op)
                slot = _root(self._after, op + 1)

    def _taken(self, op: int) -> None:
        """Op `op` has no time left: both walks skip it from now on."""
        self.free[op] = 0.0
        self._before[op + 1] = op
        self._after[op] = op + 1


def _root(parent: list[int], slot: int) -> int:
    """The slot `slot` leads to (the nearest op with time left), paths halved."""
    while parent[slot] != slot:
        parent[slot] = parent[parent[slot]]
        slot = parent[slot]
    return slot
