"""
What the user wrote: the named linalg op (`linalg.fill`, `linalg.batch_matmul`)
that upstream MLIR generalised into the `linalg.generic` xDSL reads
(`hyperoffload.ir.parsing`), so that a diagnostic names the op in the input
and not one the user never wrote.

```python
note_generalised(generic_op, "linalg.fill")
written_as(generic_op)  # "'linalg.fill' (generalised to 'linalg.generic')"
written_as(other_op)    # "'arith.addf'"
```

The note lives as long as the op object (a weak map): an op a pass builds
anew is named as it is.
"""

from weakref import WeakKeyDictionary

from xdsl.ir import Operation

_GENERALISED: WeakKeyDictionary[Operation, str] = WeakKeyDictionary()


def note_generalised(op: Operation, named: str) -> None:
    """`op` was generalised by upstream MLIR from the named op `named`."""
    if named != op.name:
        _GENERALISED[op] = named


def generalised_from(op: Operation) -> str | None:
    """The named op `op` was generalised from, if it was."""
    return _GENERALISED.get(op)


def written_as(op: Operation) -> str:
    """`'name'` of `op` for a diagnostic, with the op the user wrote if it differs."""
    named = _GENERALISED.get(op)
    if named is None:
        return f"'{op.name}'"
    return f"'{named}' (generalised to '{op.name}')"
