"""
The collectives of a data-parallel group lowered to their single-process
semantics (`hyperoffload.dialects.collectives`), for upstream MLIR
(`convert-hyperoffload-to-linalg` runs these patterns first): the other
devices are replicas that saw this device's data, so a reduce-scatter is the
rank's slice of its operand, and an all-gather places the shard at the
rank's rows of a zero tensor (the other devices' shards are not this
program's to know); an all-to-all repeats the rank's chunk of its operand
in every chunk (the other devices are replicas of this one).

```mlir
%gs = hyperoffload.reduce_scatter %g {group = 4 : i64, rank = 1 : i64} : tensor<16x8xf32> -> tensor<4x8xf32>
%w = hyperoffload.all_gather %ws {group = 4 : i64, rank = 1 : i64} : tensor<4x8xf32> -> tensor<16x8xf32>
```
becomes
```mlir
%gs = tensor.extract_slice %g[4, 0] [4, 8] [1, 1] : tensor<16x8xf32> to tensor<4x8xf32>
%zero = arith.constant 0.000000e+00 : f32
%e = tensor.empty() : tensor<16x8xf32>
%z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
%w = tensor.insert_slice %ws into %z[4, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<16x8xf32>
```
"""

from typing import cast

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
)
from xdsl.dialects.linalg.ops import FillOp
from xdsl.ir import Attribute, Operation
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from hyperoffload.dialects.collectives import AllGatherOp, AllToAllOp, CollectiveOp


def _window(op: CollectiveOp) -> tuple[list[int], list[int]]:
    """The offsets and sizes of this device's shard in the whole tensor."""
    shape = op.shard.get_shape()
    return [op.shard_rows().start, *[0] * (len(shape) - 1)], list(shape)


def _zero(element: Attribute) -> arith.ConstantOp:
    if isinstance(element, AnyFloat):
        return arith.ConstantOp(FloatAttr(0.0, element))
    assert isinstance(element, IntegerType)
    return arith.ConstantOp(IntegerAttr(0, cast(IntegerType, element)))


class _LowerCollective(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CollectiveOp, rewriter: PatternRewriter) -> None:
        offsets, sizes = _window(op)
        if isinstance(op, AllToAllOp):
            _lower_all_to_all(op, offsets, sizes, rewriter)
            return
        if not isinstance(op, AllGatherOp):
            rewriter.replace(
                op,
                tensor.ExtractSliceOp.from_static_parameters(op.input, offsets, sizes),
            )
            return
        whole = op.whole
        zero = _zero(whole.element_type)
        empty = tensor.EmptyOp([], whole)
        fill = FillOp([zero.result], [empty.tensor], [whole])
        insert = tensor.InsertSliceOp.from_static_parameters(
            op.input, fill.results[0], offsets, sizes
        )
        rewriter.replace(op, [zero, empty, fill, insert])


def _lower_all_to_all(
    op: AllToAllOp, offsets: list[int], sizes: list[int], rewriter: PatternRewriter
) -> None:
    """The rank's chunk of the operand, repeated in every chunk of the result."""
    chunk = tensor.ExtractSliceOp.from_static_parameters(op.input, offsets, sizes)
    ops: list[Operation] = [chunk, empty := tensor.EmptyOp([], op.whole)]
    into = empty.tensor
    for s in range(op.group_size):
        at = [s * sizes[0], *offsets[1:]]
        insert = tensor.InsertSliceOp.from_static_parameters(
            chunk.result, into, at, sizes
        )
        ops.append(insert)
        into = insert.result
    rewriter.replace(op, ops)


def lower_collectives(module: ModuleOp) -> None:
    """Rewrite every collective of `module` as its single-process semantics."""
    PatternRewriteWalker(_LowerCollective(), apply_recursively=False).rewrite_module(
        module
    )
