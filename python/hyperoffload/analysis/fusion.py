"""
The fusion model: which ops of a function a production compiler runs as one
kernel, so that the cost model prices kernels, not the unfused text.

```mlir
%wt = linalg.transpose ins(%w : tensor<64x32xbf16>) ...            // absorbed
%mm = linalg.matmul ins(%x, %wt : ...) outs(%acc : tensor<8x64xf32>) // absorbed
%y = linalg.generic ins(%mm : tensor<8x64xf32>) ... arith.truncf    // root
```
is one kernel rooted at `%y`: it reads `%x` and `%w`, writes `%y`, and
neither `%wt` nor `%mm` ever occupies HBM. The rules:

- A *layout* op (an all-parallel generic whose body only yields, or casts,
  an input: transpose, broadcast, copy) is absorbed into every consumer, and
  so is an op computed from indices and constants alone (a causal mask, RoPE
  tables): kernels compute them in registers.
- An all-parallel op with one consumer is absorbed into it (a prologue or an
  elementwise chain) if nothing but views, inits and other producers of
  that consumer lies between them: fusing across other kernels would keep
  its inputs in HBM until the consumer runs. A kernel holds at most one
  reduction: an op whose
  kernel already has one joins its consumer only as an epilogue (an
  all-parallel consumer over the same number of elements, e.g. the
  truncation of a matmul's f32 accumulator).
- Attention runs as a fused kernel (FlashAttention): a contraction over a
  small reduction (≤ 512, a head dimension) with a batch loop whose result
  is at least 4x larger than each input computes *scores*; every op that
  reads scores and is not a contraction (scale, mask, softmax and its
  reductions, their backward) is absorbed too, and the contractions that
  read them (P·V and the backward's dV, dQ, dK) are the kernels' roots.
  Scores never occupy HBM; a kernel that reads scores produced elsewhere
  (the backward) recomputes them, charged once per phase (forward or
  backward), as FlashAttention's backward recomputes P from Q and K.
- A `tensor.pad` whose result only linalg ops read as an input (a
  convolution's padded input) is absorbed into each of them: the kernel
  reads the unpadded source and treats the border as the padding value,
  as convolution libraries do; the padded tensor never occupies HBM (the
  transpose before a weight-gradient convolution is a layout op, above).
- Nothing is absorbed whose value a non-linalg op reads (a return, a
  store, an insert): that value is materialised.

Approximations: fusion is decided on the dataflow alone (no limit on kernel
size or register pressure); a masked kernel is charged its full square, not
the half a causal kernel computes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from math import prod

from xdsl.dialects import func, tensor
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr

from hyperoffload.analysis.cost import (
    NO_COST,
    CostModel,
    OpCost,
    OpWork,
    domain_size,
    is_contraction,
    is_init,
    is_reduction,
    producer,
    read_operands,
    tensor_type,
)
from hyperoffload.dialects.hyperoffload import OFFLOAD_OPS, DetachOp
from hyperoffload.dialects.residency import ancestor_in
from hyperoffload.dialects.views import VIEW_OPS, view_source

SCORE_REDUCTION_LIMIT = 512
"""The largest reduction (head dimension) of a contraction that computes attention scores."""
SCORE_GROWTH = 4
"""How much larger than each input a score contraction's result is, at least."""


def outer_operands(op: Operation) -> Iterable[SSAValue]:
    """Operands of `op` and values its regions capture from outside."""
    yield from op.operands
    for region in op.regions:
        for inner in region.walk():
            for operand in inner.operands:
                owner = operand.owner
                owner_op = owner if isinstance(owner, Operation) else owner.parent_op()
                if owner_op is not None and not op.is_ancestor(owner_op):
                    yield operand


def _numel(value: SSAValue) -> int:
    value_type = tensor_type(value)
    return 0 if value_type is None else prod(max(d, 0) for d in value_type.get_shape())


def _tensors(values: Iterable[SSAValue]) -> list[SSAValue]:
    return [v for v in values if tensor_type(v) is not None]


def is_layout(op: Operation) -> bool:
    """An all-parallel linalg op that only moves (or casts) one input's elements."""
    if not _all_parallel(op) or len(op.results) != 1:
        return False
    assert isinstance(op, LinalgStructuredOperation)
    if len(_tensors(op.inputs)) != 1:
        return False
    return all(
        inner.name in ("linalg.yield", "arith.extf", "arith.truncf", "arith.bitcast")
        for inner in op.body.block.ops
    )


def _pads_linalg_inputs(op: tensor.PadOp, block: Block) -> bool:
    """
    Whether every use of `op`'s result is an input of a linalg op at the top
    of `block` (a convolution's padded input): the kernel reads the source
    and treats the border as the padding value, as convolution libraries do.
    """
    uses = list(op.result.uses)
    return bool(uses) and all(
        isinstance(use.operation, LinalgStructuredOperation)
        and use.operation.parent_block() is block
        and op.result in use.operation.inputs
        for use in uses
    )


def _all_parallel(op: Operation) -> bool:
    return isinstance(op, LinalgStructuredOperation) and not is_reduction(op)


def _is_score_contraction(op: Operation) -> bool:
    """A batched contraction over a head dimension whose result outgrows its inputs."""
    if not is_contraction(op) or len(op.results) != 1:
        return False
    assert isinstance(op, LinalgStructuredOperation)
    ranges = op.get_static_loop_ranges()
    maps = [m.data for m in op.get_indexing_maps()]
    reduced = [
        i
        for i, it in enumerate(op.get_iterator_types())
        if it.data == IteratorType.REDUCTION
    ]
    reduction = 1
    for loop in reduced:
        reduction *= ranges[loop]
    dims = [
        {e.position for e in m.results if isinstance(e, AffineDimExpr)} for m in maps
    ]
    batched = any(
        all(loop in d for d in dims) and loop not in reduced
        for loop in range(len(ranges))
    )
    result = _numel(op.results[0])
    inputs = [_numel(v) for v in _tensors(op.inputs)]
    return (
        batched
        and reduction <= SCORE_REDUCTION_LIMIT
        and all(result >= SCORE_GROWTH * n for n in inputs)
    )


@dataclass
class Kernel:
    """One launch of a root op: the absorbed ops it pays for, what it reads."""

    charged: list[Operation]
    """The members whose work this kernel pays for."""
    members: list[Operation]
    """Every absorbed op the kernel runs, in program order (charged or not)."""
    sources: list[SSAValue]
    """Materialised tensors it reads."""
    attention: bool


class Fusion:
    """The kernels of one block: which ops are absorbed, and each root's kernel."""

    def __init__(self, block: Block, costs: CostModel):
        self.block = block
        self.costs = costs
        self.ops = list(block.ops)
        self.position = {op: i for i, op in enumerate(self.ops)}
        self.absorbed: set[Operation] = set()
        self.scores: set[Operation] = set()
        self.kernels: dict[Operation, Kernel] = {}
        self.roots_of: dict[Operation, list[Operation]] = {}
        """Each absorbed op -> the roots of the kernels that run it."""
        self._costs: dict[Operation, OpCost] = {}
        self._consumed: dict[SSAValue, tuple[list[Operation], bool]] = {}
        self._decide()
        self._build_kernels()

    # deciding what is absorbed

    def _consumers(self, value: SSAValue) -> tuple[list[Operation], bool]:
        """Top-level ops reading `value` (through views), and whether it escapes."""
        if value not in self._consumed:
            self._consumed[value] = self._find_consumers(value)
        return self._consumed[value]

    def _find_consumers(self, value: SSAValue) -> tuple[list[Operation], bool]:
        consumers: list[Operation] = []
        escapes = False
        pending = [value]
        while pending:
            current = pending.pop()
            for use in current.uses:
                holder = ancestor_in(self.block, use.operation)
                if holder is None:
                    continue
                if isinstance(holder, VIEW_OPS) and holder is use.operation:
                    pending.extend(holder.results)
                    continue
                if (
                    holder is not use.operation
                    or not isinstance(holder, LinalgStructuredOperation)
                    or current not in holder.inputs
                ):
                    escapes = True
                elif holder not in consumers:
                    consumers.append(holder)
        return consumers, escapes

    def _decide(self) -> None:
        anchored: dict[Operation, bool] = {}
        index_only: set[Operation] = set()  # computed from indices and constants
        for op in self.ops:
            if isinstance(op, tensor.PadOp):
                if _pads_linalg_inputs(op, self.block):
                    self.absorbed.add(op)
                continue
            if not isinstance(op, LinalgStructuredOperation) or not op.results:
                continue
            if is_init(op.results[0]):
                index_only.add(op)
                continue
            if (
                _all_parallel(op)
                and len(op.results) == 1
                and all(producer(v) in index_only for v in _tensors(op.inputs))
            ):
                index_only.add(op)
            anchored[op] = anchored.get(op, False) or is_reduction(op)
            reads_scores = any(producer(v) in self.scores for v in op.inputs)
            if _is_score_contraction(op) or (reads_scores and not is_contraction(op)):
                self.scores.add(op)
            outcomes = [self._consumers(r) for r in op.results]
            if any(escapes for _, escapes in outcomes) or not any(
                users for users, _ in outcomes
            ):
                continue
            if op in self.scores:
                self.absorbed.add(op)
                continue
            if len(op.results) != 1:
                continue
            users = outcomes[0][0]
            if (is_layout(op) or op in index_only) and not anchored[op]:
                self.absorbed.add(op)
                continue
            if len(users) != 1 or not self._adjacent(op, users[0]):
                continue
            consumer = users[0]
            if anchored[op]:
                if (
                    is_reduction(consumer)
                    or anchored.get(consumer, False)
                    or domain_size(consumer) != _numel(op.results[0])  # type: ignore[arg-type]
                ):
                    continue
                anchored[consumer] = True
            self.absorbed.add(op)

    def _adjacent(self, op: Operation, consumer: Operation) -> bool:
        """
        Whether nothing computes between `op` and its consumer but views,
        inits, offload ops and other producers of that consumer (so that
        inserting offload ops never changes the kernels): fusing across other
        kernels would keep `op`'s inputs in HBM until the consumer runs (a
        chain of 256 expert outputs summed at the end would hold them all).
        Nor is a buffer that `op`'s kernel so far reads (its own inputs and
        those of the ops absorbed into it, through views) detached in between:
        the consumer's kernel would read it after it is freed.
        """
        inputs: set[SSAValue] | None = None  # gathered at the first detach
        for between in self.ops[self.position[op] + 1 : self.position[consumer]]:
            if isinstance(between, DetachOp):
                inputs = self._kernel_reads(op) if inputs is None else inputs
                if view_source(between.value) in inputs:
                    return False  # the consumer's kernel would read a freed input
            if isinstance(between, VIEW_OPS + OFFLOAD_OPS) or not any(
                tensor_type(r) is not None for r in between.results
            ):
                continue
            if isinstance(between, LinalgStructuredOperation) and (
                is_init(between.results[0])
                or self._consumers(between.results[0])[0] == [consumer]
            ):
                continue
            if not isinstance(between, LinalgStructuredOperation) and not (
                between.operands
            ):
                continue  # tensor.empty, constants
            return False
        return True

    def _kernel_reads(self, op: Operation) -> set[SSAValue]:
        """
        The buffers (view sources) that `op` and the ops absorbed into it so
        far read from outside.
        """
        found: set[SSAValue] = set()
        pending, seen = [op], {op}
        while pending:
            for operand in outer_operands(pending.pop()):
                found.add(view_source(operand))
                owner = producer(operand)
                if owner is not None and owner in self.absorbed and owner not in seen:
                    seen.add(owner)
                    pending.append(owner)
        return found

    # kernels

    def _build_kernels(self) -> None:
        forward_end = self._forward_end()
        charged_in: dict[tuple[Operation, bool], Operation] = {}
        for op in self.ops:
            if op in self.absorbed or not isinstance(op, LinalgStructuredOperation):
                continue
            members, sources = self._gather(op)
            backward = forward_end is not None and self.position[op] > forward_end
            charged: list[Operation] = []
            for member in members:
                self.roots_of.setdefault(member, []).append(op)
                if isinstance(member, tensor.PadOp):
                    continue  # the border costs the kernel nothing
                if (member, backward) not in charged_in:
                    charged_in[member, backward] = op
                    charged.append(member)
            attention = any(m in self.scores for m in members)
            self.kernels[op] = Kernel(charged, members, sources, attention)

    def _gather(
        self, root: LinalgStructuredOperation
    ) -> tuple[list[Operation], list[SSAValue]]:
        """The absorbed ops `root`'s kernel runs (in order) and the tensors it reads."""
        members: dict[Operation, None] = {}
        sources: dict[SSAValue, None] = {}
        pending: list[SSAValue] = list(read_operands(root))
        while pending:
            value = pending.pop()
            owner = producer(value)
            if isinstance(owner, tensor.PadOp) and owner in self.absorbed:
                if owner not in members:  # the kernel reads the unpadded source
                    members[owner] = None
                    pending.append(owner.source)
                continue
            if owner in self.absorbed:
                assert isinstance(owner, LinalgStructuredOperation)
                if owner not in members:
                    members[owner] = None
                    pending.extend(read_operands(owner))
            else:
                sources[value] = None
        return sorted(members, key=self.position.__getitem__), list(sources)

    def _forward_end(self) -> int | None:
        """Position of the op computing the loss: a training step returns it first,
        a scalar, then the gradients."""
        terminator = self.block.last_op
        if not isinstance(terminator, func.ReturnOp) or len(terminator.operands) < 2:
            return None
        loss = tensor_type(terminator.operands[0])
        if loss is None or loss.get_shape():
            return None
        computed = producer(terminator.operands[0])
        return self.position.get(computed) if computed is not None else None

    # queries

    def reads(self, op: Operation) -> list[SSAValue]:
        """
        The tensors `op` reads from memory where it runs (none if absorbed),
        tensors its body reads by index (a gather's table) included: they
        must be resident, though the cost counts only the kernel's operands.
        """
        if op in self.absorbed:
            return []
        kernel = self.kernels.get(op)
        if kernel is None:
            return list(outer_operands(op))
        assert isinstance(op, LinalgStructuredOperation)
        reads = dict.fromkeys(kernel.sources)
        reads.update(dict.fromkeys(op.outputs))
        for member in (*kernel.members, op):
            operands = set(member.operands)
            reads.update(
                dict.fromkeys(
                    v
                    for v in outer_operands(member)
                    if v not in operands and tensor_type(v) is not None
                )
            )
        return list(reads)

    def cost(self, op: Operation) -> OpCost:
        """The cost of the kernel `op` launches (zero if it is absorbed)."""
        if op in self.absorbed:
            return NO_COST
        kernel = self.kernels.get(op)
        if kernel is None:
            return self.costs.cost(op)
        if op not in self._costs:
            works: list[OpWork] = []
            for member in (*kernel.charged, op):
                work = self.costs.work(member)
                if work is not None:
                    works.append(work)
            self._costs[op] = self.costs.kernel(
                op, works, kernel.attention, kernel.sources, list(op.results)
            )
        return self._costs[op]
