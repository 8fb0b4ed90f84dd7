"""
The collectives of a data-parallel group on numpy arrays, as single-process
semantics (`hyperoffload.dialects.collectives`): the other devices are
replicas that saw this device's data.

```mlir
%gs = hyperoffload.reduce_scatter %g {group = 4 : i64, rank = 1 : i64} : tensor<16x8xf32> -> tensor<4x8xf32>  // g[4:8]
%w = hyperoffload.all_gather %ws {group = 4 : i64, rank = 1 : i64} : tensor<4x8xf32> -> tensor<16x8xf32>      // ws at rows 4:8, zeros elsewhere
```
"""

import numpy as np
from xdsl.ir import Operation

from hyperoffload.dialects.collectives import AllGatherOp, ReduceScatterOp
from hyperoffload.evaluators.numeric.core import Value, dtype_of, shape_of
from hyperoffload.evaluators.numeric.frame import Frame, OpImpls

COLLECTIVES = OpImpls()


@COLLECTIVES.impl(ReduceScatterOp.name)
def _reduce_scatter(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, ReduceScatterOp)
    rows = op.shard_rows()
    return [args[0][rows.start : rows.stop].copy()]


@COLLECTIVES.impl(AllGatherOp.name)
def _all_gather(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, AllGatherOp)
    rows = op.shard_rows()
    whole = np.zeros(shape_of(op.result.type), dtype_of(op.result.type))
    whole[rows.start : rows.stop] = args[0]
    return [whole]
