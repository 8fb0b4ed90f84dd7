"""
When the executor may drop a value: the values each top-level op of a
function reads (its operands and what its regions capture) and the op after
which each value is dead. Arguments, constants and results are *pinned*, as
the simulator's buffers are: the caller owns them, and they are never freed
implicitly (a `detach` still frees a device copy).

```python
live = Liveness.of(func_op)
live.reads[i]    # the values op i reads, defined outside it
live.dying[i]    # the values dead once op i has run (read last there, or never read)
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.ir import Block, BlockArgument, Operation, SSAValue


def _defined_in(value: SSAValue, block: Block) -> bool:
    if isinstance(value, BlockArgument):
        return value.owner is block
    owner = value.owner
    return isinstance(owner, Operation) and owner.parent_block() is block


def _reads(op: Operation, block: Block) -> list[SSAValue]:
    """The values of `block` that `op` or an op nested in it reads, in order, once each."""
    seen: dict[SSAValue, None] = {}
    for nested in op.walk():
        for value in nested.operands:
            if _defined_in(value, block):
                seen.setdefault(value, None)
    return list(seen)


@dataclass(frozen=True)
class Liveness:
    ops: list[Operation]
    """The top-level ops, in order."""
    reads: list[list[SSAValue]]
    dying: list[list[SSAValue]]
    pinned: frozenset[SSAValue]

    @staticmethod
    def of(function: func.FuncOp) -> Liveness:
        block = function.body.block
        ops = list(block.ops)
        reads = [_reads(op, block) for op in ops]
        last: dict[SSAValue, int] = {}
        for index, op in enumerate(ops):
            for result in op.results:
                last[result] = index
            for value in reads[index]:
                last[value] = index
        pinned: set[SSAValue] = set(block.args)
        for op in ops:
            if isinstance(op, arith.ConstantOp):
                pinned.update(op.results)
            if isinstance(op, func.ReturnOp):
                pinned.update(op.operands)
        dying: list[list[SSAValue]] = [[] for _ in ops]
        for value, index in last.items():
            if value not in pinned:
                dying[index].append(value)
        return Liveness(ops, reads, dying, frozenset(pinned))
