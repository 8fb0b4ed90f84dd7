"""
A function as it stands, put back after a trial edit: the planning loop
writes a plan into the function itself to price it as written, then puts
the function back, the very ops, values and attributes it had (copying a
32-layer training step's body takes longer than extracting it).

```python
with restored_afterwards(function) as before:
    write_plan(function, ops, plan, ...)
    costs = measured.keeping(before.unrewired())
    schedule = extract_schedule(function, costs)
# `function` holds what it held before, each op reading what it read
```

What is put back: the body's top-level ops, in their order (those the edit
inserted are erased), each op's operands at any depth, the body's arguments
(an edit may retype one: xDSL replaces it with a new value), and the
function's properties and attributes (its type, the attributes of its
arguments and results). A trial edit inserts top-level ops, rewires,
retypes and moves; one that erased an op of the body is a programming
error the restore reports.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue


class FunctionSnapshot:
    """What `restore` puts back of `function` (see the module docstring)."""

    def __init__(self, function: FuncOp):
        self.function = function
        self.block = function.body.block
        self.ops = list(self.block.ops)
        self.args = self.block.args
        self.properties = dict(function.properties)
        self.attributes = dict(function.attributes)
        self.operands: dict[Operation, tuple[SSAValue, ...]] = {
            op: op._operands  # pyright: ignore[reportPrivateUsage]
            for op in function.walk()
        }

    def unrewired(self) -> list[Operation]:
        """The top-level ops of the snapshot that still read what they read then."""
        return [
            op
            for op in self.ops
            if op._operands is self.operands[op]  # pyright: ignore[reportPrivateUsage]
        ]

    def restore(self) -> None:
        """Put `function` back as it was (see the module docstring)."""
        for op, operands in self.operands.items():
            if op._operands is not operands:  # pyright: ignore[reportPrivateUsage]
                op.operands = operands
        kept = set(self.ops)
        inserted = [op for op in self.block.ops if op not in kept]
        for op in reversed(inserted):  # readers before what they read
            op.detach()
            op.erase(safe_erase=False)
        for arg, before in zip(self.block.args, self.args, strict=True):
            if arg is not before:
                arg.replace_all_uses_with(before)
        self.block._args = self.args  # pyright: ignore[reportPrivateUsage]
        if list(self.block.ops) != self.ops:
            if len(self.block.ops) != len(self.ops):
                raise AssertionError("a trial edit erased an op of the body")
            for op in self.ops:  # put back in order: detach, then add in turn
                op.detach()
            self.block.add_ops(self.ops)
        self.function.properties = dict(self.properties)
        self.function.attributes = dict(self.attributes)


@contextmanager
def restored_afterwards(function: FuncOp) -> Generator[FunctionSnapshot]:
    """`function` put back as it is now when the block ends, however it ends."""
    snapshot = FunctionSnapshot(function)
    try:
        yield snapshot
    finally:
        snapshot.restore()
