"""
`cf` ops: `cf.assert` (torch-mlir's index checks) fails the evaluation.

```mlir
cf.assert %ok, "index out of range"   // error: 'cf.assert': assertion failed: ...
```
"""

import numpy as np
from xdsl.dialects import cf
from xdsl.ir import Operation

from hyperoffload.evaluators.numeric.core import Fail, Value
from hyperoffload.evaluators.numeric.frame import Frame, OpImpls

CF = OpImpls()


@CF.impl("cf.assert")
def _assert(frame: Frame, op: Operation, args: list[Value]) -> list[Value]:
    assert isinstance(op, cf.AssertOp)
    if not np.all(args[0]):
        raise Fail(f"assertion failed: {op.msg.data}")
    return []
