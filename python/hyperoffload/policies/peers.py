"""
Memory policies, all judged by the same interpreter on the same program. Each
peer is modelled from its upstream source, named below with what is
simplified.

- `plan`: the program as compiled, with its hyperoffload ops.
- `none`: everything in HBM, capacity ignored: the reference time and peak.
- `reactive-lru`: runtime swapping (PyTorch/TensorFlow swap managers, the
  "runtime-driven prefetch" baseline of the HyperOffload paper): a read of a
  non-resident tensor fetches it on demand and stalls; an allocation that
  does not fit evicts the least recently used tensors the current op does not
  need, storing them first if still live.
- `runtime-prefetch`: a runtime cache that knows the access sequence of the
  step (MindSpore's `MemCountedCache`, runtime/core/actors/remote_memory:
  tensors ordered by next use, `Offload` from the furthest next use,
  `LoadAllWithinHorizon`; Capuchin, ASPLOS'20, the same from a profiled
  iteration): an allocation that does not fit evicts the tensor read furthest
  in the future (storing it first, the compute stream waiting, as
  `MemCountedCache::Offload` does), and before each op the tensors read
  within the next `horizon` ops are fetched. Simplified: a prefetch only
  evicts tensors that need no store, and a horizon is counted in ops (not
  tuned from measured transfer times as Capuchin does).
- `distance`: MindSpore's static swap heuristic (`MemSwapManager`,
  backend/common/mem_reuse/mem_swap_manager.cc; the same spans in
  runtime/device/gsm/swap_strategy_builder.cc): the tensors with a gap of at
  least `select_distance` ops between two uses, the largest first (its
  `ordered_tensors_` by size) and at most `select_num` of them, are stored
  when the gap starts (after the producer for the gap before the first read,
  after the read that opens it otherwise; one store per tensor, as gsm's
  `avoid_copy_` when the data did not change), released `release_distance`
  ops later, the compute stream waiting for the store first (its swap-out
  actor offloads before the next kernel runs), and fetched
  `prefetch_distance` ops before the next use (upstream: one op, then moved
  by measured cost). Simplified: the distance and size thresholds are given,
  not retreated step by step until the memory fits.
- `activation-pass`: PyTorch's compiler activation offloading
  (torch/_functorch/_activation_offloading/activation_offloading.py): each
  tagged activation saved for the backward pass is stored after its last
  forward use and freed once stored, the forward ends waiting for every store
  (`activation_offload_sink_wait`), and it is reloaded before its first
  backward use, hoisted by `reorder_for_prefetch`: walking the backward in
  reverse, the reloads queue first in, first out, the head collects the
  estimated time of each op it passes and is issued there once its transfer
  is covered; what is left is issued when the backward starts, never before.
  Which activations are tagged is the user's choice upstream
  (`should_offload`; torchtitan tags all but the last layer's): here the
  largest up to `tag_fraction` of their bytes, at least `min_bytes` each,
  none produced in the last `skip_last` fraction of the forward pass.
  Activations with no op between their two uses stay.

Arguments tagged with a tier start there, unless `resident_arguments`: the
same choice `place_arguments` gives ours, all of them kept in HBM between
calls (home `hbm`). A static policy fetches a tagged argument in its tier
before its first use (as its own prefetches) and frees it after its last.

Static policies rewrite the schedule of the program stripped of its
hyperoffload ops; the runtime ones are modes of the interpreter.

```python
result = run_policy("distance", planned, stripped, hardware, capacity, PolicyOptions())
result = simulate_program(Program(module, hardware), "reactive-lru", capacity)
```
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import accumulate, pairwise

from hyperoffload.analysis.program import Program
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.moves import Move, apply_moves
from hyperoffload.model.schedule import (
    Buffer,
    Compute,
    Schedule,
)
from hyperoffload.sim.simulator import (
    Eviction,
    Runtime,
    SimResult,
    check_tiers,
    simulate,
)
from hyperoffload.support.tiers import Tier

POLICIES = (
    "plan",
    "none",
    "reactive-lru",
    "runtime-prefetch",
    "distance",
    "activation-pass",
)
RUNTIMES = ("reactive-lru", "runtime-prefetch")
"""The policies that are modes of the interpreter (they take a capacity)."""


class PolicyError(ValueError):
    """A policy that cannot run on this program."""


@dataclass(frozen=True)
class PolicyOptions:
    select_distance: int = 8
    prefetch_distance: int = 2
    release_distance: int = 0
    select_num: int | None = None
    """`distance`: offload at most this many tensors, the largest first (None: all)."""
    forward_end: int | None = None
    """Override the step that ends the forward pass (`activation-pass`)."""
    tag_fraction: float = 1.0
    """`activation-pass`: tag the largest activations up to this fraction of their bytes."""
    min_bytes: int = 0
    """`activation-pass`: tag only activations of at least this size."""
    skip_last: float = 0.0
    """`activation-pass`: keep those produced in this last fraction of the forward pass."""
    horizon: int = 1
    """`runtime-prefetch`: ops ahead whose reads are prefetched."""
    resident_arguments: bool = False
    """Tagged arguments live in HBM between calls (as `place_arguments` lets ours choose)."""

    def describe_arguments(self) -> str:
        return (
            "arguments resident"
            if self.resident_arguments
            else "arguments in their tier"
        )


@dataclass
class Offload:
    """What a static policy inserts: moves, and frees after a compute step."""

    moves: list[Move] = field(default_factory=list[Move])
    releases: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])


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
    if options.resident_arguments:
        stripped = resident_arguments(stripped)
    if policy == "reactive-lru":
        return simulate(stripped, hardware, capacity, Runtime(), record)
    if policy == "runtime-prefetch":
        runtime = Runtime(Eviction.NEXT_USE, options.horizon)
        return simulate(stripped, hardware, capacity, runtime, record)
    check_tiers(stripped, hardware)
    if policy == "distance":
        offload = distance_moves(stripped, options)
    elif policy == "activation-pass":
        offload = activation_moves(stripped, hardware, options)
    else:
        raise PolicyError(
            f"unknown policy '{policy}' (choose from {', '.join(POLICIES)})"
        )
    schedule = apply_moves(stripped, offload.moves, hardware, offload.releases)
    return simulate(schedule, hardware, capacity, record=record)


def simulate_program(
    program: Program,
    policy: str,
    capacity: int | None,
    options: PolicyOptions | None = None,
    record: bool = True,
) -> SimResult:
    """`policy` on `program`: `plan` runs it as compiled, every other policy its reference."""
    schedule = program.planned if policy == "plan" else program.reference
    return run_policy(
        policy,
        schedule,
        schedule,
        program.hardware,
        capacity,
        options or PolicyOptions(),
        record,
    )


def resident_arguments(schedule: Schedule) -> Schedule:
    """The schedule with every tagged argument in HBM at entry (its home `hbm`)."""
    buffers = [
        replace(b, home=Tier.HBM) if b.kind == "argument" and b.tier == Tier.HBM else b
        for b in schedule.buffers
    ]
    return replace(schedule, buffers=buffers)


def _events(schedule: Schedule) -> dict[int, list[int]]:
    """For each device buffer, the compute steps (as compute indices) that touch it."""
    events: dict[int, list[int]] = {}
    computes = (s for s in schedule.steps if isinstance(s, Compute))
    for index, step in enumerate(computes):
        for buffer in dict.fromkeys((*step.allocs, *step.reads)):
            events.setdefault(buffer, []).append(index)
    return events


def _times(schedule: Schedule) -> list[float]:
    return [s.time_s for s in schedule.steps if isinstance(s, Compute)]


def _in_tier(buffer: Buffer) -> bool:
    """A tagged argument that starts in its tier."""
    return buffer.kind == "argument" and buffer.initial and buffer.home != Tier.HBM


def offload_candidates(schedule: Schedule) -> Iterator[Buffer]:
    """The device buffers `distance` may offload: arguments and activations."""
    for buffer in schedule.buffers:
        if buffer.tier == Tier.HBM and buffer.kind in ("argument", "activation"):
            yield buffer


def distance_moves(schedule: Schedule, options: PolicyOptions) -> Offload:
    offload = Offload()
    events = _events(schedule)
    selected: list[tuple[Buffer, list[tuple[int, int]]]] = []
    for buffer in offload_candidates(schedule):
        touched = events.get(buffer.id, [])
        if not touched:
            continue
        if _in_tier(buffer):
            first = touched[0]
            fetch = max(0, first - options.prefetch_distance)
            offload.moves.append(Move(buffer.id, None, None, fetch, first))
            offload.releases.append((buffer.id, touched[-1]))
        gaps = [
            (before, after)
            for before, after in pairwise(touched)
            if after - before >= options.select_distance
            and before + options.release_distance < after - options.prefetch_distance
        ]
        if gaps:
            selected.append((buffer, gaps))
    selected.sort(key=lambda s: (-s[0].bytes, s[0].id))
    for buffer, gaps in selected[: options.select_num]:
        for before, after in gaps:
            release = before + options.release_distance
            fetch = after - options.prefetch_distance
            offload.moves.append(
                Move(buffer.id, before, release, fetch, after, wait_store=release)
            )
    return offload


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


def prefetch_in_order(
    reloads: Sequence[tuple[int, float]], times: Sequence[float], floor: int
) -> list[int]:
    """
    PyTorch's `reorder_for_prefetch` on compute steps: for each `(use,
    transfer time)`, the step before which its reload is issued. Walking the
    steps backward, reloads queue first in, first out; each step's time goes
    to the head of the queue, which is issued before that step once its time
    is covered (one per step); the rest are issued before step `floor`.
    """
    order = sorted(range(len(reloads)), key=lambda i: (-reloads[i][0], i))
    fetch = [floor] * len(reloads)
    queue: list[int] = []
    remaining = 0.0
    pending = iter(order)
    upcoming = next(pending, None)
    for step in range(max((u for u, _ in reloads), default=floor), floor - 1, -1):
        if queue:
            remaining -= times[step]
            if remaining <= 0:
                fetch[queue.pop(0)] = step
                remaining = reloads[queue[0]][1] if queue else 0.0
        while upcoming is not None and reloads[upcoming][0] == step:
            if not queue:
                remaining = reloads[upcoming][1]
            queue.append(upcoming)
            upcoming = next(pending, None)
    return fetch


@dataclass(frozen=True)
class _Saved:
    buffer: Buffer
    produced: int
    last_forward: int
    first_backward: int


def _saved_activations(schedule: Schedule, forward_end: int) -> list[_Saved]:
    """Activations produced in the forward pass with an op between their uses across it."""
    saved: list[_Saved] = []
    for buffer, touched in _events(schedule).items():
        info = schedule.buffers[buffer]
        if info.kind != "activation" or info.pinned or touched[0] > forward_end:
            continue
        backward = [t for t in touched if t > forward_end]
        if not backward:
            continue
        last_forward = max(t for t in touched if t <= forward_end)
        if backward[0] - last_forward >= 2:
            saved.append(_Saved(info, touched[0], last_forward, backward[0]))
    return saved


def tag_activations(
    saved: list[_Saved], forward_end: int, options: PolicyOptions
) -> list[_Saved]:
    """The activations tagged for offloading under `options` (largest first)."""
    tail = (1 - options.skip_last) * (forward_end + 1)
    eligible = sorted(
        (s for s in saved if s.produced < tail and s.buffer.bytes >= options.min_bytes),
        key=lambda s: (-s.buffer.bytes, s.buffer.id),
    )
    budget = options.tag_fraction * sum(s.buffer.bytes for s in eligible)
    before = accumulate((s.buffer.bytes for s in eligible), initial=0)
    return [s for s, taken in zip(eligible, before, strict=False) if taken < budget]


def activation_moves(
    schedule: Schedule, hardware: Hardware, options: PolicyOptions
) -> Offload:
    forward_end = _forward_end(schedule, options)
    times = _times(schedule)
    link = hardware.link(hardware.offload_tier)
    tagged = tag_activations(
        _saved_activations(schedule, forward_end), forward_end, options
    )
    reloads = [
        (s.first_backward, link.transfer_time(s.buffer.bytes, to_device=True))
        for s in tagged
    ]
    fetches = prefetch_in_order(reloads, times, forward_end + 1)
    offload = _argument_fetches(schedule, hardware, times)
    for saved, fetch in zip(tagged, fetches, strict=True):
        last = saved.last_forward
        offload.moves.append(
            Move(
                saved.buffer.id,
                last,
                last,
                fetch,
                saved.first_backward,
                wait_store=forward_end,
            )
        )
    offload.moves.sort(key=lambda m: (m.fetch, m.use))
    return offload


def _argument_fetches(
    schedule: Schedule, hardware: Hardware, times: list[float]
) -> Offload:
    """Tagged arguments in their tier: fetched as the reloads are hoisted, freed after their last use."""
    offload = Offload()
    events = _events(schedule)
    arguments = [b for b in schedule.buffers if _in_tier(b) and b.id in events]
    loads = [
        (events[b.id][0], hardware.link(b.home).transfer_time(b.bytes, True))
        for b in arguments
    ]
    for buffer, fetch in zip(
        arguments, prefetch_in_order(loads, times, 0), strict=True
    ):
        touched = events[buffer.id]
        offload.moves.append(Move(buffer.id, None, None, fetch, touched[0]))
        offload.releases.append((buffer.id, touched[-1]))
    return offload
