"""
The rewrite patterns of `convert-hyperoffload-to-linalg` for uncompressed
transfers, one per op: a prefetch copies its remote copy into a device buffer
(its own, or a view of the function's arena), a store copies its tensor into
a new buffer in its tier, a detach frees its prefetch's own buffer.

A store (the prefetch: the pass's docstring):
```mlir
%h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
```
becomes
```mlir
%h_src = bufferization.to_buffer %x read_only : tensor<4xf32> to memref<4xf32>
%h = memref.alloc() : memref<4xf32, 1 : i64>
memref.dma_start %h_src[%c0], %h[%c0], %c4, %tag[%c0] : ...
...
memref.dma_wait %tag[%c0], %c4 : memref<1xi32>
```
"""

from dataclasses import dataclass

from xdsl.dialects import memref
from xdsl.dialects.bufferization import ToTensorOp
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.traits import IsTerminator

from hyperoffload.dialects.hyperoffload import DetachOp, PrefetchOp, RemoteType, StoreOp
from hyperoffload.passes.linalg_transfers import Lowering, static_tensor, sync_point

_ALIAS_FREE_DIALECTS = frozenset({"linalg", "arith", "math"})
"""Ops whose tensor results never alias a read-only operand after bufferization."""


@dataclass
class LowerPrefetch(RewritePattern):
    """
    An uncompressed prefetch: a device buffer (allocated, or a view of the
    arena at its offset), the copy started where the prefetch was, awaited
    and viewed as a tensor before the first reader.
    """

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PrefetchOp, rewriter: PatternRewriter) -> None:
        if op.compress is not None:
            return
        tensor_type = static_tensor(op, op.result.type)
        arena = self.lowering.arena_of(op)
        offset = arena.offset(op, 0) if arena else None
        dest: list[Operation]
        if arena is not None and offset is not None:
            dest, buf = arena.view(offset, tensor_type)  # the arena is freed as one
        else:
            shape = tensor_type.get_shape()
            dest = [memref.AllocOp.get(tensor_type.element_type, shape=shape)]
            buf = dest[0].results[0]
        name = op.result.name_hint
        buf.name_hint = f"{name}_buf" if name else "buf"
        copies = self.lowering.copies
        start, wait = copies.copy(op.source, buf, tensor_type.get_shape())
        to_tensor = ToTensorOp(buf, restrict=True)
        to_tensor.tensor.name_hint = name
        rewriter.insert([*wait, to_tensor], sync_point(op, [op.result]))
        rewriter.replace(op, [*dest, *start], [to_tensor.tensor])
        if offset is None:
            self.lowering.buffers[to_tensor.tensor] = buf


@dataclass
class LowerStore(RewritePattern):
    """
    An uncompressed store: its tensor as a read-only buffer, copied into a
    new buffer in the tier, awaited before the next user of the tensor or
    the handle (with an arena, also before the tensor's range is written).
    """

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StoreOp, rewriter: PatternRewriter) -> None:
        if op.compress is not None:
            return
        tensor_type = static_tensor(op, op.value.type)
        handle_type = op.handle.type
        assert isinstance(handle_type, RemoteType)
        name = op.handle.name_hint or "stored"
        copies = self.lowering.copies
        ops, wait, handle = copies.copy_out(
            op.value, tensor_type, handle_type.tier, name
        )
        arena = self.lowering.arena_of(op)
        if arena is None:
            at = sync_point(op, [op.value, op.handle])
        else:  # before the source's range of the arena is written again
            where = arena.range_of(op.value)
            at = sync_point(
                op, [op.value, op.handle], lambda o: arena.clobbers(o, where)
            )
        rewriter.insert(wait, at)
        rewriter.replace(op, ops, [handle])


@dataclass
class LowerDetach(RewritePattern):
    """
    A detach: `memref.dealloc` of its prefetch's own buffer where nothing
    that may alias it outlives the detach (with `dealloc`); else erased,
    bufferization owning the buffer.
    """

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DetachOp, rewriter: PatternRewriter) -> None:
        buf = self.lowering.buffers.get(op.value)
        dealloc = self.lowering.copies.dealloc
        if dealloc and buf is not None and _frees_safely(op.value, op):
            rewriter.replace(op, memref.DeallocOp.get(buf), [])
        else:  # bufferization owns the buffer: a later pass may free it
            rewriter.erase(op)


def _frees_safely(value: SSAValue, detach: DetachOp) -> bool:
    """Whether no result that bufferization may alias with `value` can outlive `detach`
    (its buffer is read-only, so only views, forwarding and calls alias it)."""
    for use in value.uses:
        user = use.operation
        if user is detach or user.dialect_name() in _ALIAS_FREE_DIALECTS:
            continue
        if user.has_trait(IsTerminator) or any(
            isinstance(result.type, TensorType) for result in user.results
        ):
            return False
    return True
