"""
Arrange the offload ops of a function body around its compute ops: each
prefetch before the op it was placed at, each store right after its
producer, each detach right after the last use of its tensor or of a view of
it (a `tensor.collapse_shape` shares its buffer; a read fused into a later
kernel counts at that kernel). Compute ops keep their order.

Positions are indices into the *skeleton*, the body's ops that are not
offload ops: "at position i" is right before skeleton op i.

```mlir
%w_1 = hyperoffload.prefetch %w : ...   // placed at position 0
%a = arith.mulf %x, %x : ...
%r = arith.mulf %a, %w_1 : ...
hyperoffload.detach %w_1 : ...           // after the last use: position 2
func.return %r : ...
```
"""

from __future__ import annotations

from enum import IntEnum

from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from hyperoffload.analysis.fusion import Fusion
from hyperoffload.dialects.hyperoffload import (
    OFFLOAD_OPS,
    DetachOp,
    PrefetchOp,
    StoreOp,
)
from hyperoffload.dialects.residency import ancestor_in
from hyperoffload.dialects.views import VIEW_OPS, view_source
from hyperoffload.support.positions import SkeletonPosition


class Rank(IntEnum):
    """The order of offload ops at one position."""

    STORE = 0
    DETACH = 1
    PREFETCH = 2
    DETACH_AFTER_PREFETCH = 3
    """A detach of a copy fetched at this very position."""


class Skeleton:
    """The non-offload top-level ops of a body, and where each offload op hangs."""

    def __init__(self, block: Block):
        self.block = block
        self.body = list(block.ops)
        self.ops = [op for op in self.body if not isinstance(op, OFFLOAD_OPS)]
        self.index = {op: SkeletonPosition(i) for i, op in enumerate(self.ops)}
        # for every body op, the skeleton index of the first skeleton op at or after it
        self._next: dict[Operation, SkeletonPosition] = {}
        following = SkeletonPosition(len(self.ops))
        for op in reversed(self.body):
            following = self.index.get(op, following)
            self._next[op] = following

    def holder(self, op: Operation) -> SkeletonPosition | None:
        """Skeleton index of the skeleton op holding `op` (None: an offload op)."""
        current: Operation | None = op
        while current is not None and current not in self.index:
            if (
                isinstance(current, OFFLOAD_OPS)
                and current.parent_block() is self.block
            ):
                return None
            current = current.parent_op()
        return None if current is None else self.index[current]

    def position_of(self, op: Operation) -> SkeletonPosition:
        """The position of body op `op`: the index of the first skeleton op at or after it."""
        return self._next[op]

    def producer_of_operand(self, op: Operation) -> SkeletonPosition:
        """The skeleton op after which the value `op` reads exists (-1: entry)."""
        value = op.operands[0]
        owner = value.owner
        if isinstance(value, BlockArgument) or not isinstance(owner, Operation):
            return SkeletonPosition(-1)
        if owner in self.index:
            return self.index[owner]
        return SkeletonPosition(self.position_of(owner) - 1)  # made by an offload op

    def last_reader(self, detach: DetachOp, fusion: Fusion) -> SkeletonPosition:
        """
        The last skeleton op reading the detached value's buffer: the value
        a view chain starts from and every view of it (a detached slice
        frees the buffer its sibling slices read), fused reads too.
        """
        last = max(self.readers(detach.value, fusion), default=SkeletonPosition(-1))
        return max(last, self.producer_of_operand(detach))

    def readers(self, value: SSAValue, fusion: Fusion) -> list[SkeletonPosition]:
        """
        The skeleton ops reading the buffer of `value`: uses of the value its
        view chain starts from and of every view of it, fused reads at the
        kernel they are fused into.
        """
        values: list[SSAValue] = [view_source(value)]
        uses: list[SkeletonPosition | None] = []
        while values:
            for use in values.pop().uses:
                holder = ancestor_in(self.block, use.operation)
                readers = fusion.roots_of.get(holder, ()) if holder else ()
                uses += [self.holder(use.operation), *map(self.holder, readers)]
                if isinstance(use.operation, VIEW_OPS) and use.index == 0:
                    values += use.operation.results
        return [u for u in uses if u is not None]


def offload_positions(
    skeleton: Skeleton, prefetches: dict[PrefetchOp, SkeletonPosition], fusion: Fusion
) -> dict[Operation, tuple[SkeletonPosition, Rank]]:
    """Where each offload op goes: prefetches as given, stores and detaches by their anchors."""
    positions: dict[Operation, tuple[SkeletonPosition, Rank]] = {
        prefetch: (position, Rank.PREFETCH) for prefetch, position in prefetches.items()
    }
    for offload in skeleton.body:
        if isinstance(offload, StoreOp):
            position = SkeletonPosition(skeleton.producer_of_operand(offload) + 1)
            rank = Rank.STORE
        elif isinstance(offload, DetachOp):
            position = SkeletonPosition(skeleton.last_reader(offload, fusion) + 1)
            rank = Rank.DETACH
        else:
            continue
        owner = offload.operands[0].owner
        moved = positions.get(owner) if isinstance(owner, PrefetchOp) else None
        if moved is not None and moved[0] >= position:  # not a prefetch of the input
            position, rank = moved[0], Rank.DETACH_AFTER_PREFETCH
        positions[offload] = (position, rank)
    return positions


def reorder(
    skeleton: Skeleton, positions: dict[Operation, tuple[SkeletonPosition, Rank]]
) -> None:
    """Rebuild the block: skeleton ops in order, offload ops at (position, rank)."""
    before: dict[int, list[tuple[Rank, Operation]]] = {}
    for op, (position, rank) in positions.items():
        before.setdefault(position, []).append((rank, op))
    order: list[Operation] = []
    for index in range(len(skeleton.ops) + 1):
        order += [op for _, op in sorted(before.get(index, []), key=lambda r: r[0])]
        if index < len(skeleton.ops):
            order.append(skeleton.ops[index])
    restore(skeleton.block, order)


def restore(block: Block, order: list[Operation]) -> None:
    """Put the ops of `block` in `order`."""
    for op in list(block.ops):
        block.detach_op(op)
    block.add_ops(order)


def arrange(
    block: Block, prefetches: dict[PrefetchOp, SkeletonPosition], fusion: Fusion
) -> None:
    """Arrange the offload ops of `block`, each prefetch at its given position."""
    skeleton = Skeleton(block)
    reorder(skeleton, offload_positions(skeleton, prefetches, fusion))
