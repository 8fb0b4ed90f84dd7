"""
`arith` ops as torch operations, elementwise, with the numeric evaluator's
semantics (`hyperoffload.evaluators.numeric.arith`): IEEE floats
(`maximumf` propagates NaN, ordered and unordered `cmpf` predicates), two's
complement integers, `i1` as `bool` (arithmetic modulo 2).

```mlir
%s = arith.addf %x, %c : tensor<4xf32>             // x + c on the device
%m = arith.cmpf olt, %s, %x : tensor<4xf32>        // s < x, a bool tensor
```

Constants are built by the numeric evaluator (dense and `dense_resource`
literals alike) and converted: a scalar stays a 0-d tensor on the host, a
tensor goes to the device. Unsigned integer ops read 8- to 32-bit values as
unsigned exactly; a 64-bit value is read as signed (torch has no full
`uint64` arithmetic), which differs only for values of 2^63 and above.
"""

from collections.abc import Callable
from typing import cast

import torch
from xdsl.dialects import arith
from xdsl.ir import Operation

from hyperoffload.evaluators.numeric.arith import ARITH as NUMERIC_ARITH
from hyperoffload.evaluators.numeric.core import coerce
from hyperoffload.evaluators.numeric.frame import Frame
from hyperoffload.evaluators.torch.registry import Scope, TorchImpls
from hyperoffload.evaluators.torch.values import from_numpy, torch_dtype

ARITH = TorchImpls()

Tensor = torch.Tensor

_NARROW_SIGNED = {torch.int8: 8, torch.int16: 16, torch.int32: 32}


def unsigned(tensor: Tensor) -> Tensor:
    """A signed integer tensor read as unsigned (widened to int64 below 64 bits)."""
    bits = _NARROW_SIGNED.get(tensor.dtype)
    if bits is None:
        return tensor
    return tensor.to(torch.int64) & ((1 << bits) - 1)


def signed(tensor: Tensor) -> Tensor:
    """An `i1` true is -1 when read as a signed integer."""
    if tensor.dtype == torch.bool:
        return -tensor.to(torch.int8)
    return tensor


def _floor_div(a: Tensor, b: Tensor) -> Tensor:
    return torch.div(a, b, rounding_mode="floor")


_FLOAT_BINARY: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "arith.addf": torch.add,
    "arith.subf": torch.sub,
    "arith.mulf": torch.mul,
    "arith.divf": torch.div,
    "arith.remf": torch.fmod,
    "arith.maximumf": torch.maximum,
    "arith.minimumf": torch.minimum,
    "arith.maxnumf": torch.fmax,
    "arith.minnumf": torch.fmin,
}

_INT_BINARY: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "arith.addi": torch.add,
    "arith.subi": torch.sub,
    "arith.muli": torch.mul,
    "arith.divsi": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "arith.divui": lambda a, b: _floor_div(unsigned(a), unsigned(b)),
    "arith.ceildivsi": lambda a, b: -_floor_div(-a, b),
    "arith.ceildivui": lambda a, b: -_floor_div(-unsigned(a), unsigned(b)),
    "arith.floordivsi": _floor_div,
    "arith.remsi": torch.fmod,
    "arith.remui": lambda a, b: torch.remainder(unsigned(a), unsigned(b)),
    "arith.maxsi": torch.maximum,
    "arith.minsi": torch.minimum,
    "arith.maxui": lambda a, b: torch.maximum(unsigned(a), unsigned(b)),
    "arith.minui": lambda a, b: torch.minimum(unsigned(a), unsigned(b)),
    "arith.andi": torch.bitwise_and,
    "arith.ori": torch.bitwise_or,
    "arith.xori": torch.bitwise_xor,
    "arith.shli": torch.bitwise_left_shift,
    "arith.shrsi": torch.bitwise_right_shift,
    "arith.shrui": lambda a, b: torch.bitwise_right_shift(unsigned(a), unsigned(b)),
}

_BITWISE = {"arith.andi", "arith.ori", "arith.xori"}


def _with_i1(
    name: str, fn: Callable[[Tensor, Tensor], Tensor]
) -> Callable[[Tensor, Tensor], Tensor]:
    """Integer arithmetic on `i1` is arithmetic modulo 2."""

    def apply(a: Tensor, b: Tensor) -> Tensor:
        if a.dtype != torch.bool or name in _BITWISE:
            return fn(a, b)
        result = fn(a.to(torch.uint8), b.to(torch.uint8)) & 1
        return result.to(torch.bool)

    return apply


for _name, _fn in _FLOAT_BINARY.items():
    ARITH.binary(_name, _fn)
for _name, _fn in _INT_BINARY.items():
    ARITH.binary(_name, _with_i1(_name, _fn))
ARITH.unary("arith.negf", torch.neg)


def _both_ordered(a: Tensor, b: Tensor) -> Tensor:
    return ~torch.isnan(a) & ~torch.isnan(b)


def _either_nan(a: Tensor, b: Tensor) -> Tensor:
    return torch.isnan(a) | torch.isnan(b)


_CMPF: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "false": lambda a, b: torch.zeros_like(a + b, dtype=torch.bool),
    "oeq": torch.eq,
    "ogt": torch.gt,
    "oge": torch.ge,
    "olt": torch.lt,
    "ole": torch.le,
    "one": lambda a, b: torch.ne(a, b) & _both_ordered(a, b),
    "ord": _both_ordered,
    "ueq": lambda a, b: torch.eq(a, b) | _either_nan(a, b),
    "ugt": lambda a, b: ~torch.le(a, b),
    "uge": lambda a, b: ~torch.lt(a, b),
    "ult": lambda a, b: ~torch.ge(a, b),
    "ule": lambda a, b: ~torch.gt(a, b),
    "une": torch.ne,
    "uno": _either_nan,
    "true": lambda a, b: torch.ones_like(a + b, dtype=torch.bool),
}

_CMPI: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "eq": torch.eq,
    "ne": torch.ne,
    "slt": lambda a, b: torch.lt(signed(a), signed(b)),
    "sle": lambda a, b: torch.le(signed(a), signed(b)),
    "sgt": lambda a, b: torch.gt(signed(a), signed(b)),
    "sge": lambda a, b: torch.ge(signed(a), signed(b)),
    "ult": lambda a, b: torch.lt(unsigned(a), unsigned(b)),
    "ule": lambda a, b: torch.le(unsigned(a), unsigned(b)),
    "ugt": lambda a, b: torch.gt(unsigned(a), unsigned(b)),
    "uge": lambda a, b: torch.ge(unsigned(a), unsigned(b)),
}


@ARITH.impl("arith.cmpf")
def _cmpf(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    assert isinstance(op, arith.CmpfOp)
    predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    return [_CMPF[predicate](args[0], args[1])]


@ARITH.impl("arith.cmpi")
def _cmpi(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    assert isinstance(op, arith.CmpiOp)
    predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    return [_CMPI[predicate](args[0], args[1])]


@ARITH.impl("arith.select")
def _select(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    # torch.where wants its operands on one device: a host scalar joins the others
    devices = {a.device for a in args if a.device.type != "cpu"}
    if devices:
        target = next(iter(devices))
        args = [a.to(target) for a in args]
    return [torch.where(args[0], args[1], args[2])]


_FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


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
def _convert(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    """Conversions: reinterpret the source's signedness, then cast to the result."""
    source = args[0]
    target = torch_dtype(op.results[0].type)
    if op.name in ("arith.extui", "arith.uitofp", "arith.index_castui"):
        source = unsigned(source)
    elif op.name in ("arith.extsi", "arith.sitofp", "arith.index_cast"):
        source = signed(source)
    elif op.name in ("arith.fptoui", "arith.fptosi"):
        source = torch.trunc(source).to(torch.int64)
    if target == torch.bool and source.dtype not in (*_FLOAT_DTYPES, torch.bool):
        source = (source & 1).to(torch.bool)
    return [source.to(target)]


@ARITH.impl("arith.bitcast")
def _bitcast(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    return [args[0].view(torch_dtype(op.results[0].type))]


@ARITH.impl("arith.constant")
def _constant(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    """The numeric evaluator's value; a tensor constant is placed on the device."""
    numeric = NUMERIC_ARITH.by_name["arith.constant"]
    # the numeric implementation of a constant reads no frame state
    value = coerce(numeric(cast(Frame, None), op, [])[0], op.results[0].type)
    tensor = from_numpy(value, op.results[0].type)
    return [tensor.to(scope.device) if tensor.dim() > 0 else tensor]
