"""
`arith` ops on numpy arrays, elementwise: IEEE semantics for floats
(`maximumf` propagates NaN, `cmpf` has ordered and unordered predicates),
two's complement for integers, `i1` as `bool` (arithmetic modulo 2).

```mlir
%c = arith.constant dense<1.5> : tensor<4xf32>     // np.full(4, 1.5, float32)
%s = arith.addf %x, %c : tensor<4xf32>             // x + c
%m = arith.cmpf olt, %s, %x : tensor<4xf32>        // s < x, an i1 (bool) tensor
```
"""

import math
from collections.abc import Callable

import numpy as np
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    Builtin,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntegerAttr,
)
from xdsl.ir import Attribute, Operation

from hyperoffload.evaluators.numeric.core import (
    Fail,
    Value,
    dtype_of,
    is_bf16,
    shape_of,
)
from hyperoffload.evaluators.numeric.frame import Frame, OpImpls
from hyperoffload.support.arrays import from_bf16_bits, to_bf16_bits

ARITH = OpImpls()


def unsigned(array: Value) -> Value:
    """A signed integer array read as unsigned."""
    if array.dtype.kind == "i":
        return array.astype(np.dtype(f"u{array.dtype.itemsize}"))
    return array


def signed(array: Value) -> Value:
    """An `i1` true is -1 when read as a signed integer."""
    if array.dtype == np.bool_:
        return -array.astype(np.int8)
    return array


def _maximumf(a: Value, b: Value) -> Value:
    """IEEE maximum: NaN propagates, +0 > -0."""
    equal = np.where(np.signbit(a), b, a)
    return np.where(
        np.isnan(a) | np.isnan(b), a + b, np.where(a == b, equal, np.maximum(a, b))
    )


def _minimumf(a: Value, b: Value) -> Value:
    """IEEE minimum: NaN propagates, -0 < +0."""
    equal = np.where(np.signbit(a), a, b)
    return np.where(
        np.isnan(a) | np.isnan(b), a + b, np.where(a == b, equal, np.minimum(a, b))
    )


def _div_trunc(a: Value, b: Value) -> Value:
    """Signed integer division rounding toward zero."""
    quotient = np.floor_divide(a, b)
    inexact = (a - quotient * b != 0) & ((a < 0) != (b < 0))
    return quotient + inexact.astype(quotient.dtype)


_FLOAT_BINARY: dict[str, Callable[[Value, Value], Value]] = {
    "arith.addf": lambda a, b: a + b,
    "arith.subf": lambda a, b: a - b,
    "arith.mulf": lambda a, b: a * b,
    "arith.divf": lambda a, b: a / b,
    "arith.remf": lambda a, b: np.fmod(a, b),
    "arith.maximumf": _maximumf,
    "arith.minimumf": _minimumf,
    "arith.maxnumf": lambda a, b: np.fmax(a, b),
    "arith.minnumf": lambda a, b: np.fmin(a, b),
}

_INT_BINARY: dict[str, Callable[[Value, Value], Value]] = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": _div_trunc,
    "arith.divui": lambda a, b: unsigned(a) // unsigned(b),
    "arith.ceildivsi": lambda a, b: -np.floor_divide(-a, b),
    "arith.ceildivui": lambda a, b: -(-unsigned(a) // unsigned(b)),
    "arith.floordivsi": lambda a, b: np.floor_divide(a, b),
    "arith.remsi": lambda a, b: np.fmod(a, b),
    "arith.remui": lambda a, b: unsigned(a) % unsigned(b),
    "arith.maxsi": lambda a, b: np.maximum(a, b),
    "arith.minsi": lambda a, b: np.minimum(a, b),
    "arith.maxui": lambda a, b: np.maximum(unsigned(a), unsigned(b)),
    "arith.minui": lambda a, b: np.minimum(unsigned(a), unsigned(b)),
    "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b,
    "arith.xori": lambda a, b: a ^ b,
    "arith.shli": lambda a, b: np.left_shift(a, b),
    "arith.shrsi": lambda a, b: np.right_shift(a, b),
    "arith.shrui": lambda a, b: np.right_shift(unsigned(a), unsigned(b)),
}


def _with_i1(fn: Callable[[Value, Value], Value]) -> Callable[[Value, Value], Value]:
    """Integer arithmetic on `i1` is arithmetic modulo 2."""

    def apply(a: Value, b: Value) -> Value:
        if a.dtype != np.bool_:
            return fn(a, b)
        result: Value = fn(a.astype(np.uint8), b.astype(np.uint8)) & 1
        return result.astype(np.bool_)

    return apply


for _name, _fn in _FLOAT_BINARY.items():
    ARITH.binary(_name, _fn)
for _name, _fn in _INT_BINARY.items():
    ARITH.binary(_name, _with_i1(_fn))
ARITH.unary("arith.negf", lambda a: np.negative(a))


_CMPF: dict[str, Callable[[Value, Value], Value]] = {
    "false": lambda a, b: np.zeros(np.broadcast(a, b).shape, np.bool_),
    "oeq": lambda a, b: a == b,
    "ogt": lambda a, b: a > b,
    "oge": lambda a, b: a >= b,
    "olt": lambda a, b: a < b,
    "ole": lambda a, b: a <= b,
    "one": lambda a, b: (a != b) & ~np.isnan(a) & ~np.isnan(b),
    "ord": lambda a, b: ~np.isnan(a) & ~np.isnan(b),
    "ueq": lambda a, b: (a == b) | np.isnan(a) | np.isnan(b),
    "ugt": lambda a, b: ~(a <= b),
    "uge": lambda a, b: ~(a < b),
    "ult": lambda a, b: ~(a >= b),
    "ule": lambda a, b: ~(a > b),
    "une": lambda a, b: a != b,
    "uno": lambda a, b: np.isnan(a) | np.isnan(b),
    "true": lambda a, b: np.ones(np.broadcast(a, b).shape, np.bool_),
}

_CMPI: dict[str, Callable[[Value, Value], Value]] = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "slt": lambda a, b: signed(a) < signed(b),
    "sle": lambda a, b: signed(a) <= signed(b),
    "sgt": lambda a, b: signed(a) > signed(b),
    "sge": lambda a, b: signed(a) >= signed(b),
    "ult": lambda a, b: unsigned(a) < unsigned(b),
    "ule": lambda a, b: unsigned(a) <= unsigned(b),
    "ugt": lambda a, b: unsigned(a) > unsigned(b),
    "uge": lambda a, b: unsigned(a) >= unsigned(b),
}


@ARITH.impl("arith.cmpf")
def _cmpf(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, arith.CmpfOp)
    predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    return [_CMPF[predicate](args[0], args[1])]


@ARITH.impl("arith.cmpi")
def _cmpi(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, arith.CmpiOp)
    predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    return [_CMPI[predicate](args[0], args[1])]


@ARITH.impl("arith.select")
def _select(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    return [np.where(args[0], args[1], args[2])]


@ARITH.impl(
    "arith.extf",
    "arith.truncf",
    "arith.fptosi",
    "arith.trunci",
    "arith.extui",
    "arith.uitofp",
    "arith.fptoui",
    "arith.extsi",
    "arith.sitofp",
    "arith.index_cast",
    "arith.index_castui",
)
def _convert(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    """Conversions: reinterpret the source's signedness, then cast to the result."""
    source = args[0]
    target = dtype_of(op.results[0].type)
    if op.name in ("arith.extui", "arith.uitofp", "arith.index_castui"):
        source = unsigned(source)
    elif op.name in ("arith.extsi", "arith.sitofp", "arith.index_cast"):
        source = signed(source)
    elif op.name == "arith.fptoui":
        source = np.trunc(source).astype(np.dtype(f"u{max(target.itemsize, 1)}"))
    if target == np.bool_ and source.dtype.kind in "iu":
        source = (source & 1).astype(np.bool_)
    return [source]


@ARITH.impl("arith.bitcast")
def _bitcast(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    source = args[0]
    if is_bf16(op.operands[0].type):
        source = to_bf16_bits(source)  # exact: bf16 values are held rounded
    if is_bf16(op.results[0].type):
        return [from_bf16_bits(source.view(np.uint16))]
    return [source.view(dtype_of(op.results[0].type))]


def _resource_array(attr: DenseResourceAttr, type_: Attribute) -> Value:
    """The contents of a `dense_resource` blob: hex, 4-byte alignment header, data."""
    interface = Builtin.get_interface(OpAsmDialectInterface)
    key = attr.resource_handle.data
    blob = interface.lookup(key) if interface is not None else None
    if blob is None:
        raise Fail(f"no data for dense_resource<{key}>")
    raw = bytes.fromhex(blob.removeprefix("0x"))[4:]
    if is_bf16(type_):
        array = from_bf16_bits(np.frombuffer(raw, "<u2"))
    elif dtype_of(type_) == np.bool_:
        array = np.frombuffer(raw, np.uint8) != 0
    else:
        array = np.frombuffer(raw, dtype_of(type_).newbyteorder("<"))
    return _fill_shape(array, shape_of(type_))


def _fill_shape(flat: Value, shape: tuple[int, ...]) -> Value:
    """`flat` in `shape`, a single value splatted."""
    if flat.size == math.prod(shape):
        return flat.reshape(shape).copy()
    if flat.size == 1:
        return np.full(shape, flat.reshape(()), flat.dtype)
    raise Fail(f"{flat.size} values do not fill shape {shape}")


@ARITH.impl("arith.constant")
def _constant(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, arith.ConstantOp)
    value, type_ = op.value, op.result.type
    if isinstance(value, IntegerAttr | FloatAttr):
        return [np.asarray(value.value.data)]
    if isinstance(value, DenseIntOrFPElementsAttr) and len(value) == 1:
        # a splat, held as its one element: a read-only view, never expanded
        one = np.asarray(value.get_values()).astype(dtype_of(type_))
        return [np.broadcast_to(one.reshape(()), shape_of(type_))]
    if isinstance(value, DenseIntOrFPElementsAttr):
        flat = np.asarray(value.get_values()).astype(dtype_of(type_))
        return [_fill_shape(flat, shape_of(type_))]
    return [_resource_array(value, type_)]
