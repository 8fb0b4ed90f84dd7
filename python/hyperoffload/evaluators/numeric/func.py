"""
`func.call`: the callee runs in a frame of its own, remote arguments stay
remote. (`func.return` is the terminator the interpreter stops at.)

```mlir
%r = func.call @layer(%x, %w) : (tensor<4xf32>, !hyperoffload.remote<tensor<4xf32>>) -> tensor<4xf32>
```
"""

from xdsl.dialects import func
from xdsl.traits import SymbolTable

from hyperoffload.evaluators.numeric.core import error
from hyperoffload.evaluators.numeric.frame import Frame

MAX_CALL_DEPTH = 64


def run_call(frame: Frame, op: func.CallOp) -> None:
    """Run the callee of `op` on its arguments and bind the results."""
    callee = SymbolTable.lookup_symbol(op, op.callee)
    if not isinstance(callee, func.FuncOp):
        raise error(op, f"call of unknown function {op.callee}")
    if frame.depth >= MAX_CALL_DEPTH:
        raise error(op, f"calls nested deeper than {MAX_CALL_DEPTH}")
    args = [frame.forward(op, v) for v in op.arguments]
    results = frame.interpreter.invoke(callee, [a for a, _ in args], frame.depth + 1)
    for result, value in zip(op.res, results, strict=True):
        frame.bind(result, value)
