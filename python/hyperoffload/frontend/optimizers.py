"""
Optimizer updates of an exported training step, written in PyTorch ops so
that the step traces into the program (`hyperoffload.frontend.train_step`).

Each update rounds as PyTorch's own CPU kernels do in `torch.optim.SGD` and
`torch.optim.AdamW` (their default, single-tensor implementation), so that an
update applied to the same gradients gives the same bits:

* ``sgd``: ``p.add_(g, alpha=-lr)``, one fused multiply-add;
* ``adamw``: ``p.mul_(1 - lr·wd)``; ``m.lerp_(g, 1 - β1)`` (a fused
  multiply-add); ``v.mul_(β2).addcmul_(g, g, value=1 - β2)`` (``(1 - β2)·g``
  rounded, then a fused multiply-add); the bias corrections ``1 - β^step`` in
  float64; ``p.addcdiv_(m, sqrt(v) / sqrt(bc2) + eps, value=-lr / bc1)``.

Python scalars meet float32 tensors rounded to float32, as PyTorch casts
them. A fused multiply-add has no PyTorch op that torch-mlir lowers, so it is
computed in float64 and rounded: the float32 product is exact in float64 and
only the sum is rounded twice (to float64, then float32), which differs from
one rounding only when the float64 sum lands on a float32 tie.

```python
spec = OptimizerSpec("adamw", lr=1e-3, weight_decay=0.1)
p, m, v = adamw_update(p, g, m, v, torch.tensor(3), spec)  # as AdamW's 3rd step
```
"""

from __future__ import annotations

import struct

import torch
from torch import Tensor

from hyperoffload.frontend.training import OptimizerSpec


def f32(value: float) -> float:
    """
    `value` rounded to float32, as a PyTorch kernel casts a Python scalar.

    >>> f32(0.1)
    0.10000000149011612
    """
    return struct.unpack("f", struct.pack("f", value))[0]


def scalar_as(value: float, dtype: torch.dtype) -> float:
    """
    `value` rounded to `dtype` (float32, bfloat16 or float16; to nearest,
    ties to even), as a PyTorch kernel casts a Python scalar for a tensor of
    that dtype.

    >>> scalar_as(0.37, torch.bfloat16)
    0.369140625
    """
    single = f32(value)
    if dtype == torch.bfloat16:
        bits = struct.unpack("I", struct.pack("f", single))[0]
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return struct.unpack("f", struct.pack("I", bits))[0]
    if dtype == torch.float16:
        return struct.unpack("e", struct.pack("e", single))[0]
    return single


def _rounded(wide: Tensor, dtype: torch.dtype) -> Tensor:
    """A float64 result rounded to float32 (PyTorch's compute type), then `dtype`."""
    return wide.to(torch.float32).to(dtype)


def fused_multiply_add(a: Tensor | float, b: Tensor, c: Tensor) -> Tensor:
    """
    ``a * b + c`` rounded once to float32 (then to `c`'s dtype), a scalar `a`
    first rounded to `c`'s dtype (`scalar_as`): a float32 product is exact in
    float64, and the float64 sum is rounded twice.

    >>> fused_multiply_add(0.1, torch.tensor([3.0]), torch.tensor([1.0]))
    tensor([1.3000])
    """
    wide = b.to(torch.float64)
    if isinstance(a, Tensor):
        product = a.to(torch.float64) * wide
    else:
        product = wide * scalar_as(a, c.dtype)
    return _rounded(product + c.to(torch.float64), c.dtype)


def sgd_update(p: Tensor, g: Tensor, spec: OptimizerSpec) -> Tensor:
    """
    `torch.optim.SGD`'s ``p.add_(g, alpha=-lr)``: ``p - lr·g``, one rounding
    (bfloat16 and float16 weights: to float32, then to their dtype, as the
    vectorised kernel does; PyTorch rounds the few elements past the last
    full vector otherwise, after each operation).
    """
    return fused_multiply_add(-spec.lr, g, p)


def lerp(start: Tensor, end: Tensor, weight: float) -> Tensor:
    """
    PyTorch's ``start.lerp(end, weight)`` (CPU): a fused multiply-add from
    `start` (``|weight| < 0.5``) or from `end`.
    """
    w = f32(weight)
    if abs(w) < 0.5:
        return fused_multiply_add(w, end - start, start)
    return fused_multiply_add(f32(w - 1.0), end - start, end)


def adamw_update(
    p: Tensor, g: Tensor, m: Tensor, v: Tensor, step: Tensor, spec: OptimizerSpec
) -> tuple[Tensor, Tensor, Tensor]:
    """
    One `torch.optim.AdamW` update of the float32 weights `p` by the float32
    gradients `g`, with the first and second moments `m` and `v`; `step` is
    the 0-d step count of this update (1 for the first, as AdamW's
    ``state["step"]`` after its increment). Returns the new `p`, `m`, `v`.
    """
    beta1, beta2 = spec.betas
    if spec.weight_decay != 0:
        p = p * f32(1 - spec.lr * spec.weight_decay)
    m = lerp(m, g, 1 - beta1)
    v = fused_multiply_add(g * f32(1 - beta2), g, v * f32(beta2))
    count = step.to(torch.float64)
    correction1 = 1 - torch.pow(beta1, count)
    correction2 = 1 - torch.pow(beta2, count)
    # lr / bc1 as a division (a Python float over a tensor would trace as a
    # reciprocal and a product, rounded twice)
    step_size = (correction1.new_full((), spec.lr) / correction1).to(torch.float32)
    root = torch.sqrt(correction2).to(torch.float32)
    denom = torch.sqrt(v) / root + f32(spec.eps)
    return p + (-step_size) * m / denom, m, v
