"""
The buffers and copies the lowered transfers of `convert-hyperoffload-to-linalg`
are made of: a tier's memref type, a new buffer in a tier, a copy of a whole
memref (asynchronous, `memref.dma_start` and `dma_wait`, or `memref.copy`),
and where a copy's wait goes.

A copy of `%src : memref<4xf32>` into `%dst : memref<4xf32, 1>`, with `dma`:
```mlir
%c0 = arith.constant 0 : index
%c4 = arith.constant 4 : index
%tag = memref.alloca() : memref<1xi32>
memref.dma_start %src[%c0], %dst[%c0], %c4, %tag[%c0] : ...
...
memref.dma_wait %tag[%c0], %c4 : memref<1xi32>
```
without: `memref.copy %src, %dst : memref<4xf32> to memref<4xf32, 1>`.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import prod

from xdsl.dialects import arith, memref
from xdsl.dialects.bufferization import ToBufferOp
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    TensorType,
    UnitAttr,
    i32,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import PassFailedException

from hyperoffload.dialects.hyperoffload import PrefetchOp, RemoteType, Tier
from hyperoffload.ir.arena import FunctionArena
from hyperoffload.ir.diagnostics import diagnostic_at

MEMORY_SPACES = {Tier.REMOTE: 1, Tier.HOST: 2, Tier.SSD: 3}
"""The memref memory space of each tier outside HBM (HBM is the default, 0)."""

Copy = tuple[list[Operation], list[Operation]]
"""The ops that start a copy, and those that await it."""


def memref_of(tensor: TensorType[Attribute], tier: Tier = Tier.HBM) -> MemRefType:
    """The memref of `tensor`'s shape in `tier`'s memory space."""
    space = IntegerAttr(MEMORY_SPACES[tier], i64) if tier != Tier.HBM else NoneAttr()
    return MemRefType(tensor.element_type, tensor.get_shape(), NoneAttr(), space)


def converted(typ: Attribute) -> Attribute:
    """A remote copy's type as a memref in its tier; any other type as it is."""
    return memref_of(typ.tensor, typ.tier) if isinstance(typ, RemoteType) else typ


def sync_point(
    op: Operation,
    values: Sequence[SSAValue],
    stop: Callable[[Operation], bool] = lambda _: False,
) -> InsertPoint:
    """Before the first op after `op` that uses one of `values`, or for which
    `stop` holds (or the terminator)."""
    users = {use.operation for value in values for use in value.uses}
    current = op.next_op
    while current is not None:
        if current.has_trait(IsTerminator) or any(
            o in users or stop(o) for o in current.walk()
        ):
            return InsertPoint.before(current)
        current = current.next_op
    return InsertPoint.after(op)


def static_tensor(op: Operation, typ: Attribute) -> TensorType[Attribute]:
    """`typ`, a statically shaped tensor; else a located error on `op`."""
    if not isinstance(typ, TensorType) or not typ.has_static_shape():
        raise PassFailedException(
            diagnostic_at(
                op,
                f"cannot lower '{op.name}' of {typ}: "
                "only statically shaped tensors are supported",
            )
        )
    return typ  # pyright: ignore[reportUnknownVariableType]


@dataclass(frozen=True)
class Copies:
    """How transfers copy (`dma`) and whether their buffers are freed (`dealloc`)."""

    dma: bool = True
    """Asynchronous copies (`memref.dma_start`/`dma_wait`); else `memref.copy`."""
    dealloc: bool = True
    """Free prefetch buffers at their detach; else leave every free to
    `buffer-deallocation-pipeline` (which rejects explicit deallocations)."""

    def copy(self, src: SSAValue, dst: SSAValue, shape: Sequence[int]) -> Copy:
        """The ops that start a copy of a whole memref and those that await it."""
        if not self.dma:
            return [memref.CopyOp(src, dst)], []
        zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
        count = arith.ConstantOp(IntegerAttr(prod(shape), IndexType()))
        tag = memref.AllocaOp.get(i32, shape=[1])
        zero.result.name_hint, count.result.name_hint = "c0", f"c{prod(shape)}"
        tag.memref.name_hint = "tag"
        indices = [zero] * len(shape)
        start = memref.DmaStartOp.get(src, indices, dst, indices, count, tag, [zero])
        wait = memref.DmaWaitOp.get(tag, [zero], count)
        return [zero, count, tag, start], [wait]

    def tier_buffer(
        self, tensor_type: TensorType[Attribute], tier: Tier, name: str
    ) -> tuple[list[Operation], SSAValue]:
        """A new buffer in `tier` (allocated, or allocated and cast) and its value."""
        remote = memref_of(tensor_type, tier)
        if self.dealloc:
            dst: list[Operation] = [memref.AllocOp((), (), remote)]
        else:  # LLVM 22's finalize-memref-to-llvm frees only address space 0
            alloc = memref.AllocOp((), (), memref_of(tensor_type))
            alloc.memref.name_hint = f"{name}_buf"
            dst = [alloc, memref.MemorySpaceCastOp(alloc, remote)]
        handle = dst[-1].results[0]
        handle.name_hint = name
        return dst, handle

    def copy_out(
        self,
        value: SSAValue,
        tensor_type: TensorType[Attribute],
        tier: Tier,
        name: str,
    ) -> tuple[list[Operation], list[Operation], SSAValue]:
        """The ops copying `value` into a new buffer in `tier`, its waits, the buffer."""
        src = ToBufferOp.build(
            operands=[value],
            result_types=[memref_of(tensor_type)],
            properties={"read_only": UnitAttr()},
        )
        src.memref.name_hint = f"{name}_src"
        dst, buffer = self.tier_buffer(tensor_type, tier, name)
        start, wait = self.copy(src.memref, buffer, tensor_type.get_shape())
        return [src, *dst, *start], wait, buffer


@dataclass
class Lowering:
    """What the transfer patterns share while they lower one module."""

    copies: Copies
    arena: bool
    """Device buffers in the functions' arenas (`arena=true`)."""
    arenas: dict[FuncOp, FunctionArena]
    """The arena of each function, with `arena`."""
    buffers: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    """A lowered prefetch's tensor -> its own device buffer, freed at its detach."""
    compressed: dict[PrefetchOp, tuple[SSAValue, SSAValue]] = field(
        default_factory=dict[PrefetchOp, tuple[SSAValue, SSAValue]]
    )
    """A prefetch of a compressed store -> the store's values and scales in the tier."""

    def arena_of(self, op: Operation) -> FunctionArena | None:
        """The arena of the function holding `op` (None without `arena`)."""
        parent = op.parent_op()
        while parent is not None and not isinstance(parent, FuncOp):
            parent = parent.parent_op()
        return self.arenas.get(parent) if parent else None
