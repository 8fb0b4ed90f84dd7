"""
`math` ops as torch operations, elementwise, with the numeric evaluator's
semantics (`hyperoffload.evaluators.numeric.math`): `round` rounds halves
away from zero, `fma` is computed in `f64` and rounded once more.

```mlir
%e = math.exp %x : tensor<4xf32>                   // torch.exp(x)
%r = math.round %x : tensor<4xf32>                 // halves away from zero
```

Transcendental functions are torch's (vectorised, within an ulp or two of
numpy's), `rsqrt` is `torch.rsqrt`.
"""

from collections.abc import Callable

import torch
from xdsl.ir import Operation

from hyperoffload.evaluators.torch.registry import Scope, TorchImpls

MATH = TorchImpls()

Tensor = torch.Tensor


def _round_half_away(a: Tensor) -> Tensor:
    truncated = torch.trunc(a)
    return torch.where(
        torch.abs(a - truncated) >= 0.5, truncated + torch.sign(a), truncated
    )


def _cbrt(a: Tensor) -> Tensor:
    return torch.sign(a) * torch.abs(a).pow(1.0 / 3.0)


_UNARY: dict[str, Callable[[Tensor], Tensor]] = {
    "math.absf": torch.abs,
    "math.absi": torch.abs,
    "math.ceil": torch.ceil,
    "math.floor": torch.floor,
    "math.trunc": torch.trunc,
    "math.round": _round_half_away,
    "math.roundeven": torch.round,
    "math.exp": torch.exp,
    "math.exp2": torch.exp2,
    "math.expm1": torch.expm1,
    "math.log": torch.log,
    "math.log2": torch.log2,
    "math.log10": torch.log10,
    "math.log1p": torch.log1p,
    "math.sqrt": torch.sqrt,
    "math.rsqrt": torch.rsqrt,
    "math.cbrt": _cbrt,
    "math.tanh": torch.tanh,
    "math.sin": torch.sin,
    "math.cos": torch.cos,
    "math.tan": torch.tan,
    "math.sinh": torch.sinh,
    "math.cosh": torch.cosh,
    "math.asin": torch.asin,
    "math.acos": torch.acos,
    "math.atan": torch.atan,
    "math.asinh": torch.asinh,
    "math.acosh": torch.acosh,
    "math.atanh": torch.atanh,
    "math.erf": torch.erf,
}

_BINARY: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "math.powf": torch.pow,
    "math.atan2": torch.atan2,
    "math.copysign": torch.copysign,
    "math.fpowi": lambda a, b: torch.pow(a, b.to(a.dtype)),
}

for _name, _fn in _UNARY.items():
    MATH.unary(_name, _fn)
for _name, _fn2 in _BINARY.items():
    MATH.binary(_name, _fn2)


@MATH.impl("math.fma")
def _fma(scope: Scope, op: Operation, args: list[Tensor]) -> list[Tensor]:
    a, b, c = (x.to(torch.float64) if x.element_size() < 8 else x for x in args)
    return [a * b + c]
