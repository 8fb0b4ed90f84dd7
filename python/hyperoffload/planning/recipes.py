"""
Recomputation recipes: which ops to clone, right before which op, to have a
value again after an idle gap instead of keeping it in HBM or moving it.

A recipe walks back from the value through the kernels that make it (each
kernel root with the ops fused into it, and the views between kernels) until
it reaches values that are resident where the clones run, up to
`max_depth` kernels deep. Recomputing `%s` below before its use in the
backward clones the sigmoid kernel alone when `%g` is still resident there
(depth 1), and both kernels when `%g` is gone too (depth 2):
```mlir
%g = linalg.matmul ins(%x, %w : ...) outs(%acc : tensor<2048x14336xf32>)  // kernel 1
%s = linalg.generic ins(%g : ...) { ... math.exp ... }                      // kernel 2
```
The schedule runs each kernel again once per position, however many
recomputed values share it (`recomputation_steps`), as one checkpointed
segment recomputes its forward once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Literal

from xdsl.ir import Operation, SSAValue

from hyperoffload.analysis.cost import tensor_type
from hyperoffload.analysis.fusion import outer_operands
from hyperoffload.analysis.lifetimes import Gap, ProgramGraph, ValueInfo
from hyperoffload.dialects.views import VIEW_OPS
from hyperoffload.model.schedule import Compute
from hyperoffload.support.tiers import Tier


@dataclass(frozen=True)
class Recipe:
    """What recomputes one value before op `at`."""

    at: int
    """The op before which the clones run."""
    ops: tuple[int, ...]
    """The top-level ops cloned (fused members, kernel roots, views), in program order."""
    rewired: tuple[int, ...]
    """
    The cloned ops whose results the ops from `at` on read instead of the
    originals: the value's own producer, and the ops fused into a kernel
    from `at` on that read the value (they run in that kernel).
    """
    steps: tuple[int, ...]
    """The compute steps (kernels) run again, in order."""
    reads: frozenset[int]
    """Buffers the clones read where they are (they must stay resident at `at`)."""
    time_s: float
    """Compute time of the kernels run again."""


Absent = Callable[[int, int], bool]
"""Whether a buffer is out of HBM before an op, whatever the graph says."""


class RecipeBuilder:
    """Recipes over one program graph."""

    def __init__(
        self,
        graph: ProgramGraph,
        mode: Literal["selective", "auto"],
        max_depth: int,
        absent: Absent | None = None,
    ):
        self.graph = graph
        self.mode = mode
        self.max_depth = max_depth
        self.absent = absent
        self.computes = [s for s in graph.schedule.steps if isinstance(s, Compute)]
        self.info_of = {info.value: info for info in graph.values}
        self.position = {op: i for i, op in enumerate(graph.ops)}
        self.aliases: dict[int, list[ValueInfo]] = {}
        for info in graph.values:
            if info.buffer is not None:
                self.aliases.setdefault(info.buffer, []).append(info)

    def resident_at(self, buffer: int, op: int) -> bool:
        """Whether `buffer` is in HBM while op `op` runs, as the graph stands."""
        held = self.graph.schedule.buffers[buffer]
        if held.tier != Tier.HBM or held.home != Tier.HBM:
            return False
        if held.kind in ("constant", "argument"):
            return True
        return any(i.last_use >= op for i in self.aliases.get(buffer, []))

    def gaps(self, info: ValueInfo) -> list[Gap]:
        """
        The idle gaps of `info` between the kernels that read it: an op fused
        into a later kernel reads it there, not where it is written (a
        recipe clones that op too).
        """
        absorbed = self.graph.fusion.absorbed
        reads = sorted(
            {
                info.producer,
                *(u for u in info.uses if self.graph.ops[u] not in absorbed),
            }
        )
        return [
            Gap(a, b, b - a - 1, self.graph.time_between(a, b))
            for a, b in pairwise(reads)
            if b > a + 1
        ]

    def start_of_kernel(self, gap: Gap) -> int:
        """
        Where clones for the use at `gap.before` go: before the first op
        fused into the kernel that runs it (after the gap starts), so that
        the clones do not split that kernel.
        """
        fusion, ops = self.graph.fusion, self.graph.ops
        op = ops[gap.before]
        start = gap.before
        for root in fusion.roots_of.get(op, [op]):
            if self.position[root] < gap.before:
                continue
            kernel = fusion.kernels.get(root)
            for member in kernel.members if kernel is not None else ():
                if gap.after < self.position[member] < start:
                    start = self.position[member]
        return start

    def recipe(self, info: ValueInfo, gap: Gap, at: int | None = None) -> Recipe | None:
        """
        How to have `info` again for the use after `gap`, with the clones
        before op `at` (default: `start_of_kernel`); None: not within the depth.
        """
        if info.buffer is None or info.producer < 0:
            return None
        at = self.start_of_kernel(gap) if at is None else at
        walk = _Walk(self, at, info.buffer)
        if not walk.rebuild(info.value, self.max_depth) or not walk.fused_readers(
            info.value
        ):
            return None
        steps = tuple(sorted(walk.steps))
        return Recipe(
            at,
            tuple(sorted(walk.ops)),
            tuple(sorted({info.producer, *walk.fused})),
            steps,
            frozenset(walk.reads),
            sum(self.computes[s].time_s for s in steps),
        )


class _Walk:
    """One recipe being built: the ops and kernels gathered so far."""

    def __init__(self, builder: RecipeBuilder, at: int, target: int):
        self.builder = builder
        self.at = at
        self.target = target
        self.ops: set[int] = set()
        self.steps: set[int] = set()
        self.reads: set[int] = set()
        self.fused: set[int] = set()
        self.made: set[SSAValue] = set()

    def usable(self, buffer: int) -> bool:
        builder = self.builder
        if buffer == self.target:
            return False
        if builder.absent is not None and builder.absent(buffer, self.at):
            return False
        return builder.resident_at(buffer, self.at)

    def rebuild(self, value: SSAValue, depth: int) -> bool:
        """Gather what makes `value` again (`depth` kernels at most); False if it cannot."""
        builder = self.builder
        graph = builder.graph
        info = builder.info_of.get(value)
        if info is None or value in self.made:
            return True  # not a tensor, or gathered already
        if info.buffer is None:  # an op fused into its readers, or a fresh init
            fused = (
                info.producer >= 0 and graph.ops[info.producer] in graph.fusion.absorbed
            )
            return not fused or self.clone([graph.ops[info.producer]], depth)
        if self.usable(info.buffer):
            self.reads.add(info.buffer)
            return True
        if info.producer < 0 or info.producer >= self.at:
            return False
        index = info.producer
        op = graph.ops[index]
        if isinstance(op, VIEW_OPS):  # a view costs no kernel
            return self.clone([op], depth)
        step = graph.compute_of_op.get(index)
        if (
            depth < 1
            or step is None
            or len(op.results) != 1
            or builder.computes[step].allocs != [info.buffer]
        ):
            return False
        kernel = graph.fusion.kernels.get(op)
        group = [*(kernel.members if kernel is not None else ()), op]
        if builder.mode == "selective" and any(
            (work := graph.fusion.costs.work(member)) is None or work.contraction
            for member in group
        ):
            return False
        self.steps.add(step)
        return self.clone(group, depth - 1)

    def clone(self, group: list[Operation], depth: int) -> bool:
        """Clone `group` and gather what it reads from outside (`depth` kernels deep)."""
        for member in group:
            self.ops.add(self.builder.position[member])
            self.made.update(member.results)
        return all(
            tensor_type(operand) is None or self.rebuild(operand, depth)
            for member in group
            for operand in outer_operands(member)
        )

    def fused_readers(self, value: SSAValue) -> bool:
        """
        Gather the ops fused into kernels from `at` on that read `value`
        (through other such ops): they are cloned beside it, so that those
        kernels read the clone.
        """
        builder = self.builder
        fusion, at = builder.graph.fusion, self.at
        self.made.add(value)
        pending = [value]
        while pending:
            for use in pending.pop().uses:
                op = use.operation
                index = builder.position.get(op)
                if (
                    index is None
                    or index in self.fused
                    or op not in fusion.absorbed
                    or index >= at
                    or all(builder.position[r] < at for r in fusion.roots_of[op])
                ):
                    continue
                self.fused.add(index)
                if not self.clone([op], builder.max_depth - 1):
                    return False
                pending.extend(op.results)
        return True


def recomputation_steps(
    computes: Sequence[Compute], recipes: Iterable[Recipe], targets: set[int]
) -> list[Compute]:
    """
    The kernels of `recipes` (all at one position) run again once each, in
    order: each allocates its result, and a result that is not one of
    `targets` (an intermediate) is freed after the last kernel reading it.
    """
    order = sorted({step for recipe in recipes for step in recipe.steps})
    last_read: dict[int, int] = {}
    for position, step in enumerate(order):
        for buffer in computes[step].reads:
            last_read[buffer] = position
    frees: dict[int, list[int]] = {}
    for step in order:
        for buffer in computes[step].allocs:
            if buffer not in targets and buffer in last_read:
                frees.setdefault(last_read[buffer], []).append(buffer)
    return [
        replace(computes[step], frees=frees.get(position, []))
        for position, step in enumerate(order)
    ]
