"""
The op cost model: FLOPs and HBM bytes from static shapes, time from a
roofline on the hardware model plus a fixed per-op overhead.

```mlir
%r = linalg.generic {indexing_maps = [...], iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%a, %b : tensor<64x32xf32>, tensor<32x16xf32>) outs(%c : tensor<64x16xf32>) ...
```
costs 64·16·32 iterations x 2 body FLOPs (mulf, addf), reads `a`, `b`, `c`
and writes `r`; its time is `max(flops / (peak · eff), bytes / (bw · eff)) +
overhead`. Estimates, not measurements: efficiency factors come from the
hardware file.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import cast

from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntegerType,
    ShapedType,
    TensorType,
)
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr

from hyperoffload.diagnostics import location_of
from hyperoffload.dialects.hyperoffload import RemoteType
from hyperoffload.hardware import Hardware

VIEW_OPS: tuple[type[Operation], ...] = (
    tensor.CollapseShapeOp,
    tensor.ExpandShapeOp,
    tensor.ExtractSliceOp,
    tensor.CastOp,
    tensor.ReshapeOp,
)
"""Ops whose result is a view of their first operand: no time, no allocation."""

FREE_OPS: tuple[type[Operation], ...] = (
    tensor.EmptyOp,
    arith.ConstantOp,
    func.ReturnOp,
)
"""Ops that take no device time of their own."""

_FREE_NAMES = frozenset({"cf.assert", "tensor.dim", "ml_program.global_load_const"})


class CostModelError(ValueError):
    """A tensor whose size the model cannot know (dynamic shape)."""


def element_bytes(element_type: Attribute) -> int:
    """Bytes of one element; i1 and other sub-byte types take a byte."""
    if isinstance(element_type, AnyFloat):
        return max(1, element_type.bitwidth // 8)
    if isinstance(element_type, IntegerType):
        width: int = element_type.bitwidth
        return max(1, (width + 7) // 8)
    if isinstance(element_type, IndexType):
        return 8
    raise CostModelError(f"unsupported element type {element_type}")


_DTYPE_NAMES: dict[Attribute, str] = {}


def dtype_name(element_type: Attribute) -> str:
    """`f32`, `bf16`, ... (printed once per type: printing is slow)."""
    if element_type not in _DTYPE_NAMES:
        _DTYPE_NAMES[element_type] = str(element_type)
    return _DTYPE_NAMES[element_type]


def tensor_type(value: SSAValue) -> TensorType[Attribute] | None:
    """The tensor type of a value (the held tensor for a remote copy)."""
    value_type = value.type
    if isinstance(value_type, RemoteType):
        return value_type.tensor
    if isinstance(value_type, TensorType):
        return cast(TensorType[Attribute], value_type)
    return None


_SIZES: dict[TensorType[Attribute], int] = {}
"""Bytes of each static tensor type seen (types are interned values)."""


def tensor_bytes(value: SSAValue, op: Operation) -> int:
    """Bytes of a tensor value; a clear error for dynamic shapes."""
    value_type = tensor_type(value)
    if value_type is None:
        return 0
    known = _SIZES.get(value_type)
    if known is not None:
        return known
    shape = value_type.get_shape()
    if any(dim < 0 for dim in shape):
        raise CostModelError(
            f"{location_of(op)}: error: cannot size {value_type} of '{op.name}': "
            "dynamic shapes are not supported (export with static shapes)"
        )
    _SIZES[value_type] = size = prod(shape) * element_bytes(value_type.element_type)
    return size


@dataclass(frozen=True)
class OpCost:
    flops: float
    bytes: int
    time_s: float
    known: bool = True


_NO_COST = OpCost(0.0, 0, 0.0)

_BODY_FREE = frozenset(
    {
        "linalg.yield",
        "linalg.index",
        "arith.constant",
        "arith.index_cast",
        "arith.bitcast",
        "cf.assert",
    }
)


def _body_flops(op: Operation) -> int:
    """Scalar ops executed per iteration of a linalg body (casts count; a copy is 0)."""
    count = 0
    for region in op.regions:
        for inner in region.walk():
            if inner.name not in _BODY_FREE:
                count += 1
    return count


def _domain(op: LinalgStructuredOperation) -> int:
    """Iterations of the loop nest: each loop's extent from an operand dim it indexes."""
    ranges: dict[int, int] = {}
    for value, map_attr in zip(op.operands, op.get_indexing_maps(), strict=False):
        value_type = tensor_type(value)
        if value_type is None:
            continue
        for expr, extent in zip(
            map_attr.data.results, value_type.get_shape(), strict=False
        ):
            if isinstance(expr, AffineDimExpr):
                ranges.setdefault(expr.position, extent)
    return prod(ranges.values())


class CostModel:
    """Costs ops on one hardware model; remembers the ops it did not know."""

    def __init__(self, hardware: Hardware):
        self.hardware = hardware
        self.unknown_ops: set[str] = set()
        self._costs: dict[Operation, OpCost] = {}

    def is_view(self, op: Operation) -> bool:
        return isinstance(op, VIEW_OPS)

    def cost(self, op: Operation) -> OpCost:
        """The cost of `op` (remembered: an op costs the same wherever it moves)."""
        if op not in self._costs:
            self._costs[op] = self._cost(op)
        return self._costs[op]

    def _cost(self, op: Operation) -> OpCost:
        if isinstance(op, VIEW_OPS + FREE_OPS) or op.name in _FREE_NAMES:
            return _NO_COST
        operands = [v for v in dict.fromkeys(op.operands) if tensor_type(v) is not None]
        results = [v for v in op.results if tensor_type(v) is not None]
        if not operands and not results:
            return _NO_COST  # scalar bookkeeping on the host
        nbytes = sum(tensor_bytes(v, op) for v in (*operands, *results))
        if isinstance(op, LinalgStructuredOperation):
            flops = float(_domain(op) * _body_flops(op))
            return self._roofline(op, flops, nbytes)
        if op.dialect_name() in ("arith", "math") and results:
            result_type = tensor_type(results[0])
            assert result_type is not None
            return self._roofline(op, float(prod(result_type.get_shape())), nbytes)
        if isinstance(op, tensor.InsertSliceOp):
            moved = 2 * tensor_bytes(op.source, op)
            return self._roofline(op, 0.0, moved)
        if op.dialect_name() == "tensor":
            return self._roofline(op, 0.0, nbytes)
        self.unknown_ops.add(op.name)
        return self._roofline(op, 0.0, nbytes, known=False)

    def _roofline(
        self, op: Operation, flops: float, nbytes: int, known: bool = True
    ) -> OpCost:
        hw = self.hardware
        dtype = _dtype_of(op)
        compute = flops / (hw.peak(dtype) * hw.compute_efficiency)
        memory = nbytes / (hw.hbm_bandwidth * hw.memory_efficiency)
        return OpCost(flops, nbytes, max(compute, memory) + hw.op_overhead_s, known)


def _dtype_of(op: Operation) -> str:
    for value in (*op.results, *op.operands):
        value_type = value.type
        if isinstance(value_type, ShapedType):
            element = getattr(value_type, "element_type", None)
            if isinstance(element, Attribute):
                return dtype_name(element)
    return "f32"
