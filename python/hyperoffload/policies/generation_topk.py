"""
A generation of top-k decode steps (`--attention topk`) replayed over the
selections a model made: which blocks each call reads, where they are, what
the link carries, and what the step waits for.

Each call reads, per layer, its fixed blocks (sinks and recent positions,
always resident: the tail block is where new entries land) and the `topk`
blocks it selects. The selections come from a recorded ranking
(`bench/topk/selections.json`, written by `bench/topk_accuracy.py` from the
trained model of `hyperoffload.benchmark.tiny_lm`): for each call and layer,
the candidate blocks by decreasing bound; the selection is the first `topk`.
A ranking recorded over another number of candidates is mapped onto this
cache's candidates in proportion (`map_ranking`).

Policies, per layer, over the same calls:

- `none`: every block resident (the reference; the step's compute only);
- `plan` (ours, the seeds' heat table): a resident set of `hot` blocks
  beside the fixed ones. A selected block found there is a hit; one that
  is not is fetched on demand (the step waits: exposed time) and joins the
  set. While the call computes, the blocks this call's ranking puts next
  (its first `hot` candidates, the selection included) are fetched ahead,
  as many as the link carries in the call's compute, each replacing the
  coldest block of the set (heat: an exponentially decayed count of
  selections, `DECAY`); completed blocks are written back behind compute;
- `on-demand`: a runtime cache of `hot` blocks, least recently used evicted,
  nothing fetched ahead (a reactive runtime: vLLM RFC #48203's bounded
  buffer without a predictor).

With `compress`, blocks cross the link in the compressed form of
`hyperoffload.support.quantize` (and are decompressed on the device; the
codec's time is not modelled here).

```python
step = TopkStep(compute_s=0.0171, layers=32, block_bytes=64 << 20, blocks=31,
                fixed=3, topk=4, entry_bytes=512 << 10, block=4096,
                other_hbm_bytes=13_476_839_424)
result = replay(step, rankings, tokens=64, policy="plan", hot=8, hardware=hw)
result.hit_rate, result.tokens_per_s, result.kv_hbm_bytes
```
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hyperoffload.model.hardware import Hardware
from hyperoffload.model.topk_step import TopkStep
from hyperoffload.support.tiers import Tier

TopkPolicy = Literal["none", "plan", "on-demand"]
TOPK_POLICIES: tuple[TopkPolicy, ...] = ("none", "plan", "on-demand")
DECAY = 0.8
"""Per call, the factor on a block's heat (plus 1 when selected)."""

Ranking = Sequence[Sequence[Sequence[int]]]
"""calls -> layers -> candidate blocks, best first."""


@dataclass
class TopkResult:
    """One policy's replay."""

    policy: str
    tokens: int
    hot: int
    selected: int
    hits: int
    on_demand: int
    ahead: int
    exposed_s: float
    compute_s: float
    kv_hbm_bytes: int
    hbm_bytes: int
    bytes_to_device: int
    bytes_to_remote: int

    @property
    def hit_rate(self) -> float:
        return self.hits / self.selected if self.selected else 1.0

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / (self.compute_s + self.exposed_s)

    @property
    def bytes_per_token(self) -> float:
        return (self.bytes_to_device + self.bytes_to_remote) / self.tokens

    def report(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "tokens": self.tokens,
            "hot_blocks": self.hot,
            "hit_rate": self.hit_rate,
            "on_demand_per_token": self.on_demand / self.tokens,
            "ahead_per_token": self.ahead / self.tokens,
            "exposed_s": self.exposed_s,
            "tokens_per_s": self.tokens_per_s,
            "kv_hbm_bytes": self.kv_hbm_bytes,
            "hbm_bytes": self.hbm_bytes,
            "bytes_per_token": self.bytes_per_token,
        }


def map_ranking(
    ranking: Sequence[int], recorded: Sequence[int], candidates: Sequence[int]
) -> list[int]:
    """
    A ranking of the `recorded` candidate blocks mapped onto `candidates`
    in proportion (the i-th of n recorded to the (i·m // n)-th of m),
    duplicates dropped.
    """
    if not candidates or not recorded:
        return []
    place = {block: i for i, block in enumerate(recorded)}
    out: list[int] = []
    for block in ranking:
        index = place.get(block)
        if index is None:
            continue
        mapped = candidates[index * len(candidates) // len(recorded)]
        if mapped not in out:
            out.append(mapped)
    return out


def _moved_bytes(step: TopkStep, compressed: bool) -> int:
    if not compressed or not step.block_elements_per_row:
        return step.block_bytes
    # int8 values and an f16 scale per row, keys and values alike
    elements = step.block_bytes // 2  # f16 elements
    rows = elements // step.block_elements_per_row
    return elements + 2 * rows


def replay(
    step: TopkStep,
    rankings: Ranking,
    tokens: int,
    policy: str,
    hot: int,
    hardware: Hardware,
    compressed: bool = False,
    warmup: int = 0,
) -> TopkResult:
    """
    Replay `warmup` calls, then `tokens` measured ones (the rankings cycle
    if shorter), under `policy`; every policy starts with the candidate
    blocks in the pool (the fixed ones resident).
    """
    if policy not in TOPK_POLICIES:
        raise ValueError(
            f"unknown top-k generation policy {policy!r} "
            f"(choose from {', '.join(TOPK_POLICIES)})"
        )
    if tokens < 1 or not rankings:
        raise ValueError("a replay needs at least one token and one recorded call")
    link = hardware.links.get(Tier.REMOTE) or next(iter(hardware.links.values()))
    moved = _moved_bytes(step, compressed)
    fetch_s = link.transfer_time(moved, to_device=True)
    candidates = step.blocks - step.fixed
    hot = min(hot, candidates) if policy != "none" else candidates
    resident: list[dict[int, float]] = [{} for _ in range(step.layers)]
    last_use: list[dict[int, int]] = [{} for _ in range(step.layers)]
    heat: list[dict[int, float]] = [{} for _ in range(step.layers)]
    result = TopkResult(policy, tokens, hot, 0, 0, 0, 0, 0.0, 0.0, 0, 0, 0, 0)
    for call in range(warmup + tokens):
        if call == warmup:
            result = TopkResult(policy, tokens, hot, 0, 0, 0, 0, 0.0, 0.0, 0, 0, 0, 0)
        ranks = rankings[call % len(rankings)]
        misses = 0
        for layer in range(step.layers):
            ranking = list(ranks[layer % len(ranks)])
            chosen = ranking[: step.topk]
            result.selected += len(chosen)
            held = resident[layer]
            for block in chosen:
                last_use[layer][block] = call
                if policy == "none" or block in held:
                    result.hits += 1
                    continue
                misses += 1
                _admit(
                    held, block, hot, heat[layer], last_use[layer], policy, set(chosen)
                )
            scores = heat[layer]
            for block in list(scores):
                scores[block] *= DECAY
            for block in chosen:
                scores[block] = scores.get(block, 0.0) + 1.0
        result.on_demand += misses
        result.bytes_to_device += misses * moved
        exposed = misses * fetch_s
        # ahead: the next likely blocks, in ranking order, within the compute
        if policy == "plan":
            budget = step.compute_s
            for layer, block in _wanted(ranks, resident, hot, step.layers):
                if budget < fetch_s:
                    break
                keep = set(list(ranks[layer % len(ranks)])[: step.topk])
                if _admit(
                    resident[layer],
                    block,
                    hot,
                    heat[layer],
                    last_use[layer],
                    policy,
                    keep,
                ):
                    budget -= fetch_s
                    result.ahead += 1
                    result.bytes_to_device += moved
        # the new entries, written back behind compute (a block as it completes)
        back = link.transfer_time(step.entry_bytes, to_device=False)
        result.bytes_to_remote += step.entry_bytes
        exposed += max(0.0, back - step.compute_s)
        result.exposed_s += exposed
        result.compute_s += step.compute_s
    result.kv_hbm_bytes = step.layers * (step.fixed + hot) * step.block_bytes
    result.hbm_bytes = result.kv_hbm_bytes + step.other_hbm_bytes
    return result


def _wanted(
    ranks: Sequence[Sequence[int]],
    resident: list[dict[int, float]],
    hot: int,
    layers: int,
) -> Iterator[tuple[int, int]]:
    """The blocks to fetch ahead: by ranking depth, then layer, not resident."""
    for depth in range(hot):
        for layer in range(layers):
            ranking = ranks[layer % len(ranks)]
            if depth < len(ranking) and ranking[depth] not in resident[layer]:
                yield layer, ranking[depth]


def _admit(
    held: dict[int, float],
    block: int,
    hot: int,
    heat: dict[int, float],
    last_use: dict[int, int],
    policy: str,
    keep: set[int],
) -> bool:
    """Make `block` resident, evicting the coldest (plan) or least recently used."""
    if block in held:
        return False
    if len(held) >= hot:
        victims = [b for b in held if b not in keep]
        if not victims:
            return False
        if policy == "plan":
            victim = min(victims, key=lambda b: (heat.get(b, 0.0), last_use.get(b, -1)))
        else:
            victim = min(victims, key=lambda b: last_use.get(b, -1))
        if (
            policy == "plan"
            and heat.get(victim, 0.0) > heat.get(block, 0.0)
            and block not in keep
        ):
            return False  # a prediction colder than every resident block waits
        del held[victim]
    held[block] = 0.0
    return True


def least_hot(
    step: TopkStep,
    rankings: Ranking,
    tokens: int,
    hardware: Hardware,
    limit: float = 0.01,
    compressed: bool = False,
    policy: str = "plan",
    warmup: int = 0,
) -> TopkResult:
    """
    `policy` at the fewest hot blocks whose tokens/s is within `limit` of
    `none`'s, by bisection (assuming more hot blocks never slow it), or at
    every candidate if none is.
    """
    reference = replay(step, rankings, tokens, "none", 0, hardware, warmup=warmup)
    target = reference.tokens_per_s * (1 - limit)

    def run(hot: int) -> TopkResult:
        return replay(step, rankings, tokens, policy, hot, hardware, compressed, warmup)

    low, high = step.topk, step.blocks - step.fixed
    best = run(high)
    if best.tokens_per_s < target:
        return best
    while low < high:
        middle = (low + high) // 2
        result = run(middle)
        if result.tokens_per_s >= target:
            high, best = middle, result
        else:
            low = middle + 1
    return best if best.hot == high else run(high)


def format_topk_table(results: Sequence[TopkResult]) -> str:
    """One row per policy: the figures `hyperoffload-sim --generate` prints."""
    from hyperoffload.support.units import format_bytes, format_seconds

    header = (
        "policy      hot  hit rate  on demand/token  exposed     tokens/s  "
        "KV in HBM   bytes/token"
    )
    lines = [header]
    for r in results:
        lines.append(
            f"{r.policy:<10}  {r.hot:>3}  {r.hit_rate:>8.1%}  "
            f"{r.on_demand / r.tokens:>15.2f}  {format_seconds(r.exposed_s):<10}  "
            f"{r.tokens_per_s:>8.2f}  {format_bytes(r.kv_hbm_bytes):<10}  "
            f"{format_bytes(math.ceil(r.bytes_per_token))}"
        )
    return "\n".join(lines)
