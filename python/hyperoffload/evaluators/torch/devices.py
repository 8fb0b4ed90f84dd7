"""
Where the executor runs a program: one compute stream, one copy stream per
link direction, events between them. Three devices implement it:

- `CudaDevice`: the current CUDA stream computes, a dedicated stream per
  (tier, direction) copies between pinned host memory and the device with
  `non_blocking` copies; events order them and time them;
- `SynchronousDevice` (`--device cpu`): the same calls, with every copy
  done at once on the host; a copy's whole time is exposed (nothing runs
  beside it), every event is complete when it is made;
- `ClockedDevice` (`hyperoffload.evaluators.torch.clocked`): values on the
  CPU, time on a modelled clock, for tests of the stream logic.

```python
device = make_device("cpu")
event = device.copy(Link("remote", to_device=True), dst, src, after=[])
device.wait(event)     # the compute stream waits (once) before the first consumer
```
"""

from __future__ import annotations

import gc
import platform
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import torch
from xdsl.ir import Operation

R = TypeVar("R")


class DeviceError(ValueError):
    """A device that cannot be used here (CUDA requested without a GPU, an unknown kind)."""


@dataclass(frozen=True)
class Link:
    """One direction of the link to a tier: a copy stream of its own."""

    tier: str
    to_device: bool


@dataclass(eq=False)
class Event:
    """A point on a stream; `waited` once the compute stream has waited for it."""

    waited: bool = field(default=False, init=False)


@dataclass(frozen=True)
class Timing:
    makespan_s: float
    exposed_s: float


class Device(ABC):
    """A compute stream, copy streams and events; memory for inputs and copies."""

    kind: str
    """`cpu`, `cuda` or `clocked`."""
    name: str
    """The device as a person reads it, e.g. `NVIDIA H200`."""
    torch_device: torch.device

    def prepare(self) -> None:  # noqa: B027 -- an optional hook
        """Before inputs are placed: a clean slate for memory statistics."""

    def place(self, tensor: torch.Tensor) -> torch.Tensor:
        """An input in device memory (before the run starts)."""
        return tensor.to(self.torch_device)

    def host(self, tensor: torch.Tensor) -> torch.Tensor:
        """An input in host memory that copies read (pinned where that matters)."""
        return tensor

    def host_empty(self, shape: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
        """Host memory a copy from the device writes."""
        return torch.empty(tuple(shape), dtype=dtype)

    def empty(self, shape: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
        """Device memory a copy to the device writes (allocated on the compute stream)."""
        return torch.empty(tuple(shape), dtype=dtype, device=self.torch_device)

    @abstractmethod
    def start(self) -> None:
        """The run starts: inputs are in place."""

    def compute(self, op: Operation, run: Callable[[], R]) -> R:
        """Run `op` (`run` issues its torch operations) on the compute stream."""
        return run()

    @abstractmethod
    def copy(
        self,
        link: Link,
        dst: torch.Tensor,
        src: torch.Tensor,
        after: Sequence[Event],
    ) -> Event:
        """
        Copy `src` into `dst` on `link`'s stream, once the compute stream has
        reached this point and the events `after` are complete; the event
        marking the copy's completion.
        """

    @abstractmethod
    def wait(self, event: Event) -> None:
        """The compute stream waits for `event` (once; the wait is measured)."""

    @abstractmethod
    def done(self, event: Event) -> bool:
        """Whether `event` is complete (never blocks)."""

    @abstractmethod
    def now(self) -> float:
        """Seconds since the run started, on the device's clock."""

    @abstractmethod
    def finish(self, pending: Sequence[Event]) -> Timing:
        """The compute stream waits for `pending`; the run's makespan and exposed time."""

    def stop(self) -> None:  # noqa: B027 -- an optional hook
        """The run is over, finished or failed."""

    def peak_allocated(self) -> tuple[int, int] | None:
        """(peak allocated, peak reserved) bytes since `prepare`, where the device counts them."""
        return None


def cpu_name() -> str:
    """The CPU model, as `/proc/cpuinfo` names it."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


class SynchronousDevice(Device):
    """The host as the device: copies run at once, in the compute stream's place."""

    kind = "cpu"

    def __init__(self, threads: int | None = None) -> None:
        self.torch_device = torch.device("cpu")
        self.threads = threads
        """Intra-op threads during a run (default: torch's); 1 is fastest for tiny ops."""
        count = threads or torch.get_num_threads()
        self.name = f"{cpu_name()}, {count} thread{'s' if count > 1 else ''}"
        self._start = 0.0
        self._exposed = 0.0
        self._saved_threads = 0

    def start(self) -> None:
        self._saved_threads = torch.get_num_threads()
        if self.threads is not None:
            torch.set_num_threads(self.threads)
        self._exposed = 0.0
        self._start = time.perf_counter()

    def copy(
        self,
        link: Link,
        dst: torch.Tensor,
        src: torch.Tensor,
        after: Sequence[Event],
    ) -> Event:
        begin = time.perf_counter()
        dst.copy_(src)
        self._exposed += time.perf_counter() - begin
        return Event()

    def wait(self, event: Event) -> None:
        event.waited = True  # the copy is complete: no time passes

    def done(self, event: Event) -> bool:
        return True

    def now(self) -> float:
        return time.perf_counter() - self._start

    def finish(self, pending: Sequence[Event]) -> Timing:
        return Timing(time.perf_counter() - self._start, self._exposed)

    def stop(self) -> None:
        torch.set_num_threads(self._saved_threads)


@dataclass(eq=False)
class CudaEvent(Event):
    event: torch.cuda.Event = field(default_factory=torch.cuda.Event)


class CudaDevice(Device):
    """A CUDA device: the current stream computes, one stream per link direction copies."""

    kind = "cuda"

    def __init__(self, index: int = 0) -> None:
        self.torch_device = torch.device("cuda", index)
        self.name = torch.cuda.get_device_name(index)
        self._compute = torch.cuda.current_stream(self.torch_device)
        self._streams: dict[Link, torch.cuda.Stream] = {}
        self._stalls: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []
        self._begin = torch.cuda.Event(enable_timing=True)
        self._start = 0.0
        self._allocated = 0
        self._reserved = 0

    def prepare(self) -> None:
        gc.collect()
        torch.cuda.synchronize(self.torch_device)
        torch.cuda.empty_cache()
        self._allocated = torch.cuda.memory_allocated(self.torch_device)
        self._reserved = torch.cuda.memory_reserved(self.torch_device)

    def host(self, tensor: torch.Tensor) -> torch.Tensor:
        return tensor.pin_memory()

    def host_empty(self, shape: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
        return torch.empty(tuple(shape), dtype=dtype, pin_memory=True)

    def start(self) -> None:
        torch.cuda.synchronize(self.torch_device)
        torch.cuda.reset_peak_memory_stats(self.torch_device)
        self._stalls = []
        self._compute = torch.cuda.current_stream(self.torch_device)
        self._begin = torch.cuda.Event(enable_timing=True)
        self._begin.record(self._compute)
        self._start = time.perf_counter()

    def _stream(self, link: Link) -> torch.cuda.Stream:
        if link not in self._streams:
            self._streams[link] = torch.cuda.Stream(self.torch_device)
        return self._streams[link]

    def copy(
        self,
        link: Link,
        dst: torch.Tensor,
        src: torch.Tensor,
        after: Sequence[Event],
    ) -> Event:
        stream = self._stream(link)
        issued = torch.cuda.Event()
        issued.record(self._compute)
        stream.wait_event(issued)
        for event in after:
            assert isinstance(event, CudaEvent)
            stream.wait_event(event.event)
        with torch.cuda.stream(stream):
            dst.copy_(src, non_blocking=True)
        completed = CudaEvent()
        completed.event.record(stream)
        return completed

    def _measured_wait(self, events: Sequence[Event]) -> None:
        before = torch.cuda.Event(enable_timing=True)
        after = torch.cuda.Event(enable_timing=True)
        before.record(self._compute)
        for event in events:
            assert isinstance(event, CudaEvent)
            self._compute.wait_event(event.event)
            event.waited = True
        after.record(self._compute)
        self._stalls.append((before, after))

    def wait(self, event: Event) -> None:
        if not event.waited:
            self._measured_wait([event])

    def done(self, event: Event) -> bool:
        assert isinstance(event, CudaEvent)
        return bool(event.event.query())

    def now(self) -> float:
        return time.perf_counter() - self._start

    def finish(self, pending: Sequence[Event]) -> Timing:
        waiting = [e for e in pending if not e.waited]
        if waiting:
            self._measured_wait(waiting)
        end = torch.cuda.Event(enable_timing=True)
        end.record(self._compute)
        torch.cuda.synchronize(self.torch_device)
        exposed = sum(b.elapsed_time(a) for b, a in self._stalls) / 1e3
        return Timing(self._begin.elapsed_time(end) / 1e3, exposed)

    def peak_allocated(self) -> tuple[int, int] | None:
        peak = torch.cuda.max_memory_allocated(self.torch_device) - self._allocated
        reserved = torch.cuda.max_memory_reserved(self.torch_device) - self._reserved
        return peak, reserved


def cuda_memory(device: torch.device) -> int:
    """The memory a CUDA device has, in bytes."""
    cuda: Any = torch.cuda
    return int(cuda.get_device_properties(device).total_memory)


DEVICE_KINDS = ("cpu", "cuda")


def make_device(kind: str, threads: int | None = None) -> Device:
    """
    The device `kind` names (`cpu` or `cuda`; `threads`: the CPU's intra-op
    threads); a `DeviceError` if it is not here.
    """
    if kind == "cpu":
        return SynchronousDevice(threads)
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise DeviceError(
                "--device cuda: no CUDA device is available "
                f"(torch {torch.__version__}, built with CUDA {torch.version.cuda})"
            )
        return CudaDevice()
    raise DeviceError(
        f"unknown device '{kind}' (expected one of: {', '.join(DEVICE_KINDS)})"
    )
