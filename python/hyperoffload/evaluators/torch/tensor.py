"""
`tensor` ops as torch operations: creation, reshapes, slices and element
access; dynamic sizes, offsets and strides are read from their operands.

```mlir
%e = tensor.empty() : tensor<2x3xf32>                                  // lazy: no memory until read
%s = tensor.extract_slice %x[0, 1] [2, 2] [1, 1] : tensor<2x3xf32> to tensor<2x2xf32>  // a view
%v = tensor.extract %w[%i, %j] : tensor<8x3xf32>                       // in a linalg body: a gather
```

Reshapes and slices are views of their source, as bufferization makes them;
`insert_slice` and `insert` write into a copy of their destination.
"""

from collections.abc import Sequence

import torch
from xdsl.dialects import tensor
from xdsl.ir import Operation, SSAValue

from hyperoffload.evaluators.numeric.tensor import pad_value, pad_widths
from hyperoffload.evaluators.torch.registry import Scope, TorchImpls
from hyperoffload.evaluators.torch.values import (
    Fail,
    is_lazy,
    lazy,
    shape_of,
    torch_dtype,
)

TENSOR = TorchImpls()

Tensor = torch.Tensor


def _resolve(
    op: Operation,
    static: Sequence[int],
    dynamic: Sequence[SSAValue],
    args: list[Tensor],
) -> list[int]:
    """Static sizes with the dynamic ones (`< 0`) read from the operands `dynamic` names."""
    by_value = dict(zip(op.operands, args, strict=True))
    values = iter(dynamic)
    return [int(by_value[next(values)]) if s < 0 else s for s in static]


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


@TENSOR.impl("tensor.empty")
def _empty(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    assert isinstance(op, tensor.EmptyOp)
    type_ = op.tensor.type
    shape = _resolve(op, shape_of(type_), op.dynamic_sizes, args)
    return [lazy(shape, torch_dtype(type_))]


@TENSOR.impl("tensor.cast")
def _cast(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    return [args[0]]


@TENSOR.impl("tensor.collapse_shape")
def _collapse(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    shape = [max(s, -1) for s in shape_of(op.results[0].type)]
    return [reshaped(args[0], shape)]


@TENSOR.impl("tensor.expand_shape")
def _expand(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    assert isinstance(op, tensor.ExpandShapeOp)
    static = op.static_output_shape.get_values()
    return [reshaped(args[0], _resolve(op, static, op.dynamic_output_shape, args))]


@TENSOR.impl("tensor.reshape")
def _reshape(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    sizes: list[int] = [int(args[1][k]) for k in range(args[1].shape[0])]
    return [reshaped(args[0], sizes)]


def _slices(
    op: tensor.ExtractSliceOp | tensor.InsertSliceOp, args: list[Tensor]
) -> tuple[slice, ...]:
    offsets = _resolve(op, op.static_offsets.get_values(), op.offsets, args)
    sizes = _resolve(op, op.static_sizes.get_values(), op.sizes, args)
    strides = _resolve(op, op.static_strides.get_values(), op.strides, args)
    if any(s <= 0 for s in strides):
        raise Fail(f"slice strides must be positive, not {strides}")
    return tuple(
        slice(o, o + (n - 1) * s + 1 if n else o, s)
        for o, n, s in zip(offsets, sizes, strides, strict=True)
    )


@TENSOR.impl("tensor.extract_slice")
def _extract_slice(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    assert isinstance(op, tensor.ExtractSliceOp)
    source = materialised(args[0], scope.device)
    part = source[_slices(op, args)]
    shape = shape_of(op.result.type)
    if all(s >= 0 for s in shape):
        part = part.reshape(shape)  # drops the unit dimensions of a rank reduction
    return [part]


@TENSOR.impl("tensor.insert_slice")
def _insert_slice(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    assert isinstance(op, tensor.InsertSliceOp)
    slices = _slices(op, args)
    dest = materialised(args[1], scope.device).clone()
    dest[slices] = materialised(args[0], scope.device).reshape(dest[slices].shape)
    return [dest]


@TENSOR.impl("tensor.pad")
def _pad(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    """
    The operands, then the padding value when the body yields one defined
    above it (`region_reads`).
    """
    assert isinstance(op, tensor.PadOp)
    try:
        padding = pad_value(op)
    except NotImplementedError as err:
        raise Fail(str(err)) from None
    by_value = dict(zip(op.operands, args, strict=False))
    fill = args[len(op.operands)] if isinstance(padding, SSAValue) else padding
    widths = pad_widths(op, lambda v: int(by_value[v]))
    flat = [w for low, high in reversed(widths) for w in (low, high)]
    source = materialised(args[0], scope.device)
    value = float(fill) if source.is_floating_point() else int(fill)
    return [torch.nn.functional.pad(source, flat, value=value)]


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


@TENSOR.impl("tensor.concat")
def _concat(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    assert isinstance(op, tensor.ConcatOp)
    parts = [materialised(a, scope.device) for a in args]
    return [torch.cat(parts, dim=op.dim.value.data)]


def _index(indices: Sequence[Tensor], device: torch.device) -> tuple[int | Tensor, ...]:
    """Element indices: ints where all are scalars, else tensors that broadcast (a gather)."""
    if all(i.dim() == 0 for i in indices):
        return tuple(int(i) for i in indices)
    return tuple(i.to(device) for i in indices)


@TENSOR.impl("tensor.extract")
def _extract(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    source = materialised(args[0], scope.device)
    return [source[_index(args[1:], source.device)]]


@TENSOR.impl("tensor.insert")
def _insert(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    dest = materialised(args[1], scope.device).clone()
    dest[tuple(int(i) for i in args[2:])] = args[0]
    return [dest]


@TENSOR.impl("tensor.dim")
def _dim(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    return [torch.tensor(args[0].shape[int(args[1])], dtype=torch.int64)]


@TENSOR.impl("tensor.from_elements")
def _from_elements(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    elements = torch.stack([a.to(scope.device) for a in args])
    return [elements.reshape(shape_of(op.results[0].type))]


@TENSOR.impl("tensor.splat")
def _splat(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    assert isinstance(op, tensor.SplatOp)
    shape = _resolve(op, shape_of(op.result.type), op.dynamicSizes, args)
    return [args[0].to(scope.device).expand(shape)]
