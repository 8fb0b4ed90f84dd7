"""
The ops of a module a verifier accepted, each with what it was then, so that
a module verified again (after each pass) has only the ops a pass inserted
or changed verified again. What an op's verifier reads is its own: its
operands and results (a retyped value is a new value), properties and
attributes, its parent and whether it ends its block, its regions' blocks
(their arguments, their last op). An op whose verifier looks beyond it (a
call looks up its callee, a symbol table its symbols) is verified every
time. Only the module verified last is remembered. A module read from one
upstream MLIR parsed (and so verified) starts with every op upstream knows
accepted (`accepted_by_upstream`).

```python
accepted = accepted_ops(module)
for op in accepted.changed(module.walk()):
    op.verify(verify_nested_ops=False)
    accepted.accept(op)
```
On the 32-layer LLaMA-3-8B training step, xDSL's verifiers took 1.3 s of
a pipeline's final check; the plan written changes a few thousand of its
22,000 ops.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.traits import SymbolTable, SymbolUserOpInterface

_State = tuple[object, ...]


def _state(op: Operation) -> _State:
    """What `op`'s verifier reads (see the module docstring)."""
    regions = tuple(
        (block.args, block.last_op) for region in op.regions for block in region.blocks
    )
    return (
        op._operands,  # pyright: ignore[reportPrivateUsage]
        op.results,
        op.parent,
        op.next_op is None,
        tuple(op.properties.items()),
        tuple(op.attributes.items()),
        regions,
    )


_LOOKS_BEYOND: dict[type[Operation], bool] = {}
"""Each op class -> whether its verifier reads more than the op (symbols)."""


def _looks_beyond(op: Operation) -> bool:
    kind = type(op)
    if kind not in _LOOKS_BEYOND:
        _LOOKS_BEYOND[kind] = op.has_trait(SymbolUserOpInterface) or op.has_trait(
            SymbolTable
        )
    return _LOOKS_BEYOND[kind]


class AcceptedOps:
    """The ops of `module` a verifier accepted, with what each was then."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        self.states: dict[Operation, _State] = {}

    def changed(self, ops: Iterable[Operation]) -> Iterator[Operation]:
        """Those of `ops` not accepted as they are now."""
        states = self.states
        for op in ops:
            known = states.get(op)
            if known is None or _looks_beyond(op) or known != _state(op):
                yield op

    def accept(self, op: Operation) -> None:
        """`op`, as it is now, passed."""
        self.states[op] = _state(op)


_LATEST: list[AcceptedOps] = []
"""
The accepted ops of the module verified last, only: what an op was refers
to the module it is in, so each module remembered would stay alive.
"""


def accepted_ops(module: ModuleOp) -> AcceptedOps:
    """
    The ops of `module` accepted so far: none, the first time, or when
    another module was verified since.
    """
    if not _LATEST or _LATEST[0].module is not module:
        _LATEST[:] = [AcceptedOps(module)]
    return _LATEST[0]


def accepted_by_upstream(module: ModuleOp, unregistered: Iterable[str]) -> None:
    """
    Every op of `module`, read from a module upstream MLIR parsed (its parse
    verifies), accepted but those named `unregistered` (unknown to upstream,
    so not verified: ours).
    """
    unverified = frozenset(unregistered)
    accepted = accepted_ops(module)
    for op in module.walk():
        if op.name not in unverified:
            accepted.accept(op)
