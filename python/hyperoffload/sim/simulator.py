"""
The discrete-event interpreter of schedules over modelled HBM and links.

One compute stream runs the steps in order; each link direction has one copy
stream that runs its transfers first come, first served. A link is full
duplex, but a transfer that starts while the opposite direction of its link
is busy runs at `duplex_efficiency` of its bandwidth (an approximation: the
rate is decided when the transfer starts and kept to its end, and the
transfer already running in the other direction keeps its rate). A
transfer on a link staged through another (`ssd` through `host`) also queues
its bytes on that link's stream in the same direction, for `bytes /
bandwidth` of it from its start, and ends when both legs have (an
approximation: the drive's chunks pipelined through host memory, their host
leg taken in one piece). A compute
step waits for nothing but explicit `wait` steps and for memory: an
allocation that does not fit stalls until pending frees make room (a free
waits for the transfers reading its buffer), and when nothing is pending the
run records an out-of-memory and goes on with the capacity exceeded, so that
its peak is still reported. A compressed transfer moves its compressed
bytes; its codec runs on the compute stream (`Transfer.codec_s`): the
quantisation right before a copy from the device is queued, the
dequantisation right after the wait for a copy to the device.

A compute step on the `interconnect` stream (a collective of a
data-parallel group) is issued in the compute stream's order but runs on a
stream of its own, first come, first served: it starts once it is issued,
its operands are ready and the interconnect is free, so it overlaps compute
but not another collective. Its result is allocated at issue; a step that
reads it (a compute step, or a store) waits until it ends, and a free of
its operand waits too.

With a `Runtime` the interpreter is a runtime cache instead (see
`hyperoffload.policies.peers`): a read of a buffer that is not resident fetches it
on demand and stalls; an allocation that does not fit evicts buffers the
current step does not need, storing them first (the compute stream waits for
the store) if they are still live (read later, or the caller's: arguments
and results) and no copy of them exists elsewhere. `Eviction.LRU` evicts the
least recently used first; `Eviction.NEXT_USE` the buffer read furthest in
the future first, and with a `horizon` the runtime also prefetches, before
each compute step, the buffers read within the next `horizon` compute steps
(earliest read first), into free memory or by evicting buffers that need no
store and are read later; a read waits for its prefetch only if it is late.
A result the runtime evicted ends the run in the pool (a relaxation in its
favour: the contract wants results in HBM). Under every policy, the update
of an argument that entered outside HBM ends in the argument's tier
(`Schedule.updates`: the next call reads it there): where the schedule does
not store it itself, it is written back after the last step touching it.

```python
result = simulate(schedule, load_hardware("ascend-910c"), capacity=32 * 10**9)
result.peak_hbm_bytes, result.makespan_s, result.exposed_transfer_s
prefetching = simulate(schedule, hardware, 16 * 10**9, Runtime(Eviction.NEXT_USE, 8))
```
"""

from __future__ import annotations

import heapq
import sys
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass, field
from enum import Enum

from hyperoffload.model.hardware import Hardware
from hyperoffload.model.layout import Allocation
from hyperoffload.model.schedule import Compute, Free, Schedule, Transfer, Wait
from hyperoffload.support.tiers import Tier

_NEVER = sys.maxsize
"""The next read of a buffer read no more."""


class SimulationError(ValueError):
    """A schedule that breaks the residency contract (e.g. reads a freed buffer)."""

    step: int | None = None
    """The index of the step it fails at (-1: at entry), set by `simulate`."""


class Eviction(Enum):
    LRU = "lru"
    """The least recently used buffer first."""
    NEXT_USE = "next-use"
    """The buffer whose next read is furthest first."""


@dataclass(frozen=True)
class Runtime:
    """The interpreter as a runtime cache over the schedule's buffers."""

    eviction: Eviction = Eviction.LRU
    horizon: int = 0
    """Compute steps ahead whose reads are prefetched (0: fetch on a miss only)."""


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
    interconnect_s: float = 0.0
    """Time the interconnect stream was busy (collectives)."""
    interconnect_bytes: int = 0
    """Bytes each device sent on the interconnect (as many were received)."""
    bound_time_s: float = 0.0
    bound_peak_bytes: int = 0
    oom: OutOfMemory | None = None
    memory: list[tuple[float, int]] = field(default_factory=list[tuple[float, int]])
    """HBM occupancy after each change, in time order."""
    intervals: list[Interval] = field(default_factory=list[Interval])
    """Compute steps and transfers, for traces and plots."""
    allocations: list[Allocation] = field(default_factory=list[Allocation])
    """Each stay of a buffer in HBM, numbered by occupancy changes (for layouts)."""
    fetches_into_held: int = 0
    """
    Fetches into a buffer still held, its free waiting for the store reading
    it: the fetch takes it back at no cost, where an IR fetching into a
    tensor of its own holds both until the store ends.
    """

    @property
    def exposed_transfer_s(self) -> float:
        """Time the compute stream was not computing: waiting for transfers or memory."""
        return max(0.0, self.makespan_s - self.compute_s)

    def within(self, reference: SimResult, slowdown: float) -> bool:
        """No out-of-memory, and at most `slowdown` (e.g. 0.02) slower than `reference`."""
        return self.oom is None and self.makespan_s <= reference.makespan_s * (
            1 + slowdown
        )


class _State:
    """What every part of a run reads: the schedule, the hardware, the clock, the step."""

    def __init__(
        self,
        schedule: Schedule,
        hardware: Hardware,
        capacity: int | None,
        runtime: Runtime | None,
        record: bool,
    ):
        self.schedule = schedule
        self.hw = hardware
        self.capacity = capacity
        self.runtime = runtime
        self.record = record
        self.result = SimResult(capacity)
        self.buffers = schedule.buffers
        self.now = 0.0
        """The compute stream's clock."""
        self.step_index = -1
        self.step_name = "entry"
        self.step_loc = ""
        self._setup()

    def _setup(self) -> None:
        """The state of each part of the run (each part adds its own)."""


class _Memory(_State):
    """
    HBM occupancy: buffers claimed and dropped, frees deferred until the
    transfers reading them end, an allocation that waits for them (or
    records an out-of-memory), the peak, samples and allocations.
    """

    def _setup(self) -> None:
        super()._setup()
        self.hbm = 0
        self.resident: OrderedDict[int, None] = OrderedDict()  # in LRU order
        self.claimed: dict[int, int] = {}  # resident buffer -> event of its claim
        self.events = 0  # occupancy changes so far
        self.deferred: list[tuple[float, int]] = []  # (time, buffer) frees
        self.pending_free: dict[int, float] = {}  # buffer -> time of its deferred free
        self.readers_end: dict[int, float] = {}  # buffer -> end of transfers reading it

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
            self._released(buffer)

    def _released(self, buffer: int) -> None:
        size = self.buffers[buffer].bytes
        start = self.claimed.pop(buffer)
        self.result.allocations.append(Allocation(buffer, size, start, self.events))
        self.events += 1

    def _free(self, buffer: int) -> None:
        end = self.readers_end.get(buffer, 0.0)
        if end > self.now:
            heapq.heappush(self.deferred, (end, buffer))
            self.pending_free[buffer] = end
        else:
            self._drop(buffer, self.now)

    def _fits(self, size: int) -> bool:
        return self.capacity is None or self.hbm + size <= self.capacity

    def _allocate(self, buffer: int, keep: set[int]) -> None:
        """Claim `buffer`, waiting for frees (or making room) where it does not fit."""
        if buffer in self.resident:
            self.pending_free.pop(buffer, None)  # still there: its free is cancelled
            return
        size = self.buffers[buffer].bytes
        self._release_until(self.now)
        if self.capacity is not None:
            self._wait_for_frees(size)
            self._make_room(size, keep)
            if not self._fits(size) and self.result.oom is None:
                self.result.oom = OutOfMemory(
                    self.step_name, self.step_loc, self.now, size, self._largest_live()
                )
        self._claim(buffer)

    def _wait_for_frees(self, size: int) -> None:
        """Advance the clock through deferred frees until `size` fits."""
        while not self._fits(size) and self.deferred:
            at, freed = heapq.heappop(self.deferred)
            if self.pending_free.get(freed) == at:
                self.now = max(self.now, at)
                self._drop_deferred(freed, at)

    def _make_room(self, size: int, keep: set[int]) -> None:
        """Free more memory for `size` (the runtime cache evicts; none here)."""

    def _claim(self, buffer: int) -> None:
        self.resident[buffer] = None
        self.claimed[buffer] = self.events
        self.events += 1
        self.hbm += self.buffers[buffer].bytes
        self.result.peak_hbm_bytes = max(self.result.peak_hbm_bytes, self.hbm)
        self._sample(self.now)
        self._claimed(buffer)

    def _claimed(self, buffer: int) -> None:
        """Note a claim (the prefetching cache ranks it by its next read)."""

    def _largest_live(self) -> list[tuple[str, int]]:
        live = sorted(self.resident, key=lambda b: -self.buffers[b].bytes)[:5]
        return [(self.buffers[b].name, self.buffers[b].bytes) for b in live]


class _Links(_Memory):
    """
    The copy streams: one per link direction, first come, first served, at
    `duplex_efficiency` while the other direction is busy, a staged link's
    bytes also on the link it is staged through.
    """

    def _setup(self) -> None:
        super()._setup()
        self.stream_free: dict[tuple[str, bool], float] = {}
        self.stream_bytes: dict[tuple[str, bool], int] = {}

    def _missing_tier(self, buffer: int, tier: str) -> SimulationError:
        index = max(self.step_index, 0)
        step = self.schedule.steps[index] if self.schedule.steps else None
        at = step.loc if isinstance(step, Transfer) else ""
        return missing_tier(self.schedule, self.hw, buffer, tier, index, at)

    def _start_transfer(
        self,
        buffer: int,
        link: str,
        to_device: bool,
        name: str,
        not_before: float = 0.0,
        nbytes: int | None = None,
    ) -> float:
        """
        Queue a copy of `buffer` (`nbytes` on the link: by default the
        buffer's size) on its stream; return when it completes.
        """
        nbytes = self.buffers[buffer].bytes if nbytes is None else nbytes
        if link not in self.hw.links:
            raise self._missing_tier(buffer, link)
        stream = (link, to_device)
        start = max(self.now, self.stream_free.get(stream, 0.0), not_before)
        duplex = self.stream_free.get((link, not to_device), 0.0) > start
        end = start + self.hw.link(link).transfer_time(nbytes, to_device, duplex)
        self.stream_free[stream] = end
        self.stream_bytes[stream] = self.stream_bytes.get(stream, 0) + nbytes
        staged = self.hw.link(link).staged_through
        if staged is not None:
            end = max(end, self._host_leg(staged, to_device, nbytes, start, name))
        self._count(buffer, to_device, nbytes, end)
        if self.record:
            direction = "to device" if to_device else "from device"
            self.result.intervals.append(
                Interval(start, end, name, f"{link} {direction}", nbytes)
            )
        return end

    def _count(self, buffer: int, to_device: bool, nbytes: int, end: float) -> None:
        """Count a transfer's bytes; a copy from the device reads `buffer` until `end`."""
        self.result.transfers += 1
        if to_device:
            self.result.bytes_to_device += nbytes
        else:
            self.result.bytes_to_remote += nbytes
            self.readers_end[buffer] = max(self.readers_end.get(buffer, 0.0), end)

    def _host_leg(
        self, link: str, to_device: bool, nbytes: int, start: float, name: str
    ) -> float:
        """
        The leg of a staged transfer (an SSD read through host memory) on the
        link it is staged through: its bytes queue on that link's stream in
        the same direction from `start`, for `bytes / bandwidth` of it; returns
        when the leg ends.
        """
        stream = (link, to_device)
        begin = max(start, self.stream_free.get(stream, 0.0))
        duplex = self.stream_free.get((link, not to_device), 0.0) > begin
        host = self.hw.link(link)
        end = begin + host.transfer_time(nbytes, to_device, duplex) - host.latency_s
        self.stream_free[stream] = end
        self.stream_bytes[stream] = self.stream_bytes.get(stream, 0) + nbytes
        if self.record:
            direction = "to device" if to_device else "from device"
            self.result.intervals.append(
                Interval(begin, end, f"{name} (staged)", f"{link} {direction}", nbytes)
            )
        return end

    def _link_time(self) -> float:
        """The longest any link direction is busy with the bytes it carried."""
        link_time = 0.0
        for (link, to_device), nbytes in self.stream_bytes.items():
            bandwidth = self.hw.link(link)
            rate = (
                bandwidth.bandwidth_to_device
                if to_device
                else bandwidth.bandwidth_from_device
            )
            link_time = max(link_time, nbytes / rate)
        return link_time


class _Cache(_Links):
    """
    The runtime cache (with a `Runtime`): reads of buffers not resident
    fetched on demand, evictions (LRU, or furthest next read) that store
    live buffers without a copy first, and prefetches within the horizon.
    """

    def _setup(self) -> None:
        super()._setup()
        self.has_copy: set[int] = set()  # device buffers with a copy in another tier
        self.write_back: dict[int, str] = {}  # update -> the tier it must end in
        self.written_back: dict[int, float] = {}  # update -> when its copy is there
        self.computes = (  # the index of each compute step
            [i for i, s in enumerate(self.schedule.steps) if isinstance(s, Compute)]
            if self.runtime
            else []
        )
        self.reads: dict[int, list[int]] = self._read_steps() if self.runtime else {}
        self.read_pos: dict[int, int] = {}  # buffer -> index of its next read in reads
        self.arrival: dict[int, float] = {}  # prefetched buffer -> when its fetch ends
        self.by_next: list[tuple[int, int]] = []  # (-next read, buffer), resident
        self.wanted: list[tuple[int, int]] = []  # (next read, buffer), not resident

    def _read_steps(self) -> dict[int, list[int]]:
        """For each buffer, the indices of the compute steps reading it."""
        reads: dict[int, list[int]] = {}
        for index, step in enumerate(self.schedule.steps):
            if isinstance(step, Compute):
                for buffer in dict.fromkeys(step.reads):
                    reads.setdefault(buffer, []).append(index)
        return reads

    def _next_read(self, buffer: int) -> int:
        """The index of the next step reading `buffer` (this one's included)."""
        steps = self.reads.get(buffer, ())
        position = self.read_pos.get(buffer, 0)
        return steps[position] if position < len(steps) else _NEVER

    def _prefetching(self) -> bool:
        return self.runtime is not None and self.runtime.eviction is Eviction.NEXT_USE

    def _claimed(self, buffer: int) -> None:
        if self._prefetching():
            heapq.heappush(self.by_next, (-self._next_read(buffer), buffer))

    def _live(self, buffer: int) -> bool:
        """Read later, or the caller's (a result or an argument)."""
        return self._next_read(buffer) != _NEVER or self.buffers[buffer].pinned

    def _dirty(self, buffer: int) -> bool:
        """Evicting it needs a store first."""
        return (
            self._live(buffer)
            and buffer not in self.has_copy
            and buffer not in self.written_back
        )

    def _make_room(self, size: int, keep: set[int]) -> None:
        """Evict buffers the current step does not need until `size` fits."""
        if self.runtime is None:
            return
        if self._prefetching():
            self._evict_by_next_read(size, keep, self.step_index, stores=True)
            return
        for victim in list(self.resident):
            if self._fits(size):
                return
            if victim not in keep:
                self._evict(victim)

    def _evict_by_next_read(
        self, size: int, keep: set[int], after: int, stores: bool
    ) -> None:
        """
        Evict, furthest next read first, buffers read after step `after` until
        `size` fits; without `stores`, only buffers that need no store.
        """
        skipped: list[tuple[int, int]] = []
        while not self._fits(size) and self.by_next:
            key, victim = heapq.heappop(self.by_next)
            if victim not in self.resident or -key != self._next_read(victim):
                continue  # stale: evicted, or read since
            if -key <= after:
                skipped.append((key, victim))
                break
            if (
                victim in keep
                or self.arrival.get(victim, 0.0) > self.now
                or (not stores and self._dirty(victim))
            ):
                skipped.append((key, victim))
                continue
            self._evict(victim)
        for entry in skipped:
            heapq.heappush(self.by_next, entry)

    def _evict(self, victim: int) -> None:
        if victim in self.written_back:  # its copy is on the way: wait for it
            self.now = max(self.now, self.written_back[victim])
        elif self._dirty(victim):
            tier = self._tier_of(victim)
            end = self._start_transfer(victim, tier, to_device=False, name="evict")
            self.now = max(self.now, end)  # the swap-out completes before the free
            self.has_copy.add(victim)
        self.arrival.pop(victim, None)
        self._drop(victim, self.now)
        self._want(victim)

    def _want(self, buffer: int) -> None:
        """Note a buffer out of HBM that will be read again, for the prefetcher."""
        read = self._next_read(buffer)
        if self._prefetching() and read != _NEVER:
            heapq.heappush(self.wanted, (read, buffer))

    def _prefetch(self, compute_index: int) -> None:
        """Fetch the buffers read within the horizon, earliest read first."""
        assert self.runtime is not None
        last = compute_index + self.runtime.horizon
        if self.runtime.horizon <= 0 or not self.wanted:
            return
        until = self.computes[min(last, len(self.computes) - 1)]
        self._release_until(self.now)
        while self.wanted and self.wanted[0][0] <= until:
            read, buffer = self.wanted[0]
            if buffer in self.resident or read != self._next_read(buffer):
                heapq.heappop(self.wanted)  # stale: fetched, or read since
                continue
            size = self.buffers[buffer].bytes
            if not self._fits(size):
                self._evict_by_next_read(size, set(), read, stores=False)
                if not self._fits(size):
                    return  # no room: fetched on demand, or once room is made
            heapq.heappop(self.wanted)
            self._claim(buffer)
            self.arrival[buffer] = self._start_transfer(
                buffer, self._tier_of(buffer), to_device=True, name="prefetch"
            )

    def _tier_of(self, buffer: int) -> str:
        if buffer in self.write_back:
            return self.write_back[buffer]
        home = self.buffers[buffer].home
        return home if home != Tier.HBM else self.hw.offload_tier

    def _advance_reads(self, step: Compute) -> None:
        """Move each buffer this step read to its next read."""
        for buffer in dict.fromkeys(step.reads):
            steps = self.reads[buffer]
            self.read_pos[buffer] = bisect_right(steps, self.step_index)
            if self._prefetching() and buffer in self.resident:
                heapq.heappush(self.by_next, (-self._next_read(buffer), buffer))


class _Transfers(_Cache):
    """
    The transfer steps: a fetch started once its copy is there (its buffer
    claimed), a store of a resident buffer, a wait for either, and the
    (de)quantisation of a compressed one on the compute stream.
    """

    def _setup(self) -> None:
        super()._setup()
        self.copy_ready: dict[int, float] = {}  # copy buffer -> when its data is there
        self.transfer_end: dict[int, float] = {}
        self.decode: dict[int, tuple[float, str]] = {}  # transfer -> its dequantisation
        self.ready: dict[int, float] = {}  # buffer -> end of the collective writing it
        self.released: set[int] = set()
        """Buffers the program freed (detached): dead to it, even while a
        copy still reads them and their memory is not yet returned."""

    def _transfer(self, step: Transfer) -> None:
        end = self._fetch(step) if step.to_device else self._store(step)
        self.transfer_end[step.id] = end

    def _fetch(self, step: Transfer) -> float:
        """A copy to the device: its buffer claimed, started once its copy is there."""
        self.released.discard(step.dest)
        if self.pending_free.get(step.dest, 0.0) > self.now:
            self.result.fetches_into_held += 1
        self._allocate(step.dest, set())
        name = self.buffers[step.dest].name
        ready = self.copy_ready.get(step.source, 0.0)
        end = self._start_transfer(step.dest, step.link, True, name, ready, step.bytes)
        if step.codec_s > 0:
            self.decode[step.id] = (step.codec_s, f"dequantize {name}")
        return end

    def _store(self, step: Transfer) -> float:
        """A copy from the device: its source resident, quantised first if compressed."""
        name = self.buffers[step.source].name
        if step.source not in self.resident or step.source in self.released:
            # a store read from a file has no place of its own: it follows
            # the last compute
            after = f" after '{self.step_name}'" if self.step_name else ""
            where = f"{self.step_loc}: " if self.step_loc else ""
            if step.loc and step.loc != "<unknown>":
                after, where = "", f"{step.loc}: "
            raise SimulationError(
                f"{where}the store of {name}{after} reads it, which is not "
                "resident in HBM"
            )
        self._codec(step.codec_s, f"quantize {name}")
        end = self._start_transfer(
            step.source,
            step.link,
            False,
            name,
            self.ready.get(step.source, 0.0),
            step.bytes,
        )
        self.copy_ready[step.dest] = end
        return end

    def _codec(self, time_s: float, name: str) -> None:
        """Run a transfer's (de)quantisation kernel on the compute stream."""
        if time_s <= 0:
            return
        start = self.now
        self.now += time_s
        self.result.compute_s += time_s
        if self.record:
            self.result.intervals.append(Interval(start, self.now, name, "compute"))

    def _wait(self, step: Wait) -> None:
        end = self.transfer_end.get(step.transfer)
        if end is None:
            raise SimulationError(
                f"step {self.step_index} waits for transfer {step.transfer}, "
                "which no earlier step started"
            )
        self.now = max(self.now, end)
        if step.transfer in self.decode:
            self._codec(*self.decode.pop(step.transfer))


class _Run(_Transfers):
    """
    The steps in order: compute on the compute stream (a collective on the
    interconnect's), transfers and waits (`_Transfers`), frees; then the
    makespan and the bounds.
    """

    def _setup(self) -> None:
        super()._setup()
        self.interconnect_free = 0.0
        self.last_touched: dict[int, list[int]] = {}  # step -> updates it touches last

    def run(self) -> SimResult:
        self._enter()
        compute_index = -1
        for index, step in enumerate(self.schedule.steps):
            self.step_index = index
            if isinstance(step, Compute):
                compute_index += 1
                self._compute(step, compute_index)
                for update in self.last_touched.get(index, ()):
                    self._write_back(update)
            elif isinstance(step, Transfer):
                self._transfer(step)
            elif isinstance(step, Wait):
                self._wait(step)
            else:
                self._free_step(step)
        self._finish()
        return self.result

    def _enter(self) -> None:
        """The buffers there at entry: in HBM, or a copy elsewhere ready at 0."""
        for buffer in self.buffers:
            if buffer.initial and buffer.tier == Tier.HBM:
                if self.runtime is not None and buffer.home != Tier.HBM:
                    self.has_copy.add(buffer.id)
                    self._want(buffer.id)
                    continue
                self.step_name = f"entry ({buffer.name})"
                self._allocate(buffer.id, set())
            elif buffer.initial:
                self.copy_ready[buffer.id] = 0.0
        self._updates_to_write_back()

    def _updates_to_write_back(self) -> None:
        """
        The calling contract of a training step (`Schedule.updates`): the
        update of an argument that entered outside HBM ends in the
        argument's tier, as the next call reads it there. Where the
        schedule stores it itself, that store is its write-back; otherwise
        the run writes it back after the last step touching it (a runtime's
        write-back of its dirty results, as ZeRO-Offload streams updated
        states out).
        """
        updates = self.schedule.updates
        if not updates:
            return
        results = set(updates.values())
        stored: set[int] = set()  # buffers the schedule stores itself
        last: dict[int, int] = {}  # update -> the last compute step touching it
        for index, step in enumerate(self.schedule.steps):
            if isinstance(step, Transfer) and not step.to_device:
                stored.add(step.source)
            elif isinstance(step, Compute):
                for buffer in (*step.allocs, *step.reads):
                    if buffer in results:
                        last[buffer] = index
        for argument, update in updates.items():
            entered = self.buffers[argument]
            if (
                argument in self.resident
                or update in stored
                or self.buffers[update].tier != Tier.HBM
            ):
                continue
            tier = entered.tier if entered.tier != Tier.HBM else self._tier_of(argument)
            self.write_back[update] = tier
            if update in last:
                self.last_touched.setdefault(last[update], []).append(update)

    def _write_back(self, update: int) -> None:
        """Store `update` to its argument's tier, the compute stream going on."""
        if update not in self.resident or update in self.has_copy:
            return  # evicted already, stored to that tier
        self.written_back[update] = self._start_transfer(
            update,
            self.write_back[update],
            to_device=False,
            name=f"write back {self.buffers[update].name}",
            not_before=self.ready.get(update, 0.0),
        )

    def _finish(self) -> None:
        """Return what is still held, and take the makespan and the bounds."""
        self._release_until(float("inf"))
        for buffer in list(self.claimed):  # what stays to the end: results, arguments
            self._released(buffer)
        ends = [
            self.now,
            self.interconnect_free,
            *self.transfer_end.values(),
            *self.readers_end.values(),
        ]
        self.result.makespan_s = max(ends)
        self.result.bound_time_s = max(
            self.result.compute_s, self._link_time(), self.result.interconnect_s
        )
        self.result.bound_peak_bytes = self.schedule.largest_working_set()

    def _compute(self, step: Compute, compute_index: int) -> None:
        self.step_name, self.step_loc = step.name, step.loc
        keep = {*step.reads, *step.allocs}
        for buffer in step.allocs:
            self.released.discard(buffer)
            self._allocate(buffer, keep)
        for buffer in step.reads:
            self._read(step, buffer, keep)
        if self._prefetching():
            self._prefetch(compute_index)
        if step.stream == "interconnect":
            self._collective(step)
            return
        for buffer in step.reads:
            self.now = max(self.now, self.ready.get(buffer, 0.0))
        start = self.now
        self.now += step.time_s
        self.result.compute_s += step.time_s
        if self.record:
            self.result.intervals.append(
                Interval(start, self.now, step.name, "compute")
            )
        if self.runtime is not None:
            self._advance_reads(step)
        for buffer in step.frees:
            self._free(buffer)

    def _read(self, step: Compute, buffer: int, keep: set[int]) -> None:
        """A read of `buffer` by `step`: resident, else an error (or a fetch on demand)."""
        name, loc = step.readers.get(buffer, (step.name, step.loc))
        if buffer in self.released and self.runtime is None:
            raise SimulationError(
                f"{loc}: '{name}' reads {self.buffers[buffer].name}, "
                "which is not resident in HBM (it was detached before)"
            )
        if buffer not in self.resident:
            if self.runtime is None:
                raise SimulationError(
                    f"{loc}: '{name}' reads {self.buffers[buffer].name}, "
                    "which is not resident in HBM"
                )
            self._allocate(buffer, keep)
            tier = self._tier_of(buffer)
            self.now = self._start_transfer(buffer, tier, to_device=True, name="fetch")
        elif buffer in self.arrival:
            self.now = max(self.now, self.arrival.pop(buffer))
        self.resident.move_to_end(buffer)

    def _collective(self, step: Compute) -> None:
        """Run `step` on the interconnect stream, beside the compute stream."""
        start = max(
            self.now,
            self.interconnect_free,
            *(self.ready.get(buffer, 0.0) for buffer in step.reads),
        )
        end = start + step.time_s
        self.interconnect_free = end
        self.result.interconnect_s += step.time_s
        self.result.interconnect_bytes += step.bytes
        for buffer in step.allocs:
            self.ready[buffer] = end
        for buffer in step.reads:
            self.readers_end[buffer] = max(self.readers_end.get(buffer, 0.0), end)
        if self.record:
            self.result.intervals.append(
                Interval(start, end, step.name, "interconnect", step.bytes)
            )
        if self.runtime is not None:
            self._advance_reads(step)
        for buffer in step.frees:
            self._free(buffer)

    def _free_step(self, step: Free) -> None:
        if step.buffer not in self.resident:
            raise SimulationError(
                f"free of {self.buffers[step.buffer].name}, which is not resident"
            )
        self.released.add(step.buffer)
        self._free(step.buffer)


def missing_tier(
    schedule: Schedule,
    hardware: Hardware,
    buffer: int,
    tier: str,
    start: int = 0,
    at: str = "",
) -> SimulationError:
    """
    A copy of `buffer` in a tier the hardware has not, located at the op
    that reads it (from step `start` on): `input.mlir:7:3: 'arith.addf' reads
    %w, whose copy is in 'remote', a tier hardware 'hw' does not have (it
    has: host, ssd)`; where no op reads it again, at the transfer's own
    location `at` (`input.mlir:9:3: %w has a copy in 'remote', ...`).
    """
    reader = next(
        (
            step
            for step in schedule.steps[start:]
            if isinstance(step, Compute) and buffer in step.reads and step.loc
        ),
        None,
    )
    name = schedule.buffers[buffer].name
    tiers = ", ".join(hardware.links) or "none"
    if reader:
        where = f"{reader.loc}: '{reader.name}' reads {name}, whose copy is"
    elif at and at != "<unknown>":
        where = f"{at}: {name} has a copy"
    else:
        where = f"{name} has a copy"
    return SimulationError(
        f"{where} in '{tier}', a tier hardware '{hardware.name}' does not have "
        f"(it has: {tiers})"
    )


def check_tiers(schedule: Schedule, hardware: Hardware) -> None:
    """
    A `missing_tier` error for the first buffer a compute step reads whose
    home is a tier `hardware` has not (a policy that plans its moves up front
    asks each home's link first).
    """
    read = {
        b for step in schedule.steps if isinstance(step, Compute) for b in step.reads
    }
    for buffer in schedule.buffers:
        home = buffer.home
        if buffer.id in read and home != Tier.HBM and home not in hardware.links:
            raise missing_tier(schedule, hardware, buffer.id, home)


def simulate(
    schedule: Schedule,
    hardware: Hardware,
    capacity: int | None = None,
    runtime: Runtime | None = None,
    record: bool = True,
) -> SimResult:
    """Run `schedule`; `capacity=None` means unlimited HBM; `runtime`: as a runtime cache."""
    run = _Run(schedule, hardware, capacity, runtime, record)
    try:
        return run.run()
    except SimulationError as err:
        err.step = run.step_index if err.step is None else err.step
        raise
