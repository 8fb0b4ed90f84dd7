"""
The INT8 codec of compressed transfers spelled in linalg on tensors, for
`convert-hyperoffload-to-linalg`: the same arithmetic as
`hyperoffload.support.quantize`, op for op, so that a lowered program run
natively computes the bits the numpy evaluator computes.

Quantising `%x : tensor<2x64xf32>` (one row per vector along the last
dimension):
```mlir
%fill = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
%absmax = linalg.generic {iterator_types = ["parallel", "reduction"]}     // max |x| per row
    ins(%x : tensor<2x64xf32>) outs(%fill : tensor<2xf32>) {..math.absf, arith.maximumf..}
%scales = linalg.generic {iterator_types = ["parallel"]}                  // min(absmax / 127, 65504), up to an f16
    ins(%absmax : tensor<2xf32>) outs(%e16 : tensor<2xf16>)
    {..arith.divf, arith.minimumf, arith.truncf, arith.cmpf olt, arith.bitcast, arith.addi, arith.select..}
%q = linalg.generic {iterator_types = ["parallel", "parallel"]}           // clamp(roundeven(x / s)), 0 where s = 0
    ins(%x, %scales : tensor<2x64xf32>, tensor<2xf16>) outs(%e8 : tensor<2x64xi8>)
    {..arith.divf, math.roundeven, arith.maximumf, arith.minimumf, arith.select, arith.fptosi..}
```
and dequantising is one elementwise generic (`arith.sitofp`, `arith.extf`,
`arith.mulf`, and `arith.truncf` to a narrower element type). The
arithmetic runs in f32 (f64 for f64 tensors).
"""

from collections.abc import Callable, Sequence
from typing import cast

from xdsl.dialects import arith, math, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    FloatAttr,
    IntegerAttr,
    TensorType,
    f16,
    f32,
    f64,
    i8,
    i16,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import FillOp, GenericOp, YieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from hyperoffload.support.quantize import QMAX, SCALE_MAX

Body = Callable[[Sequence[SSAValue]], tuple[list[Operation], SSAValue]]
"""Builds a linalg body from its block arguments: its ops and the value it yields."""


def _work_type(element: Attribute) -> AnyFloat:
    """The type the codec computes in: f64 for f64, else f32."""
    return f64 if element == f64 else f32


def _constant(value: float, typ: AnyFloat) -> arith.ConstantOp:
    return arith.ConstantOp(FloatAttr(value, typ))


def _converted(value: SSAValue, typ: AnyFloat) -> tuple[list[Operation], SSAValue]:
    """`value` (a float) as `typ`: extended, truncated, or itself."""
    source = value.type
    assert isinstance(source, AnyFloat)
    if source == typ:
        return [], value
    if source.bitwidth < typ.bitwidth:
        op: Operation = arith.ExtFOp(value, typ)
    else:
        op = arith.TruncFOp(value, typ)
    return [op], op.results[0]


def _generic(
    inputs: Sequence[SSAValue],
    init: SSAValue,
    maps: Sequence[AffineMap],
    reduction: bool,
    body: Body,
) -> tuple[list[Operation], SSAValue]:
    """A linalg.generic over `inputs` into `init`; the last loop reduces if asked."""
    out_type = _tensor(init)
    block = Block(arg_types=[_tensor(v).element_type for v in (*inputs, init)])
    ops, result = body(block.args)
    block.add_ops([*ops, YieldOp(result)])
    loops = maps[0].num_dims
    iterators = [IteratorTypeAttr.parallel()] * loops
    if reduction:
        iterators[-1] = IteratorTypeAttr.reduction()
    generic = GenericOp(
        inputs,
        [init],
        Region(block),
        [AffineMapAttr(m) for m in maps],
        iterators,
        [out_type],
    )
    return [generic], generic.results[0]


def _tensor(value: SSAValue) -> TensorType[Attribute]:
    value_type: Attribute = value.type
    assert isinstance(value_type, TensorType)
    return cast(TensorType[Attribute], value_type)


def _empty(shape: Sequence[int], element: Attribute) -> tensor.EmptyOp:
    return tensor.EmptyOp([], TensorType(element, shape))


def compressed_types(
    tensor_type: TensorType[Attribute],
) -> tuple[TensorType[Attribute], TensorType[Attribute]]:
    """The types of a tensor's int8 values and of its f16 scales (one per row)."""
    shape = tensor_type.get_shape()
    return TensorType(i8, shape), TensorType(f16, shape[:-1])


def _maps(rank: int) -> tuple[AffineMap, AffineMap]:
    """The identity over `rank` loops, and its projection on the rows (the last dim dropped)."""
    rows = AffineMap(rank, 0, tuple(AffineExpr.dimension(i) for i in range(rank - 1)))
    return AffineMap.identity(rank), rows


def quantize(
    x: SSAValue, name: str | None = None
) -> tuple[list[Operation], SSAValue, SSAValue]:
    """
    The ops quantising `x` (a float tensor of rank 1 or more), its int8
    values and f16 scales (named `{name}_q`, `{name}_scales`).
    """
    x_type = _tensor(x)
    assert x_type.get_shape(), "a 0-d tensor has no rows"
    shape = tuple(x_type.get_shape())
    element = x_type.element_type
    work = _work_type(element)
    identity, rows = _maps(len(shape))
    row_identity = AffineMap.identity(len(shape) - 1)
    zero = _constant(0.0, work)
    row_empty = _empty(shape[:-1], work)
    fill = FillOp([zero.result], [row_empty.tensor], [row_empty.tensor.type])
    ops: list[Operation] = [zero, row_empty, fill]

    def absmax(args: Sequence[SSAValue]) -> tuple[list[Operation], SSAValue]:
        widen, value = _converted(args[0], work)
        magnitude = math.AbsFOp(value)
        largest = arith.MaximumfOp(args[1], magnitude.result)
        return [*widen, magnitude, largest], largest.result

    reduce_ops, largest = _generic([x], fill.res[0], [identity, rows], True, absmax)

    def scale(args: Sequence[SSAValue]) -> tuple[list[Operation], SSAValue]:
        qmax, limit = _constant(float(QMAX), work), _constant(SCALE_MAX, work)
        ratio = arith.DivfOp(args[0], qmax.result)
        wanted = arith.MinimumfOp(ratio.result, limit.result)
        narrow, nearest = _converted(wanted.result, f16)
        widen, back = _converted(nearest, work)
        below = arith.CmpfOp(back, wanted.result, "olt")  # rounded down: one step up
        bits = arith.BitcastOp(nearest, i16)
        one = arith.ConstantOp(IntegerAttr(1, i16))
        up_bits = arith.AddiOp(bits.result, one.result)
        up = arith.BitcastOp(up_bits.result, f16)
        chosen = arith.SelectOp(below.result, up.result, nearest)
        body: list[Operation] = [qmax, limit, ratio, wanted, *narrow, *widen, below]
        body += [bits, one, up_bits, up, chosen]
        return body, chosen.result

    scale_empty = _empty(shape[:-1], f16)
    scale_ops, scales = _generic(
        [largest], scale_empty.tensor, [row_identity, row_identity], False, scale
    )

    def values(args: Sequence[SSAValue]) -> tuple[list[Operation], SSAValue]:
        widen, value = _converted(args[0], work)
        widen_scale, step = _converted(args[1], work)
        low, high = _constant(-float(QMAX), work), _constant(float(QMAX), work)
        nothing = _constant(0.0, work)
        ratio = arith.DivfOp(value, step)
        rounded = math.RoundEvenOp(ratio.result)
        above = arith.MaximumfOp(rounded.result, low.result)
        within = arith.MinimumfOp(above.result, high.result)
        positive = arith.CmpfOp(step, nothing.result, "ogt")
        chosen = arith.SelectOp(positive.result, within.result, nothing.result)
        integer = arith.FPToSIOp(chosen.result, i8)
        body: list[Operation] = [*widen, *widen_scale, low, high, nothing, ratio]
        body += [rounded, above, within, positive, chosen, integer]
        return body, integer.result

    q_empty = _empty(shape, i8)
    q_ops, q = _generic(
        [x, scales], q_empty.tensor, [identity, rows, identity], False, values
    )
    ops += [*reduce_ops, scale_empty, *scale_ops, q_empty, *q_ops]
    if name:
        largest.name_hint, scales.name_hint = f"{name}_absmax", f"{name}_scales"
        q.name_hint = f"{name}_q"
    return ops, q, scales


def dequantize(
    q: SSAValue, scales: SSAValue, element: Attribute
) -> tuple[list[Operation], SSAValue]:
    """The ops decoding int8 values `q` at `scales` into a tensor of `element`, and it."""
    assert isinstance(element, AnyFloat)
    shape = tuple(_tensor(q).get_shape())
    work = _work_type(element)
    identity, rows = _maps(len(shape))

    def decode(args: Sequence[SSAValue]) -> tuple[list[Operation], SSAValue]:
        wide = arith.SIToFPOp(args[0], work)
        widen_scale, step = _converted(args[1], work)
        product = arith.MulfOp(wide.result, step)
        narrow, value = _converted(product.result, element)
        return [wide, *widen_scale, product, *narrow], value

    empty = _empty(shape, element)
    ops, decoded = _generic(
        [q, scales], empty.tensor, [identity, rows, identity], False, decode
    )
    return [empty, *ops], decoded
