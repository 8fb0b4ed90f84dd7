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
Each offload op is lowered by its rewrite pattern (`transfers_to_linalg`:
prefetch, store, detach; `compressed_to_linalg`: a compressed prefetch or
store), in every region, in program order: the stores and prefetches first,
then (the arena placed) the detaches. A prefetch in a branch
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
scales, quantised and dequantised with linalg (`quantize_to_linalg`); a
compressed copy that crosses a function boundary keeps the ABI of remote
copies (`compressed_to_linalg` has the rules and an example). `arena=true`
does not lower compression.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
)
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import Rewriter

from hyperoffload.analysis.cost import reject_recursion
from hyperoffload.dialects.hyperoffload import PrefetchOp, RemoteType, StoreOp
from hyperoffload.dialects.residency import verify_residency
from hyperoffload.ir.arena import FunctionArena
from hyperoffload.ir.diagnostics import error_at
from hyperoffload.ir.strip import reject_gathers
from hyperoffload.passes.collectives_to_linalg import lower_collectives
from hyperoffload.passes.compressed_to_linalg import (
    LowerCompressedPrefetch,
    LowerCompressedStore,
    check_compressed,
)
from hyperoffload.passes.linalg_transfers import (
    Copies,
    Lowering,
    converted,
    static_tensor,
)
from hyperoffload.passes.transfers_to_linalg import (
    LowerDetach,
    LowerPrefetch,
    LowerStore,
)


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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # residency is read as the verifier reads it: a plan it rejects is
        # rejected here at the same op, with the same words
        verify_residency(op, error_at)
        reject_gathers(op, self.name)
        for call in [o for o in op.walk() if isinstance(o, CallOp)]:
            reject_recursion(call)  # as the planner does: it would never end
        lower_collectives(op)
        arenas = {
            f: FunctionArena(f)
            for f in op.walk()
            if self.arena and isinstance(f, FuncOp) and not f.is_declaration
        }
        _check_transfers(op, self.arena)
        lowering = Lowering(Copies(self.dma, self.dealloc), self.arena, arenas)
        transfers: list[RewritePattern] = [
            LowerPrefetch(lowering),
            LowerStore(lowering),
            LowerCompressedPrefetch(lowering),
            LowerCompressedStore(lowering),
        ]
        _walk(GreedyRewritePatternApplier(transfers, dce_enabled=False), op)
        for arena in arenas.values():
            arena.place()
        _walk(LowerDetach(lowering), op)
        _retype_remote_copies(op)
        _strip_attributes(op)


def _walk(pattern: RewritePattern, module: ModuleOp) -> None:
    """Apply `pattern` once to every op of `module`, in program order."""
    PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(module)


def _check_transfers(module: ModuleOp, arena: bool) -> None:
    """A located error at the first transfer that cannot be lowered."""
    for op in module.walk():
        if isinstance(op, PrefetchOp | StoreOp):
            typ = op.result.type if isinstance(op, PrefetchOp) else op.value.type
            if op.compress is not None:
                check_compressed(op, typ, arena)
            else:
                static_tensor(op, typ)


def _retype_remote_copies(module: ModuleOp) -> None:
    """Give what forwards remote copies (arguments, results, signatures) memrefs."""
    for op in module.walk():
        args = [arg for region in op.regions for b in region.blocks for arg in b.args]
        for value in (*op.results, *args):
            if isinstance(value.type, RemoteType):
                Rewriter.replace_value_with_new_type(value, converted(value.type))
        if isinstance(op, FuncOp):
            inputs, outputs = op.function_type.inputs, op.function_type.outputs
            op.function_type = FunctionType.from_lists(
                [converted(t) for t in inputs], [converted(t) for t in outputs]
            )


def _strip_attributes(module: ModuleOp) -> None:
    """Drop the `hyperoffload.*` attributes of ops, arguments and results."""
    for child in module.walk():
        for name in [n for n in child.attributes if n.startswith("hyperoffload.")]:
            del child.attributes[name]
        if isinstance(child, FuncOp):
            child.arg_attrs = _strip(child.arg_attrs)
            child.res_attrs = _strip(child.res_attrs)


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
