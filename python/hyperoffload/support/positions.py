"""
The three kinds of position the planning layers count in, each its own
type so that one is not read as another (pyright refuses an `int`, or a
position of another kind, where one is asked for):

- `OpIndex`: a function's top-level op as the program graph lists it
  (`ProgramGraph.ops`; -1: the function's entry);
- `ComputeStep`: a `Compute` step of a schedule, in the order they run;
- `SkeletonPosition`: a top-level op that is not an offload op
  (`planning.arrange.Skeleton`), where an offload op hangs before it.

```mlir
%e = tensor.empty() : tensor<4x4xf32>                             // op 0
%a = linalg.add ins(%x, %x : ...) outs(%e : ...) -> ...           // op 1, fused into op 4's kernel
%v = tensor.collapse_shape %a [[0, 1]] : ... into tensor<16xf32>  // op 2, a view
%e2 = tensor.empty() : tensor<16xf32>                             // op 3
%c = linalg.mul ins(%v, %v : ...) outs(%e2 : ...) -> ...          // op 4, compute step 0
func.return %c : tensor<16xf32>                                   // op 5
```
With a `hyperoffload.store` of `%a` after op 1 the body holds seven ops;
its skeleton still counts the six above 0..5, and the store hangs before
skeleton position 2.
"""

from typing import NewType

OpIndex = NewType("OpIndex", int)
"""A top-level op of a function, in the program graph's order (-1: entry)."""

ComputeStep = NewType("ComputeStep", int)
"""A compute step of a schedule, in the order the steps run."""

SkeletonPosition = NewType("SkeletonPosition", int)
"""A top-level op that is not an offload op, in the body's order."""
