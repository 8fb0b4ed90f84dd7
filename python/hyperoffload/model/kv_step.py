"""
The decode step a generation runs, as data: how the step reads its KV cache
in blocks (`KVLayout`), and its schedule with the buffers that hold the
blocks (`StepBlocks`). `hyperoffload.analysis.kv_cache` reads them from a
program; `hyperoffload.policies.generation` runs many calls of them.

```python
layout = KVLayout("window", block=16, window=32, sinks=4, kv_len=64)
layout.blocks_read(70)   # [0, 2, 3, 4]: the sink block and the window
StepBlocks(schedule, layout, blocks={3: ((0, 0), 0)}, entries={9: (0, 0)})
```
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from hyperoffload.model.schedule import Schedule
from hyperoffload.support.kv_blocks import blocks_read
from hyperoffload.support.quantize import Compression

Attention = Literal["blocked", "window"]

BlockKey = tuple[int, int]
"""(layer, kind): one sequence of blocks (kind 0 keys, 1 values)."""


@dataclass(frozen=True)
class KVLayout:
    """How a decode step reads its cache of `kv_len` positions, in blocks of `block`."""

    attention: Attention
    block: int
    window: int
    sinks: int
    kv_len: int

    def blocks_read(self, length: int) -> list[int]:
        """
        The blocks a step reads with `length` cached positions, in order
        (`hyperoffload.support.kv_blocks`).

        >>> KVLayout("window", 16, 32, 4, 64).blocks_read(70)
        [0, 2, 3, 4]
        """
        return blocks_read(self.attention, self.block, self.window, self.sinks, length)

    def sink_blocks(self) -> int:
        """Blocks holding sink positions (read by every step)."""
        if self.attention == "blocked":
            return 0
        return math.ceil(self.sinks / self.block)


@dataclass(frozen=True)
class StepBlocks:
    """The decode step's schedule and which of its buffers hold the cache."""

    schedule: Schedule
    """The step stripped of offload ops."""
    layout: KVLayout
    blocks: dict[int, tuple[BlockKey, int]]
    """Buffer -> ((layer, kind), block) for each block argument."""
    entries: dict[int, BlockKey]
    """Buffer -> (layer, kind) for each new-entry result."""
    shapes: dict[int, tuple[int, ...]] = field(
        default_factory=dict[int, tuple[int, ...]]
    )
    """Buffer -> tensor shape `(batch, kv_heads, positions, head_dim)` of each block."""
    element_bytes: int = 2
    compress: Compression | None = None
    """The scheme the step's plan moves KV blocks with (its IR's `compress`)."""
