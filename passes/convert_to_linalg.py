"""
`convert-hyperoffload-to-linalg`: lower a planned program to upstream dialects
(memref, bufferization, arith, func; compute stays linalg on tensors) for
`mlir-opt --one-shot-bufferize` (mapping and pipelines: docs/lowering.md).

A tier is a memref memory space (remote 1, host 2, ssd 3; hbm the default 0).
A remote copy is a memref in its tier's space; a prefetch copies it into a
device buffer, started where the prefetch was and awaited right before the
first consumer; a store copies `bufferization.to_buffer` of the tensor into a
new buffer in the tier; a detach frees the prefetch buffer it releases.

```mlir
%d = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
%y = arith.addf %x, %x : tensor<4xf32>
%z = arith.mulf %y, %d : tensor<4xf32>
hyperoffload.detach %d : tensor<4xf32>
```
becomes (`%w : memref<4xf32, 1>`)
```mlir
%d_buf = memref.alloc() : memref<4xf32>
memref.dma_start %w[%c0], %d_buf[%c0], %c4, %tag[%c0] : ...
%y = arith.addf %x, %x : tensor<4xf32>
memref.dma_wait %tag[%c0], %c4 : memref<1xi32>
%d = bufferization.to_tensor %d_buf restrict : memref<4xf32> to tensor<4xf32>
%z = arith.mulf %y, %d : tensor<4xf32>
memref.dealloc %d_buf : memref<4xf32>
```
A program that recurses through `func.call` is rejected with a located
diagnostic, as the planner rejects it (run natively, by `hyperoffload-check`,
recursion with no way out would not end).

Upstream lowers neither `dma_start` to LLVM nor a program with explicit
frees through `buffer-deallocation-pipeline`: to execute, use
`{dma=false dealloc=false}` (one `memref.copy` per transfer, frees left to
upstream).

With `arena=true`, the static layout of `hyperoffload-assign-offsets` is kept
(`hyperoffload.ir.arena`; a function without one is an error): one
`memref.alloc` of `hyperoffload.arena_bytes` at each function entry; a
prefetch with an offset copies into a `memref.view` of it (its detach frees
nothing), and linalg ops, `tensor.empty`, `tensor.insert_slice` and `arith`
on tensors with an offset write into views too:
```mlir
%arena = memref.alloc() {alignment = 64 : i64} : memref<4096xi8>
%c1024 = arith.constant 1024 : index
%d_buf = memref.view %arena[%c1024][] : memref<4096xi8> to memref<4xf32>
memref.dma_start %w[%c0], %d_buf[%c0], %c4, %tag[%c0] : ...
```
Arguments and constants keep their own storage (their ranges stay unused);
other results with an offset (`tensor.concat`, ...) keep the buffer
bufferization gives them. A store's wait also comes before the first op that
writes where the stored tensor lives in the arena.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.bufferization import ToBufferOp, ToTensorOp
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    TensorType,
    UnitAttr,
    i32,
    i64,
)
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import PassFailedException

from hyperoffload.analysis.cost import reject_recursion
from hyperoffload.dialects.hyperoffload import (
    DetachOp,
    PrefetchOp,
    RemoteType,
    StoreOp,
    Tier,
)
from hyperoffload.ir.arena import FunctionArena
from hyperoffload.ir.diagnostics import diagnostic_at

MEMORY_SPACES = {Tier.REMOTE: 1, Tier.HOST: 2, Tier.SSD: 3}
"""The memref memory space of each tier outside HBM (HBM is the default, 0)."""

_ALIAS_FREE_DIALECTS = frozenset({"linalg", "arith", "math"})
"""Ops whose tensor results never alias a read-only operand after bufferization."""


def _memref(tensor: TensorType[Attribute], tier: Tier = Tier.HBM) -> MemRefType:
    space = IntegerAttr(MEMORY_SPACES[tier], i64) if tier != Tier.HBM else NoneAttr()
    return MemRefType(tensor.element_type, tensor.get_shape(), NoneAttr(), space)


def _converted(typ: Attribute) -> Attribute:
    return _memref(typ.tensor, typ.tier) if isinstance(typ, RemoteType) else typ


def _retype_remote_copies(module: ModuleOp) -> None:
    """Give what forwards remote copies (arguments, results, signatures) memrefs."""
    for op in module.walk():
        args = [arg for region in op.regions for b in region.blocks for arg in b.args]
        for value in (*op.results, *args):
            if isinstance(value.type, RemoteType):
                Rewriter.replace_value_with_new_type(value, _converted(value.type))
        if isinstance(op, FuncOp):
            inputs, outputs = op.function_type.inputs, op.function_type.outputs
            op.function_type = FunctionType.from_lists(
                [_converted(t) for t in inputs], [_converted(t) for t in outputs]
            )


def _sync_point(
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


@dataclass(frozen=True)
class ConvertHyperoffloadToLinalgPass(ModulePass):
    """Lower hyperoffload ops, types and attributes to upstream dialects."""

    name = "convert-hyperoffload-to-linalg"

    dma: bool = True
    """Asynchronous copies (`memref.dma_start`/`dma_wait`); else `memref.copy`."""
    dealloc: bool = True
    """Free prefetch buffers at their detach; else leave every free to
    `buffer-deallocation-pipeline` (which rejects explicit deallocations)."""
    arena: bool = False
    """Place device buffers in one arena per function at the offsets of
    `hyperoffload-assign-offsets` (`hyperoffload.ir.arena`)."""

    def _copy(
        self, src: SSAValue, dst: SSAValue, shape: Sequence[int]
    ) -> tuple[list[Operation], list[Operation]]:
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

    def _lower_prefetch(
        self,
        prefetch: PrefetchOp,
        buffers: dict[SSAValue, SSAValue],
        arena: FunctionArena | None,
    ) -> None:
        tensor_type = _static(prefetch, prefetch.result.type)
        offset = arena.offset(prefetch, 0) if arena else None
        if arena is not None and offset is not None:
            dest, buf = arena.view(offset, tensor_type)  # the arena is freed as one
        else:
            dest = [
                memref.AllocOp.get(
                    tensor_type.element_type, shape=tensor_type.get_shape()
                )
            ]
            buf = dest[0].results[0]
        name = prefetch.result.name_hint
        buf.name_hint = f"{name}_buf" if name else "buf"
        start, wait = self._copy(prefetch.source, buf, tensor_type.get_shape())
        to_tensor = ToTensorOp(buf, restrict=True)
        to_tensor.tensor.name_hint = name
        Rewriter.insert_op([*wait, to_tensor], _sync_point(prefetch, [prefetch.result]))
        Rewriter.replace_op(prefetch, [*dest, *start], [to_tensor.tensor])
        if offset is None:
            buffers[to_tensor.tensor] = buf

    def _lower_store(self, store: StoreOp, arena: FunctionArena | None) -> None:
        tensor_type = _static(store, store.value.type)
        handle_type = store.handle.type
        assert isinstance(handle_type, RemoteType)
        src = ToBufferOp.build(
            operands=[store.value],
            result_types=[_memref(tensor_type)],
            properties={"read_only": UnitAttr()},
        )
        name = store.handle.name_hint or "stored"
        src.memref.name_hint = f"{name}_src"
        remote = _memref(tensor_type, handle_type.tier)
        if self.dealloc:
            dst: list[Operation] = [memref.AllocOp((), (), remote)]
        else:  # LLVM 22's finalize-memref-to-llvm frees only address space 0
            alloc = memref.AllocOp((), (), _memref(tensor_type))
            alloc.memref.name_hint = f"{name}_buf"
            dst = [alloc, memref.MemorySpaceCastOp(alloc, remote)]
        handle = dst[-1].results[0]
        handle.name_hint = name
        start, wait = self._copy(src.memref, handle, tensor_type.get_shape())
        if arena is None:
            at = _sync_point(store, [store.value, store.handle])
        else:  # before the source's range of the arena is written again
            where = arena.range_of(store.value)
            at = _sync_point(
                store, [store.value, store.handle], lambda o: arena.clobbers(o, where)
            )
        Rewriter.insert_op(wait, at)
        Rewriter.replace_op(store, [src, *dst, *start], [handle])

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for call in [o for o in op.walk() if isinstance(o, CallOp)]:
            reject_recursion(call)  # as the planner does: it would never end
        arenas = {
            f: FunctionArena(f)
            for f in op.walk()
            if self.arena and isinstance(f, FuncOp) and not f.is_declaration
        }
        buffers: dict[SSAValue, SSAValue] = {}
        for child in [o for o in op.walk() if isinstance(o, PrefetchOp | StoreOp)]:
            function = _function_of(child)
            arena = arenas.get(function) if function else None
            if isinstance(child, PrefetchOp):
                self._lower_prefetch(child, buffers, arena)
            else:
                self._lower_store(child, arena)
        for arena in arenas.values():
            arena.place()
        for detach in [o for o in op.walk() if isinstance(o, DetachOp)]:
            buf = buffers.get(detach.value)
            if self.dealloc and buf is not None and _frees_safely(detach.value, detach):
                Rewriter.replace_op(detach, memref.DeallocOp.get(buf), [])
            else:  # bufferization owns the buffer: a later pass may free it
                Rewriter.erase_op(detach)
        _retype_remote_copies(op)
        for child in op.walk():
            for name in [n for n in child.attributes if n.startswith("hyperoffload.")]:
                del child.attributes[name]
            if isinstance(child, FuncOp):
                child.arg_attrs = _strip(child.arg_attrs)
                child.res_attrs = _strip(child.res_attrs)


def _function_of(op: Operation) -> FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, FuncOp):
        parent = parent.parent_op()
    return parent


def _static(op: Operation, typ: Attribute) -> TensorType[Attribute]:
    if not isinstance(typ, TensorType) or not typ.has_static_shape():
        raise PassFailedException(
            diagnostic_at(
                op,
                f"cannot lower '{op.name}' of {typ}: "
                "only statically shaped tensors are supported",
            )
        )
    return typ  # pyright: ignore[reportUnknownVariableType]


def _strip(attrs: ArrayAttr[DictionaryAttr] | None) -> ArrayAttr[DictionaryAttr] | None:
    """Drop the `hyperoffload.*` entries of argument or result attributes."""
    if attrs is None:
        return None
    kept = [
        DictionaryAttr(
            {k: v for k, v in d.data.items() if not k.startswith("hyperoffload.")}
        )
        for d in attrs
    ]
    return ArrayAttr(kept) if any(d.data for d in kept) else None
