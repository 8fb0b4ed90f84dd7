"""
The ground types of memory layout: an `Allocation` (one stay of a buffer in
HBM, between two events), a `Layout` (an offset for each), and the live-byte
peak that bounds every arena from below.

```python
stays = [Allocation(0, 4096, start=0, end=3), Allocation(1, 4096, start=2, end=5)]
live_peak(stays)  # 8192: the two overlap at event 2
```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_ALIGNMENT = 64
"""Offsets and sizes are rounded up to this many bytes (a cache line)."""


@dataclass(frozen=True)
class Allocation:
    """One stay of a buffer in HBM: claimed at event `start`, released at `end`."""

    buffer: int
    """The schedule buffer's id."""
    bytes: int
    start: int
    end: int
    """Exclusive: an allocation released at event `e` conflicts with none claimed at `e` or later."""

    def conflicts(self, other: Allocation) -> bool:
        return self.start < other.end and other.start < self.end


@dataclass(frozen=True)
class Layout:
    """An offset per allocation (in the order given) and the arena they need."""

    offsets: list[int]
    arena_bytes: int
    strategy: str


def aligned(nbytes: int, alignment: int = DEFAULT_ALIGNMENT) -> int:
    """`nbytes` rounded up to a multiple of `alignment` (0 stays 0)."""
    if alignment <= 0:
        raise ValueError(f"alignment must be positive, not {alignment}")
    if nbytes < 0:
        raise ValueError(f"a size cannot be negative: {nbytes}")
    return -(-nbytes // alignment) * alignment


def live_peak(
    allocations: Sequence[Allocation], alignment: int = DEFAULT_ALIGNMENT
) -> int:
    """The largest sum of aligned sizes live at once: a lower bound on any arena."""
    stays = [a for a in allocations if a.start < a.end]
    if not stays:
        return 0
    sizes = np.array([aligned(a.bytes, alignment) for a in stays], np.int64)
    times = np.array([a.end for a in stays] + [a.start for a in stays], np.int64)
    claims = np.repeat(np.array([0, 1], np.int64), len(stays))  # releases first
    deltas = np.concatenate((-sizes, sizes))
    occupancy = np.cumsum(deltas[np.lexsort((claims, times))])
    return max(0, int(occupancy.max()))
