"""
One path through a program with conditional regions: each `scf.if` replaced
by the ops of the region taken, its results by what that region yields, so
that the schedule extractor and the cost model see straight-line code.

```mlir
%y = scf.if %routed -> (tensor<2x4xf32>) {
  %hot = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) ...
  scf.yield %hot : tensor<2x4xf32>
} else {
  scf.yield %zeros : tensor<2x4xf32>
}
%r = arith.addf %x, %y : tensor<2x4xf32>
```
taking the `then` region becomes
```mlir
%hot = linalg.matmul ins(%x, %w : tensor<2x4xf32>, tensor<4x4xf32>) ...
%r = arith.addf %x, %hot : tensor<2x4xf32>
```
The ops keep their source locations, so a step of the path's schedule
names the op of the original program it came from.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

Take = Callable[[scf.IfOp], bool]
"""Whether a path takes an `scf.if`'s `then` region (else its `else` region)."""


def every_then(_: scf.IfOp) -> bool:
    """The path where every condition holds (every routed expert runs)."""
    return True


def has_branches(root: Operation) -> bool:
    """Does `root` hold an `scf.if`?"""
    return any(isinstance(op, scf.IfOp) for op in root.walk())


def taken_path(module: ModuleOp, take: Take = every_then) -> ModuleOp:
    """A copy of `module` with every `scf.if` inlined along `take`."""
    path = module.clone()
    while (branch := _first_branch(path)) is not None:
        _inline(branch, take(branch))
    return path


def _first_branch(root: Operation) -> scf.IfOp | None:
    return next((op for op in root.walk() if isinstance(op, scf.IfOp)), None)


def _inline(branch: scf.IfOp, then: bool) -> None:
    region = branch.true_region if then else branch.false_region
    parent = branch.parent_block()
    assert parent is not None
    if not region.blocks:  # an `scf.if` without `else`, not taken: no results
        parent.erase_op(branch)
        return
    block = region.block
    terminator = block.last_op
    assert isinstance(terminator, scf.YieldOp)
    for op in list(block.ops):
        if op is terminator:
            break
        op.detach()
        parent.insert_op_before(op, branch)
    for result, value in zip(branch.results, terminator.arguments, strict=True):
        result.replace_all_uses_with(value)
    parent.erase_op(branch, safe_erase=False)
