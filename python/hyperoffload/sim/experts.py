"""
Routed mixture-of-experts decode with expert caches: many decode calls of
one MoE step, each token's router choosing `top_k` experts per layer
(`hyperoffload.sim.routing`), with an HBM budget for expert weights smaller
than all of them. One schedule covers all the tokens; the simulator
(`hyperoffload.sim.simulator`) runs it.

Each token runs `other_s` (dense layers, embedding, head), then each MoE
layer: its pre-router compute (attention, norms, the router), the chosen
experts' computes, each waiting for its weights if they are being fetched,
then its post compute (shared experts, the combine). Every expert has a copy
in the offload tier (`remote` where present); a fetch is a transfer on that
link (serial, first come first served), allocates its expert's HBM when it
is issued and holds it until evicted (freed). A free of a fetch not yet
waited for waits for it first. A layer computes the experts it holds first,
then the fetched ones in fetch order (every policy alike). Where a layer
cannot hold all its misses at once, the next miss is fetched as soon as an
expert computed can make room.

Policies, each modelled from its source (simplifications named):

- `all-resident`: every expert in HBM from the start, the budget ignored
  (the reference);
- `on-demand`: every expert in the pool; each routed expert fetched after
  the router and freed after its compute (no cache: the naive offloading
  the caches improve on);
- `lru`: Mixtral-offloading's expert cache (Eliseev and Mazur, arXiv
  2312.17238; github.com/dvmazur/mixtral-offloading): each layer caches its
  most recently used experts, the budget split evenly over the layers, a miss
  fetched after the router and the least recently used expert evicted (the
  report's speculative loading from the next layer's gate, not in the
  repository, is not modelled);
- `moe-infinity`: MoE-Infinity's activation-aware cache (Xue et al., arXiv
  2401.14361; github.com/EfficientMoE/MoE-Infinity), simplified: one cache
  over all the layers that evicts the expert chosen the fewest times so far
  (its request-level activation matrix reduced to counts over the tokens
  seen, ties to the least recently used), and, after each layer's misses
  are queued, prefetches the next layer's most chosen experts not held (at
  most `top_k`, each only if it lands before that layer's router:
  MoE-Infinity serves on-demand fetches first; a prefetch only evicts an
  expert chosen fewer times);
- `ours`: a resident hot set chosen from the routing profile's frequencies
  (`choose_hot_set`: greedy by expected hits per byte, whole experts), and
  a cache of the experts it fetched (the least recently chosen evicted
  first: a miss is fetched after the router and kept) in the rest of the
  budget; `plan_ours` weighs the ways to split the budget (`our_candidates`:
  room for one fetch or for a layer's `top_k`; one cache for all layers, or
  the budget split evenly over the layers, each share its hot experts and
  its cache; speculation or not) by running each on a sample of the
  profile independent of the measured one, and keeps the fastest.
  Speculation: the previous token's experts of the next layer that are
  neither hot nor held are fetched ahead of its router, into free room or
  the room of other layers' least recently chosen experts (the idea of
  Pre-gated MoE, Hwang et al., ISCA 2024, its pre-gate replaced by the
  previous token's choice), each only if it lands before that router on
  the estimated timeline, so it never delays a demand fetch; an unused one
  still counts in the bytes moved and its buffer is freed at the end of
  its layer.

Budgets count expert weights only (the rest of the model stays in HBM, the
subject here is the experts); `peak_hbm_bytes` is their peak. A hit is a
routed expert already in HBM or on its way when the router chooses it.
Each transfer is counted for the token whose layer it serves.

```python
step = MoEStep.uniform(layers=2, experts=8, top_k=2, expert_bytes=2**20,
                       expert_s=1e-4, pre_s=5e-4, post_s=1e-4)
result = simulate_experts(step, parse_routing("zipf:1.0"), tokens=32,
                          policy="ours", hardware=hw, budget_bytes=8 * 2**20)
result.expert_hit_rate, result.tokens_per_s
```
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hyperoffload.sim.hardware import Hardware, Link
from hyperoffload.sim.routing import Chosen, Routing
from hyperoffload.sim.schedule import (
    Buffer,
    Compute,
    Free,
    Schedule,
    Step,
    Transfer,
    Wait,
)
from hyperoffload.sim.simulator import SimResult, simulate
from hyperoffload.support.tiers import Tier
from hyperoffload.support.units import format_bytes, format_seconds

ALL_RESIDENT = "all-resident"
"""Every expert in HBM (the reference; the budget ignored)."""
ON_DEMAND = "on-demand"
"""No cache: each routed expert fetched after the router, freed after use."""
LRU = "lru"
"""Mixtral-offloading's per-layer LRU expert cache."""
MOE_INFINITY = "moe-infinity"
"""MoE-Infinity's activation-aware cache and next-layer prefetch (simplified)."""
OURS = "ours"
"""A hot set from the routing profile, an LRU cache of the rest, speculation into link slack."""

EXPERT_POLICIES = (OURS, ALL_RESIDENT, ON_DEMAND, LRU, MOE_INFINITY)
"""The policies a routed-expert run takes."""

Key = tuple[int, int]
"""(MoE layer, expert)."""


class ExpertError(ValueError):
    """A routed-expert run that cannot run (a budget below one expert per layer, ...)."""


@dataclass(frozen=True)
class MoELayer:
    """One MoE layer of a decode step, for one token."""

    pre_s: float
    """Compute before the router: attention, norms, the router."""
    post_s: float
    """Compute after the routed experts: shared experts, the combine."""
    expert_bytes: tuple[int, ...]
    """Each routed expert's weight bytes."""
    expert_s: tuple[float, ...]
    """Each routed expert's compute time for one token."""


@dataclass(frozen=True)
class MoEStep:
    """
    A MoE decode step: its MoE layers and how many experts each token routes to.

    >>> step = MoEStep.uniform(2, 4, 1, expert_bytes=1000, expert_s=1e-5)
    >>> step.experts, step.expert_weight_bytes()
    (4, 8000)
    """

    layers: tuple[MoELayer, ...]
    top_k: int
    other_s: float = 0.0
    """Compute per token outside the MoE layers (dense layers, embedding, head), first."""

    def __post_init__(self) -> None:
        if not self.layers:
            raise ExpertError("a MoE step needs at least one MoE layer")
        for index, layer in enumerate(self.layers):
            _check_layer(layer, index, self.experts, self.top_k)
        if self.other_s < 0:
            raise ExpertError(f"other_s cannot be negative ({self.other_s})")

    @property
    def experts(self) -> int:
        """Routed experts per layer (the same in every layer)."""
        return len(self.layers[0].expert_bytes)

    def expert_weight_bytes(self) -> int:
        """All routed experts' weights, over all the layers."""
        return sum(sum(layer.expert_bytes) for layer in self.layers)

    def compute_per_token_s(self, frequencies: Sequence[Sequence[float]]) -> float:
        """The expected compute time of a token when experts are chosen with `frequencies`."""
        return self.other_s + sum(
            layer.pre_s
            + layer.post_s
            + sum(p * t for p, t in zip(chosen, layer.expert_s, strict=True))
            for layer, chosen in zip(self.layers, frequencies, strict=True)
        )

    @staticmethod
    def uniform(
        layers: int,
        experts: int,
        top_k: int,
        expert_bytes: int,
        expert_s: float,
        pre_s: float = 0.0,
        post_s: float = 0.0,
        other_s: float = 0.0,
    ) -> MoEStep:
        """A step whose layers are alike and whose experts are alike."""
        layer = MoELayer(
            pre_s, post_s, (expert_bytes,) * experts, (expert_s,) * experts
        )
        return MoEStep((layer,) * layers, top_k, other_s)

    @staticmethod
    def from_config(
        cfg: MoEConfig, hardware: Hardware, kv_len: int, dtype: str = "bf16"
    ) -> MoEStep:
        """
        The decode step (batch 1, `kv_len` cached positions) of a MoE model
        configuration (`hyperoffload.frontend.configs`), each kernel priced
        by `roofline_s`. An approximation: norms, activations, residuals and
        the combine are taken as fused into their neighbours; a layer's
        attention is its QKV projection, the attention over the cache and
        the output projection; the router is one GEMV; each expert (SwiGLU)
        is a gate-and-up GEMV and a down GEMV; shared experts run after the
        routed ones; the dense layers and the LM head form `other_s`.

        ```python
        MoEStep.from_config(CONFIGS["deepseek-v3"], load_hardware("ascend-910c"), 4096)
        ```
        """
        if cfg.n_experts < 1 or cfg.top_k < 1:
            raise ExpertError("the configuration has no routed experts (not a MoE)")
        width = _element_bytes(dtype)
        hidden = cfg.hidden

        def gemv(rows: int, cols: int) -> float:
            return roofline_s(hardware, 2.0 * rows * cols, rows * cols * width, dtype)

        def ffn(inner: int) -> tuple[int, float]:
            """A SwiGLU FFN's weight bytes and its time for one token."""
            return 3 * hidden * inner * width, gemv(hidden, 2 * inner) + gemv(
                inner, hidden
            )

        heads = cfg.n_heads * cfg.head_dim
        cache = 2 * cfg.n_kv_heads * cfg.head_dim * kv_len * width
        attention = (
            gemv(hidden, heads + 2 * cfg.n_kv_heads * cfg.head_dim)
            + roofline_s(
                hardware,
                4.0 * heads * kv_len,
                cache,
                dtype,
                hardware.attention_efficiency,
            )
            + gemv(heads, hidden)
        )
        expert_bytes, expert_s = ffn(cfg.expert_ffn)
        shared_s = cfg.n_shared_experts * ffn(cfg.expert_ffn)[1]
        moe_layers = cfg.n_layers - cfg.n_dense_layers
        layer = MoELayer(
            attention + gemv(hidden, cfg.n_experts),
            shared_s,
            (expert_bytes,) * cfg.n_experts,
            (expert_s,) * cfg.n_experts,
        )
        other = cfg.n_dense_layers * (attention + ffn(cfg.ffn_hidden)[1]) + gemv(
            hidden, cfg.vocab_size
        )
        return MoEStep((layer,) * moe_layers, cfg.top_k, other)


class MoEConfig(Protocol):
    """What `MoEStep.from_config` reads of a model configuration."""

    @property
    def vocab_size(self) -> int: ...
    @property
    def hidden(self) -> int: ...
    @property
    def n_layers(self) -> int: ...
    @property
    def n_heads(self) -> int: ...
    @property
    def n_kv_heads(self) -> int: ...
    @property
    def head_dim(self) -> int: ...
    @property
    def ffn_hidden(self) -> int: ...
    @property
    def n_experts(self) -> int: ...
    @property
    def top_k(self) -> int: ...
    @property
    def n_shared_experts(self) -> int: ...
    @property
    def expert_ffn(self) -> int: ...
    @property
    def n_dense_layers(self) -> int: ...


_ELEMENT_BYTES = {"f32": 4, "bf16": 2, "f16": 2, "f8": 1, "i8": 1}


def _element_bytes(dtype: str) -> int:
    if dtype not in _ELEMENT_BYTES:
        raise ExpertError(
            f"unknown dtype '{dtype}' (expected one of {', '.join(_ELEMENT_BYTES)})"
        )
    return _ELEMENT_BYTES[dtype]


def roofline_s(
    hardware: Hardware,
    flops: float,
    nbytes: int,
    dtype: str,
    efficiency: float | None = None,
) -> float:
    """
    One kernel's time: `max(flops / (peak(dtype) * efficiency), bytes / (HBM
    bandwidth * memory_efficiency)) + op_overhead` (`efficiency` defaults to
    `compute_efficiency`), the formula `hyperoffload.analysis.cost` prices
    kernels with. An approximation: efficiencies do not depend on shape.
    """
    rate = efficiency if efficiency is not None else hardware.compute_efficiency
    compute = flops / (hardware.peak(dtype) * rate)
    memory = nbytes / (hardware.hbm_bandwidth * hardware.memory_efficiency)
    return max(compute, memory) + hardware.op_overhead_s


def _check_layer(layer: MoELayer, index: int, experts: int, top_k: int) -> None:
    where = f"MoE layer {index}"
    if len(layer.expert_bytes) != experts or len(layer.expert_s) != experts:
        raise ExpertError(
            f"{where}: every layer needs {experts} expert sizes and times "
            f"(it has {len(layer.expert_bytes)} and {len(layer.expert_s)})"
        )
    if not 1 <= top_k <= experts:
        raise ExpertError(f"{where}: top_k {top_k} must be in [1, {experts}]")
    if any(b <= 0 for b in layer.expert_bytes):
        raise ExpertError(f"{where}: every expert needs a positive size")
    if min(layer.pre_s, layer.post_s, *layer.expert_s) < 0:
        raise ExpertError(f"{where}: compute times cannot be negative")


# ------------------------------------------------------------------- results


@dataclass
class ExpertResult:
    policy: str
    tokens: int
    run: SimResult
    hits: int
    """Routed experts of the measured tokens found in HBM (or on their way)."""
    routed: int
    """Routed experts of the measured tokens (tokens x layers x top_k)."""
    moved_bytes: int
    """Bytes of the fetches serving the measured tokens."""
    measured_from_s: float
    """When the first measured token starts (after the warm-up tokens)."""
    last_token_s: float
    """When the last token's compute ends."""
    measured_compute_s: float
    """Compute time of the measured tokens."""
    peak_hbm_bytes: int
    """The most expert bytes in HBM at once while the measured tokens run."""
    plan: OurPlan | None = None
    """`ours`: its hot set, speculation and caches."""

    @property
    def expert_hit_rate(self) -> float:
        return self.hits / self.routed if self.routed else 1.0

    @property
    def bytes_moved_per_token(self) -> float:
        return self.moved_bytes / self.tokens

    @property
    def exposed_transfer_s(self) -> float:
        """Per token: the time the compute stream waited for fetches."""
        elapsed = self.last_token_s - self.measured_from_s
        return max(0.0, elapsed - self.measured_compute_s) / self.tokens

    @property
    def tokens_per_s(self) -> float:
        """Tokens over the time from the first measured token to the last one out."""
        elapsed = self.last_token_s - self.measured_from_s
        return self.tokens / elapsed if elapsed > 0 else 0.0

    def report(self) -> dict[str, Any]:
        """The JSON fields of this run (`hyperoffload-sim --routing --json`)."""
        return {
            "policy": self.policy,
            "tokens": self.tokens,
            "expert_hit_rate": self.expert_hit_rate,
            "bytes_moved_per_token": self.bytes_moved_per_token,
            "exposed_transfer_s": self.exposed_transfer_s,
            "tokens_per_s": self.tokens_per_s,
            "peak_hbm_bytes": self.peak_hbm_bytes,
        }


# ------------------------------------------------------------------ schedule


class _Builder:
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


# ------------------------------------------------------------------ policies


class _Policy:
    """Where experts live between their uses; the default holds every expert."""

    def __init__(self, builder: _Builder):
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


class _OnDemand(_Policy):
    """`on-demand`: fetch buffers only, each freed after its compute."""

    def __init__(self, builder: _Builder, budget: int):
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


class _LeastRecentlyUsed(_Policy):
    """`lru`: one LRU cache per layer, the budget split evenly."""

    def __init__(self, builder: _Builder, budget: int):
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


class _ActivationAware(_Policy):
    """`moe-infinity`: one cache evicting the least chosen, next-layer prefetch."""

    def __init__(self, builder: _Builder, budget: int):
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


class _HotSet(_Policy):
    """
    `ours`: a resident hot set; the rest of the budget holds the experts
    fetched, least recently used evicted first (a fetch buffer that keeps
    what it fetched); speculation into free room and link slack.
    """

    def __init__(
        self,
        builder: _Builder,
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


# ------------------------------------------------------------------ the run


def choose_hot_set(
    step: MoEStep,
    frequencies: Sequence[Sequence[float]],
    budget_bytes: int,
) -> list[list[int]]:
    """
    The experts each layer keeps resident: greedily by expected hits per
    byte (`frequency / bytes`) across the layers, ties to the lower layer
    and expert, each that fits in `budget_bytes` (whole experts; an expert
    never chosen is never kept).

    >>> step = MoEStep.uniform(2, 3, 1, expert_bytes=10, expert_s=0.0)
    >>> choose_hot_set(step, [[0.5, 0.2, 0.3], [0.1, 0.6, 0.35]], 30)
    [[0], [1, 2]]
    """
    ranked = sorted(
        (
            (-p / spec.expert_bytes[e], layer, e)
            for layer, (spec, row) in enumerate(
                zip(step.layers, frequencies, strict=True)
            )
            for e, p in enumerate(row)
            if p > 0
        ),
    )
    hot: list[list[int]] = [[] for _ in step.layers]
    left = budget_bytes
    for _, layer, expert in ranked:
        nbytes = step.layers[layer].expert_bytes[expert]
        if nbytes <= left:
            hot[layer].append(expert)
            left -= nbytes
    return [sorted(experts) for experts in hot]


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


def _one_layer(step: MoEStep, layer: int) -> MoEStep:
    return MoEStep((step.layers[layer],), step.top_k, step.other_s)


def our_candidates(
    step: MoEStep,
    frequencies: list[list[float]],
    budget: int,
    given: list[list[int]] | None,
) -> list[OurPlan]:
    """
    The plans `ours` weighs: fetch buffers for one miss or for a layer's
    `top_k`, each with and without speculation (which takes `top_k` more),
    and the budget split evenly over the layers, each share its layer's hot
    experts and an LRU cache of its fetched ones (Mixtral-offloading's cache
    with the popular experts pinned). A given hot set is kept in
    each. A budget that holds every expert keeps them all.
    """
    largest = max(max(spec.expert_bytes) for spec in step.layers)
    layers, top_k = len(step.layers), step.top_k
    if given is None and step.expert_weight_bytes() <= budget:
        return [OurPlan([list(range(step.experts)) for _ in step.layers])]

    def hot(reserve: int) -> list[list[int]]:
        return (
            given
            if given is not None
            else choose_hot_set(step, frequencies, budget - reserve)
        )

    plans: list[OurPlan] = []
    for buffers in sorted({1, top_k}):
        plans.append(OurPlan(hot(buffers * largest)))
        plans.append(OurPlan(hot((buffers + top_k) * largest), speculate=True))
    share = budget // layers  # each layer its share: its hot experts, then its cache
    for buffers in sorted({1, top_k}):
        per_layer = given or [
            choose_hot_set(_one_layer(step, n), [row], share - buffers * largest)[0]
            for n, row in enumerate(frequencies)
        ]
        rooms = tuple(
            share - sum(step.layers[n].expert_bytes[e] for e in row)
            for n, row in enumerate(per_layer)
        )
        if min(rooms) >= largest:
            plans.append(OurPlan(per_layer, rooms=rooms))
    unique: list[OurPlan] = []
    for plan in plans:
        if plan not in unique:
            unique.append(plan)
    return unique


def _checked_hot_set(
    step: MoEStep, given: Sequence[Collection[int]], budget: int
) -> list[list[int]]:
    if len(given) != len(step.layers):
        raise ExpertError(
            f"the hot set names {len(given)} layers; the step has {len(step.layers)}"
        )
    hot = [sorted(set(experts)) for experts in given]
    for layer, experts in enumerate(hot):
        if any(not 0 <= e < step.experts for e in experts):
            raise ExpertError(
                f"hot set of layer {layer}: {experts} is not in [0, {step.experts})"
            )
    kept = sum(
        step.layers[layer].expert_bytes[e] for layer, row in enumerate(hot) for e in row
    )
    largest = max(max(spec.expert_bytes) for spec in step.layers)
    every = kept == step.expert_weight_bytes()  # nothing left to fetch
    if kept + (0 if every else largest) > budget:
        raise ExpertError(
            f"the hot set takes {format_bytes(kept)} of the {format_bytes(budget)} "
            f"budget, leaving no fetch buffer for an expert of {format_bytes(largest)}"
        )
    return hot


def _check_budget(step: MoEStep, policy: str, budget: int | None) -> int:
    """The budget, which must hold an expert per layer (each layer's largest)."""
    if budget is None:
        raise ExpertError(f"policy '{policy}' needs an expert budget")
    least = sum(max(spec.expert_bytes) for spec in step.layers)
    if budget < least:
        raise ExpertError(
            f"an expert budget of {format_bytes(budget)} is below one expert per "
            f"layer ({len(step.layers)} layers need at least {format_bytes(least)})"
        )
    if policy == LRU:
        share = budget // len(step.layers)
        for layer, spec in enumerate(step.layers):
            if max(spec.expert_bytes) > share:
                raise ExpertError(
                    f"lru splits the budget evenly: {format_bytes(share)} per layer "
                    f"holds no expert of layer {layer} ({format_bytes(max(spec.expert_bytes))})"
                )
    return budget


def _run_layer(
    b: _Builder, policy: _Policy, token: int, layer: int, experts: tuple[int, ...]
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
        ahead = _next_router(b, hits + misses, token, layer)
        if ahead is not None:
            policy.background(*ahead, protected)
    for key in hits + misses:
        if key not in b.held:
            raise ExpertError(f"{loc}: no room to fetch expert {key[1]}")
        b.wait(key)
        b.compute(f"expert {key[1]}", loc, spec.expert_s[key[1]], [b.device[key]])
        protected.discard(key)
        policy.used(key)
        issue()
    policy.layer_done(layer, keys)
    b.compute("shared experts and combine", loc, spec.post_s, [])
    return len(hits)


def _next_router(
    b: _Builder, keys: list[Key], token: int, layer: int
) -> tuple[int, int, float] | None:
    """
    The next MoE layer (token, layer) and when its router ends on the
    estimated timeline, this layer's fetches queued; None after the last.
    """
    layers = b.step.layers
    at = b.now
    for key in keys:  # held first, then fetched: the compute order
        at = max(at, b.ready_at(key)) + layers[layer].expert_s[key[1]]
    at += layers[layer].post_s
    if layer + 1 < len(layers):
        return token, layer + 1, at + layers[layer + 1].pre_s
    if token + 1 >= b.tokens:
        return None
    return token + 1, 0, at + b.step.other_s + layers[0].pre_s


def simulate_experts(
    step: MoEStep,
    routing: Routing,
    tokens: int,
    policy: str,
    hardware: Hardware,
    budget_bytes: int | None,
    seed: int = 0,
    warmup: int = 0,
    hot_set: Sequence[Collection[int]] | None = None,
    profile: Routing | None = None,
) -> ExpertResult:
    """
    Run `warmup` then `tokens` decode tokens of `step`, experts routed by
    `routing` (sampled with `seed`), under `policy` with `budget_bytes` of
    HBM for expert weights, and measure the last `tokens`. `ours` plans from
    `profile` (default: `routing`, same seed; `plan_ours`), keeping
    `hot_set` resident where given.
    """
    if tokens < 1:
        raise ExpertError(f"a routed-expert run needs at least one token, not {tokens}")
    if warmup < 0:
        raise ExpertError(f"warm-up tokens cannot be negative ({warmup})")
    if policy not in EXPERT_POLICIES:
        raise ExpertError(
            f"unknown policy '{policy}' for routed experts "
            f"(choose from {', '.join(EXPERT_POLICIES)})"
        )
    layers, experts, top_k = len(step.layers), step.experts, step.top_k
    chosen = routing.sample(layers, experts, top_k, warmup + tokens, seed)
    if policy == ALL_RESIDENT:
        builder = _Builder(step, hardware, set(_every_expert(step)), len(chosen))
        return _measure(policy, builder, _Policy(builder), chosen, warmup, None)
    budget = _check_budget(step, policy, budget_bytes)
    if policy != OURS:
        builder = _Builder(step, hardware, set(), len(chosen))
        rules = _cache(policy, builder, budget)
        return _measure(policy, builder, rules, chosen, warmup, budget)
    plan = plan_ours(
        step, profile or routing, hardware, budget, seed, warmup, tokens, hot_set
    )
    frequencies = (profile or routing).frequencies(layers, experts, top_k, seed)
    return _run_ours(step, plan, chosen, warmup, hardware, budget, frequencies)


def plan_ours(
    step: MoEStep,
    profile: Routing,
    hardware: Hardware,
    budget_bytes: int,
    seed: int = 0,
    warmup: int = 0,
    tokens: int = 32,
    hot_set: Sequence[Collection[int]] | None = None,
) -> OurPlan:
    """
    Our plan for `budget_bytes`: each of `our_candidates` (hot sets from the
    profile's frequencies) run on a sample of the profile independent of
    the one a run is measured on (the same popularity, another stream of
    draws: `Routing.sample`; a trace: the trace itself, an in-sample plan),
    `warmup` then `tokens` tokens, and the fastest kept (ties: the first).
    """
    layers, experts, top_k = len(step.layers), step.experts, step.top_k
    frequencies = profile.frequencies(layers, experts, top_k, seed)
    given = None if hot_set is None else _checked_hot_set(step, hot_set, budget_bytes)
    candidates = our_candidates(step, frequencies, budget_bytes, given)
    if len(candidates) == 1:
        return candidates[0]
    if profile.trace is None:
        sample = profile.sample(layers, experts, top_k, warmup + tokens, seed, stream=2)
    else:
        sample = profile.sample(layers, experts, top_k, len(profile.trace.tokens))
        warmup = min(warmup, len(sample) // 2)
    speeds = [
        _run_ours(
            step, plan, sample, warmup, hardware, budget_bytes, frequencies
        ).tokens_per_s
        for plan in candidates
    ]
    return candidates[speeds.index(max(speeds))]


def _run_ours(
    step: MoEStep,
    plan: OurPlan,
    chosen: Chosen,
    warmup: int,
    hardware: Hardware,
    budget: int,
    frequencies: list[list[float]],
) -> ExpertResult:
    builder = _Builder(step, hardware, plan.kept(), len(chosen))
    rules = _HotSet(builder, budget, plan, chosen, frequencies)
    result = _measure(OURS, builder, rules, chosen, warmup, budget)
    result.plan = plan
    return result


def _measure(
    policy: str,
    builder: _Builder,
    rules: _Policy,
    chosen: Chosen,
    warmup: int,
    budget: int | None,
) -> ExpertResult:
    """Run every token under `rules`, simulate, and measure those after `warmup`."""
    hits, first_compute = _run_tokens(builder, rules, chosen, warmup)
    run = simulate(builder.schedule(), builder.hardware, budget)
    computes = [i for i in run.intervals if i.track == "compute"]
    measured_from = computes[first_compute].start
    tokens = len(chosen) - warmup
    return ExpertResult(
        policy=policy,
        tokens=tokens,
        run=run,
        hits=hits,
        routed=tokens * len(builder.step.layers) * builder.step.top_k,
        moved_bytes=sum(n for t, n in builder.moved.items() if t >= warmup),
        measured_from_s=measured_from,
        last_token_s=computes[-1].end,
        measured_compute_s=sum(s for t, s in builder.compute_s.items() if t >= warmup),
        peak_hbm_bytes=_peak_from(run, measured_from),
    )


def _every_expert(step: MoEStep) -> list[Key]:
    return [
        (layer, e) for layer in range(len(step.layers)) for e in range(step.experts)
    ]


def _cache(policy: str, builder: _Builder, budget: int) -> _Policy:
    """The peers' caches, which start empty."""
    if policy == ON_DEMAND:
        return _OnDemand(builder, budget)
    if policy == LRU:
        return _LeastRecentlyUsed(builder, budget)
    return _ActivationAware(builder, budget)


def _run_tokens(
    b: _Builder, policy: _Policy, chosen: Chosen, warmup: int
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


def _peak_from(run: SimResult, start: float) -> int:
    """The HBM peak from `start` on (what was held then included)."""
    level = peak = 0
    for time, occupancy in run.memory:
        if time <= start:
            level = occupancy
        else:
            peak = max(peak, occupancy)
    return max(level, peak)


def format_expert_table(reports: list[dict[str, Any]]) -> str:
    """
    One line per policy (`ExpertResult.report()` objects):

    ```
    policy     tokens/s  hit rate  moved/token  exposed/token  peak HBM
    ours       4.1       0.812     246.53 MB    233.140 ms     653.00 GB
    ```
    """
    header = (
        "policy",
        "tokens/s",
        "hit rate",
        "moved/token",
        "exposed/token",
        "peak HBM",
    )
    rows = [header] + [
        (
            r["policy"],
            f"{r['tokens_per_s']:.1f}",
            f"{r['expert_hit_rate']:.3f}",
            format_bytes(round(r["bytes_moved_per_token"])),
            format_seconds(r["exposed_transfer_s"]),
            format_bytes(r["peak_hbm_bytes"]),
        )
        for r in reports
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
