"""
What each op of a routed MoE export does for which routed expert: its
work (the ops of its `scf.if`), its dispatch (the ops only the branch's
condition needs: whether any token chose it) and its combine (the ops
outside the branches that read its result), keyed by source location, as
the steps of a schedule name them.

```mlir
%f1 = linalg.generic ... -> tensor<i1>          // DISPATCH of (0, 1)
%p1 = tensor.extract %f1[] : tensor<i1>         // DISPATCH of (0, 1)
%e1 = scf.if %p1 -> (tensor<1x64xf32>) {
  %m = linalg.matmul ...                        // WORK of (0, 1)
  ...
} {hyperoffload.expert = array<i64: 0, 1>}
%o1 = arith.addf %o0, %e1                       // COMBINE of (0, 1)
```

An op shared by several experts (the router's choice mask, the fills every
expert's reduction starts from) is no expert's.
"""

from __future__ import annotations

import heapq
from enum import Enum

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import DenseArrayBase
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue

from hyperoffload.dialects.hyperoffload import EXPERT_ATTR
from hyperoffload.dialects.views import VIEW_OPS
from hyperoffload.ir.diagnostics import location_of

Key = tuple[int, int]
"""(MoE layer, expert)."""


class Role(Enum):
    """What an op does for its expert."""

    WORK = "work"
    DISPATCH = "dispatch"
    COMBINE = "combine"


def expert_key(tag: Attribute | None) -> Key | None:
    """The (layer, expert) of a `hyperoffload.expert` tag."""
    if not isinstance(tag, DenseArrayBase):
        return None
    layer, expert = (int(v) for v in tag.get_values())
    return layer, expert


def expert_branches(function: func.FuncOp) -> dict[Key, scf.IfOp]:
    """Each expert's `scf.if` (tagged `hyperoffload.expert`)."""
    return {
        key: op
        for op in function.walk()
        if isinstance(op, scf.IfOp)
        and (key := expert_key(op.attributes.get(EXPERT_ATTR))) is not None
    }


def expert_roles(function: func.FuncOp) -> dict[str, tuple[Role, Key]]:
    """Each located op of an expert's work, dispatch or combine: its role and expert."""
    block = function.body.block
    position = {op: i for i, op in enumerate(block.ops)}
    roles: dict[str, tuple[Role, Key]] = {}
    for key, branch in expert_branches(function).items():
        for inner in branch.true_region.walk():
            roles[location_of(inner)] = (Role.WORK, key)
        if branch.parent_block() is not block:
            continue
        for op in _readers(block, branch.results):
            roles[location_of(op)] = (Role.COMBINE, key)
        for op in _only_for(block, branch, branch.cond, position):
            roles[location_of(op)] = (Role.DISPATCH, key)
    return roles


def _readers(block: Block, values: tuple[SSAValue, ...]) -> list[Operation]:
    """The ops of `block` reading `values` (through views, which cost nothing)."""
    found: list[Operation] = []
    pending = list(values)
    while pending:
        for use in pending.pop().uses:
            reader = block.find_ancestor_op_in_block(use.operation)
            if reader is None or reader in found:
                continue
            if isinstance(reader, VIEW_OPS):
                pending.extend(reader.results)
            else:
                found.append(reader)
    return found


def _only_for(
    block: Block, branch: Operation, value: SSAValue, position: dict[Operation, int]
) -> list[Operation]:
    """
    The ops of `block` that only `branch` needs, through `value`: its
    producer and each op of its backward slice every use of whose results
    lies in the slice, judged latest first (once all its users are).
    """
    if not isinstance(value, OpResult) or value.op.parent_block() is not block:
        return []
    members: set[Operation] = {branch}
    frontier = [(-position[value.op], value.op)]
    seen = {value.op}
    while frontier:
        op = heapq.heappop(frontier)[1]
        if any(
            block.find_ancestor_op_in_block(use.operation) not in members
            for result in op.results
            for use in result.uses
        ):
            continue
        members.add(op)
        for operand in op.operands:
            if (
                isinstance(operand, OpResult)
                and operand.op.parent_block() is block
                and operand.op not in seen
            ):
                seen.add(operand.op)
                heapq.heappush(frontier, (-position[operand.op], operand.op))
    members.discard(branch)
    return sorted(members, key=position.__getitem__)
