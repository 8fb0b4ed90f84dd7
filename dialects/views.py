"""
The upstream ops whose result is a view of their first operand.

A view computes nothing and holds no memory of its own: it reads its
source's buffer, so a use of the view is a use of that buffer.

```mlir
%v = tensor.collapse_shape %x [[0, 1]] : tensor<8x8xf32> into tensor<64xf32>
hyperoffload.detach %x : tensor<8x8xf32>
%y = linalg.generic ... ins(%v : tensor<64xf32>) ...  // reads %x after its detach
```
"""

from __future__ import annotations

from xdsl.dialects import tensor
from xdsl.ir import Operation, SSAValue

VIEW_OPS: tuple[type[Operation], ...] = (
    tensor.CollapseShapeOp,
    tensor.ExpandShapeOp,
    tensor.ExtractSliceOp,
    tensor.CastOp,
    tensor.ReshapeOp,
)
"""Ops whose result is a view of their first operand: no time, no allocation."""


def view_source(value: SSAValue) -> SSAValue:
    """The value whose buffer `value` lives in, looking through views."""
    while isinstance(value.owner, VIEW_OPS) and value.owner.operands:
        value = value.owner.operands[0]
    return value


def readers(value: SSAValue) -> list[tuple[Operation, SSAValue]]:
    """
    (op, the operand it takes) for each use of `value`'s buffer that is not a
    view of it: the ops that use `value` or, through views, any of its views.
    """
    found: list[tuple[Operation, SSAValue]] = []
    pending = [value]
    while pending:
        current = pending.pop()
        for use in current.uses:
            user = use.operation
            if isinstance(user, VIEW_OPS) and use.index == 0:
                pending.extend(user.results)
            else:
                found.append((user, current))
    return found
