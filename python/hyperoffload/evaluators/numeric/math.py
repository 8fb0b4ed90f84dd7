"""
`math` ops on numpy arrays, elementwise, with numpy's implementations
(Python's `math.erf` for `erf`); `fma` rounds twice for `f64` and `rsqrt`
is `1 / sqrt`.

```mlir
%e = math.exp %x : tensor<4xf32>                   // np.exp(x)
%r = math.round %x : tensor<4xf32>                 // halves away from zero
```
"""

import math
from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation

from hyperoffload.evaluators.numeric.core import Value
from hyperoffload.evaluators.numeric.frame import Frame, OpImpls

MATH = OpImpls()


def _erf(a: Value) -> Value:
    erf = np.frompyfunc(math.erf, 1, 1)
    return np.asarray(erf(a.astype(np.float64)), dtype=np.float64)


def _round_half_away(a: Value) -> Value:
    truncated = np.trunc(a)
    return np.where(np.abs(a - truncated) >= 0.5, truncated + np.sign(a), truncated)


_UNARY: dict[str, Callable[[Value], Value]] = {
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

_BINARY: dict[str, Callable[[Value, Value], Value]] = {
    "math.powf": lambda a, b: np.power(a, b),
    "math.atan2": lambda a, b: np.arctan2(a, b),
    "math.copysign": lambda a, b: np.copysign(a, b),
    "math.fpowi": lambda a, b: np.power(a, b.astype(a.dtype)),
}

for _name, _fn in _UNARY.items():
    MATH.unary(_name, _fn)
for _name, _fn2 in _BINARY.items():
    MATH.binary(_name, _fn2)


@MATH.impl("math.fma")
def _fma(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    a, b, c = (x.astype(np.float64) if x.dtype.itemsize < 8 else x for x in args)
    return [a * b + c]
