"""
The arena a simulated run needs: a compiled plan's buffers laid out
statically (every lifetime known in advance, one offset per buffer), a
runtime's allocated online by a best-fit allocator as it runs.

```python
result = simulate(schedule, hardware)
arena = planned_arena(result)        # an offset per stay in HBM, arena_bytes
runtime = runtime_arena(result)      # what a best-fit caching allocator reaches
fragmentation(arena.arena_bytes, result.peak_hbm_bytes)   # e.g. 0.004: +0.4%
```
"""

from __future__ import annotations

from dataclasses import dataclass

from hyperoffload.model.layout import (
    DEFAULT_ALIGNMENT,
    Allocation,
    Layout,
    dynamic_best_fit,
    static_layout,
)
from hyperoffload.sim.simulator import SimResult


@dataclass(frozen=True)
class Arena:
    """A static layout of one run: an offset per stay of a buffer in HBM."""

    allocations: list[Allocation]
    offsets: list[int]
    """Of each allocation, in the same order."""
    arena_bytes: int
    strategy: str

    def buffer_offsets(self) -> dict[int, int]:
        """
        The offset of each buffer; for a program as written, where every
        buffer enters HBM once (a fetched copy is a buffer of its own).
        Raises `ValueError` for a buffer with more than one stay.
        """
        offsets: dict[int, int] = {}
        for stay, offset in zip(self.allocations, self.offsets, strict=True):
            if stay.buffer in offsets:
                raise ValueError(
                    f"buffer {stay.buffer} enters HBM more than once: "
                    "no single offset holds it"
                )
            offsets[stay.buffer] = offset
        return offsets


def planned_arena(
    result: SimResult,
    strategy: str = "auto",
    alignment: int = DEFAULT_ALIGNMENT,
    time_limit: float | None = None,
) -> Arena:
    """
    The static layout of `result`'s stays in HBM, each laid out on its own (a
    buffer fetched again may come back elsewhere); raises `ValueError` for a
    bad strategy. `time_limit`: of the `exact` strategy, in seconds.
    """
    layout = static_layout(result.allocations, strategy, alignment, time_limit)
    return Arena(
        result.allocations, layout.offsets, layout.arena_bytes, layout.strategy
    )


def runtime_arena(result: SimResult, alignment: int = DEFAULT_ALIGNMENT) -> Layout:
    """The arena a best-fit runtime allocator reaches over `result`'s run."""
    return dynamic_best_fit(result.allocations, alignment)


def fragmentation(arena_bytes: int, peak_bytes: int) -> float:
    """How far the arena is above the live-byte peak: `arena / peak - 1`."""
    return arena_bytes / peak_bytes - 1 if peak_bytes else 0.0
