"""
`hyperoffload-strip`: remove every offload op (`prefetch`, `store`,
`detach`), giving the reference program that the offloaded one must compute
exactly (see `hyperoffload.ir.strip` for the rules); collectives stay: they
compute.

```mlir
%y = hyperoffload.prefetch %h : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
%r = arith.addf %y, %v : tensor<4xf32>
```
becomes `%r = arith.addf %x, %v` where `%h` stored `%x`.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from hyperoffload.ir.strip import reject_gathers, strip_offload_ops


@dataclass(frozen=True)
class StripPass(ModulePass):
    """Remove all hyperoffload ops, keeping what the program computes."""

    name = "hyperoffload-strip"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        reject_gathers(op, self.name)
        strip_offload_ops(op)
