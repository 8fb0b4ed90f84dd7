"""
One top-k decode step (`--attention topk`) as data: what the generation
replay (`hyperoffload.policies.generation_topk`) needs of it, read from a
program by `hyperoffload.analysis.topk_cache`.

```python
step = TopkStep(compute_s=0.0171, layers=32, block_bytes=64 << 20, blocks=31,
                fixed=3, topk=4, entry_bytes=512 << 10, block=4096, sinks=4)
step.candidate_blocks()   # the blocks a selection chooses among
```
"""

from __future__ import annotations

from dataclasses import dataclass

from hyperoffload.support.topk_blocks import topk_layout


@dataclass(frozen=True)
class TopkStep:
    """What the replay needs of one top-k decode step."""

    compute_s: float
    """One call with every block resident (the step's simulated makespan)."""
    layers: int
    block_bytes: int
    """One block of one layer, keys and values, as stored (uncompressed)."""
    blocks: int
    """Blocks of the cache per layer (the tail included)."""
    fixed: int
    """Fixed blocks per layer (sinks and recent positions)."""
    topk: int
    entry_bytes: int
    """One token's new keys and values over every layer."""
    block: int
    """Positions per block."""
    other_hbm_bytes: int = 0
    """What the step holds besides the cache (weights, activations)."""
    block_elements_per_row: int = 0
    """Elements per quantisation row (head_dim), for compressed bytes."""
    sinks: int = 0
    recent: int = 1
    kv_len: int = 0
    """Cached positions (0: as many as `blocks` blocks hold, the tail one)."""

    def candidate_blocks(self) -> list[int]:
        """The blocks the selection chooses among (`topk_layout`)."""
        length = self.kv_len or (self.blocks - 1) * self.block + 1
        return list(topk_layout(self.block, self.sinks, self.recent, length).candidates)
