"""
The expert caches of routed decode (`hyperoffload.policies.experts`): the
schedule of all the tokens built step by step (`TokenSchedule`, with the
timeline the simulator will compute, so that policies fetch into the link's
slack only), each policy's rules of where experts live between uses
(`CachePolicy` and its kinds), and the token loop (`run_tokens`). A layer
computes the experts it holds first, then the fetched ones in fetch order
(every policy alike); where a layer cannot hold all its misses at once, the
next miss is fetched as soon as an expert computed can make room.

```python
schedule = TokenSchedule(step, hardware, resident=set(), tokens=len(chosen))
hits, first = run_tokens(schedule, LeastRecentlyUsedCache(schedule, budget), chosen, warmup=0)
simulate(schedule.schedule(), hardware, budget)
```
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from dataclasses import dataclass

from hyperoffload.model.hardware import Hardware, Link
from hyperoffload.model.moe import ExpertError, Key, MoEStep
from hyperoffload.model.routing import Chosen
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


class TokenSchedule:
    """
    The schedule of all the tokens, step by step, with the timeline the
    simulator will compute (compute times as given, the link serial): the
    policies read it to fetch into the link's slack only.
    """

    def __init__(
        self, step: MoEStep, hardware: Hardware, resident: set[Key], tokens: int
    ):
        self.step = step
        self.hardware = hardware
        self.tokens = tokens
        """All the tokens of the run (warm-up included)."""
        self.tier = hardware.offload_tier
        self.link: Link = hardware.link(self.tier)
        self.buffers: list[Buffer] = []
        self.device: dict[Key, int] = {}
        self.copy: dict[Key, int] = {}
        for layer, spec in enumerate(step.layers):
            for expert, nbytes in enumerate(spec.expert_bytes):
                key = (layer, expert)
                name = f"expert {expert} of layer {layer}"
                held = key in resident
                self.device[key] = self._buffer(
                    Buffer(
                        0, name, nbytes, Tier.HBM, "argument", pinned=held, initial=held
                    )
                )
                self.copy[key] = self._buffer(
                    Buffer(
                        0,
                        f"{name} ({self.tier})",
                        nbytes,
                        self.tier,
                        "copy",
                        initial=True,
                    )
                )
        self.steps: list[Step] = []
        self.held: set[Key] = set(resident)
        self.in_flight: dict[Key, tuple[int, float]] = {}  # fetched, not waited for
        self.now = 0.0
        self.link_free = 0.0
        self.transfers = 0
        self.computes = 0
        self.token = 0
        """The token whose steps are being added."""
        self.compute_s: dict[int, float] = {}  # token -> its compute time
        self.moved: dict[int, int] = {}  # token -> the bytes of the fetches serving it

    def _buffer(self, buffer: Buffer) -> int:
        buffer.id = len(self.buffers)
        self.buffers.append(buffer)
        return buffer.id

    def nbytes(self, key: Key) -> int:
        return self.step.layers[key[0]].expert_bytes[key[1]]

    def compute(self, name: str, loc: str, time_s: float, reads: list[int]) -> None:
        self.steps.append(Compute(name, loc, time_s, 0.0, 0, reads=reads))
        self.now += time_s
        self.computes += 1
        self.compute_s[self.token] = self.compute_s.get(self.token, 0.0) + time_s

    def fetch_time(self, key: Key) -> float:
        return self.link.transfer_time(self.nbytes(key), to_device=True)

    def fetch(self, key: Key, token: int) -> None:
        """Copy `key` into HBM (it must not be held), for `token`."""
        transfer = self.transfers
        self.transfers += 1
        nbytes = self.nbytes(key)
        self.steps.append(
            Transfer(
                transfer, self.copy[key], self.device[key], nbytes, self.tier, True
            )
        )
        end = max(self.now, self.link_free) + self.fetch_time(key)
        self.link_free = end
        self.in_flight[key] = (transfer, end)
        self.held.add(key)
        self.moved[token] = self.moved.get(token, 0) + nbytes

    def wait(self, key: Key) -> None:
        if key in self.in_flight:
            transfer, end = self.in_flight.pop(key)
            self.steps.append(Wait(transfer))
            self.now = max(self.now, end)

    def free(self, key: Key) -> None:
        self.wait(key)
        self.steps.append(Free(self.device[key]))
        self.held.remove(key)

    def ready_at(self, key: Key) -> float:
        """When `key`'s weights are in HBM (now, if they are)."""
        return self.in_flight[key][1] if key in self.in_flight else self.now

    def lands_by(self, key: Key, deadline: float) -> bool:
        """Whether a fetch of `key` issued now would land by `deadline`."""
        return max(self.now, self.link_free) + self.fetch_time(key) <= deadline

    def schedule(self) -> Schedule:
        return Schedule("routed experts", self.buffers, self.steps)


class CachePolicy:
    """Where experts live between their uses; the default holds every expert."""

    def __init__(self, builder: TokenSchedule):
        self.b = builder

    def routed(self, keys: list[Key]) -> None:
        """The router of a layer chose `keys` (the held ones are hits)."""

    def admit(self, key: Key, protected: set[Key]) -> bool:
        """Make room to fetch `key`, evicting none of `protected`; False if none now."""
        raise ExpertError(f"{key} is not resident under a policy that holds all")

    def used(self, key: Key) -> None:
        """`key`'s compute for this token is done."""

    def background(
        self, token: int, layer: int, deadline: float, protected: set[Key]
    ) -> None:
        """Fetches ahead for `layer` of `token`, whose router ends at `deadline`."""

    def layer_done(self, layer: int, keys: list[Key]) -> None:
        """The layer's experts are computed."""


class OnDemandCache(CachePolicy):
    """`on-demand`: fetch buffers only, each freed after its compute."""

    def __init__(self, builder: TokenSchedule, budget: int):
        super().__init__(builder)
        self.capacity = budget
        self.used_bytes = 0

    def admit(self, key: Key, protected: set[Key]) -> bool:
        nbytes = self.b.nbytes(key)
        if self.used_bytes + nbytes > self.capacity:
            return False
        self.used_bytes += nbytes
        return True

    def used(self, key: Key) -> None:
        self.b.free(key)
        self.used_bytes -= self.b.nbytes(key)


class LeastRecentlyUsedCache(CachePolicy):
    """`lru`: one LRU cache per layer, the budget split evenly."""

    def __init__(self, builder: TokenSchedule, budget: int):
        super().__init__(builder)
        layers = len(builder.step.layers)
        self.capacity = budget // layers
        self.cache: list[OrderedDict[int, None]] = [
            OrderedDict() for _ in range(layers)
        ]
        self.used_bytes = [0] * layers

    def routed(self, keys: list[Key]) -> None:
        for layer, expert in keys:
            if expert in self.cache[layer]:
                self.cache[layer].move_to_end(expert)

    def admit(self, key: Key, protected: set[Key]) -> bool:
        layer, expert = key
        cache = self.cache[layer]
        while self.used_bytes[layer] + self.b.nbytes(key) > self.capacity:
            victim = next((e for e in cache if (layer, e) not in protected), None)
            if victim is None:
                return False
            del cache[victim]
            self.b.free((layer, victim))
            self.used_bytes[layer] -= self.b.nbytes((layer, victim))
        cache[expert] = None
        self.used_bytes[layer] += self.b.nbytes(key)
        return True


class ActivationAwareCache(CachePolicy):
    """`moe-infinity`: one cache evicting the least chosen, next-layer prefetch."""

    def __init__(self, builder: TokenSchedule, budget: int):
        super().__init__(builder)
        self.capacity = budget
        self.used_bytes = 0
        self.count: dict[Key, int] = {}
        self.stamp: dict[Key, int] = {}
        self.clock = 0
        self.victims: list[tuple[int, int, Key]] = []  # (count, stamp, key), lazy

    def _touch(self, key: Key) -> None:
        self.clock += 1
        self.stamp[key] = self.clock
        if key in self.b.held:
            heapq.heappush(self.victims, (self.count.get(key, 0), self.clock, key))

    def routed(self, keys: list[Key]) -> None:
        for key in keys:
            self.count[key] = self.count.get(key, 0) + 1
            self._touch(key)

    def _victim(self, protected: set[Key], below: int | None) -> Key | None:
        """The least chosen (then least recent) held expert outside `protected`."""
        skipped: list[tuple[int, int, Key]] = []
        found: Key | None = None
        while self.victims:
            count, stamp, key = self.victims[0]
            if key not in self.b.held or self.stamp.get(key) != stamp:
                heapq.heappop(self.victims)  # stale: evicted, or touched since
                continue
            if key in protected:
                skipped.append(heapq.heappop(self.victims))
                continue
            if below is None or count < below:
                found = heapq.heappop(self.victims)[2]
            break
        for entry in skipped:
            heapq.heappush(self.victims, entry)
        return found

    def _room(self, key: Key, protected: set[Key], below: int | None) -> bool:
        nbytes = self.b.nbytes(key)
        while self.used_bytes + nbytes > self.capacity:
            victim = self._victim(protected, below)
            if victim is None:
                return False
            self.b.free(victim)
            self.used_bytes -= self.b.nbytes(victim)
        self.used_bytes += nbytes
        return True

    def admit(self, key: Key, protected: set[Key]) -> bool:
        if not self._room(key, protected, None):
            return False
        self._touch_after_fetch(key)
        return True

    def _touch_after_fetch(self, key: Key) -> None:
        """Enter `key` in the eviction order once the caller has fetched it."""
        self.clock += 1
        self.stamp[key] = self.clock
        heapq.heappush(self.victims, (self.count.get(key, 0), self.clock, key))

    def background(
        self, token: int, layer: int, deadline: float, protected: set[Key]
    ) -> None:
        experts = len(self.b.step.layers[layer].expert_bytes)
        candidates = sorted(
            (key for key in ((layer, e) for e in range(experts)) if key in self.count),
            key=lambda key: (-self.count[key], key[1]),
        )
        wanted = [key for key in candidates if key not in self.b.held]
        for key in wanted[: self.b.step.top_k]:
            if not self.b.lands_by(key, deadline):
                return
            if not self._room(key, protected, self.count[key]):
                return
            self.b.fetch(key, token)
            self._touch_after_fetch(key)


class HotSetCache(CachePolicy):
    """
    `ours`: a resident hot set; the rest of the budget holds the experts
    fetched, least recently used evicted first (a fetch buffer that keeps
    what it fetched); speculation into free room and link slack.
    """

    def __init__(
        self,
        builder: TokenSchedule,
        budget: int,
        plan: OurPlan,
        chosen: Chosen,
        frequencies: list[list[float]],
    ):
        super().__init__(builder)
        self.hot = plan.kept()
        self.capacity = budget - sum(builder.nbytes(key) for key in self.hot)
        self.rooms = plan.rooms
        self.used_bytes = 0
        self.layer_bytes = [0] * len(builder.step.layers)
        self.chosen = chosen
        self.frequencies = frequencies
        self.speculate = plan.speculate
        self.ahead: set[Key] = set()
        """Fetched speculatively, not used yet."""
        self.cache: OrderedDict[Key, None] = OrderedDict()
        """Fetched and used, not hot: least recently chosen first."""

    def _fits(self, key: Key) -> bool:
        nbytes = self.b.nbytes(key)
        if self.rooms is not None:
            return self.layer_bytes[key[0]] + nbytes <= self.rooms[key[0]]
        return self.used_bytes + nbytes <= self.capacity

    def _victim(self, key: Key, protected: set[Key]) -> Key | None:
        """The least recently chosen cached expert that may make room for `key`."""
        for cached in self.cache:
            if cached in protected:
                continue
            if self.rooms is None or cached[0] == key[0]:
                return cached
        return None

    def _take(self, key: Key) -> None:
        self.used_bytes += self.b.nbytes(key)
        self.layer_bytes[key[0]] += self.b.nbytes(key)

    def routed(self, keys: list[Key]) -> None:
        for key in keys:
            if key in self.cache:
                self.cache.move_to_end(key)

    def admit(self, key: Key, protected: set[Key]) -> bool:
        while not self._fits(key):
            victim = self._victim(key, protected)
            if victim is None:
                return False
            self._release(victim)
        self._take(key)
        return True

    def _release(self, key: Key) -> None:
        self.b.free(key)
        self.used_bytes -= self.b.nbytes(key)
        self.layer_bytes[key[0]] -= self.b.nbytes(key)
        self.ahead.discard(key)
        self.cache.pop(key, None)

    def used(self, key: Key) -> None:
        if key not in self.hot:
            self.ahead.discard(key)
            self.cache[key] = None
            self.cache.move_to_end(key)

    def background(
        self, token: int, layer: int, deadline: float, protected: set[Key]
    ) -> None:
        if not self.speculate or token == 0:
            return
        previous = [(layer, e) for e in self.chosen[token - 1][layer]]
        predicted = sorted(
            (key for key in previous if key not in self.hot and key not in self.b.held),
            key=lambda key: (-self.frequencies[layer][key[1]], key[1]),
        )
        for key in predicted:
            if not self.b.lands_by(key, deadline):
                return
            while not self._fits(key):  # room from other layers' oldest
                victim = next(
                    (k for k in self.cache if k[0] != layer and k not in protected),
                    None,
                )
                if victim is None:
                    return
                self._release(victim)
            self._take(key)
            self.b.fetch(key, token)
            self.ahead.add(key)

    def layer_done(self, layer: int, keys: list[Key]) -> None:
        for key in sorted(self.ahead):
            if key[0] == layer and key not in keys:
                self._release(key)  # a wrong guess: its buffer back


@dataclass(frozen=True)
class OurPlan:
    """How `ours` holds experts: a hot set, and where the fetched ones go."""

    hot: list[list[int]]
    """Per layer, the resident experts."""
    speculate: bool = False
    """Fetch the previous token's experts ahead of the router (one shared cache only)."""
    rooms: tuple[int, ...] | None = None
    """Per layer, the room for its fetched experts; None: one cache for all layers."""

    def kept(self) -> set[Key]:
        return {(layer, e) for layer, row in enumerate(self.hot) for e in row}


def _run_layer(
    b: TokenSchedule,
    policy: CachePolicy,
    token: int,
    layer: int,
    experts: tuple[int, ...],
) -> int:
    """One MoE layer of one token; returns its hits."""
    spec = b.step.layers[layer]
    loc = f"token {token}, layer {layer}"
    b.compute("attention and router", loc, spec.pre_s, [])
    keys = [(layer, e) for e in experts]
    hits = [key for key in keys if key in b.held]
    misses = [key for key in keys if key not in b.held]
    policy.routed(keys)
    protected = set(keys)
    waiting = list(misses)

    def issue() -> None:
        while waiting and policy.admit(waiting[0], protected):
            b.fetch(waiting.pop(0), token)

    issue()
    if not waiting:
        ahead = _next_router(b, hits + misses, len(hits), token, layer)
        if ahead is not None:
            policy.background(*ahead, protected)
    for n, key in enumerate(hits + misses):
        if key not in b.held:
            raise ExpertError(f"{loc}: no room to fetch expert {key[1]}")
        b.wait(key)
        time_s = spec.expert_s[key[1]] + _launch_s(spec.launch_s, n, len(hits))
        b.compute(f"expert {key[1]}", loc, time_s, [b.device[key]])
        protected.discard(key)
        policy.used(key)
        issue()
    policy.layer_done(layer, keys)
    b.compute("shared experts and combine", loc, spec.post_s, [])
    return len(hits)


def _next_router(
    b: TokenSchedule, keys: list[Key], hits: int, token: int, layer: int
) -> tuple[int, int, float] | None:
    """
    The next MoE layer (token, layer) and when its router ends on the
    estimated timeline, this layer's fetches queued (`keys`: its `hits`
    held experts, then the fetched ones); None after the last.
    """
    layers = b.step.layers
    spec = layers[layer]
    at = b.now
    for n, key in enumerate(keys):  # held first, then fetched: the compute order
        at = max(at, b.ready_at(key)) + spec.expert_s[key[1]]
        at += _launch_s(spec.launch_s, n, hits)
    at += layers[layer].post_s
    if layer + 1 < len(layers):
        return token, layer + 1, at + layers[layer + 1].pre_s
    if token + 1 >= b.tokens:
        return None
    return token + 1, 0, at + b.step.other_s + layers[0].pre_s


def _launch_s(launch_s: float, n: int, hits: int) -> float:
    """
    The launch overhead the `n`-th computed expert of a layer pays: the
    `hits` experts held at the router run as one grouped launch (the first
    pays it), each fetched one in its own launch once its weights land.
    """
    return launch_s if n == 0 or n >= hits else 0.0


def run_tokens(
    b: TokenSchedule, policy: CachePolicy, chosen: Chosen, warmup: int
) -> tuple[int, int]:
    """Every token's steps; the hits of the measured tokens and their first compute."""
    hits = 0
    first_compute = 0
    for token, per_layer in enumerate(chosen):
        b.token = token
        if token == warmup:
            first_compute = b.computes
        b.compute("dense layers and head", f"token {token}", b.step.other_s, [])
        for layer, experts in enumerate(per_layer):
            found = _run_layer(b, policy, token, layer, experts)
            hits += found if token >= warmup else 0
    return hits, first_compute


def every_expert(step: MoEStep) -> list[Key]:
    return [
        (layer, e) for layer in range(len(step.layers)) for e in range(step.experts)
    ]
