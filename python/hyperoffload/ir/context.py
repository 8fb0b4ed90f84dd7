"""
One `Context` that reads everything HyperOffload reads: every dialect xDSL
knows (with the `linalg` and `tensor` fixes of `xdsl_fixes`) plus `hyperoffload`.

```python
from hyperoffload.ir.context import make_context
from hyperoffload.ir.parsing import parse_mlir

module = parse_mlir(make_context(), text, "model.mlir")
```
"""

from collections.abc import Callable

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.universe import Universe

from hyperoffload.dialects.hyperoffload import Hyperoffload
from hyperoffload.ir.xdsl_fixes import linalg_round_trip, tensor_round_trip


def all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Every dialect by name, lazily: xDSL's multiverse, our linalg and tensor fixes, ours."""
    dialects = dict(Universe.get_multiverse().all_dialects)
    dialects["linalg"] = linalg_round_trip
    dialects["tensor"] = tensor_round_trip
    dialects.setdefault(Hyperoffload.name, lambda: Hyperoffload)  # if not installed
    return dialects


def make_context() -> Context:
    """A fresh context with every dialect of `all_dialects()` registered."""
    ctx = Context()
    for name, factory in all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx
