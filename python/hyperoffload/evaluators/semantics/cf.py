"""
`cf` ops over an `ArrayBackend`: `cf.assert` (torch-mlir's index checks)
fails the run, located at the op; when is the backend's (`check`: numpy at
once, torch once the run ends, so that an assertion costs no
synchronisation with the device).

```mlir
cf.assert %ok, "index out of range"   // error: 'cf.assert': assertion failed: ...
```
"""

from typing import Any

from xdsl.dialects import cf
from xdsl.ir import Operation

from hyperoffload.evaluators.op_registry import OpRegistry
from hyperoffload.evaluators.semantics.backend import Array, ArrayBackend, Scope


def register(registry: OpRegistry[Any, Any], xp: ArrayBackend) -> None:
    """Fill `registry` with the `cf` ops on `xp`."""

    @registry.impl("cf.assert")
    def _assert(scope: Scope, op: Operation, args: list[Array]) -> list[Array]:
        assert isinstance(op, cf.AssertOp)
        xp.check(scope, op, args[0], f"assertion failed: {op.msg.data}")
        return []
