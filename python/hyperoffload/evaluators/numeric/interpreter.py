"""
The numpy evaluator's driver: runs a function op by op, dispatching each op
to its dialect's implementation, and checks that compute reads only values
resident in HBM. An op with regions runs them in the same frame
(`linalg` bodies, `scf.if`): values from above are read with the same
checks.

```python
evaluate(module).outputs               # the first public function, random inputs
evaluate(module, [x, w], "mlp").outputs
```
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.traits import IsTerminator

from hyperoffload.analysis.extract import ExtractionError, main_function
from hyperoffload.evaluators.numeric.backend import NUMPY
from hyperoffload.evaluators.numeric.constants import CONSTANTS
from hyperoffload.evaluators.numeric.core import Fail, Value, coerce, error
from hyperoffload.evaluators.numeric.frame import Frame, Impl, OpImpls
from hyperoffload.evaluators.numeric.func import run_call
from hyperoffload.evaluators.numeric.hyperoffload import OffloadOp, run_offload_op
from hyperoffload.evaluators.numeric.inputs import prepare_inputs, random_inputs
from hyperoffload.evaluators.numeric.linalg import run_structured
from hyperoffload.evaluators.numeric.scf import run_if
from hyperoffload.evaluators.semantics.dialects import register_all
from hyperoffload.evaluators.semantics.linalg import as_structured

_OPS = OpImpls()
register_all(_OPS, NUMPY)

IMPLS: dict[str, Impl] = {**_OPS.by_name, **CONSTANTS.by_name}
"""The ops that compute: their operands are read from HBM, their results coerced."""


@dataclass
class NumericResult:
    """The values a function returned, in order."""

    outputs: list[np.ndarray[Any, Any]]


@dataclass(frozen=True)
class _Interpreter:
    """Runs the functions of `module`."""

    module: ModuleOp

    def run_block(self, frame: Frame, block: Block) -> Operation:
        last = block.last_op
        for op in block.ops:
            if op is last and op.has_trait(IsTerminator):
                return op
            self.run_op(frame, op)
        parent = block.parent_op()
        assert parent is not None
        raise error(parent, f"'{parent.name}' has a block without a terminator")

    def run_op(self, frame: Frame, op: Operation) -> None:
        if isinstance(op, OffloadOp):
            return run_offload_op(frame, op)
        if isinstance(op, func.CallOp):
            return run_call(frame, op)
        if isinstance(op, scf.IfOp):
            return run_if(frame, op)
        structured = as_structured(op)
        impl = IMPLS.get(op.name)
        if structured is None and impl is None:
            raise error(op, f"'{op.name}' is not supported by the numeric evaluator")
        try:
            if structured is not None:
                results = run_structured(frame, op, structured)
            else:
                assert impl is not None
                results = impl(frame, op, [frame.read(op, v) for v in op.operands])
            for result, value in zip(op.results, results, strict=True):
                frame.device[result] = coerce(value, result.type)
        except (Fail, ValueError, IndexError, TypeError) as err:
            raise error(op, f"'{op.name}': {err}") from None

    def invoke(
        self, function: func.FuncOp, args: Sequence[Value], depth: int
    ) -> list[Value]:
        if function.is_declaration or len(function.body.blocks) != 1:
            raise error(
                function, f"@{function.sym_name.data} must have a single-block body"
            )
        if len(args) != len(function.args):
            raise error(
                function,
                f"@{function.sym_name.data} takes {len(function.args)} argument(s), got {len(args)}",
            )
        frame = Frame(self, depth)
        for arg, value in zip(function.args, args, strict=True):
            frame.bind(arg, value)
        terminator = self.run_block(frame, function.body.block)
        return [frame.forward(terminator, v)[0] for v in terminator.operands]


def find_function(module: ModuleOp, name: str | None) -> func.FuncOp:
    """The function `name`, or the first public function with a body."""
    try:
        return main_function(module, name)
    except ExtractionError as err:
        raise error(module, f"{err} to evaluate") from None


def evaluate(
    module: ModuleOp,
    inputs: Sequence[np.ndarray[Any, Any]] | None = None,
    function: str | None = None,
    seed: int = 0,
) -> NumericResult:
    """
    Run `function` (default: the first public function with a body) on
    `inputs` (default: `random_inputs(function, seed)`). Raises
    `NumericError` at the op that cannot be evaluated or reads a value that
    is not resident in HBM.
    """
    func_op = find_function(module, function)
    if inputs is None:
        inputs = random_inputs(func_op, seed)
    with np.errstate(all="ignore"):
        outputs = _Interpreter(module).invoke(
            func_op, prepare_inputs(func_op, inputs), 0
        )
    return NumericResult([np.array(o, copy=True) for o in outputs])
