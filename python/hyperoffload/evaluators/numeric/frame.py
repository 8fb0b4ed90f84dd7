"""
The state the op implementations see: one function activation's values,
split by residency, and the registry the per-dialect modules fill, as
xDSL's `InterpreterFunctions` are filled with `@impl`.

```python
ARITH = OpImpls()

@ARITH.impl("arith.select")
def _select(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    return [np.where(args[0], args[1], args[2])]
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeAlias

from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, SSAValue

from hyperoffload.dialects.hyperoffload import RemoteType
from hyperoffload.dialects.residency import describe
from hyperoffload.evaluators.numeric.core import Value, error


class Interpreter(Protocol):
    """What an op with regions or a call needs from the interpreter."""

    def run_block(self, frame: Frame, block: Block) -> Operation:
        """Run every op of `block` but its terminator, which is returned."""
        ...

    def invoke(
        self, function: FuncOp, args: Sequence[Value], depth: int
    ) -> list[Value]:
        """Run `function` on `args` (remote arguments start outside HBM)."""
        ...


@dataclass
class Frame:
    """The values of one function activation, split by residency."""

    interpreter: Interpreter
    depth: int
    device: dict[SSAValue, Value] = field(default_factory=dict[SSAValue, Value])
    remote: dict[SSAValue, Value] = field(default_factory=dict[SSAValue, Value])
    loop_indices: list[Value] = field(default_factory=list[Value])

    def read(self, op: Operation, value: SSAValue) -> Value:
        """The device copy of `value`, read by compute op `op`."""
        found = self.device.get(value)
        if found is not None:
            return found
        if value in self.remote:
            raise error(
                op,
                f"'{op.name}' reads {describe(value)}, a remote copy; prefetch it first",
            )
        raise error(
            op,
            f"read of {describe(value)}, which is not resident in HBM, by '{op.name}'",
        )

    def forward(self, op: Operation, value: SSAValue) -> tuple[Value, bool]:
        """A value passed on by a call or return: (array, is it a remote copy)."""
        if value in self.remote:
            return self.remote[value], True
        return self.read(op, value), False

    def bind(self, value: SSAValue, array: Value) -> None:
        store = self.remote if isinstance(value.type, RemoteType) else self.device
        store[value] = array


Impl: TypeAlias = Callable[[Frame, Operation, list[Value]], list[Value]]
"""Takes the op's operands, read from HBM; returns its results' values."""


class OpImpls:
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

    def unary(self, name: str, fn: Callable[[Value], Value]) -> None:
        """Register an op computing `fn` of its operand."""
        self.by_name[name] = lambda frame, op, args: [fn(args[0])]

    def binary(self, name: str, fn: Callable[[Value, Value], Value]) -> None:
        """Register an op computing `fn` of its two operands."""
        self.by_name[name] = lambda frame, op, args: [fn(args[0], args[1])]
