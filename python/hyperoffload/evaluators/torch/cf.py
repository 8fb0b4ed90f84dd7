"""
`cf` ops: `cf.assert` (torch-mlir's index checks). The condition is reduced
on the device and checked once the run ends, so that an assertion costs no
synchronisation with the host; a failed one fails the run, located at the op.

```mlir
cf.assert %ok, "index out of range"   // error: 'cf.assert': assertion failed: ...
```
"""

import torch
from xdsl.ir import Operation

from hyperoffload.evaluators.torch.registry import Scope, TorchImpls

CF = TorchImpls()


@CF.impl("cf.assert")
def _assert(
    scope: Scope, op: Operation, args: list[torch.Tensor]
) -> list[torch.Tensor]:
    scope.assertions.append((op, torch.all(args[0])))
    return []
