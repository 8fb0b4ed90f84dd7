"""
Collective ops of the `hyperoffload` dialect: the data-parallel exchanges of
one device's program in a group of `group` devices (ZeRO-1/2 sharded
optimizer states, `hyperoffload-gen --shard N`).

A tensor is sharded along its first dimension: the device of rank `r` owns
rows ``[r·n/group, (r+1)·n/group)`` of a tensor of `n` rows.

```mlir
%gs = hyperoffload.reduce_scatter %g {group = 8 : i64, rank = 0 : i64} : tensor<1024x4096xf32> -> tensor<128x4096xf32>
%w = hyperoffload.all_gather %ws {group = 8 : i64, rank = 0 : i64} : tensor<128x4096xbf16> -> tensor<1024x4096xbf16>
```

* `reduce_scatter`: the mean over the group of each device's operand (the
  gradients averaged, as data-parallel trainers average them), of which
  this device keeps its own shard;
* `all_gather`: every device's shard, concatenated in rank order.

Both run on the device interconnect (`[interconnect]` of the hardware
model), on a stream of their own, beside compute. As single-process
semantics (the numeric evaluators, `convert-hyperoffload-to-linalg`), the
other devices are replicas that saw this device's data: `reduce_scatter` is
the rank's slice of its operand (the mean of identical contributions);
`all_gather` places the shard at the rank's rows and leaves the other rows
zero, since the other devices' shards are not this program's to know. A
check of a sharded step compares the rank's rows and sees zeros, never
plausible values, elsewhere.
"""

from __future__ import annotations

from typing import ClassVar, cast

from xdsl.dialects.builtin import I64, AnyFloat, IntegerAttr, IntegerType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    attr_def,
    irdl_op_definition,
    operand_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

GROUP_ATTR = "group"
RANK_ATTR = "rank"


def _tensor(value: SSAValue) -> TensorType[Attribute]:
    return cast(TensorType[Attribute], value.type)


class CollectiveOp(IRDLOperation):
    """A collective over `group` devices, this device being `rank`."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    group = attr_def(IntegerAttr[I64])
    rank = attr_def(IntegerAttr[I64])

    GATHERS: ClassVar[bool] = False
    """Whether the result is the whole tensor (all-gather) rather than a shard."""

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self, value: Operation | SSAValue, result_type: Attribute, group: int, rank: int
    ):
        super().__init__(
            operands=[value],
            result_types=[result_type],
            attributes={
                GROUP_ATTR: IntegerAttr(group, 64),
                RANK_ATTR: IntegerAttr(rank, 64),
            },
        )

    @property
    def group_size(self) -> int:
        return self.group.value.data

    @property
    def rank_index(self) -> int:
        return self.rank.value.data

    @property
    def whole(self) -> TensorType[Attribute]:
        """The tensor of the whole group (the result of a gather, else the operand)."""
        return _tensor(self.result if self.GATHERS else self.input)

    @property
    def shard(self) -> TensorType[Attribute]:
        """This device's shard (the operand of a gather, else the result)."""
        return _tensor(self.input if self.GATHERS else self.result)

    def shard_rows(self) -> range:
        """The rows of the whole tensor this device owns."""
        rows = self.shard.get_shape()[0]
        return range(self.rank_index * rows, (self.rank_index + 1) * rows)

    def verify_(self) -> None:
        group, rank = self.group_size, self.rank_index
        if group < 1:
            raise VerifyException(f"a group has at least 1 device, not {group}")
        if not 0 <= rank < group:
            raise VerifyException(
                f"rank {rank} is not in a group of {group} (0 to {group - 1})"
            )
        whole, shard = self.whole, self.shard
        element: Attribute = whole.element_type
        if not isinstance(element, AnyFloat | IntegerType):
            raise VerifyException(
                f"collectives move float or integer tensors, got {self.input.type}"
            )
        if element != shard.element_type:
            raise VerifyException(
                f"the element type is kept: {self.input.type} -> {self.result.type}"
            )
        whole_shape, shard_shape = whole.get_shape(), shard.get_shape()
        if not whole_shape or any(dim < 0 for dim in (*whole_shape, *shard_shape)):
            raise VerifyException(
                "only statically shaped tensors of rank 1 or more are sharded, "
                f"got {self.input.type}"
            )
        if whole_shape[0] % group:
            raise VerifyException(
                f"{whole} has {whole_shape[0]} rows, not a multiple of the group "
                f"({group})"
            )
        expected = (whole_shape[0] // group, *whole_shape[1:])
        if shard_shape != expected:
            raise VerifyException(
                f"a shard of {whole} over {group} devices is "
                f"tensor<{'x'.join(map(str, expected))}x{element}>, "
                f"got {shard}"
            )


@irdl_op_definition
class ReduceScatterOp(CollectiveOp):
    """
    The mean over the group of the operand, of which this device keeps its
    shard (rows `rank`·n/`group` on). Runs on the interconnect.

    ```mlir
    %gs = hyperoffload.reduce_scatter %g {group = 4 : i64, rank = 1 : i64} : tensor<16x8xf32> -> tensor<4x8xf32>
    ```
    """

    name = "hyperoffload.reduce_scatter"


@irdl_op_definition
class AllGatherOp(CollectiveOp):
    """
    Every device's shard, concatenated in rank order. Runs on the
    interconnect.

    ```mlir
    %w = hyperoffload.all_gather %ws {group = 4 : i64, rank = 1 : i64} : tensor<4x8xbf16> -> tensor<16x8xbf16>
    ```
    """

    name = "hyperoffload.all_gather"

    GATHERS: ClassVar[bool] = True


@irdl_op_definition
class AllToAllOp(CollectiveOp):
    """
    Expert parallelism's exchange (`hyperoffload-gen --expert-shard N`): the
    operand's first dimension in `group` chunks, chunk j sent to device j;
    the result's chunk s is what device s sent this one. Same type in and
    out; each device sends (group - 1)/group of its operand, priced as the
    ring collectives. As single-process semantics the other devices are
    replicas of this one (its data and its experts): every chunk of the
    result is the operand's chunk `rank`.

    ```mlir
    %r = hyperoffload.all_to_all %x {group = 4 : i64, rank = 1 : i64} : tensor<16x8xf32> -> tensor<16x8xf32>
    ```
    """

    name = "hyperoffload.all_to_all"

    @property
    def shard(self) -> TensorType[Attribute]:
        """The chunk this device keeps of its own operand (a `group`-th of it)."""
        whole = self.whole
        shape = whole.get_shape()
        return TensorType(whole.element_type, [shape[0] // self.group_size, *shape[1:]])

    def verify_(self) -> None:
        if self.input.type != self.result.type:
            raise VerifyException(
                f"an all-to-all keeps its type: {self.input.type} -> {self.result.type}"
            )
        group, rank = self.group_size, self.rank_index
        shape = self.whole.get_shape()
        if group < 1 or not 0 <= rank < group:
            raise VerifyException(f"rank {rank} is not in a group of {group}")
        if not shape or shape[0] < 0 or shape[0] % group:
            raise VerifyException(
                f"{self.input.type} does not split in {group} chunks along its "
                "first dimension"
            )


COLLECTIVE_OPS = (ReduceScatterOp, AllGatherOp, AllToAllOp)
"""The ops that exchange data between the devices of a group."""
