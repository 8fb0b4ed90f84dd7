"""
A generation: many decode calls of one step, with the KV cache growing, the
window sliding, and HBM residency carried from call to call.

The step is a decode program whose cache is one argument per block
(`hyperoffload.analysis.kv_cache`), read stripped of offload ops. Call `t`
runs with `kv_len + t` cached positions: it reads the blocks
`KVLayout.blocks_read` names (the window slides by a position per call),
then appends its new key and value entries to the tail block. The program's
block reads are mapped onto the call's blocks: sink blocks to themselves,
the others aligned from the newest; a call that reads more blocks than the
program repeats the ops reading the program's oldest block for each extra
one (their contraction cost), one that reads fewer drops the read.
Approximation: every call costs what the program costs at `kv_len`, plus the
repeated reads; the online-softmax updates between them are not repeated.

Each policy decides where blocks live between their reads:

- `none`: every block in HBM, no limit (the reference);
- `plan` (ours): the compiler's plan across calls: the sink blocks and the
  newest blocks stay resident, as many as fit the capacity (the largest
  count found by bisection on simulated runs); the others stream through
  HBM in read order, each fetched as late as the link lets it land before
  its read (a call's first fetches overlap the previous call) and freed
  after it; a block is
  written back once, in the background, when its last position is appended;
  a block that leaves the window is freed (its copy was written when it
  completed, or it came from the pool);
- `flexgen`: FlexGen's block schedule: all KV in the pool, every block
  streamed each call with one block of lookahead, completed blocks written
  back, only the tail block resident;
- `reactive-lru`, `runtime-prefetch`: the runtime caches of
  `hyperoffload.sim.simulator` over the same calls.

Weights and other arguments stay in HBM for every policy (the cache is the
subject here).

```python
result = simulate_generation(step, cache, tokens=32, policy="plan",
                             hardware=hw, capacity=hw.hbm_capacity)
result.tokens_per_s, result.blocks_moved_per_token
```
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import zip_longest
from typing import Any

import numpy as np

from hyperoffload.model.compression import compression
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.kv_step import BlockKey, KVLayout, StepBlocks
from hyperoffload.model.schedule import (
    Buffer,
    Compute,
    Free,
    Schedule,
    Step,
    Transfer,
    Wait,
)
from hyperoffload.sim.simulator import Eviction, Runtime, SimResult, simulate
from hyperoffload.support.quantize import Compression
from hyperoffload.support.serial_link import issue_just_in_time
from hyperoffload.support.tiers import Tier
from hyperoffload.support.units import format_bytes, format_seconds

GENERATION_POLICIES = ("plan", "none", "flexgen", "reactive-lru", "runtime-prefetch")
"""The policies a generation runs under."""


class GenerationError(ValueError):
    """A generation that cannot run (no tokens, a policy that does not exist)."""


@dataclass
class GenerationResult:
    policy: str
    tokens: int
    run: SimResult
    resident_blocks: int | None = None
    """`plan`: blocks a call keeps resident (all layers and kinds), tails aside."""
    peak_per_token: list[int] = field(default_factory=list[int])
    """The HBM peak of each call, in order."""

    last_token_s: float = 0.0
    """When the last call's compute ends (write-backs may still be in flight)."""
    kv_peak_bytes: int = 0
    """The most KV-cache bytes in HBM at once (blocks, tails included)."""
    measured_from_s: float = 0.0
    """When the first measured call starts (after the warm-up calls)."""
    moved_bytes: int = 0
    moved_blocks: int = 0
    """Bytes and block copies of the transfers that end after `measured_from_s`."""

    @property
    def tokens_per_s(self) -> float:
        """Tokens over the time until the last one is out."""
        elapsed = self.last_token_s - self.measured_from_s
        return self.tokens / elapsed if elapsed > 0 else 0.0

    @property
    def peak_hbm_bytes(self) -> int:
        """The HBM peak of the measured calls."""
        return max(self.peak_per_token, default=0)

    @property
    def bytes_moved_per_token(self) -> float:
        return self.moved_bytes / self.tokens

    @property
    def blocks_moved_per_token(self) -> float:
        """Block copies (fetches and write-backs) per token: the only transfers."""
        return self.moved_blocks / self.tokens

    def report(self) -> dict[str, Any]:
        """The JSON fields of this run (`hyperoffload-sim --generate --json`)."""
        run = self.run
        return {
            "policy": self.policy,
            "tokens": self.tokens,
            "tokens_per_s": self.tokens_per_s,
            "peak_hbm_bytes": self.peak_hbm_bytes,
            "kv_peak_bytes": self.kv_peak_bytes,
            "bytes_moved_per_token": self.bytes_moved_per_token,
            "blocks_moved_per_token": self.blocks_moved_per_token,
            "last_token_s": self.last_token_s,
            "makespan_s": run.makespan_s,
            "compute_s": run.compute_s,
            "exposed_transfer_s": max(0.0, self.last_token_s - run.compute_s),
            "bytes_to_device": run.bytes_to_device,
            "bytes_to_remote": run.bytes_to_remote,
            "oom": run.oom is not None,
            "resident_blocks": self.resident_blocks,
            "peak_per_token": self.peak_per_token,
        }


def _kv_peak(run: SimResult, devices: set[int]) -> int:
    """The most bytes of `devices` in HBM at once, from the run's allocations."""
    changes: list[tuple[int, int]] = []
    for stay in run.allocations:
        if stay.buffer in devices:
            changes += [(stay.start, stay.bytes), (stay.end, -stay.bytes)]
    level = peak = 0
    for _, change in sorted(changes, key=lambda c: (c[0], c[1])):
        level += change
        peak = max(peak, level)
    return peak


def _peaks_per_call(
    run: SimResult, call_start: list[int], starts: list[float]
) -> list[int]:
    """
    Each call's HBM peak, from the recorded timeline (a call starts with its
    first compute step; `starts`: when each compute step started).
    """
    bounds = [starts[c] for c in call_start] + [float("inf")]
    peaks = [0] * len(call_start)
    call, level = 0, 0
    for time, occupancy in sorted(run.memory):
        while time >= bounds[call + 1]:
            call += 1
            peaks[call] = max(peaks[call], level)  # what the call starts with
        level = occupancy
        peaks[call] = max(peaks[call], occupancy)
    for later in range(call + 1, len(peaks)):  # calls that change nothing
        peaks[later] = level
    return peaks


@dataclass
class _Block:
    """One block of one (layer, kind) over the whole generation."""

    key: BlockKey
    index: int
    device: int
    """Its buffer in HBM."""
    old: bool
    """In the cache before the first call (else appended during the generation)."""
    reads: dict[int, list[int]] = field(default_factory=dict[int, list[int]])
    """Call -> the compute steps reading it in that call."""
    appends: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])
    """(call, compute step) of each append into it."""
    complete: int | None = None
    """The compute step whose append fills it."""
    shape: tuple[int, ...] = ()


@dataclass
class _Calls:
    """The calls' compute steps, before any policy adds transfers."""

    buffers: list[Buffer]
    computes: list[Compute]
    call_start: list[int]
    """The first compute step of each call."""
    blocks: dict[tuple[BlockKey, int], _Block]
    layout: KVLayout
    element_bytes: int


def _compose(step: StepBlocks, tokens: int) -> _Calls:
    layout = step.layout
    source = step.schedule
    buffers = [
        replace(b, home=Tier.HBM) for b in source.buffers
    ]  # shared arguments: resident
    blocks: dict[tuple[BlockKey, int], _Block] = {}
    full: dict[BlockKey, tuple[int, ...]] = {}  # the shape of a whole block
    program: dict[BlockKey, list[int]] = {}
    block_buffer: dict[tuple[BlockKey, int], int] = {}
    for buffer, (key, index) in step.blocks.items():
        program.setdefault(key, []).append(index)
        block_buffer[key, index] = buffer
        shape = step.shapes.get(buffer, ())
        blocks[key, index] = _Block(key, index, buffer, old=True, shape=shape)
        if len(shape) >= 2:  # (..., positions, head_dim)
            full[key] = (*shape[:-2], layout.block, shape[-1])
        elif shape:
            full.setdefault(key, shape)
        buffers[buffer] = replace(buffers[buffer], home=source.buffers[buffer].home)
    for indices in program.values():
        indices.sort()
    entry_bytes = {key: source.buffers[b].bytes for b, key in step.entries.items()}
    per_call = {
        b.id
        for b in source.buffers
        if b.id not in step.blocks and b.kind not in ("argument", "constant")
    }
    computes: list[Compute] = []
    call_start: list[int] = []

    def block(key: BlockKey, index: int) -> _Block:
        if (key, index) not in blocks:
            nbytes = entry_bytes[key] * layout.block
            name = f"{'kv'[key[1]]}[{key[0]}] block {index}"
            buffers.append(Buffer(len(buffers), name, nbytes, Tier.HBM, "activation"))
            device = len(buffers) - 1
            blocks[key, index] = _Block(
                key, index, device, old=False, shape=full.get(key, ())
            )
        return blocks[key, index]

    for call in range(tokens):
        length = layout.kv_len + call
        call_start.append(len(computes))
        clone: dict[int, int] = {}
        for b in per_call:
            original = source.buffers[b]
            clone[b] = len(buffers)
            buffers.append(replace(original, id=len(buffers), pinned=False))
        mapped = _map_reads(layout, program, length)

        def renamed(ids: list[int], clone: dict[int, int] = clone) -> list[int]:
            return [clone.get(i, i) for i in ids if i not in step.blocks]

        for original in (s for s in source.steps if isinstance(s, Compute)):
            kv = [i for i in original.reads if i in step.blocks]
            extra: list[_Block] = []
            targets: list[_Block] = []
            for i in kv:
                key, index = step.blocks[i]
                now, surplus = mapped[key][index]
                targets += [block(key, j) for j in now]
                extra += [block(key, j) for j in surplus]
            inputs = [i for i in original.reads if i not in original.allocs]
            for repeat in extra:
                reads = [repeat.device, *renamed(inputs)]
                repeat.reads.setdefault(call, []).append(len(computes))
                computes.append(replace(original, reads=reads, allocs=[], frees=[]))
            for target in targets:
                target.reads.setdefault(call, []).append(len(computes))
            reads = [t.device for t in targets] + renamed(original.reads)
            computes.append(
                replace(
                    original,
                    reads=reads,
                    allocs=renamed(original.allocs),
                    frees=renamed(original.frees),
                )
            )
        for entry, key in step.entries.items():
            tail = block(key, length // layout.block)
            made = tail.old is False and not tail.appends
            tail.appends.append((call, len(computes)))
            if (length + 1) % layout.block == 0:
                tail.complete = len(computes)
            computes.append(
                Compute(
                    f"append {'kv'[key[1]]}[{key[0]}]",
                    "generation",
                    0.0,
                    0.0,
                    entry_bytes[key],
                    reads=[clone[entry]] + ([] if made else [tail.device]),
                    allocs=[tail.device] if made else [],
                    frees=[clone[entry]],
                )
            )
        results = [
            clone[b]
            for b in per_call
            if source.buffers[b].pinned and b not in step.entries
        ]
        computes.append(  # the caller takes the logits
            Compute("return", "generation", 0.0, 0.0, 0, reads=results, frees=results)
        )
    return _Calls(buffers, computes, call_start, blocks, layout, step.element_bytes)


def _map_reads(
    layout: KVLayout, program: dict[BlockKey, list[int]], length: int
) -> dict[BlockKey, dict[int, tuple[list[int], list[int]]]]:
    """
    For each program block: the call's blocks its reads become, and the
    surplus blocks read by repeating its ops (the program's oldest non-sink
    block carries them).
    """
    wanted = layout.blocks_read(length)
    sinks = layout.sink_blocks()
    mapped: dict[BlockKey, dict[int, tuple[list[int], list[int]]]] = {}
    for key, indices in program.items():
        rest0 = [j for j in indices if j >= sinks]
        rest = [j for j in wanted if j >= sinks]
        entry: dict[int, tuple[list[int], list[int]]] = {
            j: ([j] if j in wanted else [], []) for j in indices if j < sinks
        }
        for i, j in enumerate(reversed(rest0)):
            entry[j] = ([rest[-1 - i]] if i < len(rest) else [], [])
        surplus = rest[: max(0, len(rest) - len(rest0))]
        if surplus:
            if not rest0:
                raise GenerationError(
                    f"layer {key[0]}: the step reads only sink blocks; "
                    "no read to repeat for the window"
                )
            entry[rest0[0]] = (entry[rest0[0]][0], surplus)
        mapped[key] = entry
    return mapped


# ----------------------------------------------------------------- policies


def _just_in_time(
    calls: _Calls,
    hardware: Hardware,
    fetches: list[tuple[int, int, _Block]],
    moves: list[Transfer],
) -> list[int]:
    """
    For each fetch (in read order), the compute step before which it is
    issued so that it lands just before its read, latest first on a serial
    link (`issue_just_in_time`): as little time in HBM as hiding allows.
    """
    free = np.array([compute.time_s for compute in calls.computes], dtype=np.float64)
    issues = [0] * len(fetches)
    for n in range(len(fetches) - 1, -1, -1):
        link = hardware.link(moves[n].link)
        seconds = link.transfer_time(moves[n].bytes, to_device=True)
        issues[n] = issue_just_in_time(free, 0, fetches[n][0], seconds)
    return issues


def _kept(calls: _Calls, resident: int) -> set[tuple[int, int]]:
    """
    (block, call) pairs where the block stays in HBM: in each call, the tail
    blocks, and `resident` of the blocks read. Each (layer, kind) ranks its
    blocks (sinks, then newest first); the blocks left out are the lowest
    ranks, taken from the (layer, kind)s in an order spread over the layers,
    so the streamed blocks' fetches hide behind different layers' compute.
    """
    sinks = calls.layout.sink_blocks()
    kept = {(b.device, call) for b in calls.blocks.values() for call, _ in b.appends}
    ranked: dict[int, list[list[_Block]]] = {}
    for (_, call), members in sorted(
        _readers_per_call(calls).items(), key=lambda item: item[0]
    ):
        members.sort(
            key=lambda b: (b.index >= sinks, -b.index if b.index >= sinks else b.index)
        )
        ranked.setdefault(call, []).append(members)
    for call, per_key in ranked.items():
        spread = [per_key[i] for i in _spread(len(per_key))]
        order = [b for rank in zip_longest(*spread) for b in rank if b is not None]
        kept |= {(b.device, call) for b in order[:resident]}
    return kept


def _spread(n: int) -> list[int]:
    """
    0..n-1 in an order whose every suffix is spread evenly (bit-reversed
    ranks): `_spread(4) == [0, 2, 1, 3]`.
    """
    bits = max(1, (n - 1).bit_length())
    ranks = sorted(range(n), key=lambda i: int(f"{i:0{bits}b}"[::-1], 2))
    return ranks


def _block_schedule(
    calls: _Calls,
    hardware: Hardware,
    resident: int,
    lookahead: int | None,
    compress: Compression | None = None,
) -> Schedule:
    """
    The calls with our transfers (`_kept` says which blocks stay); every
    other read is fetched and freed after it: `lookahead` fetches ahead, or
    (None) as late as the link allows it to land before its read (compute
    times as estimated, the link serial); each appended block is written
    back once, when it is complete. With `compress`, every block that is
    streamed (not kept in some call that reads it) crosses the link
    compressed; a block kept wherever it is read moves as it is, so that
    keeping the whole cache costs no codec.
    """
    buffers = list(calls.buffers)
    before: dict[int, list[Step]] = {}
    after: dict[int, list[Step]] = {}
    transfers = 0
    kept = _kept(calls, resident)
    fetches: list[tuple[int, int, _Block]] = []  # (first read, earliest issue, block)
    copies: dict[int, int] = {}  # block device buffer -> its copy in the pool

    def transfer(block: _Block, to_device: bool) -> Transfer:
        nonlocal transfers
        source, dest = (
            (copies[block.device], block.device)
            if to_device
            else (block.device, copies[block.device])
        )
        link = buffers[copies[block.device]].tier
        transfers += 1
        nbytes = buffers[block.device].bytes
        if compress is None or not block.shape or block.device not in streamed:
            return Transfer(transfers - 1, source, dest, nbytes, link, to_device)
        codec = compression(block.shape, calls.element_bytes, compress, hardware)
        return Transfer(
            transfers - 1,
            source,
            dest,
            codec.bytes,
            link,
            to_device,
            compress=str(compress),
            codec_s=codec.codec_s,
        )

    streamed = {
        b.device
        for b in calls.blocks.values()
        if any((b.device, call) not in kept for call in b.reads)
    }
    last_call = len(calls.call_start) - 1
    for b in calls.blocks.values():
        device = buffers[b.device]
        tier = device.home if device.home != Tier.HBM else hardware.offload_tier
        copy = len(buffers)
        buffers.append(
            Buffer(
                copy,
                f"{device.name} ({tier})",
                device.bytes,
                tier,
                "copy",
                initial=b.old,
            )
        )
        copies[b.device] = copy
        appended = {call for call, _ in b.appends}
        events = sorted({*b.reads, *appended})
        in_hbm = False  # every policy starts with the cache in the pool
        buffers[b.device] = replace(device, home=Tier.HBM, pinned=True, initial=False)
        freed_after = -1
        for call in events:
            stays = (b.device, call) in kept
            if call in b.reads:
                first, last = b.reads[call][0], b.reads[call][-1]
                if not in_hbm:
                    fetches.append((first, freed_after + 1, b))
                    in_hbm = True
                if not stays:
                    after.setdefault(last, []).append(Free(b.device))
                    in_hbm, freed_after = False, last
            if call in appended and not b.old and call == events[0]:
                in_hbm = True  # the first append allocates it
        if b.complete is not None:
            store = transfer(b, to_device=False)
            after.setdefault(b.complete, []).append(store)
        if (
            in_hbm
            and b.reads
            and max(b.reads) < last_call
            and not (appended and max(appended) >= max(b.reads) and b.complete is None)
        ):  # left the window for good
            after.setdefault(b.reads[max(b.reads)][-1], []).append(Free(b.device))
    fetches.sort(key=lambda f: f[0])
    moves = [transfer(b, to_device=True) for _, _, b in fetches]
    if lookahead is None:
        issues = _just_in_time(calls, hardware, fetches, moves)
    else:
        issues = [
            fetches[n - lookahead][0] if n >= lookahead else 0
            for n in range(len(fetches))
        ]
    for (first, earliest, _), fetch, issue in zip(fetches, moves, issues, strict=True):
        before.setdefault(min(first, max(issue, earliest)), []).append(fetch)
        before.setdefault(first, []).append(Wait(fetch.id))
    steps: list[Step] = []
    for index, compute in enumerate(calls.computes):
        pending = before.get(index, [])
        steps += [s for s in pending if isinstance(s, Transfer)]
        steps += [s for s in pending if not isinstance(s, Transfer)]
        steps.append(compute)
        steps += after.get(index, [])
    return Schedule("generation", buffers, steps)


def _pinned_blocks(calls: _Calls, old_home: bool) -> Schedule:
    """
    The calls with every block pinned (the caller's cache): old blocks in HBM
    at entry, with their home tier (`old_home`, for a runtime to fetch them
    from) or `hbm`; appended ones from their first append.
    """
    buffers = list(calls.buffers)
    for blk in calls.blocks.values():
        device = buffers[blk.device]
        if blk.old:
            home = device.home if old_home else Tier.HBM
            buffers[blk.device] = replace(device, home=home, pinned=True, initial=True)
        else:
            buffers[blk.device] = replace(device, pinned=True)
    return Schedule("generation", buffers, list[Step](calls.computes))


def simulate_generation(
    step: StepBlocks,
    tokens: int,
    policy: str,
    hardware: Hardware,
    capacity: int | None,
    compress: Compression | None = None,
    warmup: int = 0,
    resident: int | None = None,
) -> GenerationResult:
    """
    Run `warmup` then `tokens` decode calls of `step` under `policy`, and
    measure the last `tokens` (a transfer counts if it ends after they
    start); with `compress`, the block schedules (`plan`, `flexgen`) move
    blocks compressed; `resident`: our plan with that many resident blocks
    per call (else the most that fit `capacity`).
    """
    if tokens < 1:
        raise GenerationError(f"a generation needs at least one token, not {tokens}")
    if policy not in GENERATION_POLICIES:
        raise GenerationError(
            f"unknown policy '{policy}' for a generation "
            f"(choose from {', '.join(GENERATION_POLICIES)})"
        )
    if warmup < 0:
        raise GenerationError(f"warm-up calls cannot be negative ({warmup})")
    calls = _compose(step, warmup + tokens)
    result = _simulate(calls, tokens, policy, hardware, capacity, compress, resident)
    computes = [i for i in result.run.intervals if i.track == "compute"]
    starts = [i.start for i in computes]
    peaks = _peaks_per_call(result.run, calls.call_start, starts)
    result.peak_per_token = peaks[warmup:]
    result.measured_from_s = starts[calls.call_start[warmup]] if warmup else 0.0
    moved = [
        i
        for i in result.run.intervals
        if i.track != "compute" and i.end > result.measured_from_s
    ]
    result.moved_bytes = sum(i.bytes for i in moved)
    result.moved_blocks = len(moved)
    result.kv_peak_bytes = _kv_peak(
        result.run, {b.device for b in calls.blocks.values()}
    )
    result.last_token_s = max((i.end for i in computes), default=0.0)
    return result


def _simulate(
    calls: _Calls,
    tokens: int,
    policy: str,
    hardware: Hardware,
    capacity: int | None,
    compress: Compression | None,
    resident: int | None,
) -> GenerationResult:
    if policy == "none":
        return GenerationResult(
            policy, tokens, simulate(_pinned_blocks(calls, False), hardware)
        )
    if policy in ("reactive-lru", "runtime-prefetch"):
        runtime = (
            Runtime() if policy == "reactive-lru" else Runtime(Eviction.NEXT_USE, 1)
        )
        run = simulate(_pinned_blocks(calls, True), hardware, capacity, runtime)
        return GenerationResult(policy, tokens, run)
    if policy == "flexgen":
        schedule = _block_schedule(calls, hardware, 0, 1, compress)
        run = simulate(schedule, hardware, capacity)
        return GenerationResult(policy, tokens, run)
    if resident is not None:
        schedule = _block_schedule(calls, hardware, resident, None, compress)
        run = simulate(schedule, hardware, capacity)
        return GenerationResult(policy, tokens, run, resident)
    return _plan(calls, hardware, capacity, tokens, compress)


def _plan(
    calls: _Calls,
    hardware: Hardware,
    capacity: int | None,
    tokens: int,
    compress: Compression | None,
) -> GenerationResult:
    """
    The most blocks kept resident whose run fits `capacity`. Fewer resident
    blocks need less HBM only while the link keeps up: streaming nearly
    everything issues the fetches so early that they pile up. So the search
    steps down from all resident in doubling steps to a run that fits, then
    bisects between it and the last that did not.
    """
    readers = _readers_per_call(calls)
    most = max(
        sum(len(blocks) for (_, c), blocks in readers.items() if c == call)
        for call in range(len(calls.call_start))
    )

    def run(resident: int) -> SimResult:
        schedule = _block_schedule(calls, hardware, resident, None, compress)
        return simulate(schedule, hardware, capacity)

    best = run(most)
    if capacity is None or best.oom is None:
        return GenerationResult("plan", tokens, best, most)
    high, step = most, 1  # high does not fit
    while True:
        low = max(most - step, 0)
        found = run(low)
        if found.oom is None:
            break
        if low == 0:
            return GenerationResult("plan", tokens, found, 0)
        high, step = low, 2 * step
    while high - low > 1:
        middle = (low + high) // 2
        result = run(middle)
        if result.oom is None:
            low, found = middle, result
        else:
            high = middle
    return GenerationResult("plan", tokens, found, low)


def _readers_per_call(calls: _Calls) -> dict[tuple[BlockKey, int], list[_Block]]:
    """The blocks of each (layer, kind) each call reads."""
    readers: dict[tuple[BlockKey, int], list[_Block]] = {}
    for b in calls.blocks.values():
        for call in b.reads:
            readers.setdefault((b.key, call), []).append(b)
    return readers


def format_generation_table(reports: list[dict[str, Any]]) -> str:
    """
    One line per policy:

    ```
    policy    tokens/s  peak HBM  moved/token  blocks/token  exposed
    plan      10126.0   2.34 KB   160 B        1.25          52.5 us
    ```
    """
    header = (
        "policy",
        "tokens/s",
        "peak HBM",
        "moved/token",
        "blocks/token",
        "exposed",
    )
    rows = [header] + [
        (
            r["policy"],
            f"{r['tokens_per_s']:.1f}",
            format_bytes(r["peak_hbm_bytes"]),
            format_bytes(round(r["bytes_moved_per_token"])),
            f"{r['blocks_moved_per_token']:.2f}",
            format_seconds(r["exposed_transfer_s"]) + (" (OOM)" if r["oom"] else ""),
        )
        for r in reports
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
