"""
Recomputation peers: how training frameworks trade compute for activation
memory, each as its source describes it, planned on the program graph with
the tagged arguments resident (as these frameworks keep the weights) and run
in the simulator beside the offload peers. Each recomputes a set of *saved*
activations (made in the forward pass, read again in the backward) before
their first read in the backward, by the same recipes as ours
(`hyperoffload.planning.recipes`).

- `checkpoint-blocks`: activation checkpointing of whole blocks, PyTorch's
  `torch.utils.checkpoint` around each transformer block, or on the first N
  blocks as Megatron-LM's `--recompute-granularity full --recompute-method
  block --recompute-num-layers N`. A checkpointed block keeps only its input
  and recomputes its forward at the start of its backward: the activations
  made in it and not read past its end are recomputed there. Blocks are found
  from the forward pass: one attention each (a run of kernels contracting
  two activations, not a weight), starting at the last point before it
  where the fewest activation bytes cross (the residual stream alone); the
  last block is as long as the one before it.
- `megatron-selective`: Megatron-LM's selective recomputation
  (`--recompute-granularity selective`, `--recompute-modules`): the outputs
  of `core_attn` (the attention kernels) and of `layernorm` (the statistic,
  a kernel that takes an `rsqrt`, and the input scaled by it), recomputed in
  the backward where they are read.
- `memory-budget`: PyTorch's `torch._functorch.config.activation_memory_budget`
  (the min-cut partitioner with a knapsack): keep at most a fraction of the
  saved activation bytes, recomputing the values cheapest per byte first
  (runtime from the cost model, as its `profile` estimator would).

Approximation: each recipe reaches back at most `DEPTH` kernels to values
resident or recomputed at the same point, so a block whose forward is deeper
than that keeps the values it cannot rebuild.

```python
peers = RecomputePeers(graph, hardware)
[(c[0], simulate(peers.schedule(peers.plan(c)), hardware, None)) for c in peers.checkpointing()]
```
"""

from __future__ import annotations

from collections.abc import Iterator
from copy import copy
from dataclasses import dataclass
from itertools import accumulate, pairwise

from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import BlockArgument, Operation

from hyperoffload.analysis.cost import (
    is_contraction,
    producer,
    read_operands,
)
from hyperoffload.analysis.fusion import is_layout
from hyperoffload.analysis.lifetimes import Gap, ProgramGraph, ValueInfo
from hyperoffload.dialects.views import VIEW_OPS
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.schedule import Schedule
from hyperoffload.planning.planner import Plan, plan_schedule
from hyperoffload.planning.recipes import RecipeBuilder
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.policies.peers import resident_arguments

DEPTH = 64
"""Kernels a peer's recipe may reach back (a block's forward is shallower)."""
BLOCK_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128)
BUDGETS = (0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0)
MEGATRON_MODULES = (("core_attn",), ("layernorm",), ("core_attn", "layernorm"))


@dataclass(frozen=True)
class Saved:
    """An activation read on both sides of the end of the forward pass."""

    info: ValueInfo
    gap: Gap
    """Its idle gap across the end of the forward pass (between kernel reads)."""


Choice = tuple[str, list[tuple[Saved, int | None]], int]
"""
A setting: its name, the values it recomputes and before which op (None:
at its read), and how many kernels deep their recipes may reach.
"""


class RecomputePeers:
    def __init__(self, graph: ProgramGraph, hardware: Hardware):
        self.graph = _with_resident_arguments(graph)
        self.hardware = hardware
        self.builder = RecipeBuilder(self.graph, "auto", 2)
        """Recipes from what is resident: the knapsack's costs (two kernels deep)."""
        self.loss = _loss_op(self.graph)
        self.saved = [] if self.loss is None else self._saved(self.loss)

    def _saved(self, loss: int) -> list[Saved]:
        saved: list[Saved] = []
        seen: set[int] = set()
        for info in self.graph.values:
            buffer = info.buffer
            if (
                buffer is None
                or buffer in seen
                or info.producer < 0
                or self.graph.schedule.buffers[buffer].kind != "activation"
            ):
                continue
            for gap in self.builder.gaps(info):
                if gap.after <= loss < gap.before and info.producer < loss:
                    seen.add(buffer)
                    saved.append(Saved(info, gap))
        return saved

    def schedule(self, plan: Plan) -> Schedule:
        """The program with `plan` applied (tagged arguments resident)."""
        return plan_schedule(self.graph, plan, self.hardware)

    def plan(self, choice: Choice) -> Plan:
        """`choice`'s values recomputed, as far as recipes reach."""
        _, values, depth = choice
        out = {s.info.buffer: s.gap for s, _ in values}

        def absent(buffer: int, op: int) -> bool:
            gap = out.get(buffer)
            return gap is not None and gap.after < op <= gap.before

        builder = RecipeBuilder(self.graph, "auto", depth, absent)
        plans: list[ValuePlan] = []
        for saved, at in values:
            recipe = builder.recipe(saved.info, saved.gap, at)
            if recipe is not None:
                plans.append(
                    ValuePlan(
                        saved.info,
                        [saved.gap],
                        stored=False,
                        recompute=True,
                        recipes=[recipe],
                    )
                )
        return Plan(values=plans)

    # the peers' settings

    def checkpointing(self) -> Iterator[Choice]:
        """The first N blocks checkpointed, N = 1, 2, 4, ... up to all."""
        blocks = self.blocks()
        counts = [n for n in BLOCK_COUNTS if n < len(blocks)] + [len(blocks)]
        for count in dict.fromkeys(c for c in counts if c > 0):
            chosen: list[tuple[Saved, int | None]] = []
            for start, end in blocks[:count]:
                inside = [  # made and last read in the forward within the block
                    s
                    for s in self.saved
                    if start <= s.info.producer and s.gap.after < end
                ]
                if inside:  # its forward again where its backward starts
                    at = min(self.builder.start_of_kernel(s.gap) for s in inside)
                    chosen += [(s, at if s.gap.after < at else None) for s in inside]
            yield (f"the first {count} of {len(blocks)} blocks", chosen, DEPTH)

    def blocks(self) -> list[tuple[int, int]]:
        """Op ranges of the blocks of the forward pass (see the module docstring)."""
        assert self.loss is not None
        loss = self.loss
        runs = self._attention(loss)
        crossing = self._crossing_bytes(loss)
        starts: list[int] = []
        low = -1
        for high, last in runs:  # the last point of least crossing before each
            if high > low + 1:
                least = min(crossing[low + 1 : high])
                starts.append(
                    max(p for p in range(low + 1, high) if crossing[p] == least)
                )
            low = last
        if not starts:
            return []
        # the last block as long as the one before it (the blocks of a stack are alike)
        length = starts[-1] - starts[-2] if len(starts) > 1 else loss - starts[-1]
        return list(pairwise([*starts, min(starts[-1] + length, loss)]))

    def _attention(self, loss: int) -> list[tuple[int, int]]:
        """
        The first and last op of each run of forward kernels that contract
        two activations (scores, then their product with V), unbroken by a
        kernel that contracts a weight (an argument): one per attention.
        """
        fusion, position = self.graph.fusion, self.builder.position
        runs: list[tuple[int, int]] = []
        current: list[int] = []
        for op, kernel in sorted(fusion.kernels.items(), key=lambda k: position[k[0]]):
            if position[op] >= loss:
                break
            kinds = {
                self._reads_argument(member)
                for member in (*kernel.members, op)
                if is_contraction(member)
            }
            if False in kinds:  # two activations contracted
                current.append(position[op])
            elif True in kinds and current:
                runs.append((current[0], current[-1]))
                current = []
        if current:
            runs.append((current[0], current[-1]))
        return runs

    def _reads_argument(self, op: Operation) -> bool:
        """Whether `op` reads a function argument, through views and fused layout ops."""
        pending = (
            list(read_operands(op)) if isinstance(op, LinalgStructuredOperation) else []
        )
        while pending:
            value = pending.pop()
            if isinstance(value, BlockArgument):
                return True
            owner = value.owner
            if isinstance(owner, VIEW_OPS):
                pending.append(owner.operands[0])
            elif isinstance(owner, LinalgStructuredOperation) and is_layout(owner):
                pending.extend(read_operands(owner))
        return False

    def _crossing_bytes(self, loss: int) -> list[int]:
        """For each forward position, the bytes of activations made before it and read from it on."""
        span: dict[int, tuple[int, int, int]] = {}
        for info in self.graph.values:
            reads = [u for u in info.uses if u <= loss]
            if info.buffer is None or info.producer < 0 or not reads:
                continue
            low, high, size = span.get(
                info.buffer, (info.producer, info.producer, info.bytes)
            )
            span[info.buffer] = (min(low, info.producer), max(high, *reads), size)
        delta = [0] * (loss + 2)
        for low, high, size in span.values():
            delta[low + 1] += size  # crosses positions low+1 .. high
            delta[high + 1] -= size
        return list(accumulate(delta))

    def selective(self) -> Iterator[Choice]:
        """Megatron's recompute modules: core attention, layer norms, both."""
        fusion = self.graph.fusion
        statistics = {  # the kernels that take an rsqrt
            op
            for op, kernel in fusion.kernels.items()
            if any(
                i.name == "math.rsqrt" for m in (*kernel.members, op) for i in m.walk()
            )
        }
        for modules in MEGATRON_MODULES:
            chosen: list[tuple[Saved, int | None]] = []
            for saved in self.saved:
                op = self.graph.ops[saved.info.producer]
                kernel = fusion.kernels.get(op)
                attention = kernel is not None and kernel.attention
                norm = op in statistics or any(  # a statistic, or scaled by one
                    producer(source) in statistics
                    for source in (kernel.sources if kernel else ())
                )
                if ("core_attn" in modules and attention) or (
                    "layernorm" in modules and norm
                ):
                    chosen.append((saved, None))
            yield ("+".join(modules), chosen, 2)

    def budgeted(self) -> Iterator[Choice]:
        """At most a fraction of the saved bytes kept, the cheapest per byte recomputed first."""
        costed: list[tuple[float, Saved]] = []
        for saved in self.saved:
            recipe = self.builder.recipe(saved.info, saved.gap)
            if recipe is not None:
                costed.append((recipe.time_s / max(saved.info.bytes, 1), saved))
        costed.sort(key=lambda c: c[0])
        total = sum(s.info.bytes for s in self.saved)
        for budget in BUDGETS:
            kept, chosen = total, list[tuple[Saved, int | None]]()
            for _, saved in costed:
                if kept <= budget * total:
                    break
                chosen.append((saved, None))
                kept -= saved.info.bytes
            yield (f"budget {budget:.1f}", chosen, 2)


def _with_resident_arguments(graph: ProgramGraph) -> ProgramGraph:
    """The same graph with every tagged argument in HBM for the whole call."""
    resident = copy(graph)
    resident.schedule = resident_arguments(graph.schedule)
    return resident


def _loss_op(graph: ProgramGraph) -> int | None:
    """The op computing the loss (the end of the forward pass), if a training step."""
    end = graph.schedule.forward_end
    if end is None:
        return None
    return next(op for op, step in graph.compute_of_op.items() if step == end)
