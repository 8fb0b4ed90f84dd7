"""
The torch executor's op implementations: the semantics written once
(`hyperoffload.evaluators.semantics`) on the torch backend, and constants,
built by the numeric evaluator and converted (a scalar stays a 0-d tensor on
the host, a tensor goes to the device).

```python
IMPLS["arith.addf"](scope, op, [x, c])     # [x + c], on the device
BODY_IMPLS["linalg.index"]                 # in a linalg body: a loop's index
```
"""

from typing import cast

import torch
from xdsl.ir import Operation

from hyperoffload.evaluators.numeric.constants import CONSTANTS
from hyperoffload.evaluators.numeric.core import coerce
from hyperoffload.evaluators.numeric.frame import Frame
from hyperoffload.evaluators.semantics import linalg
from hyperoffload.evaluators.semantics.dialects import register_all
from hyperoffload.evaluators.torch.backend import TORCH
from hyperoffload.evaluators.torch.registry import Impl, Scope, TorchImpls
from hyperoffload.evaluators.torch.values import from_numpy

_OPS = TorchImpls()
register_all(_OPS, TORCH, linalg_index=False)


@_OPS.impl("arith.constant")
def _constant(
    scope: Scope, op: Operation, args: list[torch.Tensor]
) -> list[torch.Tensor]:
    """The numeric evaluator's value; a tensor constant is placed on the device."""
    numeric = CONSTANTS.by_name["arith.constant"]
    # the numeric implementation of a constant reads no frame state
    value = coerce(numeric(cast(Frame, None), op, [])[0], op.results[0].type)
    tensor = from_numpy(value, op.results[0].type)
    return [tensor.to(scope.device) if tensor.dim() > 0 else tensor]


_LINALG = TorchImpls()
linalg.register(_LINALG)

IMPLS: dict[str, Impl] = dict(_OPS.by_name)
"""The ops that compute outside `linalg` bodies (structured ops are run apart)."""

BODY_IMPLS: dict[str, Impl] = {**IMPLS, **_LINALG.by_name}
"""The ops a body may hold."""
