"""
`arith` ops over an `ArrayBackend`, elementwise: IEEE semantics for floats
(`maximumf` propagates NaN, `cmpf` has ordered and unordered predicates),
two's complement for integers, `i1` as `bool` (arithmetic modulo 2).

```mlir
%s = arith.addf %x, %c : tensor<4xf32>             // x + c
%m = arith.cmpf olt, %s, %x : tensor<4xf32>        // s < x, an i1 (bool) tensor
%u = arith.divui %a, %b : tensor<4xi8>             // a // b, both read as unsigned
```

`arith.constant` is built by the numeric evaluator (`numeric.constants`).
"""

from collections.abc import Callable
from typing import Any

from xdsl.dialects import arith
from xdsl.ir import Operation

from hyperoffload.evaluators.op_registry import OpRegistry
from hyperoffload.evaluators.semantics.backend import Array, ArrayBackend, Scope
from hyperoffload.evaluators.semantics.types import dtype_name

Binary = Callable[[Array, Array], Array]

_BITWISE = ("arith.andi", "arith.ori", "arith.xori")
_FROM_UNSIGNED = ("arith.extui", "arith.uitofp", "arith.index_castui")
_FROM_SIGNED = ("arith.extsi", "arith.sitofp", "arith.index_cast")
_FROM_FLOAT = ("arith.fptosi", "arith.fptoui")
CONVERSIONS = (
    *_FROM_UNSIGNED,
    *_FROM_SIGNED,
    *_FROM_FLOAT,
    "arith.extf",
    "arith.truncf",
    "arith.trunci",
)


def signed(xp: ArrayBackend, x: Array) -> Array:
    """An `i1` true is -1 when read as a signed integer."""
    return -xp.astype(x, "int8") if xp.kind(x) == "b" else x


def float_binary(xp: ArrayBackend) -> dict[str, Binary]:
    """The float arithmetic ops."""
    return {
        "arith.addf": lambda a, b: a + b,
        "arith.subf": lambda a, b: a - b,
        "arith.mulf": lambda a, b: a * b,
        "arith.divf": lambda a, b: a / b,
        "arith.remf": xp.fn("fmod"),
        "arith.maximumf": xp.fn("maximumf"),
        "arith.minimumf": xp.fn("minimumf"),
        "arith.maxnumf": xp.fn("fmax"),
        "arith.minnumf": xp.fn("fmin"),
    }


def int_binary(xp: ArrayBackend) -> dict[str, Binary]:
    """The integer arithmetic ops (before the `i1` rule of `_with_i1`)."""
    u, div = xp.unsigned, xp.fn("floor_div")
    maximum, minimum = xp.fn("maximum"), xp.fn("minimum")
    return {
        "arith.addi": lambda a, b: a + b,
        "arith.subi": lambda a, b: a - b,
        "arith.muli": lambda a, b: a * b,
        "arith.divsi": xp.fn("div_trunc"),
        "arith.divui": lambda a, b: div(u(a), u(b)),
        "arith.ceildivsi": lambda a, b: -div(-a, b),
        "arith.ceildivui": lambda a, b: -div(-u(a), u(b)),
        "arith.floordivsi": div,
        "arith.remsi": xp.fn("fmod"),
        "arith.remui": lambda a, b: u(a) % u(b),
        "arith.maxsi": maximum,
        "arith.minsi": minimum,
        "arith.maxui": lambda a, b: maximum(u(a), u(b)),
        "arith.minui": lambda a, b: minimum(u(a), u(b)),
        "arith.andi": lambda a, b: a & b,
        "arith.ori": lambda a, b: a | b,
        "arith.xori": lambda a, b: a ^ b,
        "arith.shli": lambda a, b: a << b,
        "arith.shrsi": lambda a, b: a >> b,
        "arith.shrui": lambda a, b: u(a) >> u(b),
    }


def _with_i1(xp: ArrayBackend, name: str, fn: Binary) -> Binary:
    """Integer arithmetic on `i1` is arithmetic modulo 2."""
    if name in _BITWISE:
        return fn

    def apply(a: Array, b: Array) -> Array:
        if xp.kind(a) != "b":
            return fn(a, b)
        result = fn(xp.astype(a, "uint8"), xp.astype(b, "uint8")) & 1
        return xp.astype(result, "bool")

    return apply


def cmpf(xp: ArrayBackend) -> dict[str, Binary]:
    """`arith.cmpf` by predicate."""
    isnan = xp.fn("isnan")

    def ordered(a: Array, b: Array) -> Array:
        return ~isnan(a) & ~isnan(b)

    def unordered(a: Array, b: Array) -> Array:
        return isnan(a) | isnan(b)

    return {
        "false": lambda a, b: xp.bools(a, b, False),
        "oeq": lambda a, b: a == b,
        "ogt": lambda a, b: a > b,
        "oge": lambda a, b: a >= b,
        "olt": lambda a, b: a < b,
        "ole": lambda a, b: a <= b,
        "one": lambda a, b: (a != b) & ordered(a, b),
        "ord": ordered,
        "ueq": lambda a, b: (a == b) | unordered(a, b),
        "ugt": lambda a, b: ~(a <= b),
        "uge": lambda a, b: ~(a < b),
        "ult": lambda a, b: ~(a >= b),
        "ule": lambda a, b: ~(a > b),
        "une": lambda a, b: a != b,
        "uno": unordered,
        "true": lambda a, b: xp.bools(a, b, True),
    }


def cmpi(xp: ArrayBackend) -> dict[str, Binary]:
    """`arith.cmpi` by predicate."""
    u = xp.unsigned

    def s(x: Array) -> Array:
        return signed(xp, x)

    return {
        "eq": lambda a, b: a == b,
        "ne": lambda a, b: a != b,
        "slt": lambda a, b: s(a) < s(b),
        "sle": lambda a, b: s(a) <= s(b),
        "sgt": lambda a, b: s(a) > s(b),
        "sge": lambda a, b: s(a) >= s(b),
        "ult": lambda a, b: u(a) < u(b),
        "ule": lambda a, b: u(a) <= u(b),
        "ugt": lambda a, b: u(a) > u(b),
        "uge": lambda a, b: u(a) >= u(b),
    }


def convert(xp: ArrayBackend, op: Operation, source: Array) -> Array:
    """Conversions: reinterpret the source's signedness, then cast to the result."""
    type_ = op.results[0].type
    if op.name in _FROM_UNSIGNED:
        source = xp.unsigned(source)
    elif op.name in _FROM_SIGNED:
        source = signed(xp, source)
    elif op.name in _FROM_FLOAT:
        source = xp.float_to_int(source, op.name == "arith.fptoui", type_)
    if dtype_name(type_) == "bool" and xp.kind(source) in "iu":
        source = xp.astype(source & 1, "bool")
    return xp.cast(source, type_)


def register(registry: OpRegistry[Any, Any], xp: ArrayBackend) -> None:
    """Fill `registry` with the `arith` ops (but `arith.constant`) on `xp`."""
    for name, fn in float_binary(xp).items():
        registry.binary(name, fn)
    for name, fn in int_binary(xp).items():
        registry.binary(name, _with_i1(xp, name, fn))
    registry.unary("arith.negf", lambda a: -a)
    by_cmpf, by_cmpi = cmpf(xp), cmpi(xp)

    @registry.impl("arith.cmpf")
    def _cmpf(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        assert isinstance(op, arith.CmpfOp)
        predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        return [by_cmpf[predicate](args[0], args[1])]

    @registry.impl("arith.cmpi")
    def _cmpi(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        assert isinstance(op, arith.CmpiOp)
        predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        return [by_cmpi[predicate](args[0], args[1])]

    @registry.impl("arith.select")
    def _select(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        return [xp.where(args[0], args[1], args[2])]

    @registry.impl(*CONVERSIONS)
    def _convert(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        return [convert(xp, op, args[0])]

    @registry.impl("arith.bitcast")
    def _bitcast(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        source, target = op.operands[0].type, op.results[0].type
        return [xp.bitcast(args[0], source, target)]
