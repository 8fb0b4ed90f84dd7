"""
The discrete-event interpreter of schedules over modelled HBM and links.

One compute stream runs the steps in order; each link direction has one copy
stream that runs its transfers first come, first served (links are full
duplex). A compute step waits for nothing but explicit `wait` steps and for
memory: an allocation that does not fit stalls until pending frees make room
(a free waits for the transfers reading its buffer), and when nothing is
pending the run records an out-of-memory and goes on with the capacity
exceeded, so that its peak is still reported.

With `reactive=True` the interpreter is a runtime swapper instead (see
`hyperoffload.policies`): a read of a buffer that is not resident fetches it
on demand and stalls; an allocation that does not fit evicts the least
recently used buffers the current step does not need, storing them first if
they are still live (read later, or the caller's: arguments and results) and
no copy of them exists elsewhere. A result it evicted ends the run in the
pool (a relaxation in its favour: the contract wants results in HBM).

```python
result = simulate(schedule, load_hardware("ascend-910c"), capacity=32 * 10**9)
result.peak_hbm_bytes, result.makespan_s, result.exposed_transfer_s
```
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from dataclasses import dataclass, field

from hyperoffload.hardware import Hardware
from hyperoffload.schedule import Compute, Free, Schedule, Transfer, Wait


class SimulationError(ValueError):
    """A schedule that breaks the residency contract (e.g. reads a freed buffer)."""


@dataclass
class OutOfMemory:
    step: str
    loc: str
    time_s: float
    needed_bytes: int
    live: list[tuple[str, int]]
    """The largest live buffers at that moment, by name and bytes."""


@dataclass
class Interval:
    start: float
    end: float
    name: str
    track: str
    bytes: int = 0


@dataclass
class SimResult:
    hbm_capacity_bytes: int | None
    peak_hbm_bytes: int = 0
    makespan_s: float = 0.0
    compute_s: float = 0.0
    bytes_to_device: int = 0
    bytes_to_remote: int = 0
    transfers: int = 0
    bound_time_s: float = 0.0
    bound_peak_bytes: int = 0
    oom: OutOfMemory | None = None
    memory: list[tuple[float, int]] = field(default_factory=list[tuple[float, int]])
    """HBM occupancy after each change, in time order."""
    intervals: list[Interval] = field(default_factory=list[Interval])
    """Compute steps and transfers, for traces and plots."""

    @property
    def exposed_transfer_s(self) -> float:
        """Time the compute stream was not computing: waiting for transfers or memory."""
        return max(0.0, self.makespan_s - self.compute_s)

    def within(self, reference: SimResult, slowdown: float) -> bool:
        """No out-of-memory, and at most `slowdown` (e.g. 0.02) slower than `reference`."""
        return self.oom is None and self.makespan_s <= reference.makespan_s * (
            1 + slowdown
        )


class _Run:
    def __init__(
        self,
        schedule: Schedule,
        hardware: Hardware,
        capacity: int | None,
        reactive: bool,
        record: bool,
    ):
        self.schedule = schedule
        self.hw = hardware
        self.capacity = capacity
        self.reactive = reactive
        self.record = record
        self.result = SimResult(capacity)
        self.buffers = schedule.buffers
        self.now = 0.0
        self.hbm = 0
        self.resident: OrderedDict[int, None] = OrderedDict()  # in LRU order
        self.deferred: list[tuple[float, int]] = []  # (time, buffer) frees
        self.pending_free: dict[int, float] = {}  # buffer -> time of its deferred free
        self.readers_end: dict[int, float] = {}  # buffer -> end of transfers reading it
        self.copy_ready: dict[int, float] = {}  # copy buffer -> when its data is there
        self.has_copy: set[int] = set()  # device buffers with a copy in another tier
        self.transfer_end: dict[int, float] = {}
        self.stream_free: dict[tuple[str, bool], float] = {}
        self.stream_bytes: dict[tuple[str, bool], int] = {}
        self.step_index = -1
        self.last_read = self._last_reads() if reactive else {}
        self.step_name = "entry"
        self.step_loc = ""

    def _last_reads(self) -> dict[int, int]:
        last: dict[int, int] = {}
        for index, step in enumerate(self.schedule.steps):
            if isinstance(step, Compute):
                for buffer in step.reads:
                    last[buffer] = index
        return last

    # memory

    def _sample(self, time: float) -> None:
        if self.record:
            self.result.memory.append((time, self.hbm))

    def _release_until(self, time: float) -> None:
        while self.deferred and self.deferred[0][0] <= time:
            at, buffer = heapq.heappop(self.deferred)
            self._drop_deferred(buffer, at)

    def _drop_deferred(self, buffer: int, at: float) -> None:
        if self.pending_free.get(buffer) == at:
            del self.pending_free[buffer]
            self._drop(buffer, at)

    def _drop(self, buffer: int, time: float) -> None:
        if buffer in self.resident:
            del self.resident[buffer]
            self.hbm -= self.buffers[buffer].bytes
            self._sample(time)

    def _free(self, buffer: int) -> None:
        end = self.readers_end.get(buffer, 0.0)
        if end > self.now:
            heapq.heappush(self.deferred, (end, buffer))
            self.pending_free[buffer] = end
        else:
            self._drop(buffer, self.now)

    def _allocate(self, buffer: int, keep: set[int]) -> None:
        if buffer in self.resident:
            self.pending_free.pop(buffer, None)  # still there: its free is cancelled
            return
        size = self.buffers[buffer].bytes
        self._release_until(self.now)
        if self.capacity is not None:
            while self.hbm + size > self.capacity and self.deferred:
                at, freed = heapq.heappop(self.deferred)
                if self.pending_free.get(freed) == at:
                    self.now = max(self.now, at)
                    self._drop_deferred(freed, at)
            if self.reactive:
                self._evict_for(size, keep)
            if self.hbm + size > self.capacity and self.result.oom is None:
                self.result.oom = OutOfMemory(
                    self.step_name, self.step_loc, self.now, size, self._largest_live()
                )
        self.resident[buffer] = None
        self.hbm += size
        self.result.peak_hbm_bytes = max(self.result.peak_hbm_bytes, self.hbm)
        self._sample(self.now)

    def _largest_live(self) -> list[tuple[str, int]]:
        live = sorted(self.resident, key=lambda b: -self.buffers[b].bytes)[:5]
        return [(self.buffers[b].name, self.buffers[b].bytes) for b in live]

    def _evict_for(self, size: int, keep: set[int]) -> None:
        """Runtime swapping: evict least recently used buffers until `size` fits."""
        assert self.capacity is not None
        for victim in list(self.resident):
            if self.hbm + size <= self.capacity:
                return
            if victim in keep:
                continue
            live = (
                self.last_read.get(victim, -1) > self.step_index
                or self.buffers[victim].pinned  # the caller's: a result or argument
            )
            if live and victim not in self.has_copy:
                tier = self._tier_of(victim)
                end = self._start_transfer(victim, tier, to_device=False, name="evict")
                self.now = max(self.now, end)  # the swap-out completes before the free
                self.has_copy.add(victim)
            self._drop(victim, self.now)

    def _tier_of(self, buffer: int) -> str:
        home = self.buffers[buffer].home
        return home if home != "hbm" else self.hw.offload_tier

    # transfers

    def _start_transfer(
        self,
        buffer: int,
        link: str,
        to_device: bool,
        name: str,
        not_before: float = 0.0,
    ) -> float:
        """Queue a copy of `buffer` on its stream; return when it completes."""
        nbytes = self.buffers[buffer].bytes
        stream = (link, to_device)
        start = max(self.now, self.stream_free.get(stream, 0.0), not_before)
        end = start + self.hw.link(link).transfer_time(nbytes, to_device)
        self.stream_free[stream] = end
        self.stream_bytes[stream] = self.stream_bytes.get(stream, 0) + nbytes
        self.result.transfers += 1
        if to_device:
            self.result.bytes_to_device += nbytes
        else:
            self.result.bytes_to_remote += nbytes
            self.readers_end[buffer] = max(self.readers_end.get(buffer, 0.0), end)
        if self.record:
            direction = "to device" if to_device else "from device"
            self.result.intervals.append(
                Interval(start, end, name, f"{link} {direction}", nbytes)
            )
        return end

    # steps

    def run(self) -> SimResult:
        for buffer in self.buffers:
            if buffer.initial and buffer.tier == "hbm":
                if self.reactive and buffer.home != "hbm":
                    self.has_copy.add(buffer.id)
                    continue
                self.step_name = f"entry ({buffer.name})"
                self._allocate(buffer.id, set())
            elif buffer.initial:
                self.copy_ready[buffer.id] = 0.0
        for index, step in enumerate(self.schedule.steps):
            self.step_index = index
            if isinstance(step, Compute):
                self._compute(step)
            elif isinstance(step, Transfer):
                self._transfer(step)
            elif isinstance(step, Wait):
                self.now = max(self.now, self.transfer_end[step.transfer])
            else:
                self._free_step(step)
        self._release_until(float("inf"))
        ends = [self.now, *self.transfer_end.values(), *self.readers_end.values()]
        self.result.makespan_s = max(ends)
        self._bounds()
        return self.result

    def _compute(self, step: Compute) -> None:
        self.step_name, self.step_loc = step.name, step.loc
        keep = {*step.reads, *step.allocs}
        for buffer in step.allocs:
            self._allocate(buffer, keep)
        for buffer in step.reads:
            if buffer not in self.resident:
                if not self.reactive:
                    raise SimulationError(
                        f"{step.loc}: '{step.name}' reads {self.buffers[buffer].name}, "
                        "which is not resident in HBM"
                    )
                self._allocate(buffer, keep)
                tier = self._tier_of(buffer)
                self.now = self._start_transfer(
                    buffer, tier, to_device=True, name="fetch"
                )
            self.resident.move_to_end(buffer)
        start = self.now
        self.now += step.time_s
        self.result.compute_s += step.time_s
        if self.record:
            self.result.intervals.append(
                Interval(start, self.now, step.name, "compute")
            )
        for buffer in step.frees:
            self._free(buffer)

    def _transfer(self, step: Transfer) -> None:
        if step.to_device:
            self._allocate(step.dest, set())
            name = self.buffers[step.dest].name
            ready = self.copy_ready.get(step.source, 0.0)
            end = self._start_transfer(
                step.dest, step.link, True, name, not_before=ready
            )
        else:
            if step.source not in self.resident:
                raise SimulationError(
                    f"store of {self.buffers[step.source].name}, which is not resident in HBM"
                )
            end = self._start_transfer(
                step.source, step.link, False, self.buffers[step.source].name
            )
            self.copy_ready[step.dest] = end
        self.transfer_end[step.id] = end

    def _free_step(self, step: Free) -> None:
        if step.buffer not in self.resident:
            raise SimulationError(
                f"free of {self.buffers[step.buffer].name}, which is not resident"
            )
        self._free(step.buffer)

    def _bounds(self) -> None:
        link_time = 0.0
        for (link, to_device), nbytes in self.stream_bytes.items():
            bandwidth = self.hw.link(link)
            rate = (
                bandwidth.bandwidth_to_device
                if to_device
                else bandwidth.bandwidth_from_device
            )
            link_time = max(link_time, nbytes / rate)
        self.result.bound_time_s = max(self.result.compute_s, link_time)
        sizes = [b.bytes for b in self.buffers]
        self.result.bound_peak_bytes = max(
            (
                sum(sizes[b] for b in {*s.reads, *s.allocs})
                for s in self.schedule.steps
                if isinstance(s, Compute)
            ),
            default=0,
        )


def simulate(
    schedule: Schedule,
    hardware: Hardware,
    capacity: int | None = None,
    reactive: bool = False,
    record: bool = True,
) -> SimResult:
    """Run `schedule`; `capacity=None` means unlimited HBM."""
    return _Run(schedule, hardware, capacity, reactive, record).run()
