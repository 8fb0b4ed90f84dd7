"""
Memory policies, all judged by the same interpreter on the same program.

- `plan`: the program as compiled, with its hyperoffload ops.
- `none`: everything in HBM, capacity ignored: the reference time and peak.
- `reactive-lru`: runtime swapping (e.g. PyTorch/TensorFlow swap managers,
  the "runtime-driven prefetch" baseline of the HyperOffload paper): a read of
  a non-resident tensor fetches it on demand and stalls compute; an
  allocation that does not fit evicts the least recently used tensors the
  current op does not need, storing them first if still live.
- `distance`: MindSpore's shipped offload heuristic (`mindspore` graph-kernel
  memory offload: select / prefetch / release distances): every tensor idle
  for at least `select_distance` ops is offloaded after the use that starts
  the gap, released `release_distance` ops after it and prefetched
  `prefetch_distance` ops before its next use.
- `activation-pass`: PyTorch's compiler activation offloading
  (`torch._functorch` partitioner, `activation_memory_budget` offload):
  activations saved for the backward pass are stored after their last forward
  use and freed, and reloaded before their first backward use, each reload
  hoisted as far back as its estimated transfer time needs (activations with
  no op between the two uses stay).

Static policies rewrite the schedule of the program stripped of its
hyperoffload ops; `reactive-lru` is a mode of the interpreter.

```python
result = run_policy("distance", program, hardware, capacity, PolicyOptions())
```
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from hyperoffload.hardware import Hardware
from hyperoffload.schedule import Buffer, Compute, Free, Schedule, Step, Transfer, Wait
from hyperoffload.simulator import SimResult, simulate

POLICIES = ("plan", "none", "reactive-lru", "distance", "activation-pass")


class PolicyError(ValueError):
    """A policy that cannot run on this program."""


@dataclass(frozen=True)
class PolicyOptions:
    select_distance: int = 8
    prefetch_distance: int = 2
    release_distance: int = 0
    forward_end: int | None = None
    """Override the step that ends the forward pass (`activation-pass`)."""


@dataclass(frozen=True)
class Move:
    """
    Keep `buffer` out of HBM over a gap, in compute-step indices: store it
    after step `store_after` (-1: before the first step; None, or a copy that
    already exists: no store), free it after step `release` (None: it is not
    resident before the gap), fetch it before step `fetch` and wait for the
    fetch before step `use` (the number of steps: before the function ends).
    """

    buffer: int
    store_after: int | None
    release: int | None
    fetch: int
    use: int


def run_policy(
    policy: str,
    planned: Schedule,
    stripped: Schedule,
    hardware: Hardware,
    capacity: int | None,
    options: PolicyOptions,
    record: bool = True,
) -> SimResult:
    """Simulate `policy`; `planned` is the program as compiled, `stripped` without offload ops."""
    if policy == "plan":
        return simulate(planned, hardware, capacity, record=record)
    if policy == "none":
        return simulate(stripped, hardware, None, record=record)
    if policy == "reactive-lru":
        return simulate(stripped, hardware, capacity, reactive=True, record=record)
    if policy == "distance":
        moves = distance_moves(stripped, options)
    elif policy == "activation-pass":
        moves = activation_moves(stripped, hardware, options)
    else:
        raise PolicyError(
            f"unknown policy '{policy}' (choose from {', '.join(POLICIES)})"
        )
    return simulate(
        apply_moves(stripped, moves, hardware), hardware, capacity, record=record
    )


def _events(schedule: Schedule) -> dict[int, list[int]]:
    """For each device buffer, the compute steps (as compute indices) that touch it."""
    events: dict[int, list[int]] = {}
    computes = (s for s in schedule.steps if isinstance(s, Compute))
    for index, step in enumerate(computes):
        for buffer in dict.fromkeys((*step.allocs, *step.reads)):
            events.setdefault(buffer, []).append(index)
    return events


def _candidates(schedule: Schedule) -> Iterator[Buffer]:
    for buffer in schedule.buffers:
        if buffer.tier == "hbm" and buffer.kind in ("argument", "activation"):
            yield buffer


def distance_moves(schedule: Schedule, options: PolicyOptions) -> list[Move]:
    moves: list[Move] = []
    events = _events(schedule)
    for buffer in _candidates(schedule):
        touched = events.get(buffer.id, [])
        if buffer.initial and buffer.home != "hbm" and touched:
            first = touched[0]
            fetch = max(0, first - options.prefetch_distance)
            moves.append(Move(buffer.id, None, None, fetch, first))
        for before, after in pairwise(touched):
            if after - before < options.select_distance:
                continue
            release = before + options.release_distance
            fetch = after - options.prefetch_distance
            if release < fetch:
                moves.append(Move(buffer.id, before, release, fetch, after))
    return moves


def _forward_end(schedule: Schedule, options: PolicyOptions) -> int:
    end = (
        options.forward_end if options.forward_end is not None else schedule.forward_end
    )
    if end is None:
        raise PolicyError(
            "activation-pass needs a training step: the end of the forward pass "
            "(the op computing the first result, the loss) is unknown; pass --forward-end"
        )
    return end


def activation_moves(
    schedule: Schedule, hardware: Hardware, options: PolicyOptions
) -> list[Move]:
    forward_end = _forward_end(schedule, options)
    times = [s.time_s for s in schedule.steps if isinstance(s, Compute)]
    tier = hardware.offload_tier
    link = hardware.link(tier)
    moves: list[Move] = []
    for buffer, touched in _events(schedule).items():
        info = schedule.buffers[buffer]
        if info.kind != "activation" or touched[0] > forward_end:
            continue
        forward = [t for t in touched if t <= forward_end]
        backward = [t for t in touched if t > forward_end]
        if not backward:
            continue
        last_forward, first_backward = forward[-1], backward[0]
        if first_backward - last_forward < 2:
            continue  # no op between the uses to hide a transfer behind
        needed = link.transfer_time(info.bytes, to_device=True)
        fetch, hidden = first_backward, 0.0
        while fetch > last_forward + 1 and hidden < needed:
            fetch -= 1
            hidden += times[fetch]
        moves.append(Move(buffer, last_forward, last_forward, fetch, first_backward))
    return moves


def apply_moves(
    schedule: Schedule,
    moves: list[Move],
    hardware: Hardware,
    releases: Sequence[tuple[int, int]] = (),
) -> Schedule:
    """
    The schedule with a store/free/prefetch/wait for each move, and a free of
    each `(buffer, step)` in `releases` after that compute step.
    """
    buffers = [replace(b) for b in schedule.buffers]
    before: dict[int, list[Step]] = {}
    after: dict[int, list[Step]] = {}
    transfers = sum(isinstance(s, Transfer) for s in schedule.steps)
    copies: dict[int, int] = {}  # device buffer -> its copy outside HBM

    def copy_of(device: Buffer) -> Buffer:
        if device.id not in copies:
            tier = device.home if device.home != "hbm" else hardware.offload_tier
            initial = device.home != "hbm" and device.initial
            name = f"{device.name} ({tier})"
            buffers.append(
                Buffer(len(buffers), name, device.bytes, tier, "copy", initial=initial)
            )
            copies[device.id] = len(buffers) - 1
        return buffers[copies[device.id]]

    def transfer(source: Buffer, dest: Buffer, link: str, to_device: bool) -> Transfer:
        nonlocal transfers
        transfers += 1
        return Transfer(
            transfers - 1, source.id, dest.id, source.bytes, link, to_device
        )

    for move in moves:
        device = buffers[move.buffer]
        stored = move.buffer in copies
        copy = copy_of(device)
        if move.release is None:
            device.initial = False
        if not stored and not copy.initial and move.store_after is not None:
            store = transfer(device, copy, copy.tier, to_device=False)
            after.setdefault(move.store_after, []).append(store)
        if move.release is not None:
            after.setdefault(move.release, []).append(Free(move.buffer))
        fetch = transfer(copy, device, copy.tier, to_device=True)
        before.setdefault(move.fetch, []).append(fetch)
        before.setdefault(move.use, []).append(Wait(fetch.id))
    for buffer, step in releases:
        after.setdefault(step, []).append(Free(buffer))
    steps: list[Step] = list(after.get(-1, ()))
    compute_index = -1
    for step in schedule.steps:
        if isinstance(step, Compute):
            compute_index += 1
            steps.extend(before.get(compute_index, ()))
            steps.append(step)
            steps.extend(after.get(compute_index, ()))
        else:
            steps.append(step)
    steps.extend(before.get(compute_index + 1, ()))
    return Schedule(schedule.function, buffers, steps, schedule.forward_end)
