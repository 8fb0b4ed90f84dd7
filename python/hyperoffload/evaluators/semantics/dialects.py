"""
Every op whose semantics are written once, registered on one backend.

```python
IMPLS = OpImpls()
register_all(IMPLS, NUMPY)        # arith (but constants), cf, collectives, math, tensor
IMPLS.by_name["linalg.index"]     # with `linalg=True`: the index of a body's loop
```
"""

from typing import Any

from hyperoffload.evaluators.op_registry import OpRegistry
from hyperoffload.evaluators.semantics import arith, cf, collectives, linalg, math
from hyperoffload.evaluators.semantics import tensor as tensor_ops
from hyperoffload.evaluators.semantics.backend import ArrayBackend


def register_all(
    registry: OpRegistry[Any, Any], xp: ArrayBackend, linalg_index: bool = True
) -> None:
    """Fill `registry` with the ops of every dialect on `xp`."""
    for dialect in (arith, cf, collectives, math, tensor_ops):
        dialect.register(registry, xp)
    if linalg_index:
        linalg.register(registry)
