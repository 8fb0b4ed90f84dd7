"""
The state the op implementations see: one function activation's values,
split by residency, and the registry the shared semantics fill on the numpy
backend (`numeric/interpreter.py`), as xDSL's `InterpreterFunctions` are
filled with `@impl`.

```python
OPS = OpImpls()
register_all(OPS, NUMPY)                       # semantics.dialects, numeric.backend
OPS.by_name["arith.select"](frame, op, [c, a, b])  # [np.where(c, a, b)]
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
from hyperoffload.evaluators.op_registry import OpRegistry, not_resident


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
        raise error(op, not_resident(op, describe(value), value in self.remote))

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


class OpImpls(OpRegistry[Frame, Value]):
    """The numpy implementations of one dialect's ops, by op name."""
