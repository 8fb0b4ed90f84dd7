"""
A registry of op implementations by op name, shared by the evaluators: the
semantics modules fill one per evaluator (on its array backend), the driver
dispatches on `op.name`. Generic over what an implementation sees (the numpy
`Frame`, the torch `Scope`) and the values it computes on (numpy arrays,
torch tensors).

```python
OPS = OpRegistry[Frame, np.ndarray]()

@OPS.impl("arith.select")
def _select(frame, op, args):
    return [np.where(args[0], args[1], args[2])]
```
"""

from collections.abc import Callable
from typing import Generic, TypeVar

from xdsl.ir import Operation

ScopeT = TypeVar("ScopeT")
ValueT = TypeVar("ValueT")


class OpRegistry(Generic[ScopeT, ValueT]):
    """The implementations of one dialect's ops, by op name."""

    def __init__(self) -> None:
        self.by_name: dict[
            str, Callable[[ScopeT, Operation, list[ValueT]], list[ValueT]]
        ] = {}

    def impl(
        self, *names: str
    ) -> Callable[
        [Callable[[ScopeT, Operation, list[ValueT]], list[ValueT]]],
        Callable[[ScopeT, Operation, list[ValueT]], list[ValueT]],
    ]:
        """Register the decorated function for the ops `names`."""

        def register(
            fn: Callable[[ScopeT, Operation, list[ValueT]], list[ValueT]],
        ) -> Callable[[ScopeT, Operation, list[ValueT]], list[ValueT]]:
            for name in names:
                self.by_name[name] = fn
            return fn

        return register

    def unary(self, name: str, fn: Callable[[ValueT], ValueT]) -> None:
        """Register an op computing `fn` of its operand."""
        self.by_name[name] = lambda scope, op, args: [fn(args[0])]

    def binary(self, name: str, fn: Callable[[ValueT, ValueT], ValueT]) -> None:
        """Register an op computing `fn` of its two operands."""
        self.by_name[name] = lambda scope, op, args: [fn(args[0], args[1])]


class Fail(Exception):
    """Raised by an op implementation; the evaluator running it locates it at the op."""


def not_resident(op: Operation, value_name: str, remote: bool) -> str:
    """Why compute op `op` cannot read a value: a remote copy, or not in HBM."""
    if remote:
        return f"'{op.name}' reads {value_name}, a remote copy; prefetch it first"
    return f"read of {value_name}, which is not resident in HBM, by '{op.name}'"
