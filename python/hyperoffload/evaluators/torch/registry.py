"""
What the torch op implementations see, and the registry the per-dialect
modules fill, as the numeric evaluator's `frame.OpImpls` is filled.

```python
ARITH = TorchImpls()

@ARITH.impl("arith.select")
def _select(scope: Scope, op: Operation, args: list[torch.Tensor]) -> list[torch.Tensor]:
    return [torch.where(args[0], args[1], args[2])]
```

Inside a `linalg` body an operand is a tensor that broadcasts to the op's
iteration domain (one element per point), so the same implementations serve
ops on whole tensors and ops in bodies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeAlias

import torch
from xdsl.ir import Operation


@dataclass
class Scope:
    """The device results go to, the loop indices of the body being run, assertions."""

    device: torch.device
    loop_indices: list[torch.Tensor] = field(default_factory=list[torch.Tensor])
    """Inside a `linalg` body: the index of each loop, broadcastable to the domain."""
    assertions: list[tuple[Operation, torch.Tensor]] = field(
        default_factory=list[tuple[Operation, torch.Tensor]]
    )
    """`cf.assert` conditions, each a 0-d bool tensor, checked once the run ends."""


Impl: TypeAlias = Callable[[Scope, Operation, list[torch.Tensor]], list[torch.Tensor]]
"""Takes the op's operands; returns its results (the executor casts them to their types)."""


class TorchImpls:
    """The implementations of one dialect's ops, by op name."""

    def __init__(self) -> None:
        self.by_name: dict[str, Impl] = {}

    def impl(self, *names: str) -> Callable[[Impl], Impl]:
        """Register the decorated function for the ops `names`."""

        def register(fn: Impl) -> Impl:
            for name in names:
                self.by_name[name] = fn
            return fn

        return register

    def unary(self, name: str, fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
        """Register an op computing `fn` of its operand."""
        self.by_name[name] = lambda scope, op, args: [fn(args[0])]

    def binary(
        self, name: str, fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    ) -> None:
        """Register an op computing `fn` of its two operands."""
        self.by_name[name] = lambda scope, op, args: [fn(args[0], args[1])]
