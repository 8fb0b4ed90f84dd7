"""
The rewrite patterns of `convert-hyperoffload-to-linalg` for compressed
transfers (`compress = "int8"`), one per op: a store quantises its tensor
(`quantize_to_linalg`) and copies the int8 values and f16 scales into two
buffers in its tier; a prefetch of that copy copies both back and
dequantises before the first reader. A copy that crosses a function boundary
keeps the ABI of remote copies (a memref of the tensor's type, holding the
decoded values): a store whose handle escapes also writes the decoded tensor
there, and a prefetch of an argument copies it in and rounds it through the
quantiser on the device. Not lowered with `arena=true`.

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

from dataclasses import dataclass

from xdsl.dialects import memref
from xdsl.dialects.bufferization import ToTensorOp
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from hyperoffload.dialects.hyperoffload import PrefetchOp, RemoteType, StoreOp
from hyperoffload.ir.diagnostics import diagnostic_at
from hyperoffload.passes.linalg_transfers import Lowering, static_tensor, sync_point
from hyperoffload.passes.quantize_to_linalg import (
    compressed_types,
    dequantize,
    quantize,
)


@dataclass
class LowerCompressedStore(RewritePattern):
    """
    A compressed store: quantise, copy the values and the scales out; the
    decoded tensor too if the copy escapes (is read by other than prefetches).
    """

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StoreOp, rewriter: PatternRewriter) -> None:
        if op.compress is None:
            return
        tensor_type = static_tensor(op, op.value.type)
        q_type, scales_type = compressed_types(tensor_type)
        handle_type = op.handle.type
        assert isinstance(handle_type, RemoteType)
        tier, name = handle_type.tier, op.handle.name_hint or "stored"
        codec, q, scales = quantize(op.value, op.value.name_hint)
        rewriter.insert(codec, InsertPoint.before(op))
        copies = self.lowering.copies
        ops, waits, remote_q = copies.copy_out(q, q_type, tier, f"{name}_q")
        out_s, wait_s, remote_s = copies.copy_out(
            scales, scales_type, tier, f"{name}_scales"
        )
        ops += out_s
        waits += wait_s
        handle = remote_q  # read only by the prefetches, lowered next
        for use in op.handle.uses:
            if isinstance(use.operation, PrefetchOp):
                self.lowering.compressed[use.operation] = (remote_q, remote_s)
            elif handle is remote_q:  # the ABI of a remote copy: the decoded tensor
                decode, decoded = dequantize(q, scales, tensor_type.element_type)
                decoded.name_hint = f"{name}_decoded"
                rewriter.insert(decode, InsertPoint.before(op))
                out, wait, handle = copies.copy_out(decoded, tensor_type, tier, name)
                ops += out
                waits += wait
        rewriter.insert(waits, sync_point(op, [op.value, op.handle]))
        rewriter.replace(op, ops, [handle])


@dataclass
class LowerCompressedPrefetch(RewritePattern):
    """
    A compressed prefetch: copy a compressed store's values and scales in
    and dequantise them; or copy an argument in and round it through the
    quantiser (it was compressed by the caller's rules).
    """

    lowering: Lowering

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PrefetchOp, rewriter: PatternRewriter) -> None:
        if op.compress is None:
            return
        tensor_type = static_tensor(op, op.result.type)
        name = op.result.name_hint or "buf"
        copy = self.lowering.compressed.get(op)
        if copy is None:  # the caller's copy, in the tensor's type
            sources = [(op.source, tensor_type, "_copy")]
        else:
            q_type, scales_type = compressed_types(tensor_type)
            sources = [(copy[0], q_type, "_q"), (copy[1], scales_type, "_scales")]
        allocs, starts, at_use, views = self._copy_in(sources, name)
        if copy is None:  # the caller's copy: rounded here, as it was compressed
            codec, q, scales = quantize(views[0], name)
        else:
            codec, q, scales = [], views[0], views[1]
        decode, decoded = dequantize(q, scales, tensor_type.element_type)
        decoded.name_hint = op.result.name_hint
        frees: list[Operation] = []
        if self.lowering.copies.dealloc:
            frees = [memref.DeallocOp.get(a.results[0]) for a in allocs]
        at = sync_point(op, [op.result])
        rewriter.insert([*at_use, *codec, *decode, *frees], at)
        rewriter.replace(op, [*allocs, *starts], [decoded])

    def _copy_in(
        self, sources: list[tuple[SSAValue, TensorType[Attribute], str]], name: str
    ) -> tuple[list[Operation], list[Operation], list[Operation], list[SSAValue]]:
        """
        Per source, a device buffer and the copy into it: the allocations,
        the copies' starts, their waits and tensor views (for the first
        reader), and the views.
        """
        allocs: list[Operation] = []
        starts: list[Operation] = []
        at_use: list[Operation] = []
        views: list[SSAValue] = []
        copies = self.lowering.copies
        for source, buffer_type, suffix in sources:
            alloc = memref.AllocOp.get(
                buffer_type.element_type, shape=buffer_type.get_shape()
            )
            alloc.memref.name_hint = f"{name}{suffix}_buf"
            start, wait = copies.copy(source, alloc.memref, buffer_type.get_shape())
            view = ToTensorOp(alloc.memref, restrict=True)
            view.tensor.name_hint = f"{name}{suffix}"
            allocs.append(alloc)
            starts += start
            at_use += [*wait, view]
            views.append(view.tensor)
        return allocs, starts, at_use, views


def check_compressed(op: Operation, typ: Attribute, arena: bool) -> None:
    """
    A located error unless `typ` is a statically shaped tensor with rows to
    scale and the lowering has no arena (`arena`).
    """
    if arena:
        raise PassFailedException(
            diagnostic_at(
                op,
                f"cannot lower a compressed '{op.name}' with "
                "arena=true (compression is lowered without a layout)",
            )
        )
    if not static_tensor(op, typ).get_shape():
        raise PassFailedException(
            diagnostic_at(
                op,
                f"cannot lower a compressed '{op.name}' of {typ}: a 0-d tensor has "
                "no rows to scale",
            )
        )
