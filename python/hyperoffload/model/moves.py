"""
Moves: a value kept out of HBM over a gap, as edits of a schedule (a store,
a free, a prefetch and a wait). The planner and the static peer policies
both describe their decisions as moves.

```python
moved = apply_moves(schedule, [Move(buffer=3, store_after=0, release=0, fetch=4, use=5)], hardware)
```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from hyperoffload.model.compression import Compressed
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.schedule import (
    Buffer,
    Compute,
    Free,
    Schedule,
    Step,
    Transfer,
    Wait,
)
from hyperoffload.support.tiers import Tier


@dataclass(frozen=True)
class Move:
    """
    Keep `buffer` out of HBM over a gap, in compute-step indices: store it
    after step `store_after` (-1: before the first step; None, or a copy that
    already exists: no store), free it after step `release` (None: it is not
    resident before the gap), fetch it before step `fetch` and wait for the
    fetch before step `use` (the number of steps: before the function ends).
    With `wait_store`, the compute stream waits for the store after that step.
    `fetch` and `use` None: the copy is never fetched back (a result written
    back to its tier, which the caller receives).
    With `compressed`, its store and fetch move the compressed bytes and run
    their codec on the compute stream. `tier`: where the copy lives (None:
    the buffer's home, or the hardware's offload tier); a buffer's first move
    decides.
    """

    buffer: int
    store_after: int | None
    release: int | None
    fetch: int | None
    use: int | None
    wait_store: int | None = None
    compressed: Compressed | None = None
    tier: Tier | None = None


@dataclass(frozen=True)
class Recompute:
    """
    Keep `buffer` out of HBM over a gap by computing it again: free it after
    compute step `release` and run `steps` (copies of the compute steps that
    make it, the last allocating it again) before compute step `use`. Values
    recomputed at one position share their steps: one of them carries them.
    """

    buffer: int
    release: int
    use: int
    steps: tuple[Compute, ...]


def apply_moves(
    schedule: Schedule,
    moves: list[Move],
    hardware: Hardware,
    releases: Sequence[tuple[int, int]] = (),
    recomputes: Sequence[Recompute] = (),
) -> Schedule:
    """
    The schedule with a store/free/prefetch/wait for each move, a free and a
    recomputation for each of `recomputes`, and a free of each `(buffer,
    step)` in `releases` after that compute step. After a step come its
    stores, then its waits for stores, then its frees; before a step, its
    fetches, then its recomputations, then its waits for fetches.
    """
    buffers = [replace(b) for b in schedule.buffers]
    before: dict[int, list[tuple[int, Step]]] = {}  # (phase, step)
    after: dict[int, list[tuple[int, Step]]] = {}  # (phase, step)
    transfers = sum(isinstance(s, Transfer) for s in schedule.steps)
    copies: dict[int, int] = {}  # device buffer -> its copy outside HBM
    stores: dict[int, int] = {}  # device buffer -> the transfer storing it

    def copy_of(device: Buffer, tier: Tier | None) -> Buffer:
        if device.id not in copies:
            if tier is None:
                tier = device.home if device.home != Tier.HBM else hardware.offload_tier
            initial = device.home != Tier.HBM and device.initial
            name = f"{device.name} ({tier})"
            buffers.append(
                Buffer(len(buffers), name, device.bytes, tier, "copy", initial=initial)
            )
            copies[device.id] = len(buffers) - 1
        return buffers[copies[device.id]]

    def transfer(
        source: Buffer,
        dest: Buffer,
        link: Tier,
        to_device: bool,
        compressed: Compressed | None,
    ) -> Transfer:
        nonlocal transfers
        transfers += 1
        step = Transfer(
            transfers - 1, source.id, dest.id, source.bytes, link, to_device
        )
        if compressed is not None:
            step.bytes, step.codec_s = compressed.bytes, compressed.codec_s
            step.compress = compressed.scheme.value
        return step

    for move in moves:
        device = buffers[move.buffer]
        stored = move.buffer in copies
        copy = copy_of(device, move.tier)
        if move.release is None and move.fetch is not None:
            device.initial = False  # out of HBM until its fetch
        if not stored and not copy.initial and move.store_after is not None:
            store = transfer(device, copy, copy.tier, False, move.compressed)
            stores[move.buffer] = store.id
            after.setdefault(move.store_after, []).append((0, store))
        if move.wait_store is not None and move.buffer in stores:
            wait = Wait(stores[move.buffer])
            after.setdefault(move.wait_store, []).append((1, wait))
        if move.release is not None:
            after.setdefault(move.release, []).append((2, Free(move.buffer)))
        if move.fetch is None or move.use is None:
            continue  # written back: the caller receives the copy
        fetch = transfer(copy, device, copy.tier, True, move.compressed)
        before.setdefault(move.fetch, []).append((0, fetch))
        before.setdefault(move.use, []).append((2, Wait(fetch.id)))
    for recompute in recomputes:
        after.setdefault(recompute.release, []).append((2, Free(recompute.buffer)))
        before.setdefault(recompute.use, []).extend((1, s) for s in recompute.steps)
    for buffer, step in releases:
        after.setdefault(step, []).append((2, Free(buffer)))

    def following(index: int) -> list[Step]:
        return [s for _, s in sorted(after.get(index, ()), key=lambda e: e[0])]

    def preceding(index: int) -> list[Step]:
        return [s for _, s in sorted(before.get(index, ()), key=lambda e: e[0])]

    steps: list[Step] = following(-1)
    compute_index = -1
    for step in schedule.steps:
        if isinstance(step, Compute):
            compute_index += 1
            steps.extend(preceding(compute_index))
            steps.append(step)
            steps.extend(following(compute_index))
        else:
            steps.append(step)
    steps.extend(preceding(compute_index + 1))
    return Schedule(
        schedule.function, buffers, steps, schedule.forward_end, schedule.updates
    )
