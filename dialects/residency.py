"""
Function-wide residency invariants of the `hyperoffload` dialect.

Per-op verifiers see one op; these invariants need a whole block:

- no compute op reads a remote copy (only `prefetch`, calls and terminators,
  which forward values, may take an `!hyperoffload.remote` operand);
- nothing in a block uses a tensor after its `detach`: if a `store` before the
  detach persisted it, the later use must read a `prefetch` of that copy;
  otherwise the detach dropped the only copy of live data;
- a `hyperoffload.tier` argument attribute names a tier and agrees with the
  argument's type.

```mlir
%h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
hyperoffload.detach %x : tensor<4xf32>
%y = arith.addf %x, %x : tensor<4xf32>   // error: %x used after its detach
```

The check is linear in the size of the IR.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import DictionaryAttr, TensorType
from xdsl.dialects.func import CallOp, FuncOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import IsTerminator

from hyperoffload.dialects.hyperoffload import (
    TIER_ARG_ATTR,
    DetachOp,
    PrefetchOp,
    RemoteType,
    StoreOp,
    TierAttr,
)
from hyperoffload.dialects.provenance import written_as

ErrorFactory = Callable[[Operation, str], Exception]
"""Builds the exception to raise for a violation at an op."""


def _may_take_remote(op: Operation) -> bool:
    """
    Ops that may take a remote copy without computing on it: our own ops
    (their verifiers check their operands), calls and terminators (which
    forward values).
    """
    return isinstance(op, PrefetchOp | StoreOp | DetachOp | CallOp) or op.has_trait(
        IsTerminator, value_if_unregistered=False
    )


def describe(value: SSAValue) -> str:
    """`%name` when the value has a name, else its type."""
    return f"%{value.name_hint}" if value.name_hint else f"a value of type {value.type}"


def ancestor_in(block: Block, op: Operation) -> Operation | None:
    """The op of `block` that is `op` or contains it, if any."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def _check_compute_reads(op: Operation, error: ErrorFactory) -> None:
    if _may_take_remote(op):
        return
    for operand in op.operands:
        if isinstance(operand.type, RemoteType):
            raise error(
                op,
                f"{written_as(op)} reads {describe(operand)}, a remote copy "
                f"({operand.type}); compute reads only device-resident tensors, "
                "prefetch it first",
            )


def _check_tier_arguments(func: FuncOp, error: ErrorFactory) -> None:
    if func.arg_attrs is None or not func.body.blocks:
        return
    for arg, attrs in zip(func.args, func.arg_attrs.data, strict=False):
        assert isinstance(attrs, DictionaryAttr)
        tier = attrs.data.get(TIER_ARG_ATTR)
        if tier is None:
            continue
        where = f"argument #{arg.index} of @{func.sym_name.data}"
        if not isinstance(tier, TierAttr):
            raise error(
                func, f"'{TIER_ARG_ATTR}' on {where} must be a #hyperoffload.tier"
            )
        if isinstance(arg.type, RemoteType):
            if arg.type.tier != tier.tier:
                raise error(
                    func,
                    f"'{TIER_ARG_ATTR}' on {where} says '{tier.tier}' but its "
                    f"type {arg.type} lives in '{arg.type.tier}'",
                )
        elif not isinstance(arg.type, TensorType):
            raise error(
                func, f"'{TIER_ARG_ATTR}' on {where} needs a tensor, got {arg.type}"
            )


def _check_detaches(block: Block, error: ErrorFactory) -> None:
    detaches = [op for op in block.ops if isinstance(op, DetachOp)]
    if not detaches:
        return
    index = {op: i for i, op in enumerate(block.ops)}
    for detach in detaches:
        value = detach.value
        users = [
            (use.operation, ancestor_in(block, use.operation)) for use in value.uses
        ]
        persisted = any(
            isinstance(user, StoreOp)
            and ancestor is not None
            and index[ancestor] < index[detach]
            for user, ancestor in users
        )
        for user, ancestor in users:
            if ancestor is detach:
                continue
            if ancestor is not None and index[ancestor] < index[detach]:
                continue
            if persisted:
                raise error(
                    user,
                    f"{describe(value)} is used after its detach; read a "
                    "prefetch of its stored copy instead",
                )
            raise error(
                detach,
                f"detach of live data that no store has persisted: "
                f"{describe(value)} is still used by {written_as(user)} after it",
            )


def verify_residency(root: Operation, error: ErrorFactory) -> None:
    """Raise `error(op, message)` at the first op that breaks an invariant."""
    for op in root.walk():
        _check_compute_reads(op, error)
        if isinstance(op, FuncOp):
            _check_tier_arguments(op, error)
        for region in op.regions:
            for block in region.blocks:
                _check_detaches(block, error)
