"""
`math` ops over an `ArrayBackend`, elementwise, with the library's
functions; `round` rounds halves away from zero, `fma` is computed in `f64`
(when its operands are narrower) and rounded to the result once more.

```mlir
%e = math.exp %x : tensor<4xf32>                   // np.exp(x) / torch.exp(x)
%r = math.round %x : tensor<4xf32>                 // halves away from zero
```

Backends differ where their libraries do: numpy's `erf` is Python's
`math.erf`, its `rsqrt` is `1 / sqrt`; torch's transcendental functions are
within an ulp or two of numpy's.
"""

from typing import Any

from xdsl.ir import Operation

from hyperoffload.evaluators.op_registry import OpRegistry
from hyperoffload.evaluators.semantics.backend import Array, ArrayBackend, Scope

_UNARY = {
    "math.absf": "abs",
    "math.absi": "abs",
    "math.ceil": "ceil",
    "math.floor": "floor",
    "math.trunc": "trunc",
    "math.roundeven": "roundeven",
    "math.exp": "exp",
    "math.exp2": "exp2",
    "math.expm1": "expm1",
    "math.log": "log",
    "math.log2": "log2",
    "math.log10": "log10",
    "math.log1p": "log1p",
    "math.sqrt": "sqrt",
    "math.rsqrt": "rsqrt",
    "math.cbrt": "cbrt",
    "math.tanh": "tanh",
    "math.sin": "sin",
    "math.cos": "cos",
    "math.tan": "tan",
    "math.sinh": "sinh",
    "math.cosh": "cosh",
    "math.asin": "asin",
    "math.acos": "acos",
    "math.atan": "atan",
    "math.asinh": "asinh",
    "math.acosh": "acosh",
    "math.atanh": "atanh",
    "math.erf": "erf",
}
"""The one-operand ops that are an elementwise function (`ArrayBackend.fn`)."""

_BINARY = {"math.powf": "pow", "math.atan2": "atan2", "math.copysign": "copysign"}
"""The two-operand ops that are an elementwise function."""


def round_half_away(xp: ArrayBackend, a: Array) -> Array:
    """Rounding to the nearest integer, halves away from zero."""
    truncated = xp.fn("trunc")(a)
    away = truncated + xp.fn("sign")(a)
    return xp.where(xp.fn("abs")(a - truncated) >= 0.5, away, truncated)


def register(registry: OpRegistry[Any, Any], xp: ArrayBackend) -> None:
    """Fill `registry` with the `math` ops on `xp`."""
    for name, fn in _UNARY.items():
        registry.unary(name, xp.fn(fn))
    for name, fn in _BINARY.items():
        registry.binary(name, xp.fn(fn))
    registry.unary("math.round", lambda a: round_half_away(xp, a))
    power = xp.fn("pow")
    registry.binary("math.fpowi", lambda a, b: power(a, xp.astype_like(b, a)))

    @registry.impl("math.fma")
    def _fma(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        a, b, c = (xp.astype(x, "float64") if xp.itemsize(x) < 8 else x for x in args)
        return [a * b + c]
