"""
Tensors as the torch executor holds them: a lazy `tensor.empty` materialised
as zeros where it is read, reshapes as views, and the values an op's region
reads from above (`tensor.pad`'s padding), passed after its operands.

```mlir
%e = tensor.empty() : tensor<2x3xf32>                                  // lazy: no memory until read
%c = tensor.collapse_shape %x [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>  // a view
%p = tensor.pad %x low[1] high[1] { ^bb0(%i: index): tensor.yield %f : f32 }  // reads %f from above
```
"""

from collections.abc import Sequence

import torch
from xdsl.ir import Operation, SSAValue

from hyperoffload.evaluators.torch.values import is_lazy, lazy

Tensor = torch.Tensor


def materialised(value: Tensor, device: torch.device) -> Tensor:
    """`value`, or zeros in its place if it is lazy (a `tensor.empty` nobody wrote)."""
    if is_lazy(value):
        return torch.zeros(value.shape, dtype=value.dtype, device=device)
    return value


def reshaped(source: Tensor, shape: Sequence[int]) -> Tensor:
    """`source` in `shape`: a view where the strides allow one, else a copy."""
    if is_lazy(source):
        return lazy(list(shape), source.dtype)
    return source.reshape(tuple(shape))


REGION_OPS = frozenset({"tensor.pad"})
"""Ops with a region the executor runs whole: their implementation takes the
operands, then the values the region reads from above (`region_reads`)."""


def region_reads(op: Operation) -> list[SSAValue]:
    """The values defined above `op` that its regions read, in order, once each."""
    seen: list[SSAValue] = []
    for nested in op.walk():
        if nested is op:
            continue
        for value in nested.operands:
            owner = value.owner
            inside = isinstance(owner, Operation) and op.is_ancestor(owner)
            if not inside and not _block_of(value, op) and value not in seen:
                seen.append(value)
    return seen


def _block_of(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is an argument of a block inside `op`."""
    block = getattr(value, "block", None)
    parent = block.parent_op() if block is not None else None
    return parent is not None and (parent is op or op.is_ancestor(parent))
