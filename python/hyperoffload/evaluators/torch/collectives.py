"""
The collectives of a data-parallel group as torch operations, with the
single-process semantics of `hyperoffload.dialects.collectives` (the
numeric evaluator's, `hyperoffload.evaluators.numeric.collectives`).

```mlir
%gs = hyperoffload.reduce_scatter %g {group = 4 : i64, rank = 1 : i64} : tensor<16x8xf32> -> tensor<4x8xf32>  // g[4:8]
%w = hyperoffload.all_gather %ws {group = 4 : i64, rank = 1 : i64} : tensor<4x8xf32> -> tensor<16x8xf32>      // ws at rows 4:8, zeros elsewhere
```
"""

import torch
from xdsl.ir import Operation

from hyperoffload.dialects.collectives import AllGatherOp, ReduceScatterOp
from hyperoffload.evaluators.torch.registry import Scope, TorchImpls
from hyperoffload.evaluators.torch.values import shape_of

COLLECTIVES = TorchImpls()


@COLLECTIVES.impl(ReduceScatterOp.name)
def _reduce_scatter(
    scope: Scope, op: Operation, args: list[torch.Tensor]
) -> list[torch.Tensor]:
    assert isinstance(op, ReduceScatterOp)
    rows = op.shard_rows()
    return [args[0][rows.start : rows.stop].clone()]


@COLLECTIVES.impl(AllGatherOp.name)
def _all_gather(
    scope: Scope, op: Operation, args: list[torch.Tensor]
) -> list[torch.Tensor]:
    assert isinstance(op, AllGatherOp)
    rows = op.shard_rows()
    shard = args[0]
    whole = shard.new_zeros(tuple(shape_of(op.result.type)))
    whole[rows.start : rows.stop] = shard
    return [whole]
