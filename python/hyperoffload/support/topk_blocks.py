"""
Which KV blocks a top-k decode step reads (Quest-style query-aware block
selection): the one rule the frontend (what a step attends over), the
accuracy evaluation and the generation replay share.

A step at position `length` (cached positions `[0, length)`) sees

* the sinks, positions `[0, sinks)`;
* the `recent` newest positions, `[length - recent, length)`;
* the whole of the `topk` *candidate* blocks whose key summaries give the
  highest upper bound of `q · k`.

The blocks that hold a sink or a recent position are *fixed*: read every
step, masked to those positions. Every other block (complete, since the
tail block holds the newest position) is a candidate. `recent` is at least 1.

>>> layout = topk_layout(block=4, sinks=2, recent=3, length=14)
>>> layout.fixed, layout.candidates
((0, 2, 3), (1,))
>>> layout.visible(5), layout.visible(11), layout.visible(9)
(False, True, False)
"""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class TopkLayout:
    """The blocks of a top-k step over a cache of `length` positions."""

    block: int
    sinks: int
    recent: int
    length: int
    fixed: tuple[int, ...]
    """Blocks holding a sink or a recent position, increasing."""
    candidates: tuple[int, ...]
    """The other blocks, increasing: those the selection chooses among."""

    def visible(self, position: int) -> bool:
        """Whether a position of a fixed block is seen (a sink or recent)."""
        return position < self.sinks or (
            self.length - self.recent <= position < self.length
        )


def topk_layout(block: int, sinks: int, recent: int, length: int) -> TopkLayout:
    """The fixed and candidate blocks of a step with `length` cached positions."""
    if block < 1 or sinks < 0 or recent < 1 or length < 1:
        raise ValueError(
            f"a top-k layout needs block >= 1, sinks >= 0, recent >= 1 and a "
            f"cached position (block {block}, sinks {sinks}, recent {recent}, "
            f"length {length})"
        )
    n = math.ceil(length / block)
    sink_blocks = range(math.ceil(min(sinks, length) / block))
    recent_blocks = range(max(0, length - recent) // block, n)
    fixed = tuple(sorted({*sink_blocks, *recent_blocks}))
    candidates = tuple(j for j in range(n) if j not in set(fixed))
    return TopkLayout(block, sinks, recent, length, fixed, candidates)
