"""
The op cost model: FLOPs and HBM bytes from static shapes, time from a
roofline on the hardware model plus a fixed per-kernel overhead.

```mlir
%r = linalg.generic {indexing_maps = [...], iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%a, %b : tensor<64x32xbf16>, tensor<32x16xbf16>) outs(%c : tensor<64x16xf32>) ...
```
is a contraction (a reduction whose body multiplies): 64·16·32 multiply-
accumulates, 2 FLOPs each (casts in the body are not FLOPs), on the tensor
cores of its *input* type (bf16, whatever the accumulator). It reads `a` and
`b` (and `c` only if the body reads its accumulator and `c` is not a fresh
`tensor.empty` or fill) and writes `r`; its time is `max(flops / (peak ·
efficiency), bytes / (bandwidth · memory efficiency)) + overhead`. Other ops
run on the vector units (the `f32` peak). This is the cost of one op run
alone; `hyperoffload.analysis.fusion` groups ops into the kernels a compiler would
launch and prices each kernel with `CostModel.kernel`. Estimates, not
measurements: the efficiency factors come from the hardware file.

A collective (`hyperoffload.reduce_scatter`, `hyperoffload.all_gather`)
runs on the device interconnect, not on the compute units: its time is a
ring over its group (`Interconnect.collective_time`: `(group - 1) ·
(latency + whole / group / bandwidth)`), its bytes those each device sends.
```mlir
%gs = hyperoffload.reduce_scatter %g {group = 8 : i64, rank = 0 : i64} : tensor<1024x4096xf32> -> tensor<128x4096xf32>
```
moves 7/8 of 16 MiB each way: on `ascend-910c` (196 GB/s, 5 us a step)
about 110 us.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from math import prod
from typing import cast

from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    MemRefType,
    TensorType,
    UnrankedMemRefType,
    UnrankedTensorType,
)
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.traits import SymbolTable

from hyperoffload.dialects.collectives import CollectiveOp
from hyperoffload.dialects.hyperoffload import RemoteType
from hyperoffload.dialects.provenance import written_as
from hyperoffload.dialects.views import VIEW_OPS, view_source
from hyperoffload.ir import sizes
from hyperoffload.ir.diagnostics import diagnostic_at
from hyperoffload.model.hardware import Hardware, HardwareError

FREE_OPS: tuple[type[Operation], ...] = (
    tensor.EmptyOp,
    arith.ConstantOp,
    func.ReturnOp,
)
"""Ops that take no device time of their own."""

_FREE_NAMES = frozenset({"cf.assert", "tensor.dim", "ml_program.global_load_const"})


class CostModelError(ValueError):
    """A tensor whose size the model cannot know (dynamic shape)."""


def element_bytes(element_type: Attribute) -> int:
    """Bytes of one element (`hyperoffload.ir.sizes`); an error for a type without a size."""
    size = sizes.element_bytes(element_type)
    if size is None:
        raise CostModelError(
            f"the element type {element_type} has no size the model knows"
        )
    return size


_DTYPE_NAMES: dict[Attribute, str] = {}


def dtype_name(element_type: Attribute) -> str:
    """`f32`, `bf16`, ... (printed once per type: printing is slow)."""
    if element_type not in _DTYPE_NAMES:
        _DTYPE_NAMES[element_type] = str(element_type)
    return _DTYPE_NAMES[element_type]


def tensor_type(value: SSAValue) -> TensorType[Attribute] | None:
    """The tensor type of a value (the held tensor for a remote copy)."""
    value_type = value.type
    if isinstance(value_type, RemoteType):
        return value_type.tensor
    if isinstance(value_type, TensorType):
        return cast(TensorType[Attribute], value_type)
    return None


_SIZES: dict[TensorType[Attribute], int] = {}
"""Bytes of each static tensor type seen (types are interned values)."""


def tensor_bytes(value: SSAValue, op: Operation) -> int:
    """Bytes of a tensor value; a clear error for dynamic shapes."""
    value_type = tensor_type(value)
    if value_type is None:
        return 0
    known = _SIZES.get(value_type)
    if known is not None:
        return known
    size = sizes.tensor_bytes(value_type)
    if size is None or size >= 1 << 63:
        where = diagnostic_at(op, f"cannot size {value_type} of {written_as(op)}")
        if any(dim < 0 for dim in value_type.get_shape()):
            raise CostModelError(
                f"{where}: dynamic shapes are not supported (export with static shapes)"
            )
        if size is None:
            raise CostModelError(
                f"{where}: the element type {value_type.element_type} has no size "
                "the model knows (not supported)"
            )
        raise CostModelError(
            f"{where}: its size, {size} B, overflows 64 bits (not supported)"
        )
    _SIZES[value_type] = size
    return size


def check_sizable(value: SSAValue, op: Operation) -> None:
    """
    A located `CostModelError` for a value whose memory the model cannot
    count, so that it is never sized 0 B: an unranked tensor, or a memref
    (the planner and the simulator size tensors, before bufferization).
    """
    value_type = value.type
    if isinstance(value_type, UnrankedTensorType):
        raise CostModelError(
            diagnostic_at(
                op,
                f"cannot size {value_type} of {written_as(op)}: unranked tensors "
                "are not supported (give it a rank and a static shape)",
            )
        )
    if isinstance(value_type, MemRefType | UnrankedMemRefType):
        raise CostModelError(
            diagnostic_at(
                op,
                f"cannot size {value_type} of {written_as(op)}: memref values are "
                "not supported (the planner and the simulator count tensors: give "
                "the program before bufferization)",
            )
        )


@dataclass(frozen=True)
class OpCost:
    flops: float
    bytes: int
    time_s: float
    known: bool = True


NO_COST = OpCost(0.0, 0, 0.0)


@dataclass(frozen=True)
class OpWork:
    """What one op computes and moves, before any fusion."""

    flops: float
    dtype: str
    """The element type whose peak prices the FLOPs (`f32` for the vector units)."""
    contraction: bool
    reads: tuple[SSAValue, ...]
    """The tensors the op reads from memory (accumulators only if the body reads them)."""
    writes: tuple[SSAValue, ...]
    known: bool = True


_CASTS = frozenset(
    {
        "arith.extf",
        "arith.truncf",
        "arith.sitofp",
        "arith.uitofp",
        "arith.fptosi",
        "arith.fptoui",
        "arith.extsi",
        "arith.extui",
        "arith.trunci",
        "arith.index_cast",
        "arith.bitcast",
    }
)
_BODY_FREE = _CASTS | {"linalg.yield", "linalg.index", "arith.constant", "cf.assert"}


def _body_flops(op: Operation) -> int:
    """Scalar arithmetic ops per iteration of a linalg body (casts and copies: 0)."""
    count = 0
    for region in op.regions:
        for inner in region.walk():
            if inner.name not in _BODY_FREE:
                count += 1
    return count


def is_reduction(op: Operation) -> bool:
    """A linalg op with a reduction loop."""
    return isinstance(op, LinalgStructuredOperation) and any(
        it.data == IteratorType.REDUCTION for it in op.get_iterator_types()
    )


def is_contraction(op: Operation) -> bool:
    """A reduction whose body multiplies: matmul, batch matmul, einsum-like."""
    return is_reduction(op) and any(
        inner.name in ("arith.mulf", "arith.muli") for inner in op.regions[0].walk()
    )


def is_init(value: SSAValue) -> bool:
    """A `tensor.empty` or a fill (scalars broadcast): nothing a kernel must read."""
    owner = value.owner
    if isinstance(owner, tensor.EmptyOp):
        return True
    return (
        isinstance(owner, LinalgStructuredOperation)
        and len(owner.results) == 1
        and all(tensor_type(v) is None for v in owner.inputs)
        and not any(inner.name == "linalg.index" for inner in owner.body.walk())
    )


def read_operands(op: LinalgStructuredOperation) -> list[SSAValue]:
    """Inputs, and each `outs` init the body reads that is not a fresh init."""
    block = op.body.block
    inputs = op.inputs
    reads = [v for v in inputs if tensor_type(v) is not None]
    first_out = len(inputs)
    for position, init in enumerate(op.outputs):
        argument = block.args[first_out + position]
        if argument.uses and not is_init(init):
            reads.append(init)
    return reads


def domain_size(op: LinalgStructuredOperation) -> int:
    """Iterations of the loop nest: each loop's extent from an operand dim it indexes."""
    ranges: dict[int, int] = {}
    for value, map_attr in zip(op.operands, op.get_indexing_maps(), strict=False):
        value_type = tensor_type(value)
        if value_type is None:
            continue
        for expr, extent in zip(
            map_attr.data.results, value_type.get_shape(), strict=False
        ):
            if isinstance(expr, AffineDimExpr):
                ranges.setdefault(expr.position, extent)
    return prod(ranges.values())


class CostModel:
    """Costs ops and kernels on one hardware model; remembers the ops it did not know."""

    def __init__(self, hardware: Hardware):
        self.hardware = hardware
        self.unknown_ops: set[str] = set()
        self._work: dict[Operation, OpWork | None] = {}
        self._costs: dict[Operation, OpCost] = {}

    def keeping(self, ops: Iterable[Operation]) -> CostModel:
        """
        A cost model of the same hardware knowing the work measured here of
        `ops` (those a writer left reading what they read: an op it rewired
        is measured again).

        ```python
        with restored_afterwards(function) as before:
            write_plan(function, ...)
            costs.keeping(before.unrewired())
        ```
        """
        other = CostModel(self.hardware)
        other.unknown_ops = set(self.unknown_ops)
        for op in ops:
            if op in self._work:
                other._work[op] = self._work[op]
            if op in self._costs:
                other._costs[op] = self._costs[op]
        return other

    def is_view(self, op: Operation) -> bool:
        return isinstance(op, VIEW_OPS)

    def cost(self, op: Operation) -> OpCost:
        """The cost of `op` run alone (remembered: it costs the same wherever it moves)."""
        if op not in self._costs and isinstance(op, CollectiveOp):
            self._costs[op] = self._collective(op)
        if op not in self._costs:
            work = self.work(op)
            self._costs[op] = (
                NO_COST if work is None else self.kernel(op, [work], attention=False)
            )
        return self._costs[op]

    def _collective(self, op: CollectiveOp) -> OpCost:
        """A ring collective on the interconnect; a located error without one."""
        interconnect = self.hardware.interconnect
        if interconnect is None:
            raise CostModelError(
                diagnostic_at(
                    op,
                    f"{written_as(op)} runs on the device interconnect, which "
                    f"hardware '{self.hardware.name}' does not describe (give it "
                    "an [interconnect] table)",
                )
            )
        whole = tensor_bytes(op.result if op.GATHERS else op.input, op)
        group = op.group_size
        return OpCost(
            0.0,
            interconnect.collective_bytes(whole, group),
            interconnect.collective_time(whole, group),
        )

    def work(self, op: Operation) -> OpWork | None:
        """
        What `op` computes and moves; None for ops that take no device time
        on the compute units (a collective's is the interconnect's: `cost`).
        """
        if op not in self._work:
            self._work[op] = self._measure(op)
        return self._work[op]

    def _measure(self, op: Operation) -> OpWork | None:
        if (
            isinstance(op, VIEW_OPS + FREE_OPS + (CollectiveOp,))
            or op.name in _FREE_NAMES
        ):
            return None
        operands = [v for v in dict.fromkeys(op.operands) if tensor_type(v) is not None]
        results = tuple(v for v in op.results if tensor_type(v) is not None)
        if not operands and not results:
            return None  # scalar bookkeeping on the host
        for value in (*operands, *results):
            tensor_bytes(value, op)  # a clear error for a dynamic shape
        if isinstance(op, LinalgStructuredOperation):
            reads = tuple(dict.fromkeys(read_operands(op)))
            contraction = is_contraction(op)
            if contraction and any(_is_one_hot(v) for v in op.inputs):
                return OpWork(0.0, "f32", False, reads, results)  # gather, scatter-add
            flops = float(domain_size(op) * _body_flops(op))
            dtype = _input_dtype(reads) if contraction else "f32"
            return OpWork(flops, dtype, contraction, reads, results)
        if op.dialect_name() in ("arith", "math") and results:
            result_type = tensor_type(results[0])
            assert result_type is not None
            flops = float(prod(result_type.get_shape()))
            return OpWork(flops, "f32", False, tuple(operands), results)
        if isinstance(op, tensor.InsertSliceOp):
            return OpWork(0.0, "f32", False, (op.source,), (op.source,))
        if op.dialect_name() == "tensor":
            return OpWork(0.0, "f32", False, tuple(operands), results)
        if isinstance(op, func.CallOp):
            reject_recursion(op)
        self.unknown_ops.add(op.name)
        return OpWork(0.0, "f32", False, tuple(operands), results, known=False)

    def kernel(
        self,
        anchor: Operation,
        members: list[OpWork],
        attention: bool,
        reads: list[SSAValue] | None = None,
        writes: list[SSAValue] | None = None,
    ) -> OpCost:
        """
        One launch running `members` (their FLOPs each at its own rate); its
        memory traffic is `reads` and `writes` (by default the members' own).
        """
        hw = self.hardware
        if reads is None:
            reads = [v for work in members for v in work.reads]
        if writes is None:
            writes = [v for work in members for v in work.writes]
        # each value once per direction: a slice copied in place is read and written
        nbytes = sum(tensor_bytes(v, anchor) for v in dict.fromkeys(reads)) + sum(
            tensor_bytes(v, anchor) for v in dict.fromkeys(writes)
        )
        compute = 0.0
        flops = 0.0
        for work in members:
            if work.contraction:
                efficiency = (
                    hw.attention_efficiency if attention else hw.compute_efficiency
                )
            else:
                efficiency = hw.compute_efficiency
            if work.flops:
                compute += self._compute_s(anchor, work, efficiency)
            flops += work.flops
        known = all(work.known for work in members)
        return OpCost(flops, nbytes, hw.kernel_s(compute, nbytes), known)

    def _compute_s(self, op: Operation, work: OpWork, efficiency: float) -> float:
        """The time of `work`'s FLOPs; a located error where the hardware has no peak."""
        try:
            return self.hardware.compute_s(work.flops, work.dtype, efficiency)
        except HardwareError as err:
            raise CostModelError(
                diagnostic_at(op, f"{written_as(op)}: {err}")
            ) from None


def reject_recursion(call: func.CallOp) -> None:
    """A located error if the callee of `call` reaches a function on its own path."""
    caller = call.parent_op()
    while caller is not None and not isinstance(caller, func.FuncOp):
        caller = caller.parent_op()
    acyclic: set[func.FuncOp] = set()

    def cycle(function: func.FuncOp, path: list[str]) -> list[str] | None:
        name = function.sym_name.data
        if name in path:
            return [*path[path.index(name) :], name]
        if function in acyclic:
            return None
        for inner in function.walk():
            if isinstance(inner, func.CallOp):
                callee = SymbolTable.lookup_symbol(inner, inner.callee)
                if isinstance(callee, func.FuncOp) and not callee.is_declaration:
                    found = cycle(callee, [*path, name])
                    if found is not None:
                        return found
        acyclic.add(function)
        return None

    callee = SymbolTable.lookup_symbol(call, call.callee)
    if not isinstance(callee, func.FuncOp) or callee.is_declaration:
        return
    start = [] if caller is None else [caller.sym_name.data]
    found = cycle(callee, start)
    if found is not None:
        chain = " -> ".join(f"@{name}" for name in found)
        raise CostModelError(
            diagnostic_at(
                call,
                f"'func.call' recurses ({chain}): recursion through func.call "
                "is not supported (the cost model needs a finite call tree)",
            )
        )


def producer(value: SSAValue) -> Operation | None:
    """The op computing `value`, looking through views (None: a block argument)."""
    owner = view_source(value).owner
    return owner if isinstance(owner, Operation) else None


def _is_one_hot(value: SSAValue) -> bool:
    """
    A one-hot matrix (indices compared for equality with an iota), seen
    through views and single-input ops: a contraction with it is a gather or
    a scatter-add (an embedding and its gradient), which moves rows, not FLOPs.
    """
    owner = producer(value)
    while isinstance(owner, LinalgStructuredOperation):
        tensors = [v for v in owner.inputs if tensor_type(v) is not None]
        body = {inner.name for inner in owner.body.walk()}
        if "arith.cmpi" in body and (
            "linalg.index" in body or any(_is_iota(v) for v in tensors)
        ):
            return True
        if len(tensors) != 1:
            return False
        owner = producer(tensors[0])
    return False


def _is_iota(value: SSAValue) -> bool:
    """A tensor computed from its indices alone (`torch.arange`)."""
    owner = producer(value)
    return (
        isinstance(owner, LinalgStructuredOperation)
        and all(tensor_type(v) is None for v in owner.inputs)
        and any(inner.name == "linalg.index" for inner in owner.body.walk())
    )


def _input_dtype(reads: tuple[SSAValue, ...]) -> str:
    """The widest floating-point element type among a contraction's inputs."""
    widest: AnyFloat | None = None
    for value in reads:
        value_type = tensor_type(value)
        element = value_type.element_type if value_type is not None else None
        if isinstance(element, AnyFloat) and (
            widest is None or element.bitwidth > widest.bitwidth
        ):
            widest = element
    return "f32" if widest is None else dtype_name(widest)
