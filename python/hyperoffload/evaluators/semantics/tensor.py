"""
`tensor` ops over an `ArrayBackend`: creation, reshapes, slices and element
access; dynamic sizes, offsets and strides are read from their operands.

```mlir
%e = tensor.empty() : tensor<2x3xf32>                                  // zeros when read
%s = tensor.extract_slice %x[0, 1] [2, 2] [1, 1] : tensor<2x3xf32> to tensor<2x2xf32>
%v = tensor.extract %x[%i, %j] : tensor<2x3xf32>                       // x[i, j]
%p = tensor.pad %x low[0, 1] high[0, 1] {                              // zeros around x
^bb0(%i: index, %j: index):
  tensor.yield %zero : f32
} : tensor<2x3xf32> to tensor<2x5xf32>
```

Whether a result is a view of its source or a copy is the backend's
(`ArrayBackend.part`, `reshape`): numpy copies slices, torch keeps views, as
bufferization makes them; `insert_slice` and `insert` write into a copy of
their destination on both.
"""

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import tensor
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation, SSAValue

from hyperoffload.evaluators.op_registry import Fail, OpRegistry
from hyperoffload.evaluators.semantics.backend import Array, ArrayBackend, Scope
from hyperoffload.evaluators.semantics.types import shape_of


def resolve(
    op: Operation, static: Sequence[int], dynamic: Sequence[SSAValue], args: list[Array]
) -> list[int]:
    """Static sizes with the dynamic ones (`< 0`) read from the operands `dynamic` names."""
    by_value = dict(zip(op.operands, args, strict=False))
    values = iter(dynamic)
    return [int(by_value[next(values)]) if s < 0 else s for s in static]


def pad_value(op: tensor.PadOp) -> SSAValue | float | int:
    """
    What `op` pads with: the value its body yields, defined above the op, or
    the constant the body defines; `NotImplementedError` for a padding
    computed from the positions.
    """
    yielded = op.region.block.last_op
    assert yielded is not None
    value = yielded.operands[0]
    owner = value.owner
    if not (isinstance(owner, Operation) and owner.parent_op() is op):
        return value
    constant = owner.properties.get("value") or owner.attributes.get("value")
    if owner.name == "arith.constant" and isinstance(constant, FloatAttr | IntegerAttr):
        return constant.value.data
    raise NotImplementedError("a tensor.pad whose padding depends on the position")


def pad_widths(
    op: tensor.PadOp, read: Callable[[SSAValue], int]
) -> list[tuple[int, int]]:
    """The (low, high) padding of each dimension, dynamic ones read with `read`."""
    low_values, high_values = iter(op.low), iter(op.high)
    low = [read(next(low_values)) if v < 0 else v for v in op.static_low.get_values()]
    high = [
        read(next(high_values)) if v < 0 else v for v in op.static_high.get_values()
    ]
    return list(zip(low, high, strict=True))


def _slices(
    xp: ArrayBackend,
    op: tensor.ExtractSliceOp | tensor.InsertSliceOp,
    args: list[Array],
) -> tuple[slice, ...]:
    offsets = resolve(op, op.static_offsets.get_values(), op.offsets, args)
    sizes = resolve(op, op.static_sizes.get_values(), op.sizes, args)
    strides = resolve(op, op.static_strides.get_values(), op.strides, args)
    if any(s <= 0 for s in strides):
        raise Fail(f"slice strides must be positive, not {strides}")
    return tuple(
        slice(o, o + (n - 1) * s + 1 if n else o, s)
        for o, n, s in zip(offsets, sizes, strides, strict=True)
    )


def register(registry: OpRegistry[Any, Any], xp: ArrayBackend) -> None:
    """Fill `registry` with the `tensor` ops on `xp`."""

    @registry.impl("tensor.empty")
    def _empty(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        assert isinstance(op, tensor.EmptyOp)
        type_ = op.tensor.type
        return [xp.empty(resolve(op, shape_of(type_), op.dynamic_sizes, args), type_)]

    @registry.impl("tensor.cast")
    def _cast(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        return [args[0]]

    @registry.impl("tensor.collapse_shape")
    def _collapse(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        shape = [max(s, -1) for s in shape_of(op.results[0].type)]
        return [xp.reshape(args[0], shape)]

    @registry.impl("tensor.expand_shape")
    def _expand(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        assert isinstance(op, tensor.ExpandShapeOp)
        static = op.static_output_shape.get_values()
        shape = resolve(op, static, op.dynamic_output_shape, args)
        return [xp.reshape(args[0], shape)]

    @registry.impl("tensor.reshape")
    def _reshape(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        sizes = [int(args[1][k]) for k in range(args[1].shape[0])]
        return [xp.reshape(args[0], sizes)]

    @registry.impl("tensor.extract_slice")
    def _extract_slice(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        assert isinstance(op, tensor.ExtractSliceOp)
        part = xp.readable(scope, args[0])[_slices(xp, op, args)]
        shape = shape_of(op.result.type)
        if all(s >= 0 for s in shape):
            part = part.reshape(shape)  # drops the unit dimensions of a rank reduction
        return [xp.part(part)]

    @registry.impl("tensor.insert_slice")
    def _insert_slice(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        assert isinstance(op, tensor.InsertSliceOp)
        slices = _slices(xp, op, args)
        dest = xp.copy(xp.readable(scope, args[1]))
        dest[slices] = xp.readable(scope, args[0]).reshape(dest[slices].shape)
        return [dest]

    @registry.impl("tensor.pad")
    def _pad(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        assert isinstance(op, tensor.PadOp)
        try:
            padding = pad_value(op)
        except NotImplementedError as err:
            raise Fail(str(err)) from None
        if isinstance(padding, SSAValue):
            padding = xp.outer(scope, op, padding, args)
        by_value = dict(zip(op.operands, args, strict=False))
        widths = pad_widths(op, lambda v: int(by_value[v]))
        return [xp.pad(xp.readable(scope, args[0]), widths, padding)]

    @registry.impl("tensor.concat")
    def _concat(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        assert isinstance(op, tensor.ConcatOp)
        parts = [xp.readable(scope, a) for a in args]
        return [xp.concat(parts, op.dim.value.data)]

    @registry.impl("tensor.extract")
    def _extract(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        return [xp.gather(scope, xp.readable(scope, args[0]), args[1:])]

    @registry.impl("tensor.insert")
    def _insert(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        dest = xp.copy(xp.readable(scope, args[1]))
        dest[tuple(int(i) for i in args[2:])] = args[0]
        return [dest]

    @registry.impl("tensor.dim")
    def _dim(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        return [xp.index(args[0].shape[int(args[1])])]

    @registry.impl("tensor.from_elements")
    def _from_elements(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        return [xp.stack(scope, args).reshape(shape_of(op.results[0].type))]

    @registry.impl("tensor.splat")
    def _splat(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        assert isinstance(op, tensor.SplatOp)
        shape = resolve(op, shape_of(op.result.type), op.dynamicSizes, args)
        return [xp.splat(scope, args[0], shape)]
