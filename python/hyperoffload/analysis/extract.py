"""
From IR to a schedule: buffers with byte sizes and the steps of one function,
costed on a hardware model.

Buffers follow bufferization: a view (`tensor.collapse_shape`,
`tensor.extract_slice`, ...) shares its source's buffer; a linalg op writes
in place into its `outs` operand when nothing reads that buffer afterwards;
`tensor.empty` allocates when its first user runs. A `tensor.empty` or a
fill (a linalg op broadcasting scalars) whose every use is the `outs` init
of a linalg op gets no buffer: each consumer writes a fresh one (a fill
folds into it, as a matmul with beta = 0 does), instead of one tensor living
from its first use to its last (torch-mlir's CSE shares one empty or zero
accumulator across all layers; bufferization would keep it and copy it per
use, which no eager framework does). An approximation: such a fill costs
nothing. A device buffer is freed
after its last use, or at its `hyperoffload.detach`; arguments, constants and
results stay. A `prefetch` is a transfer to the device, waited for by its
first reader; a `store` is a transfer from the device (with `compress`, of
the compressed bytes, its codec on the compute stream). Compute steps are
kernels (`hyperoffload.analysis.fusion`): an op fused into a later kernel has no step
and no buffer, and that kernel reads what the fused op would have read.

```mlir
%h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
hyperoffload.detach %x : tensor<4xf32>
```
becomes `transfer(x -> h, from device)`, `free(x)`. A collective
(`hyperoffload.reduce_scatter`, `hyperoffload.all_gather`) is a compute step
on the `interconnect` stream: it reads its operand and allocates its result
in HBM like any op, but runs beside the compute stream.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Operation, SSAValue

from hyperoffload.analysis.branches import has_branches, taken_path
from hyperoffload.analysis.compression import value_compression
from hyperoffload.analysis.cost import (
    CostModel,
    check_sizable,
    is_init,
    tensor_bytes,
    tensor_type,
)
from hyperoffload.analysis.fusion import Fusion
from hyperoffload.dialects.collectives import CollectiveOp
from hyperoffload.dialects.hyperoffload import (
    TIER_ARG_ATTR,
    DetachOp,
    PrefetchOp,
    RemoteType,
    StoreOp,
    TierAttr,
    updated_results,
)
from hyperoffload.dialects.provenance import generalised_from, written_as
from hyperoffload.dialects.residency import describe
from hyperoffload.ir.diagnostics import diagnostic_at, location_of
from hyperoffload.model.compression import Compressed
from hyperoffload.model.schedule import (
    Buffer,
    BufferKind,
    Compute,
    Free,
    Schedule,
    Step,
    Transfer,
    Wait,
)
from hyperoffload.support.positions import ComputeStep, OpIndex
from hyperoffload.support.tiers import Tier


class ExtractionError(ValueError):
    """A program the schedule extractor cannot represent."""

    def __init__(self, message: str, where: str | None = None):
        super().__init__(message)
        self.where = where
        """Where in the input (`file:line:col`), when `message` does not say."""


def main_function(module: ModuleOp, name: str | None = None) -> func.FuncOp:
    """The named function, or the first public function with a body."""
    for op in module.walk():
        if isinstance(op, func.FuncOp) and not op.is_declaration:
            if name is None and (
                op.sym_visibility is None or op.sym_visibility.data == "public"
            ):
                return op
            if name is not None and op.sym_name.data == name:
                return op
    raise ExtractionError(
        f"no function @{name}" if name else "no public function with a body",
        location_of(module),
    )


class _Extractor:
    def __init__(self, function: func.FuncOp, costs: CostModel):
        self.function = function
        self.costs = costs
        self.fusion = Fusion(function.body.block, costs)
        self.buffers: list[Buffer] = []
        self.steps: list[Step] = []
        self.buffer_of: dict[SSAValue, int] = {}
        self.owners: list[SSAValue] = []  # buffer -> the value it was made for
        self.uses: dict[SSAValue, int] = {}  # value -> last top-level op reading it
        self.reads: dict[Operation, list[SSAValue]] = {}  # op -> what it reads
        self.buffer_last: dict[int, int] = {}  # buffer -> last op reading any alias
        self.unallocated: set[int] = set()  # tensor.empty buffers not yet written
        self.pending: dict[
            int, int
        ] = {}  # device buffer -> transfer not yet waited for
        self.detached: set[int] = set()
        self.transfers = 0
        self.computes = 0
        self.producer: dict[SSAValue, ComputeStep] = {}  # value -> the step writing it
        self.compute_of_op: dict[OpIndex, ComputeStep] = {}  # op -> its compute step
        self.forward_end: int | None = None
        self.fresh: set[SSAValue] = set()  # inits each consumer writes afresh
        # argument buffer -> its update's (`Schedule.updates`)
        self.updates: dict[int, int] = {}

    def new_buffer(
        self, value: SSAValue, nbytes: int, tier: str, kind: BufferKind, **extra: object
    ) -> int:
        name = describe(value) if value.name_hint else f"%{len(self.buffers)}"
        buffer = Buffer(len(self.buffers), name, nbytes, tier, kind, **extra)  # type: ignore[arg-type]
        self.buffers.append(buffer)
        self.owners.append(value)
        self._bind(value, buffer.id)
        return buffer.id

    def _bind(self, value: SSAValue, buffer: int) -> None:
        """`value` lives in `buffer` (its own, or one it aliases)."""
        self.buffer_of[value] = buffer
        last = self.uses.get(value, -1)
        if last > self.buffer_last.get(buffer, -1):
            self.buffer_last[buffer] = last

    def run(self) -> Schedule:
        body = list(self.function.body.block.ops)
        for arg in self.function.args:
            check_sizable(arg, self.function)
        for op in body:
            if not self.costs.is_view(op):  # a view is sized as its source
                for result in op.results:
                    check_sizable(result, op)
        self.reads = {op: self.fusion.reads(op) for op in body}
        self.uses = self._use_positions(body)
        self._arguments()
        for index, op in enumerate(body):
            self._op(index, op)
        self._implicit_frees()
        name = self.function.sym_name.data
        return Schedule(name, self.buffers, self.steps, self.forward_end, self.updates)

    def _updates(self, ret: func.ReturnOp) -> None:
        """Each argument's buffer -> its update's, where it names a returned buffer of its own."""
        args = self.function.args
        for index, position in updated_results(self.function).items():
            if index >= len(args) or position >= len(ret.operands):
                continue
            argument = self.buffer_of.get(args[index])
            result = self.buffer_of.get(ret.operands[position])
            if argument is not None and result is not None and argument != result:
                self.updates[argument] = result

    def _use_positions(self, body: list[Operation]) -> dict[SSAValue, int]:
        """The position of the last top-level op that reads each value."""
        last: dict[SSAValue, int] = {}
        for index, op in enumerate(body):
            for operand in self.reads[op]:
                last[operand] = index
        return last

    def _arguments(self) -> None:
        arg_attrs = self.function.arg_attrs.data if self.function.arg_attrs else ()
        for arg in self.function.args:
            value_type = tensor_type(arg)
            if value_type is None:
                continue
            nbytes = tensor_bytes(arg, self.function)
            if isinstance(arg.type, RemoteType):
                self.new_buffer(
                    arg,
                    nbytes,
                    arg.type.tier,
                    "copy",
                    home=arg.type.tier,
                    pinned=True,
                    initial=True,
                )
                continue
            home = Tier.HBM
            if arg.index < len(arg_attrs):
                attrs = arg_attrs[arg.index]
                assert isinstance(attrs, DictionaryAttr)
                tier = attrs.data.get(TIER_ARG_ATTR)
                if isinstance(tier, TierAttr):
                    home = tier.tier
            self.new_buffer(
                arg, nbytes, Tier.HBM, "argument", home=home, pinned=True, initial=True
            )

    def _read(self, buffer: int) -> None:
        if buffer in self.pending:
            self.steps.append(Wait(self.pending.pop(buffer)))

    def _op(self, index: int, op: Operation) -> None:
        if op in self.fusion.absorbed:
            return  # runs inside the kernel of a later op; no buffer of its own
        if isinstance(op, PrefetchOp):
            source = self._buffer_read_by(op, op.source)
            dest = self.new_buffer(
                op.result, tensor_bytes(op.result, op), Tier.HBM, "prefetched"
            )
            self._transfer(
                op, source, dest, self.buffers[source].tier, True, self._compressed(op)
            )
            self.pending[dest] = self.transfers - 1
            return
        if isinstance(op, StoreOp):
            assert isinstance(op.handle.type, RemoteType)
            source = self._buffer_read_by(op, op.value)
            self._read(source)
            dest = self.new_buffer(
                op.handle, tensor_bytes(op.handle, op), op.handle.type.tier, "copy"
            )
            self._transfer(
                op, source, dest, op.handle.type.tier, False, self._compressed(op)
            )
            return
        if isinstance(op, DetachOp):
            buffer = self._buffer_read_by(op, op.value)
            self.detached.add(buffer)
            self.steps.append(Free(buffer))
            return
        if isinstance(op, func.ReturnOp):
            if len(op.operands) > 1:  # a training step returns the loss first
                self.forward_end = self.producer.get(op.operands[0])
            for value in op.operands:
                if value in self.buffer_of:
                    self.buffers[self.buffer_of[value]].pinned = True
            self._updates(op)
            return
        if self.costs.is_view(op):
            source = self.buffer_of.get(op.operands[0])
            if source is not None:
                self._bind(op.results[0], source)
            return
        if isinstance(op, arith.ConstantOp):
            if tensor_type(op.result) is not None:
                nbytes = tensor_bytes(op.result, op)
                self.new_buffer(
                    op.result, nbytes, Tier.HBM, "constant", pinned=True, initial=True
                )
            return
        if op.results and is_init(op.results[0]) and _only_inits(op.results[0]):
            self.fresh.add(op.results[0])
            return
        if isinstance(op, tensor.EmptyOp):
            buffer = self.new_buffer(
                op.results[0], tensor_bytes(op.results[0], op), Tier.HBM, "activation"
            )
            self.unallocated.add(buffer)
            return
        self._compute(index, op)

    def _buffer_read_by(self, op: Operation, value: SSAValue) -> int:
        """The buffer of `value`, which `op` reads; an error if it has none yet."""
        buffer = self.buffer_of.get(value)
        if buffer is None:
            raise ExtractionError(
                diagnostic_at(
                    op,
                    f"{written_as(op)} reads {describe(value)}, which has no buffer "
                    "at this point (is it used before it is defined?)",
                )
            )
        return buffer

    def _compressed(self, op: PrefetchOp | StoreOp) -> Compressed | None:
        value = op.result if isinstance(op, PrefetchOp) else op.value
        return value_compression(value, op.compress, self.costs.hardware)

    def _transfer(
        self,
        op: Operation,
        source: int,
        dest: int,
        link: Tier,
        to_device: bool,
        compressed: Compressed | None = None,
    ) -> None:
        nbytes = self.buffers[source].bytes
        transfer = Transfer(self.transfers, source, dest, nbytes, link, to_device)
        transfer.loc = location_of(op)
        if compressed is not None:
            transfer.bytes = compressed.bytes
            transfer.compress = compressed.scheme.value
            transfer.codec_s = compressed.codec_s
        self.steps.append(transfer)
        self.transfers += 1

    def _compute(self, index: int, op: Operation) -> None:
        cost = self.fusion.cost(op)
        reads: list[int] = []
        allocs: list[int] = []
        readers: dict[int, tuple[str, str]] = {}
        for operand in self.reads[op]:
            if operand in self.fresh:  # the op writes its result into a new buffer
                continue
            buffer = self.buffer_of.get(operand)
            if buffer is None or buffer in reads:
                continue
            if self.buffers[buffer].tier != Tier.HBM:
                raise ExtractionError(
                    diagnostic_at(
                        op,
                        f"{written_as(op)} reads the remote copy {describe(operand)}",
                    )
                )
            if buffer in self.unallocated:
                self.unallocated.discard(buffer)
                allocs.append(buffer)
            self._read(buffer)
            reads.append(buffer)
            reader = self._reader(op, operand)
            if reader is not op:  # a producer fused into op's kernel reads it
                readers[buffer] = (
                    generalised_from(reader) or reader.name,
                    location_of(reader),
                )
        outs = self._outs(op)
        for position, result in enumerate(op.results):
            if tensor_type(result) is None:
                continue
            target = outs[position] if position < len(outs) else None
            if target is not None and self._dead_after(target, index):
                self._bind(result, self.buffer_of[target])
                continue
            allocs.append(
                self.new_buffer(
                    result, tensor_bytes(result, op), Tier.HBM, "activation"
                )
            )
        if cost.time_s == 0 and not allocs and not reads:
            return
        step = ComputeStep(self.computes)
        for result in op.results:
            self.producer[result] = step
        self.compute_of_op[OpIndex(index)] = step
        self.computes += 1
        self.steps.append(
            Compute(
                generalised_from(op) or op.name,  # the op as the input wrote it
                location_of(op),
                cost.time_s,
                cost.flops,
                cost.bytes,
                reads,
                allocs,
                stream="interconnect" if isinstance(op, CollectiveOp) else "compute",
                readers=readers,
            )
        )

    def _reader(self, op: Operation, value: SSAValue) -> Operation:
        """The op of `op`'s kernel (fused producers, then `op`) that reads `value`."""
        kernel = self.fusion.kernels.get(op)
        for member in [*kernel.members, op] if kernel is not None else [op]:
            if value in member.operands:
                return member
        return op

    def _outs(self, op: Operation) -> list[SSAValue]:
        if isinstance(op, LinalgStructuredOperation):
            return list(op.outputs)
        if isinstance(op, tensor.InsertSliceOp):
            return [op.dest]
        return []

    def _dead_after(self, value: SSAValue, index: int) -> bool:
        """Can the op at `index` overwrite `value`'s buffer (nothing reads it later)?"""
        buffer_id = self.buffer_of.get(value)
        if buffer_id is None:
            return False
        buffer = self.buffers[buffer_id]
        if buffer.pinned or buffer.kind not in ("activation", "prefetched"):
            return False
        if buffer_id in self.detached or buffer_id in self.pending:
            return False
        return self.buffer_last.get(buffer_id, -1) <= index

    def _implicit_frees(self) -> None:
        """Free each unpinned, undetached device buffer after the step that reads it last."""
        last_step: dict[int, int] = {}
        for position, step in enumerate(self.steps):
            if isinstance(step, Compute):
                for buffer in (*step.reads, *step.allocs):
                    last_step[buffer] = position
            elif isinstance(step, Transfer):
                last_step[step.source] = position
                if step.to_device:
                    last_step.setdefault(step.dest, position)
        after_transfer: dict[int, list[int]] = {}
        for buffer, position in last_step.items():
            info = self.buffers[buffer]
            if info.pinned or buffer in self.detached or info.tier != Tier.HBM:
                continue
            step = self.steps[position]
            if isinstance(step, Compute):
                step.frees.append(buffer)
            else:
                after_transfer.setdefault(position, []).append(buffer)
        if after_transfer:
            steps: list[Step] = []
            for position, step in enumerate(self.steps):
                steps.append(step)
                steps.extend(Free(b) for b in after_transfer.get(position, ()))
            self.steps = steps


@dataclass
class Extraction:
    """A schedule and how it maps back to the IR it came from."""

    schedule: Schedule
    buffer_of: dict[SSAValue, int]
    """The device buffer (or copy) each tensor value lives in."""
    owners: list[SSAValue]
    """The value each buffer was made for (an argument, or the result that owns it)."""
    compute_of_op: dict[OpIndex, ComputeStep]
    """Top-level op index -> index of its compute step (ops with a step only)."""
    fusion: Fusion
    """The kernels the schedule's compute steps stand for."""


def _only_inits(value: SSAValue) -> bool:
    """Every use of `value` is the `outs` init (and not an input) of a linalg op."""
    block = value.owner.parent_block() if isinstance(value.owner, Operation) else None
    for use in value.uses:
        user = use.operation
        if (
            not isinstance(user, LinalgStructuredOperation)
            or user.parent_block() is not block
        ):
            return False
        if value not in user.outputs or value in user.inputs:
            return False
    return block is not None and any(True for _ in value.uses)


def extract(function: func.FuncOp, costs: CostModel) -> Extraction:
    if len(function.body.blocks) > 1:
        raise ExtractionError(
            f"@{function.sym_name.data} branches between "
            f"{len(function.body.blocks)} blocks: control flow between blocks "
            "(cf.br, cf.cond_br) is not supported; write the function as one "
            "block (scf.if, scf.for)",
            location_of(function),
        )
    branch = next((op for op in function.walk() if isinstance(op, scf.IfOp)), None)
    if branch is not None:
        raise ExtractionError(
            "'scf.if' is not supported here: a static plan follows one path "
            "through a function, and conditional regions have two "
            "(hyperoffload-sim and hyperoffload-check follow the path where "
            "every condition holds)",
            location_of(branch),
        )
    extractor = _Extractor(function, costs)
    schedule = extractor.run()
    return Extraction(
        schedule,
        extractor.buffer_of,
        extractor.owners,
        extractor.compute_of_op,
        extractor.fusion,
    )


def extract_schedule(function: func.FuncOp, costs: CostModel) -> Schedule:
    """The schedule of `function` as it is written (its hyperoffload ops included)."""
    return extract(function, costs).schedule


def one_path(module: ModuleOp) -> ModuleOp:
    """`module`, or a copy along the path where every condition holds."""
    return taken_path(module) if has_branches(module) else module


def stripped_copy(module: ModuleOp) -> ModuleOp:
    """A copy of `module` stripped of its hyperoffload ops (`hyperoffload-strip`)."""
    from hyperoffload.ir.strip import strip_offload_ops

    stripped = module.clone()
    strip_offload_ops(stripped)
    return stripped
