"""
Routed mixture-of-experts decode with expert caches: many decode calls of
one MoE step, each token's router choosing `top_k` experts per layer
(`hyperoffload.model.routing`), with an HBM budget for expert weights smaller
than all of them. One schedule covers all the tokens; the simulator
(`hyperoffload.sim.simulator`) runs it.

Each token runs `other_s` (dense layers, embedding, head), then each MoE
layer: its pre-router compute (attention, norms, the router), the chosen
experts' computes (their shares of the grouped expert kernels: those held
at the router in one grouped launch, each fetched one in its own launch
once its weights land), then its post compute (shared experts, the
combine). Every expert has a copy
in the offload tier (`remote` where present); a fetch is a transfer on that
link (serial, first come first served), allocates its expert's HBM when it
is issued and holds it until evicted (freed). A free of a fetch not yet
waited for waits for it first (the schedule and the caches:
`hyperoffload.policies.expert_caches`).

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

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from hyperoffload.model.hardware import Hardware
from hyperoffload.model.moe import ExpertError, MoEStep
from hyperoffload.model.routing import Chosen, Routing
from hyperoffload.planning.hot_set import choose_hot_set
from hyperoffload.policies.expert_caches import (
    ActivationAwareCache,
    CachePolicy,
    HotSetCache,
    LeastRecentlyUsedCache,
    OnDemandCache,
    OurPlan,
    TokenSchedule,
    every_expert,
    run_tokens,
)
from hyperoffload.sim.simulator import SimResult, simulate
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
        builder = TokenSchedule(step, hardware, set(every_expert(step)), len(chosen))
        return _measure(policy, builder, CachePolicy(builder), chosen, warmup, None)
    budget = _check_budget(step, policy, budget_bytes)
    if policy != OURS:
        builder = TokenSchedule(step, hardware, set(), len(chosen))
        rules = _cache(policy, builder, budget)
        return _measure(policy, builder, rules, chosen, warmup, budget)
    profile = profile or routing
    frequencies = profile.frequencies(layers, experts, top_k, seed)
    plan = _best_plan(
        step, profile, frequencies, hardware, budget, seed, warmup, tokens, hot_set
    )
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
    frequencies = profile.frequencies(len(step.layers), step.experts, step.top_k, seed)
    return _best_plan(
        step,
        profile,
        frequencies,
        hardware,
        budget_bytes,
        seed,
        warmup,
        tokens,
        hot_set,
    )


def _best_plan(
    step: MoEStep,
    profile: Routing,
    frequencies: list[list[float]],
    hardware: Hardware,
    budget_bytes: int,
    seed: int,
    warmup: int,
    tokens: int,
    hot_set: Sequence[Collection[int]] | None,
) -> OurPlan:
    """`plan_ours` with the profile's frequencies given."""
    layers, experts, top_k = len(step.layers), step.experts, step.top_k
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
    builder = TokenSchedule(step, hardware, plan.kept(), len(chosen))
    rules = HotSetCache(builder, budget, plan, chosen, frequencies)
    result = _measure(OURS, builder, rules, chosen, warmup, budget)
    result.plan = plan
    return result


def _measure(
    policy: str,
    builder: TokenSchedule,
    rules: CachePolicy,
    chosen: Chosen,
    warmup: int,
    budget: int | None,
) -> ExpertResult:
    """Run every token under `rules`, simulate, and measure those after `warmup`."""
    hits, first_compute = run_tokens(builder, rules, chosen, warmup)
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


def _cache(policy: str, builder: TokenSchedule, budget: int) -> CachePolicy:
    """The peers' caches, which start empty."""
    if policy == ON_DEMAND:
        return OnDemandCache(builder, budget)
    if policy == LRU:
        return LeastRecentlyUsedCache(builder, budget)
    return ActivationAwareCache(builder, budget)


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
