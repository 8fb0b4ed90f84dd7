"""
The torch `ArrayBackend`: values are torch tensors of their type's dtype
(`bf16` as `torch.bfloat16`) on the run's device (a scalar may stay a 0-d
tensor on the host), a slice or reshape is a view of its source, a
`tensor.empty` is lazy until read (`values.lazy`), an assertion is checked
once the run ends.

```python
TORCH.fn("asin")(x)                           # torch.asin(x)
TORCH.where(cond, a, b)                       # torch.where, a host scalar moved to the device
```

`maximumf` and `minimumf` are `torch.maximum` and `torch.minimum`: NaN
propagates, but of +0 and -0 the first operand is returned (numpy's backend
orders them, -0 < +0). Unsigned integer ops read 8- to 32-bit values as
unsigned exactly; a 64-bit value is read as signed (torch has no full
`uint64` arithmetic), which differs only for values of 2^63 and above.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

import torch
from xdsl.ir import Attribute, Operation, SSAValue

from hyperoffload.evaluators.semantics.backend import ArrayBackend
from hyperoffload.evaluators.torch.registry import Scope
from hyperoffload.evaluators.torch.tensor import materialised, reshaped
from hyperoffload.evaluators.torch.values import lazy, torch_dtype

Tensor = torch.Tensor

_NARROW_SIGNED = {torch.int8: 8, torch.int16: 16, torch.int32: 32}


def _floor_div(a: Tensor, b: Tensor) -> Tensor:
    return torch.div(a, b, rounding_mode="floor")


def _div_trunc(a: Tensor, b: Tensor) -> Tensor:
    return torch.div(a, b, rounding_mode="trunc")


def _cbrt(x: Tensor) -> Tensor:
    return torch.sign(x) * torch.abs(x).pow(1.0 / 3.0)


class TorchBackend(ArrayBackend):
    """The primitives on torch tensors; the scope is the executor's `Scope`."""

    library = torch
    own: ClassVar[Mapping[str, Callable[..., Tensor]]] = {
        "maximumf": torch.maximum,
        "minimumf": torch.minimum,
        "floor_div": _floor_div,
        "div_trunc": _div_trunc,
        "roundeven": torch.round,
        "rsqrt": torch.rsqrt,
        "cbrt": _cbrt,
        "erf": torch.erf,
    }

    def astype(self, x: Tensor, dtype: str) -> Tensor:
        return x.to(getattr(torch, dtype))

    def astype_like(self, x: Tensor, like: Tensor) -> Tensor:
        return x.to(like.dtype)

    def kind(self, x: Tensor) -> str:
        if x.dtype == torch.bool:
            return "b"
        if x.is_floating_point():
            return "f"
        return "i" if x.dtype.is_signed else "u"

    def itemsize(self, x: Tensor) -> int:
        return x.element_size()

    def cast(self, x: Tensor, type_: Attribute) -> Tensor:
        return x.to(torch_dtype(type_))

    def unsigned(self, x: Tensor) -> Tensor:
        bits = _NARROW_SIGNED.get(x.dtype)
        if bits is None:
            return x
        return x.to(torch.int64) & ((1 << bits) - 1)

    def float_to_int(self, x: Tensor, unsigned: bool, type_: Attribute) -> Tensor:
        return torch.trunc(x).to(torch.int64)

    def bitcast(self, x: Tensor, source: Attribute, target: Attribute) -> Tensor:
        return x.view(torch_dtype(target))

    def bools(self, a: Tensor, b: Tensor, value: bool) -> Tensor:
        like = a + b
        if value:
            return torch.ones_like(like, dtype=torch.bool)
        return torch.zeros_like(like, dtype=torch.bool)

    def where(self, cond: Tensor, a: Tensor, b: Tensor) -> Tensor:
        # torch.where wants its operands on one device: a host scalar joins the others
        args = [cond, a, b]
        devices = {t.device for t in args if t.device.type != "cpu"}
        if devices:
            target = next(iter(devices))
            args = [t.to(target) for t in args]
        return torch.where(args[0], args[1], args[2])

    def index(self, value: int) -> Tensor:
        return torch.tensor(value, dtype=torch.int64)

    def empty(self, shape: Sequence[int], type_: Attribute) -> Tensor:
        return lazy(list(shape), torch_dtype(type_))

    def new_zeros(self, like: Tensor, shape: Sequence[int]) -> Tensor:
        return like.new_zeros(tuple(shape))

    def readable(self, scope: Scope, x: Tensor) -> Tensor:
        return materialised(x, scope.device)

    def copy(self, x: Tensor) -> Tensor:
        return x.clone()

    def part(self, x: Tensor) -> Tensor:
        return x

    def reshape(self, x: Tensor, shape: Sequence[int]) -> Tensor:
        return reshaped(x, shape)

    def pad(self, x: Tensor, widths: Sequence[tuple[int, int]], fill: object) -> Tensor:
        flat = [w for low, high in reversed(widths) for w in (low, high)]
        value = float(fill) if x.is_floating_point() else int(fill)  # type: ignore[arg-type]
        return torch.nn.functional.pad(x, flat, value=value)

    def concat(self, parts: Sequence[Tensor], dim: int) -> Tensor:
        return torch.cat(list(parts), dim=dim)

    def stack(self, scope: Scope, elements: Sequence[Tensor]) -> Tensor:
        return torch.stack([e.to(scope.device) for e in elements])

    def splat(self, scope: Scope, x: Tensor, shape: Sequence[int]) -> Tensor:
        return x.to(scope.device).expand(list(shape))

    def gather(self, scope: Scope, x: Tensor, indices: Sequence[Tensor]) -> Tensor:
        """Ints where all indices are scalars, else tensors that broadcast (a gather)."""
        if all(i.dim() == 0 for i in indices):
            return x[tuple(int(i) for i in indices)]
        return x[tuple(i.to(x.device) for i in indices)]

    def outer(
        self, scope: Scope, op: Operation, value: SSAValue, args: Sequence[Tensor]
    ) -> Tensor:
        """The executor passes a region's reads after the operands (`region_reads`)."""
        return args[len(op.operands)]

    def check(self, scope: Scope, op: Operation, cond: Tensor, message: str) -> None:
        scope.assertions.append((op, torch.all(cond)))


TORCH = TorchBackend()
