"""
One value's offload plan: the gaps over which it stays out of HBM, how it
gets back (a fetch, or computing it again), and where its copy lives.

```
%s = hyperoffload.store %v          // stored: a copy leaves after its producer
hyperoffload.detach %v              // the gap begins
%d = hyperoffload.prefetch %s       // issued at `fetch_op`, before the gap's end
```
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

from hyperoffload.analysis.lifetimes import Gap, ValueInfo
from hyperoffload.planning.annotated import annotated_prefetch_distance
from hyperoffload.planning.recipes import Recipe
from hyperoffload.support.tiers import Tier


@dataclass
class ValuePlan:
    """The gaps over which one value stays out of HBM."""

    info: ValueInfo
    gaps: list[Gap]
    stored: bool
    """A store copies the value out after its producer (else a copy exists)."""
    initially_out: bool = False
    """The value starts outside HBM (a tagged argument): its first gap starts at entry."""
    write_back: Tier | None = None
    """The tier a result is written back to (and returned from)."""
    fetch_ops: list[int] | None = None
    """The op before which each gap's fetch is issued (None: `prefetch_distance` ahead)."""
    recompute: bool = False
    """Each gap is bridged by computing the value again before the use after it."""
    recipes: list[Recipe] = field(default_factory=list[Recipe])
    """With `recompute`, how each gap's value is made again (one per gap)."""
    compress: str | None = None
    """The scheme its stores and prefetches compress with (`int8`), if any."""
    tier: Tier | None = None
    """Where its copy lives (`hyperoffload.planning.tiers`); None: `copy_tier`'s default."""

    def key(self) -> Hashable:
        """
        Its fields, hashable: the value by identity (the graph's, which
        outlives the plan), with the uses and tier the plan gives it. Plans
        of equal keys write the same IR and schedule.
        """
        info = self.info
        return (
            id(info.value),
            info.producer,
            tuple(info.uses),
            info.tier,
            info.buffer,
            info.bytes,
            tuple(self.gaps),
            self.stored,
            self.initially_out,
            self.write_back,
            None if self.fetch_ops is None else tuple(self.fetch_ops),
            self.recompute,
            tuple(self.recipes),
            self.compress,
            self.tier,
        )

    def copy_tier(self, default: Tier) -> Tier:
        """
        The tier its copy lives in: the one chosen, else the written-back
        result's, the argument's own, or `default` (the hardware's).
        """
        if self.tier is not None:
            return self.tier
        if self.write_back is not None:
            return self.write_back
        return self.info.tier if self.initially_out else default

    def fetch_op(self, index: int, distance: int) -> int:
        """The op before which the fetch ending gap `index` is issued."""
        gap = self.gaps[index]
        annotated = annotated_prefetch_distance(self.info.value)
        if self.fetch_ops is not None:
            moved = max(gap.after + 1, self.fetch_ops[index])
            return min(moved, max(gap.after + 1, gap.before - annotated))
        return max(gap.after + 1, gap.before - max(distance, annotated))

    def issue_order(self, index: int, distance: int) -> tuple[int, int]:
        """
        Where the fetch ending gap `index` stands among the fetches: by the
        op it is issued before, then by the use it serves (of fetches issued
        together, the one needed first goes first on the link). The planner's
        schedule and the IR written order fetches by it alike.
        """
        return self.fetch_op(index, distance), self.gaps[index].before
