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
The offload ops are rewritten in every region. A prefetch in a branch
(`scf.if %routed`, an expert's) keeps its copy, wait and view in the branch,
so the other path neither copies nor waits; a `speculative` prefetch above
the `scf.if` is lowered as any prefetch, its wait before the op that holds
its first reader (the `scf.if`), its free where its detach was:
```mlir
%y = scf.if %routed -> (tensor<2x4xf32>) {
  ...
} else {
  %wd_buf = memref.alloc() : memref<4x4xf32>
  memref.dma_start %w_cold[%c0, %c0], %wd_buf[%c0, %c0], %c16, %tag[%c0] : ...
  memref.dma_wait %tag[%c0], %c16 : memref<1xi32>
  %wd = bufferization.to_tensor %wd_buf restrict : memref<4x4xf32> to tensor<4x4xf32>
  %cold = linalg.matmul ins(%x, %wd : tensor<2x4xf32>, tensor<4x4xf32>) ...
  memref.dealloc %wd_buf : memref<4x4xf32>
  scf.yield %cold : tensor<2x4xf32>
}
```
The collectives of a data-parallel group become their single-process
semantics first (`collectives_to_linalg`: a reduce-scatter is the rank's
slice, an all-gather the shard at the rank's rows of zeros).

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

A compressed transfer (`compress = "int8"`) moves its int8 values and f16
scales, quantised and dequantised with linalg (`quantize_to_linalg`): a
store quantises before its copies into two buffers in the tier; a prefetch
of that copy copies both back and dequantises before the first consumer. A
compressed copy that crosses a function boundary keeps the ABI of remote
copies (a memref of the tensor's type, holding the decoded values): a
compressed store whose handle escapes also writes the decoded tensor there,
and a compressed prefetch of an argument copies it in and rounds it through
the quantiser on the device. `arena=true` does not lower compression.
```mlir
%h = hyperoffload.store %x {compress = "int8"} : tensor<2x64xf32> -> !hyperoffload.remote<tensor<2x64xf32>>
```
becomes (with `%q, %scales` the quantised `%x`)
```mlir
%h_q = memref.alloc() : memref<2x64xi8, 1 : i64>
"memref.dma_start"(%q_src, ..., %h_q, ...)
%h_scales = memref.alloc() : memref<2xf16, 1 : i64>
"memref.dma_start"(%scales_src, ..., %h_scales, ...)
```
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
from hyperoffload.dialects.residency import verify_residency
from hyperoffload.ir.arena import FunctionArena
from hyperoffload.ir.diagnostics import diagnostic_at, error_at
from hyperoffload.passes.collectives_to_linalg import lower_collectives
from hyperoffload.passes.quantize_to_linalg import (
    compressed_types,
    dequantize,
    quantize,
)

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
        dst, handle = self._tier_buffer(tensor_type, handle_type.tier, name)
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

    def _tier_buffer(
        self, tensor_type: TensorType[Attribute], tier: Tier, name: str
    ) -> tuple[list[Operation], SSAValue]:
        """A new buffer in `tier` (allocated, or allocated and cast) and its value."""
        remote = _memref(tensor_type, tier)
        if self.dealloc:
            dst: list[Operation] = [memref.AllocOp((), (), remote)]
        else:  # LLVM 22's finalize-memref-to-llvm frees only address space 0
            alloc = memref.AllocOp((), (), _memref(tensor_type))
            alloc.memref.name_hint = f"{name}_buf"
            dst = [alloc, memref.MemorySpaceCastOp(alloc, remote)]
        handle = dst[-1].results[0]
        handle.name_hint = name
        return dst, handle

    def _copy_out(
        self,
        value: SSAValue,
        tensor_type: TensorType[Attribute],
        tier: Tier,
        name: str,
    ) -> tuple[list[Operation], list[Operation], SSAValue]:
        """The ops copying `value` into a new buffer in `tier`, its waits, the buffer."""
        src = ToBufferOp.build(
            operands=[value],
            result_types=[_memref(tensor_type)],
            properties={"read_only": UnitAttr()},
        )
        src.memref.name_hint = f"{name}_src"
        dst, buffer = self._tier_buffer(tensor_type, tier, name)
        start, wait = self._copy(src.memref, buffer, tensor_type.get_shape())
        return [src, *dst, *start], wait, buffer

    def _lower_compressed_store(
        self, store: StoreOp, copies: dict[PrefetchOp, tuple[SSAValue, SSAValue]]
    ) -> None:
        """Quantise, copy the values and the scales out; the decoded tensor too if the copy escapes."""
        tensor_type = _static(store, store.value.type)
        _compressible(store, tensor_type)
        q_type, scales_type = compressed_types(tensor_type)
        handle_type = store.handle.type
        assert isinstance(handle_type, RemoteType)
        tier, name = handle_type.tier, store.handle.name_hint or "stored"
        codec, q, scales = quantize(store.value, store.value.name_hint)
        Rewriter.insert_op(codec, InsertPoint.before(store))
        out_q, wait_q, remote_q = self._copy_out(q, q_type, tier, f"{name}_q")
        out_s, wait_s, remote_s = self._copy_out(
            scales, scales_type, tier, f"{name}_scales"
        )
        ops = [*out_q, *out_s]
        waits = [*wait_q, *wait_s]
        handle = remote_q  # read only by the prefetches, lowered next
        for use in store.handle.uses:
            if isinstance(use.operation, PrefetchOp):
                copies[use.operation] = (remote_q, remote_s)
            elif handle is remote_q:  # the ABI of a remote copy: the decoded tensor
                decode, decoded = dequantize(q, scales, tensor_type.element_type)
                decoded.name_hint = f"{name}_decoded"
                Rewriter.insert_op(decode, InsertPoint.before(store))
                out, wait, handle = self._copy_out(decoded, tensor_type, tier, name)
                ops += out
                waits += wait
        Rewriter.insert_op(waits, _sync_point(store, [store.value, store.handle]))
        Rewriter.replace_op(store, ops, [handle])

    def _lower_compressed_prefetch(
        self, prefetch: PrefetchOp, copy: tuple[SSAValue, SSAValue] | None
    ) -> None:
        """
        Copy a compressed store's values and scales in and dequantise them
        (`copy`); or copy an argument in and round it through the quantiser.
        """
        tensor_type = _static(prefetch, prefetch.result.type)
        _compressible(prefetch, tensor_type)
        name = prefetch.result.name_hint or "buf"
        if copy is None:  # the caller's copy, in the tensor's type
            sources = [(prefetch.source, tensor_type, "_copy")]
        else:
            q_type, scales_type = compressed_types(tensor_type)
            sources = [(copy[0], q_type, "_q"), (copy[1], scales_type, "_scales")]
        allocs: list[Operation] = []
        starts: list[Operation] = []
        at_use: list[Operation] = []
        views: list[SSAValue] = []
        for source, buffer_type, suffix in sources:
            alloc = memref.AllocOp.get(
                buffer_type.element_type, shape=buffer_type.get_shape()
            )
            alloc.memref.name_hint = f"{name}{suffix}_buf"
            start, wait = self._copy(source, alloc.memref, buffer_type.get_shape())
            view = ToTensorOp(alloc.memref, restrict=True)
            view.tensor.name_hint = f"{name}{suffix}"
            allocs.append(alloc)
            starts += start
            at_use += [*wait, view]
            views.append(view.tensor)
        if copy is None:  # the caller's copy: rounded here, as it was compressed
            codec, q, scales = quantize(views[0], name)
        else:
            codec, q, scales = [], views[0], views[1]
        decode, decoded = dequantize(q, scales, tensor_type.element_type)
        decoded.name_hint = prefetch.result.name_hint
        frees: list[Operation] = (
            [memref.DeallocOp.get(a.results[0]) for a in allocs] if self.dealloc else []
        )
        at = _sync_point(prefetch, [prefetch.result])
        Rewriter.insert_op([*at_use, *codec, *decode, *frees], at)
        Rewriter.replace_op(prefetch, [*allocs, *starts], [decoded])

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # residency is read as the verifier reads it: a plan it rejects is
        # rejected here at the same op, with the same words
        verify_residency(op, error_at)
        for call in [o for o in op.walk() if isinstance(o, CallOp)]:
            reject_recursion(call)  # as the planner does: it would never end
        lower_collectives(op)
        arenas = {
            f: FunctionArena(f)
            for f in op.walk()
            if self.arena and isinstance(f, FuncOp) and not f.is_declaration
        }
        buffers: dict[SSAValue, SSAValue] = {}
        copies: dict[PrefetchOp, tuple[SSAValue, SSAValue]] = {}
        for child in [o for o in op.walk() if isinstance(o, PrefetchOp | StoreOp)]:
            function = _function_of(child)
            arena = arenas.get(function) if function else None
            if child.compress is not None:
                if self.arena:
                    raise PassFailedException(
                        diagnostic_at(
                            child,
                            f"cannot lower a compressed '{child.name}' with "
                            "arena=true (compression is lowered without a layout)",
                        )
                    )
                if isinstance(child, PrefetchOp):
                    self._lower_compressed_prefetch(child, copies.get(child))
                else:
                    self._lower_compressed_store(child, copies)
            elif isinstance(child, PrefetchOp):
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


def _compressible(op: Operation, typ: Attribute) -> None:
    """A located error for a compressed transfer of a 0-d tensor (it has no rows)."""
    if isinstance(typ, TensorType) and not typ.get_shape():
        raise PassFailedException(
            diagnostic_at(
                op,
                f"cannot lower a compressed '{op.name}' of {typ}: a 0-d tensor has "
                "no rows to scale",
            )
        )


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
