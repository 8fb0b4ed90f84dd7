"""
What the torch op implementations see, and the registry the shared
semantics fill on the torch backend (`torch/ops.py`; an `OpRegistry`, as the
numeric evaluator's `frame.OpImpls`).

```python
OPS = TorchImpls()
register_all(OPS, TORCH)                       # semantics.dialects, torch.backend
OPS.by_name["arith.select"](scope, op, [c, a, b])  # [torch.where(c, a, b)]
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

from hyperoffload.evaluators.op_registry import OpRegistry


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


class TorchImpls(OpRegistry[Scope, torch.Tensor]):
    """The torch implementations of one dialect's ops, by op name."""
