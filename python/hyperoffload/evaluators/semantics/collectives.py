"""
The collectives of a data-parallel group over an `ArrayBackend`, as
single-process semantics (`hyperoffload.dialects.collectives`): the other
devices are replicas that saw this device's data.

```mlir
%gs = hyperoffload.reduce_scatter %g {group = 4 : i64, rank = 1 : i64} : tensor<16x8xf32> -> tensor<4x8xf32>  // g[4:8]
%w = hyperoffload.all_gather %ws {group = 4 : i64, rank = 1 : i64} : tensor<4x8xf32> -> tensor<16x8xf32>      // ws at rows 4:8, zeros elsewhere
%r = hyperoffload.all_to_all %x {group = 4 : i64, rank = 1 : i64} : tensor<16x8xf32> -> tensor<16x8xf32>      // x[4:8] in every 4 rows
```
"""

from typing import Any

from xdsl.ir import Operation

from hyperoffload.dialects.collectives import AllGatherOp, AllToAllOp, ReduceScatterOp
from hyperoffload.evaluators.op_registry import OpRegistry
from hyperoffload.evaluators.semantics.backend import Array, ArrayBackend, Scope
from hyperoffload.evaluators.semantics.types import shape_of


def register(registry: OpRegistry[Any, Any], xp: ArrayBackend) -> None:
    """Fill `registry` with the collectives on `xp`."""

    @registry.impl(ReduceScatterOp.name)
    def _reduce_scatter(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        assert isinstance(op, ReduceScatterOp)
        rows = op.shard_rows()
        return [xp.copy(args[0][rows.start : rows.stop])]

    @registry.impl(AllGatherOp.name)
    def _all_gather(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        assert isinstance(op, AllGatherOp)
        rows = op.shard_rows()
        whole = xp.new_zeros(args[0], shape_of(op.result.type))
        whole[rows.start : rows.stop] = args[0]
        return [whole]

    @registry.impl(AllToAllOp.name)
    def _all_to_all(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        assert isinstance(op, AllToAllOp)
        rows = op.shard_rows()
        chunk = args[0][rows.start : rows.stop]
        return [xp.concat([chunk] * op.group_size, 0)]
