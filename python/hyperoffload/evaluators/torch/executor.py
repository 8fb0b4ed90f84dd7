"""
The torch executor's driver: runs a function op by op on a `Device`, with
the residency semantics of the `hyperoffload` dialect made real:

- an argument of remote type lives in (pinned) host memory, any other in
  device memory;
- `prefetch` allocates the device tensor and copies into it on the link's
  copy stream; the compute stream waits for the copy before the first op
  that reads the tensor (a view of it passes the wait on to its readers);
- `store` copies a device tensor out on the other stream of the link, once
  the compute stream has produced it;
- a compressed `store` or `prefetch` (`compress = "int8"`) is rejected
  with a located error: the executor does not run the codec;
- `detach` drops the device tensor, and a value is dropped after its last
  use; its memory is freed once no value and no copy in flight uses it;
- every other op runs as torch operations (`arith`, `math`, `tensor`,
  `cf.assert`, structured `linalg`), its results cast to their types;
- `scf.if` runs the branch its condition takes (a routed expert), op by
  op; offload ops inside a branch are rejected with a located error (the
  numpy evaluator runs them).

```python
execution = execute(module, make_device("cpu"), inputs)
execution.outputs                       # numpy arrays, bf16 widened to f32
execution.measurement.exposed_transfer_s
```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue

from hyperoffload.dialects.hyperoffload import DetachOp, PrefetchOp, RemoteType, StoreOp
from hyperoffload.dialects.residency import describe
from hyperoffload.evaluators.numeric.interpreter import find_function
from hyperoffload.evaluators.op_registry import not_resident
from hyperoffload.evaluators.torch.devices import Device, Event, Link
from hyperoffload.evaluators.torch.linalg import (
    Read,
    StructuredOp,
    analyse,
    run_structured,
)
from hyperoffload.evaluators.torch.liveness import Liveness
from hyperoffload.evaluators.torch.memory import DeviceMemory, MemoryEvent
from hyperoffload.evaluators.torch.ops import BODY_IMPLS, IMPLS
from hyperoffload.evaluators.torch.registry import Scope
from hyperoffload.evaluators.torch.tensor import (
    REGION_OPS,
    materialised,
    region_reads,
)
from hyperoffload.evaluators.torch.values import (
    Fail,
    error,
    shape_of,
    to_numpy,
    torch_dtype,
)

OffloadOp = PrefetchOp | StoreOp | DetachOp

_ALWAYS_VIEWS = ("tensor.cast", "tensor.extract_slice")
_RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape")


@dataclass(frozen=True)
class Measurement:
    """What one run measured."""

    makespan_s: float
    exposed_transfer_s: float
    """The time the compute stream waited for copies (on the CPU: the copies' time)."""
    peak_hbm_bytes: int
    """The device's count where it keeps one (CUDA), else the executor's."""
    tracked_peak_bytes: int
    """The executor's count: the most bytes of live device storages at once."""
    reserved_peak_bytes: int | None
    """The CUDA caching allocator's reserved peak; None elsewhere."""
    bytes_to_device: int
    bytes_to_remote: int
    transfers: int
    ops: int


@dataclass
class Execution:
    outputs: list[np.ndarray[Any, Any]]
    measurement: Measurement
    memory_events: list[MemoryEvent]
    """Allocations and frees of device storages, in device time."""


@dataclass
class _RemoteCopy:
    tensor: torch.Tensor
    tier: str
    event: Event | None = None
    """The store writing it, until that completes; None for an argument."""


def _unsupported(op: Operation, structured: StructuredOp | None) -> Operation | None:
    """`op`, or the op of its body, that the executor cannot run; None if none."""
    if isinstance(op, OffloadOp | func.ReturnOp):
        return None
    if isinstance(op, scf.IfOp):
        for region in op.regions:
            for block in region.blocks:
                for nested in block.ops:
                    if isinstance(nested, scf.YieldOp):
                        continue
                    if isinstance(nested, OffloadOp):
                        return (
                            nested  # a fetch in a branch: the numpy evaluator runs it
                        )
                    found = _unsupported(nested, analyse(nested))
                    if found is not None:
                        return found
        return None
    if structured is None:
        if op.name in REGION_OPS:
            return None
        return op if op.name not in IMPLS or op.regions else None
    body = structured.spec.body
    for nested in body.ops:
        if nested is not body.last_op and (
            nested.name not in BODY_IMPLS or nested.regions
        ):
            return nested
    return None


def _nbytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


@dataclass
class _Run:
    function: func.FuncOp
    device: Device
    live: Liveness
    structured: list[StructuredOp | None]
    """Each top-level op analysed, if it is a structured op."""
    scope: Scope
    memory: DeviceMemory
    values: dict[SSAValue, torch.Tensor] = field(
        default_factory=dict[SSAValue, torch.Tensor]
    )
    remote: dict[SSAValue, _RemoteCopy] = field(
        default_factory=dict[SSAValue, _RemoteCopy]
    )
    ready: dict[SSAValue, Event] = field(default_factory=dict[SSAValue, Event])
    """Device values a copy still writes: the compute stream waits before reading."""
    copies: list[Event] = field(default_factory=list[Event])
    bytes_to_device: int = 0
    bytes_to_remote: int = 0

    def read(self, op: Operation, value: SSAValue) -> torch.Tensor:
        """The device tensor of `value`, read by `op`."""
        found = self.values.get(value)
        if found is not None:
            return found
        raise error(op, not_resident(op, describe(value), value in self.remote))

    def bind(self, value: SSAValue, tensor: torch.Tensor) -> None:
        self.values[value] = tensor
        if isinstance(value.type, TensorType):
            self.memory.hold(value, tensor)

    def drop(self, value: SSAValue) -> None:
        """`value` is dead (or detached): its device memory may go."""
        self.values.pop(value, None)
        self.ready.pop(value, None)
        self.memory.release(value, self.device.done)

    def place(self, inputs: Sequence[torch.Tensor]) -> None:
        for arg, tensor in zip(self.function.args, inputs, strict=True):
            if isinstance(arg.type, RemoteType):
                self.remote[arg] = _RemoteCopy(self.device.host(tensor), arg.type.tier)
            else:
                self.bind(arg, self.device.place(tensor))

    def prefetch(self, op: PrefetchOp) -> None:
        copy = self.remote.get(op.source)
        if copy is None:
            raise error(
                op, f"prefetch of {describe(op.source)}, which holds no remote copy"
            )
        dst = self.device.empty(shape_of(op.result.type), torch_dtype(op.result.type))
        after = [copy.event] if copy.event is not None else []
        event = self.device.copy(Link(copy.tier, True), dst, copy.tensor, after)
        self.bind(op.result, dst)
        self.memory.keep_until(dst, event)
        self.ready[op.result] = event
        self.copies.append(event)
        self.bytes_to_device += _nbytes(dst)

    def store(self, op: StoreOp) -> None:
        source = materialised(self.read(op, op.value), self.device.torch_device)
        pending = self.ready.get(op.value)
        after = [pending] if pending is not None and not pending.waited else []
        dst = self.device.host_empty(list(source.shape), source.dtype)
        assert isinstance(op.handle.type, RemoteType)
        tier = op.handle.type.tier
        event = self.device.copy(Link(tier, False), dst, source, after)
        self.remote[op.handle] = _RemoteCopy(dst, tier, event)
        self.memory.keep_until(source, event)
        self.copies.append(event)
        self.bytes_to_remote += _nbytes(source)

    def detach(self, op: DetachOp) -> None:
        if op.value not in self.values:
            raise error(
                op, f"detach of {describe(op.value)}, which is not resident in HBM"
            )
        self.drop(op.value)

    def passes_waits_on(self, op: Operation, structured: StructuredOp | None) -> bool:
        """Whether `op`'s results are views of its operands: no kernel reads them."""
        if structured is not None:
            return structured.view
        if op.name in _ALWAYS_VIEWS:
            return True
        if op.name in _RESHAPES:
            source = self.values.get(op.operands[0])
            return source is not None and (source.is_meta or source.is_contiguous())
        return False

    def branch(self, op: scf.IfOp, read: Read) -> list[torch.Tensor]:
        """
        The results of the branch of `op` its condition takes, its ops run
        in turn (values from above read with `read`); the branch's own
        temporaries are not counted in device memory, only its results.
        """
        region = op.true_region if bool(read(op.cond)) else op.false_region
        if not region.blocks:
            return []
        env: dict[SSAValue, torch.Tensor] = {}

        def value(v: SSAValue) -> torch.Tensor:
            found = env.get(v)
            return found if found is not None else read(v)

        for nested in region.block.ops:
            if isinstance(nested, scf.YieldOp):
                return [value(v) for v in nested.operands]
            analysed = analyse(nested)
            if isinstance(nested, scf.IfOp):
                results = self.branch(nested, value)
            elif analysed is not None:
                results = run_structured(self.scope, analysed, value)
            else:
                reads = list(nested.operands)
                if nested.name in REGION_OPS:
                    reads += region_reads(nested)
                results = IMPLS[nested.name](
                    self.scope, nested, [value(v) for v in reads]
                )
            for result, tensor in zip(nested.results, results, strict=True):
                dtype = torch_dtype(result.type)
                env[result] = tensor if tensor.dtype == dtype else tensor.to(dtype)
        raise Fail("a branch of scf.if without a terminator")

    def compute(
        self, op: Operation, structured: StructuredOp | None, reads: list[SSAValue]
    ) -> None:
        views = self.passes_waits_on(op, structured)
        passed: list[Event] = []
        for value in reads:
            event = self.ready.get(value)
            if event is None:
                continue
            if views:
                passed.append(event)
            else:
                self.device.wait(self.ready.pop(value))

        def run() -> list[torch.Tensor]:
            if isinstance(op, scf.IfOp):
                return self.branch(op, lambda v: self.read(op, v))
            if structured is not None:
                return run_structured(
                    self.scope, structured, lambda v: self.read(op, v)
                )
            reads = list(op.operands)
            if op.name in REGION_OPS:
                reads += region_reads(op)
            return IMPLS[op.name](self.scope, op, [self.read(op, v) for v in reads])

        try:
            results = self.device.compute(op, run)
            for result, tensor in zip(op.results, results, strict=True):
                dtype = torch_dtype(result.type)
                if tensor.dtype != dtype:
                    tensor = tensor.to(dtype)
                if (
                    isinstance(result.type, TensorType)
                    and tensor.device != (self.device.torch_device)
                    and not tensor.is_meta
                ):
                    tensor = tensor.to(self.device.torch_device)
                self.bind(result, tensor)
        except (Fail, RuntimeError, IndexError, ValueError, TypeError) as err:
            raise error(op, f"'{op.name}': {err}") from None
        for event in passed:
            for result in op.results:
                self.ready[result] = event

    def run(self) -> list[torch.Tensor | _RemoteCopy]:
        outputs: list[torch.Tensor | _RemoteCopy] = []
        for index, op in enumerate(self.live.ops):
            self.memory.poll(self.device.done)
            if isinstance(op, PrefetchOp):
                self.prefetch(op)
            elif isinstance(op, StoreOp):
                self.store(op)
            elif isinstance(op, DetachOp):
                self.detach(op)
            elif isinstance(op, func.ReturnOp):
                outputs = [
                    self.remote[v] if v in self.remote else self.read(op, v)
                    for v in op.operands
                ]
            else:
                self.compute(op, self.structured[index], self.live.reads[index])
            for value in self.live.dying[index]:
                self.drop(value)
        return outputs


def execute(
    module: ModuleOp,
    device: Device,
    inputs: Sequence[torch.Tensor],
    function: str | None = None,
) -> Execution:
    """
    Run `function` (default: the first public function with a body) of
    `module` on `device`, its arguments `inputs` (host tensors of the
    argument types); raises `RunError` at an op it cannot run.
    """
    func_op = find_function(module, function)
    live = Liveness.of(func_op)
    structured = [analyse(op) for op in live.ops]
    for op, analysed in zip(live.ops, structured, strict=True):
        if isinstance(op, PrefetchOp | StoreOp) and op.compress is not None:
            scheme = f'compress = "{op.compress.data}"'
            raise error(
                op,
                f"'{op.name}' with {scheme} (a compressed transfer) is not "
                "supported by the torch executor; plan without compress-kv (the "
                "numpy evaluator and the ExecutionEngine run it)",
            )
        unsupported = _unsupported(op, analysed)
        if unsupported is not None:
            raise error(
                unsupported,
                f"'{unsupported.name}' is not supported by the torch executor",
            )
    if len(inputs) != len(func_op.args):
        raise error(
            func_op,
            f"@{func_op.sym_name.data} takes {len(func_op.args)} argument(s), got {len(inputs)}",
        )
    run = _Run(
        func_op,
        device,
        live,
        structured,
        Scope(device.torch_device),
        DeviceMemory(device.now),
    )
    device.prepare()
    run.place(inputs)
    device.start()
    try:
        results = run.run()
        timing = device.finish(run.copies)
    finally:
        device.stop()
    for op, holds in run.scope.assertions:
        if not bool(holds):
            message = getattr(op, "msg", None)
            text = f": {message.data}" if message is not None else ""
            raise error(op, f"'{op.name}': assertion failed{text}")
    counted = device.peak_allocated()
    peak, reserved = counted if counted is not None else (run.memory.peak_bytes, None)
    measurement = Measurement(
        makespan_s=timing.makespan_s,
        exposed_transfer_s=timing.exposed_s,
        peak_hbm_bytes=peak,
        tracked_peak_bytes=run.memory.peak_bytes,
        reserved_peak_bytes=reserved,
        bytes_to_device=run.bytes_to_device,
        bytes_to_remote=run.bytes_to_remote,
        transfers=len(run.copies),
        ops=len(run.live.ops),
    )
    outputs = [
        to_numpy(
            r.tensor
            if isinstance(r, _RemoteCopy)
            else materialised(r, device.torch_device)
        )
        for r in results
    ]
    events = list(run.memory.events)
    run.memory.clear()
    return Execution(outputs, measurement, events)
