"""
`hyperoffload-verify`: check the residency invariants of the dialect.

Fails when a compute op reads a remote copy, a tensor is used after its
detach, or a detach drops the only copy of live data:

```mlir
%h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
%y = arith.addf %h, %h : !hyperoffload.remote<tensor<4xf32>>  // rejected
```

`hyperoffload-opt` runs this check whenever it verifies; the pass makes it
available in pipelines of other drivers (e.g. `xdsl-opt`).
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from hyperoffload.ir.diagnostics import verify_module


@dataclass(frozen=True)
class VerifyPass(ModulePass):
    """Verify every op and the function-wide residency invariants."""

    name = "hyperoffload-verify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_module(op)
