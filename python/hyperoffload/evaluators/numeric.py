"""
A numpy evaluator for small linalg-on-tensors programs that honours the
residency semantics of the `hyperoffload` dialect: compute reads only values
resident in HBM, `store` copies a tensor out, `prefetch` copies it back and
`detach` drops the device copy.

```mlir
func.func @f(%x: tensor<4xf32>, %w: !hyperoffload.remote<tensor<4xf32>>) -> tensor<4xf32> {
  %v = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
  %r = arith.addf %x, %v : tensor<4xf32>
  hyperoffload.detach %v : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
```
```python
evaluate(module).outputs          # [x + w] on random inputs (seed 0)
outputs_match_reference(module)   # True: stripping the offload ops changes nothing
```

A `linalg.generic` (and every structured linalg op, treated as one) runs the
same floating-point operations as its loop nest, in a fixed order: vectorised
over the parallel loops, sequential over the points of the reduction loops.

Approximations: `bf16` has no numpy dtype; it is computed in `float32` and
every `bf16` result is rounded back to `bf16` (as `arith-emulate-unsupported-
floats` does). Transcendental `math` ops use numpy's (or Python's `math.erf`)
implementations, `math.fma` rounds twice for `f64`, and `rsqrt` is `1/sqrt`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects import arith, cf, func, tensor
from xdsl.dialects.builtin import (
    BFloat16Type,
    Builtin,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    TensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import BroadcastOp, IndexOp, ReduceOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.traits import IsTerminator, SymbolTable
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.hints import isa

from hyperoffload.analysis.extract import ExtractionError, main_function
from hyperoffload.dialects.hyperoffload import (
    DetachOp,
    PrefetchOp,
    RemoteType,
    StoreOp,
)
from hyperoffload.dialects.residency import describe
from hyperoffload.ir.diagnostics import location_of
from hyperoffload.ir.strip import strip_offload_ops

Value: TypeAlias = npt.NDArray[Any]
"""Every runtime value is an array; a scalar is a 0-d array."""

_MAX_CALL_DEPTH = 64


class NumericError(DiagnosticException):
    """An op that cannot be evaluated; the message starts with `file:line:col: error: `."""


@dataclass
class NumericResult:
    """The values a function returned, in order."""

    outputs: list[np.ndarray[Any, Any]]


class _Fail(Exception):
    """Raised by op implementations; `_run_op` locates it at the op."""


def _error(op: Operation, message: str) -> NumericError:
    return NumericError(f"{location_of(op)}: error: {message}")


# --- types -------------------------------------------------------------------


def _element_type(type_: Attribute) -> Attribute:
    if isinstance(type_, RemoteType):
        type_ = type_.tensor
    if isa(type_, TensorType[Attribute]):
        return type_.get_element_type()
    return type_


def _is_bf16(type_: Attribute) -> bool:
    return isinstance(_element_type(type_), BFloat16Type)


def _dtype(type_: Attribute) -> np.dtype[Any]:
    """numpy dtype of a type's elements; `bf16` is held in `float32`."""
    element = _element_type(type_)
    if isinstance(element, Float16Type):
        return np.dtype(np.float16)
    if isinstance(element, Float32Type | BFloat16Type):
        return np.dtype(np.float32)
    if isinstance(element, Float64Type):
        return np.dtype(np.float64)
    if isinstance(element, IndexType):
        return np.dtype(np.int64)
    if isinstance(element, IntegerType):
        width = element.bitwidth
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            unsigned = element == IntegerType(width, Signedness.UNSIGNED)
            return np.dtype(f"{'u' if unsigned else 'i'}{width // 8}")
    raise _Fail(f"no numpy dtype for {element}")


def _shape(type_: Attribute) -> tuple[int, ...]:
    """Shape of a (remote) tensor type, `()` for a scalar; dynamic sizes are < 0."""
    if isinstance(type_, RemoteType):
        type_ = type_.tensor
    if isinstance(type_, TensorType):
        return tuple(type_.get_shape())
    return ()


def _round_bf16(array: Value) -> Value:
    """Round float32 values to the nearest bf16 (ties to even), kept as float32."""
    bits = np.asarray(array, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & 1)) & np.uint32(0xFFFF0000)
    nan = (bits & np.uint32(0xFFFF0000)) | np.uint32(0x00400000)
    out: Value = np.where(np.isnan(array), nan, rounded).astype(np.uint32)
    return out.view(np.float32)


def _coerce(value: object, type_: Attribute) -> Value:
    """`value` as an array of `type_`'s element dtype (numpy cast rules)."""
    dtype = _dtype(type_)
    array: Value = np.asarray(value)
    if array.dtype != dtype:
        array = array.astype(dtype)
    if _is_bf16(type_):
        array = _round_bf16(array)
    return array


def _unsigned(array: Value) -> Value:
    if array.dtype.kind == "i":
        return array.astype(np.dtype(f"u{array.dtype.itemsize}"))
    return array


def _signed(array: Value) -> Value:
    """An `i1` true is -1 when read as a signed integer."""
    if array.dtype == np.bool_:
        return -array.astype(np.int8)
    return array


# --- frames ------------------------------------------------------------------


@dataclass
class _Frame:
    """The values of one function activation, split by residency."""

    module: ModuleOp
    depth: int
    device: dict[SSAValue, Value] = field(default_factory=dict[SSAValue, Value])
    remote: dict[SSAValue, Value] = field(default_factory=dict[SSAValue, Value])
    loop_indices: list[Value] = field(default_factory=list[Value])

    def read(self, op: Operation, value: SSAValue) -> Value:
        """The device copy of `value`, read by compute op `op`."""
        found = self.device.get(value)
        if found is not None:
            return found
        if value in self.remote:
            raise _error(
                op,
                f"'{op.name}' reads {describe(value)}, a remote copy; prefetch it first",
            )
        raise _error(
            op,
            f"read of {describe(value)}, which is not resident in HBM, by '{op.name}'",
        )

    def forward(self, op: Operation, value: SSAValue) -> tuple[Value, bool]:
        """A value passed on by a call or return: (array, is it a remote copy)."""
        if value in self.remote:
            return self.remote[value], True
        return self.read(op, value), False

    def bind(self, value: SSAValue, array: Value) -> None:
        store = self.remote if isinstance(value.type, RemoteType) else self.device
        store[value] = array


# --- op implementations ------------------------------------------------------

_Impl: TypeAlias = Callable[[_Frame, Operation, list[Value]], list[Value]]
_IMPLS: dict[str, _Impl] = {}


def _impl(*names: str) -> Callable[[_Impl], _Impl]:
    """Register an implementation taking the op's operand values."""

    def register(fn: _Impl) -> _Impl:
        for name in names:
            _IMPLS[name] = fn
        return fn

    return register


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
    "math.powf": lambda a, b: np.power(a, b),
    "math.atan2": lambda a, b: np.arctan2(a, b),
    "math.copysign": lambda a, b: np.copysign(a, b),
    "math.fpowi": lambda a, b: np.power(a, b.astype(a.dtype)),
}

_INT_BINARY: dict[str, Callable[[Value, Value], Value]] = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": _div_trunc,
    "arith.divui": lambda a, b: _unsigned(a) // _unsigned(b),
    "arith.ceildivsi": lambda a, b: -np.floor_divide(-a, b),
    "arith.ceildivui": lambda a, b: -(-_unsigned(a) // _unsigned(b)),
    "arith.floordivsi": lambda a, b: np.floor_divide(a, b),
    "arith.remsi": lambda a, b: np.fmod(a, b),
    "arith.remui": lambda a, b: _unsigned(a) % _unsigned(b),
    "arith.maxsi": lambda a, b: np.maximum(a, b),
    "arith.minsi": lambda a, b: np.minimum(a, b),
    "arith.maxui": lambda a, b: np.maximum(_unsigned(a), _unsigned(b)),
    "arith.minui": lambda a, b: np.minimum(_unsigned(a), _unsigned(b)),
    "arith.andi": lambda a, b: a & b,
    "arith.ori": lambda a, b: a | b,
    "arith.xori": lambda a, b: a ^ b,
    "arith.shli": lambda a, b: np.left_shift(a, b),
    "arith.shrsi": lambda a, b: np.right_shift(a, b),
    "arith.shrui": lambda a, b: np.right_shift(_unsigned(a), _unsigned(b)),
}


def _erf(a: Value) -> Value:
    erf = np.frompyfunc(math.erf, 1, 1)
    return np.asarray(erf(a.astype(np.float64)), dtype=np.float64)


def _round_half_away(a: Value) -> Value:
    truncated = np.trunc(a)
    return np.where(np.abs(a - truncated) >= 0.5, truncated + np.sign(a), truncated)


_UNARY: dict[str, Callable[[Value], Value]] = {
    "arith.negf": lambda a: np.negative(a),
    "math.absf": lambda a: np.abs(a),
    "math.absi": lambda a: np.abs(a),
    "math.ceil": lambda a: np.ceil(a),
    "math.floor": lambda a: np.floor(a),
    "math.trunc": lambda a: np.trunc(a),
    "math.round": _round_half_away,
    "math.roundeven": lambda a: np.rint(a),
    "math.exp": lambda a: np.exp(a),
    "math.exp2": lambda a: np.exp2(a),
    "math.expm1": lambda a: np.expm1(a),
    "math.log": lambda a: np.log(a),
    "math.log2": lambda a: np.log2(a),
    "math.log10": lambda a: np.log10(a),
    "math.log1p": lambda a: np.log1p(a),
    "math.sqrt": lambda a: np.sqrt(a),
    "math.rsqrt": lambda a: np.reciprocal(np.sqrt(a)),
    "math.cbrt": lambda a: np.cbrt(a),
    "math.tanh": lambda a: np.tanh(a),
    "math.sin": lambda a: np.sin(a),
    "math.cos": lambda a: np.cos(a),
    "math.tan": lambda a: np.tan(a),
    "math.sinh": lambda a: np.sinh(a),
    "math.cosh": lambda a: np.cosh(a),
    "math.asin": lambda a: np.arcsin(a),
    "math.acos": lambda a: np.arccos(a),
    "math.atan": lambda a: np.arctan(a),
    "math.asinh": lambda a: np.arcsinh(a),
    "math.acosh": lambda a: np.arccosh(a),
    "math.atanh": lambda a: np.arctanh(a),
    "math.erf": _erf,
}


def _with_i1(fn: Callable[[Value, Value], Value]) -> Callable[[Value, Value], Value]:
    """Integer arithmetic on `i1` is arithmetic modulo 2."""

    def apply(a: Value, b: Value) -> Value:
        if a.dtype != np.bool_:
            return fn(a, b)
        result: Value = fn(a.astype(np.uint8), b.astype(np.uint8)) & 1
        return result.astype(np.bool_)

    return apply


def _binary(fn: Callable[[Value, Value], Value]) -> _Impl:
    return lambda frame, op, args: [fn(args[0], args[1])]


def _unary(fn: Callable[[Value], Value]) -> _Impl:
    return lambda frame, op, args: [fn(args[0])]


for _name, _fn in _FLOAT_BINARY.items():
    _IMPLS[_name] = _binary(_fn)
for _name, _fn in _INT_BINARY.items():
    _IMPLS[_name] = _binary(_with_i1(_fn))
for _name, _fn1 in _UNARY.items():
    _IMPLS[_name] = _unary(_fn1)


@_impl("math.fma")
def _fma(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    a, b, c = (x.astype(np.float64) if x.dtype.itemsize < 8 else x for x in args)
    return [a * b + c]


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
    "slt": lambda a, b: _signed(a) < _signed(b),
    "sle": lambda a, b: _signed(a) <= _signed(b),
    "sgt": lambda a, b: _signed(a) > _signed(b),
    "sge": lambda a, b: _signed(a) >= _signed(b),
    "ult": lambda a, b: _unsigned(a) < _unsigned(b),
    "ule": lambda a, b: _unsigned(a) <= _unsigned(b),
    "ugt": lambda a, b: _unsigned(a) > _unsigned(b),
    "uge": lambda a, b: _unsigned(a) >= _unsigned(b),
}


@_impl("arith.cmpf")
def _cmpf(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, arith.CmpfOp)
    predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    return [_CMPF[predicate](args[0], args[1])]


@_impl("arith.cmpi")
def _cmpi(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, arith.CmpiOp)
    predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    return [_CMPI[predicate](args[0], args[1])]


@_impl("arith.select")
def _select(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    return [np.where(args[0], args[1], args[2])]


@_impl(
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
def _convert(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    """Conversions: reinterpret the source's signedness, then cast to the result."""
    source = args[0]
    target = _dtype(op.results[0].type)
    if op.name in ("arith.extui", "arith.uitofp", "arith.index_castui"):
        source = _unsigned(source)
    elif op.name in ("arith.extsi", "arith.sitofp", "arith.index_cast"):
        source = _signed(source)
    elif op.name == "arith.fptoui":
        source = np.trunc(source).astype(np.dtype(f"u{max(target.itemsize, 1)}"))
    if target == np.bool_ and source.dtype.kind in "iu":
        source = (source & 1).astype(np.bool_)
    return [source]


@_impl("arith.bitcast")
def _bitcast(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    source = args[0]
    if _is_bf16(op.operands[0].type):
        source = (source.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    if _is_bf16(op.results[0].type):
        widened = source.view(np.uint16).astype(np.uint32) << 16
        return [widened.view(np.float32)]
    return [source.view(_dtype(op.results[0].type))]


def _resource_array(attr: DenseResourceAttr, type_: Attribute) -> Value:
    """The contents of a `dense_resource` blob: hex, 4-byte alignment header, data."""
    interface = Builtin.get_interface(OpAsmDialectInterface)
    key = attr.resource_handle.data
    blob = interface.lookup(key) if interface is not None else None
    if blob is None:
        raise _Fail(f"no data for dense_resource<{key}>")
    raw = bytes.fromhex(blob.removeprefix("0x"))[4:]
    if _is_bf16(type_):
        array = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
    elif _dtype(type_) == np.bool_:
        array = np.frombuffer(raw, np.uint8) != 0
    else:
        array = np.frombuffer(raw, _dtype(type_).newbyteorder("<"))
    return _fill_shape(array, _shape(type_))


def _fill_shape(flat: Value, shape: tuple[int, ...]) -> Value:
    """`flat` in `shape`, a single value splatted."""
    if flat.size == math.prod(shape):
        return flat.reshape(shape).copy()
    if flat.size == 1:
        return np.full(shape, flat.reshape(()), flat.dtype)
    raise _Fail(f"{flat.size} values do not fill shape {shape}")


@_impl("arith.constant")
def _constant(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, arith.ConstantOp)
    value, type_ = op.value, op.result.type
    if isinstance(value, IntegerAttr | FloatAttr):
        return [np.asarray(value.value.data)]
    if isinstance(value, DenseIntOrFPElementsAttr):
        flat = np.asarray(value.get_values()).astype(_dtype(type_))
        return [_fill_shape(flat, _shape(type_))]
    return [_resource_array(value, type_)]


@_impl("cf.assert")
def _assert(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, cf.AssertOp)
    if not np.all(args[0]):
        raise _Fail(f"assertion failed: {op.msg.data}")
    return []


@_impl("linalg.index")
def _index(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, IndexOp)
    return [frame.loop_indices[op.dim.value.data]]


def _resolve(
    frame: _Frame, op: Operation, static: Sequence[int], dynamic: Sequence[SSAValue]
) -> list[int]:
    """Static sizes with the dynamic ones (`< 0`) read from `dynamic`, in order."""
    values = iter(dynamic)
    return [int(frame.read(op, next(values))) if s < 0 else s for s in static]


@_impl("tensor.empty")
def _empty(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, tensor.EmptyOp)
    type_ = op.tensor.type
    shape = _resolve(frame, op, _shape(type_), op.dynamic_sizes)
    return [np.zeros(shape, _dtype(type_))]


@_impl("tensor.cast")
def _cast(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    return [args[0]]


@_impl("tensor.collapse_shape")
def _collapse(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    shape = tuple(max(s, -1) for s in _shape(op.results[0].type))
    return [args[0].reshape(shape)]


@_impl("tensor.expand_shape")
def _expand(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, tensor.ExpandShapeOp)
    static = op.static_output_shape.get_values()
    return [args[0].reshape(_resolve(frame, op, static, op.dynamic_output_shape))]


@_impl("tensor.reshape")
def _reshape(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    return [args[0].reshape(tuple(int(s) for s in args[1]))]


def _slices(
    frame: _Frame, op: tensor.ExtractSliceOp | tensor.InsertSliceOp
) -> tuple[slice, ...]:
    offsets = _resolve(frame, op, op.static_offsets.get_values(), op.offsets)
    sizes = _resolve(frame, op, op.static_sizes.get_values(), op.sizes)
    strides = _resolve(frame, op, op.static_strides.get_values(), op.strides)
    return tuple(
        slice(o, o + (n - 1) * s + 1 if n else o, s)
        for o, n, s in zip(offsets, sizes, strides, strict=True)
    )


@_impl("tensor.extract_slice")
def _extract_slice(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, tensor.ExtractSliceOp)
    part = args[0][_slices(frame, op)]
    shape = _shape(op.result.type)
    if all(s >= 0 for s in shape):
        part = part.reshape(shape)  # drops the unit dimensions of a rank reduction
    return [part.copy()]


@_impl("tensor.insert_slice")
def _insert_slice(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, tensor.InsertSliceOp)
    slices = _slices(frame, op)
    dest = args[1].copy()
    dest[slices] = args[0].reshape(dest[slices].shape)
    return [dest]


@_impl("tensor.concat")
def _concat(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, tensor.ConcatOp)
    return [np.concatenate(args, axis=op.dim.value.data)]


@_impl("tensor.extract")
def _extract(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    return [args[0][tuple(args[1:])]]


@_impl("tensor.insert")
def _insert(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    dest = args[1].copy()
    dest[tuple(int(i) for i in args[2:])] = args[0]
    return [dest]


@_impl("tensor.dim")
def _dim(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    return [np.asarray(args[0].shape[int(args[1])], np.int64)]


@_impl("tensor.from_elements")
def _from_elements(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    return [np.asarray(args).reshape(_shape(op.results[0].type))]


@_impl("tensor.splat")
def _splat(frame: _Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, tensor.SplatOp)
    shape = _resolve(frame, op, _shape(op.result.type), op.dynamicSizes)
    return [np.full(shape, args[0])]


# --- structured linalg ops ---------------------------------------------------


@dataclass
class _Structured:
    """A linalg op seen as a generic: operands, maps, loops and body."""

    inputs: Sequence[SSAValue]
    outputs: Sequence[SSAValue]
    maps: list[AffineMap]
    parallel: list[bool]
    body: Block


def _as_structured(op: Operation) -> _Structured | None:
    if isinstance(op, BroadcastOp):
        added = set(op.dimensions.get_values())
        rank = len(_shape(op.init.type))
        kept = tuple(AffineDimExpr(d) for d in range(rank) if d not in added)
        maps = [AffineMap(rank, 0, kept), AffineMap.identity(rank)]
        return _Structured(
            [op.input], [op.init], maps, [True] * rank, op.hidden_region.block
        )
    if isinstance(op, ReduceOp):
        reduced = set(op.dimensions.get_values())
        rank = len(_shape(op.input.type))
        kept = tuple(AffineDimExpr(d) for d in range(rank) if d not in reduced)
        maps = [AffineMap.identity(rank), AffineMap(rank, 0, kept)]
        parallel = [d not in reduced for d in range(rank)]
        return _Structured([op.input], [op.init], maps, parallel, op.region.block)
    if isinstance(op, LinalgStructuredOperation):
        maps = [m.data for m in op.get_indexing_maps()]
        parallel = [it == IteratorTypeAttr.parallel() for it in op.get_iterator_types()]
        return _Structured(op.inputs, op.outputs, maps, parallel, op.body.block)
    return None


def _affine(expr: AffineExpr, dims: Sequence[Value]) -> Value:
    """An affine expression over loop indices (arrays that broadcast together)."""
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return np.asarray(expr.value, np.int64)
    if isinstance(expr, AffineBinaryOpExpr):
        lhs, rhs = _affine(expr.lhs, dims), _affine(expr.rhs, dims)
        match expr.kind:
            case AffineBinaryOpKind.Add:
                return lhs + rhs
            case AffineBinaryOpKind.Mul:
                return lhs * rhs
            case AffineBinaryOpKind.Mod:
                return np.mod(lhs, rhs)
            case AffineBinaryOpKind.FloorDiv:
                return np.floor_divide(lhs, rhs)
            case AffineBinaryOpKind.CeilDiv:
                return -np.floor_divide(-lhs, rhs)
    raise _Fail(f"unsupported affine expression {expr}")


def _loop_ranges(maps: Sequence[AffineMap], arrays: Sequence[Value]) -> list[int]:
    """Each loop's trip count, read off an operand dimension it indexes alone."""
    ranges: list[int | None] = [None] * maps[0].num_dims
    for indexing_map, array in zip(maps, arrays, strict=True):
        if len(indexing_map.results) != array.ndim:
            raise _Fail(
                f"indexing map {indexing_map} does not match an operand of rank {array.ndim}"
            )
        for dim, expr in enumerate(indexing_map.results):
            if isinstance(expr, AffineDimExpr) and ranges[expr.position] is None:
                ranges[expr.position] = array.shape[dim]
    if any(r is None for r in ranges):
        missing = [f"d{d}" for d, r in enumerate(ranges) if r is None]
        raise _Fail(f"cannot infer the range of loop(s) {', '.join(missing)}")
    return [r for r in ranges if r is not None]


def _indices(indexing_map: AffineMap, dims: Sequence[Value]) -> tuple[Value, ...]:
    return tuple(_affine(e, dims) for e in indexing_map.results)


def _run_structured(frame: _Frame, op: Operation, spec: _Structured) -> list[Value]:
    """
    Evaluate the body once per point of the reduction loops (in lexicographic
    order), vectorised over the parallel loops, feeding the yielded values
    back as the output block arguments.
    """
    if len(op.results) != len(spec.outputs):
        raise _Fail("only tensor semantics are supported")
    inputs = [frame.read(op, v) for v in spec.inputs]
    outputs = [frame.read(op, v).copy() for v in spec.outputs]
    ranges = _loop_ranges(spec.maps, [*inputs, *outputs])
    parallel = [d for d, p in enumerate(spec.parallel) if p]
    reduction = [d for d, p in enumerate(spec.parallel) if not p]
    domain = tuple(ranges[d] for d in parallel)
    dims: list[Value] = [np.asarray(0, np.int64)] * len(ranges)
    for k, d in enumerate(parallel):
        grid = [1] * len(parallel)
        grid[k] = ranges[d]
        dims[d] = np.arange(ranges[d], dtype=np.int64).reshape(grid)
    in_maps, out_maps = spec.maps[: len(inputs)], spec.maps[len(inputs) :]
    args = spec.body.args
    saved, frame.loop_indices = frame.loop_indices, dims
    try:
        for point in itertools.product(*(range(ranges[d]) for d in reduction)):
            for d, i in zip(reduction, point, strict=True):
                dims[d] = np.asarray(i, np.int64)
            for arg, array, m in zip(
                args, [*inputs, *outputs], [*in_maps, *out_maps], strict=True
            ):
                frame.device[arg] = np.asarray(array[_indices(m, dims)])
            terminator = _run_block(frame, spec.body)
            yielded = [frame.read(terminator, v) for v in terminator.operands]
            for output, m, value in zip(outputs, out_maps, yielded, strict=True):
                index = tuple(np.broadcast_to(i, domain) for i in _indices(m, dims))
                output[index] = np.broadcast_to(value, domain)
    finally:
        frame.loop_indices = saved
    return outputs


# --- driver ------------------------------------------------------------------


def _run_block(frame: _Frame, block: Block) -> Operation:
    """Run every op of `block` but its terminator, which is returned."""
    last = block.last_op
    for op in block.ops:
        if op is last and op.has_trait(IsTerminator):
            return op
        _run_op(frame, op)
    parent = block.parent_op()
    assert parent is not None
    raise _error(parent, f"'{parent.name}' has a block without a terminator")


def _run_offload_op(frame: _Frame, op: PrefetchOp | StoreOp | DetachOp) -> None:
    if isinstance(op, PrefetchOp):
        if op.source not in frame.remote:
            raise _error(
                op, f"prefetch of {describe(op.source)}, which holds no remote copy"
            )
        frame.device[op.result] = frame.remote[op.source].copy()
    elif isinstance(op, StoreOp):
        frame.remote[op.handle] = frame.read(op, op.value).copy()
    else:
        if op.value not in frame.device:
            raise _error(
                op, f"detach of {describe(op.value)}, which is not resident in HBM"
            )
        del frame.device[op.value]


def _run_call(frame: _Frame, op: func.CallOp) -> None:
    callee = SymbolTable.lookup_symbol(op, op.callee)
    if not isinstance(callee, FuncOp):
        raise _error(op, f"call of unknown function {op.callee}")
    if frame.depth >= _MAX_CALL_DEPTH:
        raise _error(op, f"calls nested deeper than {_MAX_CALL_DEPTH}")
    args = [frame.forward(op, v) for v in op.arguments]
    results = _invoke(frame.module, callee, [a for a, _ in args], frame.depth + 1)
    for result, value in zip(op.res, results, strict=True):
        frame.bind(result, value)


def _run_op(frame: _Frame, op: Operation) -> None:
    if isinstance(op, PrefetchOp | StoreOp | DetachOp):
        return _run_offload_op(frame, op)
    if isinstance(op, func.CallOp):
        return _run_call(frame, op)
    structured = _as_structured(op)
    impl = _IMPLS.get(op.name)
    if structured is None and impl is None:
        raise _error(op, f"'{op.name}' is not supported by the numeric evaluator")
    try:
        if structured is not None:
            results = _run_structured(frame, op, structured)
        else:
            assert impl is not None
            results = impl(frame, op, [frame.read(op, v) for v in op.operands])
        for result, value in zip(op.results, results, strict=True):
            frame.device[result] = _coerce(value, result.type)
    except (_Fail, ValueError, IndexError, TypeError) as err:
        raise _error(op, f"'{op.name}': {err}") from None


def _invoke(
    module: ModuleOp, function: FuncOp, args: Sequence[Value], depth: int
) -> list[Value]:
    """Run `function` on `args` (remote arguments start outside HBM)."""
    if function.is_declaration or len(function.body.blocks) != 1:
        raise _error(
            function, f"@{function.sym_name.data} must have a single-block body"
        )
    if len(args) != len(function.args):
        raise _error(
            function,
            f"@{function.sym_name.data} takes {len(function.args)} argument(s), got {len(args)}",
        )
    frame = _Frame(module, depth)
    for arg, value in zip(function.args, args, strict=True):
        frame.bind(arg, value)
    terminator = _run_block(frame, function.body.block)
    return [frame.forward(terminator, v)[0] for v in terminator.operands]


def _find_function(module: ModuleOp, name: str | None) -> FuncOp:
    try:
        return main_function(module, name)
    except ExtractionError as err:
        raise _error(module, f"{err} to evaluate") from None


def _random_array(rng: np.random.Generator, type_: Attribute) -> Value:
    shape = _shape(type_)
    dtype = _dtype(type_)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype.kind in "iu":
        return rng.integers(0, 8, shape).astype(dtype)
    return _coerce(rng.standard_normal(shape) * 0.5, type_)


def random_inputs(func: FuncOp, seed: int = 0) -> list[np.ndarray[Any, Any]]:
    """
    One array per argument of `func` (a remote argument gets its tensor's):
    floats ~ N(0, 0.5^2), integers in 0..7 (valid indices of a tiny
    embedding), `i1` random booleans.
    """
    rng = np.random.default_rng(seed)
    inputs: list[Value] = []
    for index, type_ in enumerate(func.function_type.inputs.data):
        if any(s < 0 for s in _shape(type_)):
            raise _error(
                func, f"argument #{index} has a dynamic shape; pass inputs explicitly"
            )
        try:
            inputs.append(_random_array(rng, type_))
        except _Fail as err:
            raise _error(func, f"argument #{index}: {err}") from None
    return inputs


def _prepare_inputs(function: FuncOp, inputs: Sequence[Value]) -> list[Value]:
    """Check the shapes of `inputs` and cast them to the argument dtypes."""
    prepared: list[Value] = []
    for index, (arg, value) in enumerate(zip(function.args, inputs, strict=False)):
        array = np.asarray(value)
        shape = _shape(arg.type)
        if len(shape) != array.ndim or any(
            s >= 0 and s != n for s, n in zip(shape, array.shape, strict=True)
        ):
            raise _error(
                function,
                f"input #{index} has shape {array.shape}, expected {arg.type}",
            )
        try:
            prepared.append(_coerce(array, arg.type).copy())
        except _Fail as err:
            raise _error(function, f"input #{index}: {err}") from None
    prepared.extend(np.asarray(v) for v in inputs[len(prepared) :])
    return prepared


def evaluate(
    module: ModuleOp,
    inputs: Sequence[np.ndarray[Any, Any]] | None = None,
    function: str | None = None,
    seed: int = 0,
) -> NumericResult:
    """
    Run `function` (default: the first public function with a body) on
    `inputs` (default: `random_inputs(function, seed)`). Raises
    `NumericError` at the op that cannot be evaluated or reads a value that
    is not resident in HBM.
    """
    func_op = _find_function(module, function)
    if inputs is None:
        inputs = random_inputs(func_op, seed)
    with np.errstate(all="ignore"):
        outputs = _invoke(module, func_op, _prepare_inputs(func_op, inputs), 0)
    return NumericResult([np.array(o, copy=True) for o in outputs])


def _same(a: Value, b: Value) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def outputs_match_reference(
    module: ModuleOp,
    inputs: Sequence[np.ndarray[Any, Any]] | None = None,
    function: str | None = None,
    seed: int = 0,
) -> bool:
    """
    Whether `module` computes bitwise the same outputs as its reference, the
    clone with every hyperoffload op stripped, on the same inputs.
    """
    func_op = _find_function(module, function)
    if inputs is None:
        inputs = random_inputs(func_op, seed)
    reference = module.clone()
    strip_offload_ops(reference)
    name = func_op.sym_name.data
    got = evaluate(module, inputs, name).outputs
    expected = evaluate(reference, inputs, name).outputs
    return len(got) == len(expected) and all(
        _same(a, b) for a, b in zip(got, expected, strict=True)
    )
