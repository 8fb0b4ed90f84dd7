"""
Offload annotations a model carries into the IR (written by
`hyperoffload.frontend.annotations`), as constraints the planner honours:

```mlir
func.func @f(%w: tensor<256xf32> {hyperoffload.tier = #hyperoffload.tier<remote>,
                                  hyperoffload.prefetch_distance = 3 : i64}) ...
```

The fetch of `%w` is issued at least 3 ops before the use it serves,
however soon just in time would be (the seeds' ``jit.prefetch(distance=3)``);
the pipeline's ``prefetch-distance`` is a floor for every value, the
annotation one value's own.
"""

from xdsl.dialects.builtin import IntegerAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument, SSAValue

PREFETCH_DISTANCE_ATTR = "hyperoffload.prefetch_distance"
"""Argument attribute: its fetches are issued at least this many ops before their use."""


def annotated_prefetch_distance(value: SSAValue) -> int:
    """The prefetch distance `value`'s argument attribute asks for (0: none)."""
    if not isinstance(value, BlockArgument):
        return 0
    function = value.block.parent_op()
    if not isinstance(function, FuncOp) or function.arg_attrs is None:
        return 0
    attrs = function.arg_attrs.data[value.index]
    distance = attrs.data.get(PREFETCH_DISTANCE_ATTR)
    return distance.value.data if isinstance(distance, IntegerAttr) else 0
