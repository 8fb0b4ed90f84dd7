"""
Tier choice: where each offloaded value's copy lives when the hardware
offers several tiers (`remote`, `host`, `ssd`). One entry point,
`choose_tiers`, which the planner calls on every plan it judges.

Rules, in this order:
- the caller's data, a tagged argument left in its tier or a result written
  back, stays in the tier its attribute names while that tier has room
  (what is read first keeps it); what does not fit goes to the next slower
  allowed tier with room, and its type and attribute say so;
- every other stored value goes to the slowest allowed tier with room whose
  round trip still hides in each of its gaps, the coldest value (longest
  gap) first: cold blocks that will not be read again soon go to the
  slowest tier, the faster ones stay for values with short gaps. A tier
  slower than the fastest with room is taken only by a copy whose fetch
  from it is bandwidth-bound (the link's latency at most half the fetch):
  small tensors stay on the fastest tier (never sent to a drive for a
  round trip that is mostly latency). One whose round trip hides
  nowhere goes to the fastest tier with room; one that no tier has room
  for stays in HBM (it leaves the plan).

Room is capacity and link time. Capacity: the bytes resident in a tier at
any op stay within its `capacity` (a stored copy lives from its producer to
the use after its last gap; the caller's data for the whole call, as do
arguments no plan moves, `stay`). Link time: while an op computes, each
direction of each link can move data for as long as the op runs; a store
takes that time from the ops after its producer, a fetch from the ops right
before the use after its gap, and a transfer on a staged link (`ssd` through
`host`) takes `bytes / bandwidth` of the link it is staged through too.
Transfers are priced at the bandwidth a direction keeps while the other is
busy (`Link.duplex_efficiency`: a drive's reads and writes share it), since
a plan's stores and fetches overlap.

```python
plans = choose_tiers(plans, graph, hardware, (Tier.HOST, Tier.SSD))
[(p.info.name, p.tier) for p in plans]   # e.g. [("%kv", "ssd"), ("%h", "host")]
```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from hyperoffload.analysis.compression import value_compression
from hyperoffload.analysis.lifetimes import Gap, ProgramGraph, ValueInfo
from hyperoffload.model.compression import Compressed, transfer_time
from hyperoffload.model.hardware import Hardware, Link
from hyperoffload.planning.link_time import LinkTime
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support.tiers import OFFLOAD_TIERS, Tier

_EPSILON = 1e-12
"""Seconds of link time below which a reservation counts as met."""


def _own_tier(plan: ValuePlan) -> Tier | None:
    """The tier the caller names for its data (None: a value the plan stores)."""
    if plan.write_back is not None:
        return plan.write_back
    return plan.info.tier if plan.initially_out else None


@dataclass
class _Prices:
    """
    What every copy of one size and compression costs on one hardware's
    links in one `choose_tiers` call (computed once per tier and direction),
    and the order of the call's tiers for it (`_by_speed`).
    """

    seconds: dict[tuple[Tier, bool], float] = field(
        default_factory=dict[tuple[Tier, bool], float]
    )
    by_speed: list[Tier] | None = None


@dataclass(frozen=True)
class _Copy:
    """One plan's copy as its tier sees it: the bytes it holds and moves."""

    plan: ValuePlan
    compressed: Compressed | None
    prices: _Prices = field(compare=False)

    @property
    def bytes(self) -> int:
        """Bytes on the link and in the tier (compressed, if it is)."""
        return (
            self.plan.info.bytes if self.compressed is None else self.compressed.bytes
        )

    def time(self, hardware: Hardware, tier: Tier, to_device: bool) -> float:
        """
        When a store (or fetch) of it through `tier`'s link is done, at the
        bandwidth left while the other direction is busy (`duplex_efficiency`:
        the chooser cannot know that it will not be, and a plan's stores and
        fetches do overlap); remembered in its `prices`.
        """
        seconds = self.prices.seconds
        known = seconds.get((tier, to_device))
        if known is None:
            link = _shared(hardware.link(tier))
            known = transfer_time(
                link, self.plan.info.bytes, to_device, self.compressed
            )
            seconds[(tier, to_device)] = known
        return known

    def round_trip(self, hardware: Hardware, tier: Tier) -> float:
        return self.time(hardware, tier, False) + self.time(hardware, tier, True)


class _Room:
    """
    Capacity and link time left in each tier, per op; a tier with room for
    all `most` bytes there are to place is not counted (it cannot fill).
    """

    def __init__(self, graph: ProgramGraph, hardware: Hardware, most: int):
        self.hw = hardware
        self.ops = len(graph.ops)
        times = np.asarray(graph.op_time, dtype=np.float64)
        self.resident = {
            t: np.zeros(max(self.ops, 1), np.int64)
            for t, link in hardware.links.items()
            if link.capacity < most
        }
        self.free = {
            (t, to_device): LinkTime(times)
            for t in hardware.links
            for to_device in (False, True)
        }

    # capacity

    def fits(self, tier: Tier, nbytes: int, span: tuple[int, int]) -> bool:
        """Whether `nbytes` more stay within `tier`'s capacity over `span`."""
        if tier not in self.resident:
            return True
        held = self.resident[tier][span[0] : span[1]]
        most = int(held.max()) if held.size else 0
        return most + nbytes <= self.hw.link(tier).capacity

    def hold(self, tier: Tier, nbytes: int, span: tuple[int, int]) -> None:
        if tier in self.resident:
            self.resident[tier][span[0] : span[1]] += nbytes

    # link time

    def legs(
        self, copy: _Copy, tier: Tier, to_device: bool
    ) -> list[tuple[LinkTime, float]]:
        """The link times one transfer draws on, with the seconds it needs of each."""
        legs = [(self.free[(tier, to_device)], copy.time(self.hw, tier, to_device))]
        staged = self.hw.link(tier).staged_through
        if staged is not None:
            host = self.hw.link(staged)
            seconds = host.transfer_time(copy.bytes, to_device) - host.latency_s
            legs.append((self.free[(staged, to_device)], seconds))
        return legs

    def transfers(
        self, copy: _Copy, tier: Tier
    ) -> list[tuple[LinkTime, int, int, float, bool]]:
        """(link time, first op, end op, seconds, backward) of each transfer of a copy."""
        plan = copy.plan
        needs: list[tuple[LinkTime, int, int, float, bool]] = []
        if plan.stored:  # a store, from right after the producer
            end = plan.gaps[0].before if plan.gaps else self.ops
            first = max(plan.info.producer + 1, 0)
            for free, seconds in self.legs(copy, tier, False):
                needs.append((free, first, end, seconds, False))
        if plan.write_back is None:  # a fetch per gap, right before its use
            for gap in plan.gaps:
                for free, seconds in self.legs(copy, tier, True):
                    needs.append(
                        (free, max(gap.after + 1, 0), gap.before, seconds, True)
                    )
        return needs

    def hides(self, copy: _Copy, tier: Tier) -> bool:
        """Whether each round trip fits its gap and the link time left there."""
        store = copy.time(self.hw, tier, False)
        fetch = copy.time(self.hw, tier, True)
        for index, gap in enumerate(copy.plan.gaps):
            if (store if index == 0 else 0.0) + fetch > gap.time_s:
                return False
        return all(
            free.total(low, high) >= seconds - _EPSILON
            for free, low, high, seconds, _ in self.transfers(copy, tier)
        )

    def reserve(self, copy: _Copy, tier: Tier) -> None:
        """Take the link time a copy's transfers need (what is left, if short)."""
        for free, low, high, seconds, backward in self.transfers(copy, tier):
            free.take(low, high, seconds, backward)

    def take(self, copy: _Copy, tier: Tier, span: tuple[int, int]) -> None:
        """Hold a copy in `tier` over `span` and reserve its link time."""
        self.hold(tier, copy.bytes, span)
        self.reserve(copy, tier)


def _shared(link: Link) -> Link:
    """`link` with the bandwidth each direction keeps while the other is busy."""
    if link.duplex_efficiency >= 1:
        return link
    return replace(
        link,
        bandwidth_to_device=link.bandwidth_to_device * link.duplex_efficiency,
        bandwidth_from_device=link.bandwidth_from_device * link.duplex_efficiency,
        duplex_efficiency=1.0,
    )


def _span(plan: ValuePlan, ops: int) -> tuple[int, int]:
    """The ops over which `plan`'s copy is held in its tier."""
    if plan.initially_out:
        return 0, ops
    if plan.write_back is not None or not plan.gaps:
        return max(plan.info.producer, 0), ops
    return max(plan.info.producer, 0), plan.gaps[-1].before


def _shortest(gaps: list[Gap]) -> float:
    return min((g.time_s for g in gaps), default=0.0)


def choose_tiers(
    plans: Sequence[ValuePlan],
    graph: ProgramGraph,
    hardware: Hardware,
    allowed: Sequence[Tier] = OFFLOAD_TIERS,
    stay: Sequence[ValueInfo] = (),
) -> list[ValuePlan]:
    """
    `plans` with the tier of each copy set (`ValuePlan.tier`; recomputations
    as they are), in their order, less the stored values no allowed tier has
    room for. `allowed`: where stored values and spilled caller's data may
    go (tiers the hardware lacks are ignored); `stay`: arguments that live in
    a tier for the whole call and that no plan moves (they take capacity).
    """
    prices: dict[tuple[int, Compressed | None], _Prices] = {}
    copies: list[_Copy] = []
    for plan in plans:
        compressed = value_compression(plan.info.value, plan.compress, hardware)
        same = prices.setdefault((plan.info.bytes, compressed), _Prices())
        copies.append(_Copy(plan, compressed, same))
    most = sum(c.bytes for c in copies) + sum(info.bytes for info in stay)
    room = _Room(graph, hardware, most)
    tiers = [t for t in allowed if t in hardware.links]
    ops = len(graph.ops)
    for info in stay:
        if info.tier in hardware.links:
            room.hold(info.tier, info.bytes, (0, ops))
    chosen: dict[int, ValuePlan | None] = {}
    callers = [i for i, p in enumerate(plans) if _own_tier(p) is not None]
    for index in sorted(callers, key=lambda i: _first_use(plans[i], ops)):
        copy, span = copies[index], _span(plans[index], ops)
        own = _own_tier(copy.plan)
        assert own is not None
        if own not in hardware.links:
            chosen[index] = replace(copy.plan, tier=own)  # not ours to place
            continue
        ladder = [own] + [
            t
            for t in _by_speed(copy, tiers, hardware)
            if t != own
            and copy.round_trip(hardware, t) >= copy.round_trip(hardware, own)
        ]
        tier = next((t for t in ladder if room.fits(t, copy.bytes, span)), own)
        room.take(copy, tier, span)
        chosen[index] = replace(copy.plan, tier=tier)
    stored = [
        i for i, p in enumerate(plans) if _own_tier(p) is None and not p.recompute
    ]
    for index in sorted(stored, key=lambda i: (-_shortest(plans[i].gaps), i)):
        copy, span = copies[index], _span(plans[index], ops)
        fastest = _by_speed(copy, tiers, hardware)
        with_room = [t for t in fastest if room.fits(t, copy.bytes, span)]
        slowest_hidden = next(
            (
                t
                for t in reversed(with_room)
                if (t == with_room[0] or _bandwidth_bound(copy, t, hardware))
                and room.hides(copy, t)
            ),
            None,
        )
        tier = slowest_hidden or (with_room[0] if with_room else None)
        if tier is not None:
            room.take(copy, tier, span)
        chosen[index] = None if tier is None else replace(copy.plan, tier=tier)
    result: list[ValuePlan] = []
    for index, plan in enumerate(plans):
        if index not in chosen:
            result.append(plan)  # a recomputation: no copy
        elif (tiered := chosen[index]) is not None:
            result.append(tiered)
    return result


def _bandwidth_bound(copy: _Copy, tier: Tier, hardware: Hardware) -> bool:
    """
    Whether a fetch of `copy` from `tier` spends at least as long moving
    bytes as waiting for the link's latency: a latency-bound copy saves a
    faster tier no room worth its latency, and many of them queue on a
    slow link's copy stream.
    """
    latency = hardware.link(tier).latency_s
    return 2 * latency <= copy.time(hardware, tier, True)


def _first_use(plan: ValuePlan, ops: int) -> int:
    """
    When the caller's data is first needed: the use its first fetch serves,
    the producer of a result, `ops` for an argument never read.
    """
    if plan.gaps:
        return plan.gaps[0].before
    return ops if plan.initially_out else plan.info.producer


def _by_speed(copy: _Copy, tiers: Sequence[Tier], hardware: Hardware) -> list[Tier]:
    """
    `tiers` (the same in one call), the fastest round trip of `copy` first
    (ties: `OFFLOAD_TIERS` order); once per size of copy.
    """
    if copy.prices.by_speed is None:
        copy.prices.by_speed = sorted(
            tiers, key=lambda t: (copy.round_trip(hardware, t), OFFLOAD_TIERS.index(t))
        )
    return copy.prices.by_speed
