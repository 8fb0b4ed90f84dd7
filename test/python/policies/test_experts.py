"""
`hyperoffload.policies.experts`: routed-expert decode under each policy, hit
rates and bytes counted by hand on a routing written here.

The hand trace: 2 MoE layers, 4 experts of 1 MB each, top-1, 6 tokens.

    token      0  1  2  3  4  5
    layer 0    0  0  1  1  2  0
    layer 1    1  2  2  1  3  1

On ascend-910c a fetch takes 10 us + 1 MB / 33.6 GB/s = 39.8 us. `TIGHT`
computes 1 us per layer and expert (the link is never idle long enough to
fetch ahead); `SLACK` computes 10 ms before each router (it always is).
"""

import pytest

from hyperoffload.frontend.configs import CONFIGS
from hyperoffload.model.hardware import load_hardware
from hyperoffload.model.moe import ExpertError, MoEStep, roofline_s
from hyperoffload.model.routing import Routing, RoutingError, parse_routing, parse_trace
from hyperoffload.policies.expert_caches import OurPlan
from hyperoffload.policies.experts import (
    ALL_RESIDENT,
    EXPERT_POLICIES,
    LRU,
    MOE_INFINITY,
    ON_DEMAND,
    OURS,
    ExpertResult,
    format_expert_table,
    our_candidates,
    plan_ours,
    simulate_experts,
)

HARDWARE = load_hardware("ascend-910c")
MB = 10**6
LAYER0 = [0, 0, 1, 1, 2, 0]
LAYER1 = [1, 2, 2, 1, 3, 1]
HAND = Routing(
    "trace",
    trace=parse_trace(
        {
            "experts": 4,
            "top_k": 1,
            "tokens": [[[a], [b]] for a, b in zip(LAYER0, LAYER1, strict=True)],
        },
        "hand.json",
    ),
)
TIGHT = MoEStep.uniform(2, 4, 1, expert_bytes=MB, expert_s=1e-6, pre_s=1e-6)
SLACK = MoEStep.uniform(2, 4, 1, expert_bytes=MB, expert_s=1e-6, pre_s=1e-2)


def _hand(
    policy: str,
    budget: int | None,
    step: MoEStep = TIGHT,
    hot_set: list[list[int]] | None = None,
    tokens: int = 6,
    warmup: int = 0,
) -> ExpertResult:
    result = simulate_experts(
        step, HAND, tokens, policy, HARDWARE, budget, warmup=warmup, hot_set=hot_set
    )
    assert result.run.oom is None
    return result


def _plan(result: ExpertResult) -> OurPlan:
    assert result.plan is not None
    return result.plan


def test_lru_one_slot_per_layer() -> None:
    """
    A budget of 2 MB: one expert per layer, evicted at every miss.
    layer 0: t0 miss (0), t1 hit, t2 miss (1), t3 hit, t4 miss (2), t5 miss (0)
    layer 1: t0 miss (1), t1 miss (2), t2 hit, t3 miss (1), t4 miss (3), t5 miss (1)
    3 hits of 12; 9 fetches of 1 MB over 6 tokens.
    """
    result = _hand(LRU, 2 * MB)
    assert result.hits == 3
    assert result.expert_hit_rate == 0.25
    assert result.bytes_moved_per_token == 9 * MB / 6
    assert result.peak_hbm_bytes == 2 * MB


def test_lru_two_slots_per_layer() -> None:
    """
    4 MB: two per layer.
    layer 0: t0 miss, t1 hit, t2 miss, t3 hit, t4 miss (evicts 0, used at t1),
             t5 miss (evicts 1, used at t3)
    layer 1: t0 miss, t1 miss, t2 hit, t3 hit, t4 miss (evicts 2, used at t2), t5 hit
    5 hits, 7 fetches.
    """
    result = _hand(LRU, 4 * MB)
    assert result.hits == 5
    assert result.bytes_moved_per_token == 7 * MB / 6


def test_lru_warm_up_is_not_measured() -> None:
    """
    One slot per layer, tokens 0 and 1 as warm-up: of tokens 2..5, layer 0
    hits at t3 and layer 1 at t2; 6 misses over 4 tokens.
    """
    result = _hand(LRU, 2 * MB, tokens=4, warmup=2)
    assert (result.hits, result.routed) == (2, 8)
    assert result.bytes_moved_per_token == 6 * MB / 4


def test_ours_with_a_given_hot_set() -> None:
    """
    Hot set {0} in layer 0 and {1} in layer 1, 3 MB (room for one more
    expert), no slack: misses fetched after the router, the one fetched
    kept until the next miss needs its room.
    t1 L1 miss (2); t2 L0 miss (1, evicts 1.2), L1 miss (2, evicts 0.1);
    t3 L0 miss (1); t4 L0 miss (2), L1 miss (3)
    6 hits of 12, 6 fetches of 1 MB.
    """
    result = _hand(OURS, 3 * MB, hot_set=[[0], [1]])
    assert not _plan(result).speculate
    assert result.hits == 6
    assert result.bytes_moved_per_token == 6 * MB / 6
    assert result.peak_hbm_bytes == 3 * MB


def test_ours_keeps_what_it_fetched() -> None:
    """
    The same hot set with 4 MB: two fetched experts stay, the least recently
    chosen evicted. t1 L1 miss (2); t2 L0 miss (1), L1 hit (2 kept); t3 L0
    hit (1 kept); t4 L0 miss (2, evicts 1.2), L1 miss (3, evicts 0.1).
    8 hits of 12, 4 fetches. With slack nothing changes: the previous
    token's experts, ours' guesses, are held already.
    """
    tight = _hand(OURS, 4 * MB, hot_set=[[0], [1]])
    slack = _hand(OURS, 4 * MB, step=SLACK, hot_set=[[0], [1]])
    assert not _plan(tight).speculate
    for result in (tight, slack):
        assert result.hits == 8
        assert result.bytes_moved_per_token == 4 * MB / 6


def test_ours_speculates_into_slack() -> None:
    """
    Eight layers of 8 experts (top-2) sharing 24 MB: a layer's experts are
    evicted by the layers between its tokens, so the previous token's are
    fetched again ahead of the router while the link is idle. The link
    moves more than the misses (the wrong guesses), within the budget.
    """
    step = MoEStep.uniform(8, 8, 2, expert_bytes=MB, expert_s=1e-6, pre_s=1e-2)
    result = simulate_experts(
        step, parse_routing("uniform"), 32, OURS, HARDWARE, 24 * MB
    )
    assert _plan(result).speculate
    misses = result.routed - result.hits
    assert result.bytes_moved_per_token * result.tokens > misses * MB
    assert result.peak_hbm_bytes <= 24 * MB
    plain = simulate_experts(step, parse_routing("uniform"), 32, LRU, HARDWARE, 24 * MB)
    assert result.expert_hit_rate > plain.expert_hit_rate


def test_ours_hot_set_from_the_trace() -> None:
    """
    Counted frequencies: layer 0 {0: 1/2, 1: 1/3, 2: 1/6}, layer 1 {1: 1/2,
    2: 1/3, 3: 1/6}. 4 MB less room for one fetched expert: three hot
    experts, by frequency per byte: 0 of layer 0, 1 of layer 1, then 1 of
    layer 0 (the tie with 2 of layer 1 goes to the lower layer). Misses:
    layer 1 at t1 (2, kept: t2 hits), layer 0 at t4 (2, evicts 1.2),
    layer 1 at t4 (3): 9 hits, 3 fetches.
    """
    result = _hand(OURS, 4 * MB)
    assert _plan(result).hot == [[0, 1], [1]]
    assert result.hits == 9
    assert result.bytes_moved_per_token == 3 * MB / 6


def test_moe_infinity_evicts_the_least_chosen() -> None:
    """
    One cache of 2 experts over both layers, evicting the least chosen so
    far (ties: least recently used); no slack, so no prefetch.
    t0: 0.0 miss; 1.1 miss
    t1: 0.0 hit (count 2); 1.2 miss, evicts 1.1 (1 < 2)
    t2: 0.1 miss, evicts 1.2 (1); 1.2 miss (count 2), evicts 0.1 (1)
    t3: 0.1 miss (2), evicts 0.0 (2, older than 1.2); 1.1 miss (2), evicts 1.2
    t4: 0.2 miss, evicts 0.1 (2, older than 1.1); 1.3 miss, evicts 0.2 (1)
    t5: 0.0 miss (3), evicts 1.3 (1); 1.1 hit (3)
    2 hits, 10 fetches.
    """
    result = _hand(MOE_INFINITY, 2 * MB)
    assert result.hits == 2
    assert result.bytes_moved_per_token == 10 * MB / 6


def test_moe_infinity_prefetches_the_most_chosen() -> None:
    """
    layer 0 always chooses 0; layer 1 chooses 1, 1, 2, 1; two slots.
    t2: 1.2 misses and evicts 1.1 (count 2 < 0.0's 3). At t3's layer-0
    router, 1.1 (count 2) is the next layer's most chosen expert not held
    and 1.2 (count 1) is chosen less: with slack it is evicted and 1.1
    prefetched, a hit; without slack 1.1 is a miss. 4 fetches either way.
    """
    routing = Routing(
        "trace",
        trace=parse_trace(
            {"experts": 4, "top_k": 1, "tokens": [[[0], [e]] for e in (1, 1, 2, 1)]},
            "prefetch.json",
        ),
    )
    for step, hits in ((SLACK, 5), (TIGHT, 4)):
        result = simulate_experts(step, routing, 4, MOE_INFINITY, HARDWARE, 2 * MB)
        assert result.hits == hits
        assert result.bytes_moved_per_token == MB


def test_all_resident_is_the_reference() -> None:
    result = _hand(ALL_RESIDENT, None)
    assert result.expert_hit_rate == 1.0
    assert result.bytes_moved_per_token == 0
    assert result.exposed_transfer_s == pytest.approx(0.0, abs=1e-15)
    assert result.peak_hbm_bytes == 8 * MB
    per_token = 2 * (1e-6 + 1e-6)
    assert result.tokens_per_s == pytest.approx(1 / per_token)


def test_grouped_launches() -> None:
    """
    Top-2 of 8, 3 layers, 50 us of launch per grouped launch: the held
    experts of a layer run in one launch, each fetched one in its own.
    """
    step = MoEStep.uniform(
        3, 8, 2, expert_bytes=MB, expert_s=1e-5, pre_s=1e-4, launch_s=5e-5
    )
    zipf = parse_routing("zipf:1.0")
    resident = simulate_experts(step, zipf, 5, ALL_RESIDENT, HARDWARE, None)
    assert resident.measured_compute_s == pytest.approx(5 * 3 * (1e-4 + 5e-5 + 2e-5))
    fetched = simulate_experts(step, zipf, 5, ON_DEMAND, HARDWARE, 3 * MB)
    assert fetched.measured_compute_s == pytest.approx(5 * 3 * (1e-4 + 2 * 6e-5))


def test_on_demand_moves_every_routed_expert() -> None:
    step = MoEStep.uniform(3, 8, 2, expert_bytes=MB, expert_s=1e-5, pre_s=1e-4)
    result = simulate_experts(
        step, parse_routing("zipf:1.0"), 5, ON_DEMAND, HARDWARE, 3 * MB
    )
    assert result.expert_hit_rate == 0.0
    assert result.bytes_moved_per_token == 3 * 2 * MB  # layers x top_k
    assert result.peak_hbm_bytes == 2 * MB  # one layer's two experts
    assert result.exposed_transfer_s > 0


def test_rolling_fetches_when_a_layer_cannot_hold_its_experts() -> None:
    """Top-2 with one LRU slot per layer: the second miss waits for the first's compute."""
    step = MoEStep.uniform(2, 4, 2, expert_bytes=MB, expert_s=1e-6, pre_s=1e-6)
    result = simulate_experts(step, parse_routing("uniform"), 4, LRU, HARDWARE, 2 * MB)
    assert result.run.oom is None
    assert result.peak_hbm_bytes == 2 * MB
    # every routed expert is fetched unless the one slot already holds it
    assert result.moved_bytes == (result.routed - result.hits) * MB


@pytest.mark.parametrize("policy", [p for p in EXPERT_POLICIES if p != ALL_RESIDENT])
def test_budget_is_never_exceeded(policy: str) -> None:
    step = MoEStep.uniform(4, 16, 2, expert_bytes=MB, expert_s=1e-5, pre_s=2e-4)
    routing = parse_routing("zipf:1.0")
    result = simulate_experts(step, routing, 24, policy, HARDWARE, 20 * MB, seed=2)
    assert result.run.oom is None
    assert result.run.peak_hbm_bytes <= 20 * MB
    assert result.moved_bytes == result.run.bytes_to_device  # no warm-up
    again = simulate_experts(step, routing, 24, policy, HARDWARE, 20 * MB, seed=2)
    assert again.report() == result.report()


def test_ours_beats_the_caches_on_a_skewed_profile() -> None:
    """zipf:1.2, half the experts: a profile-chosen hot set hits more than LRU."""
    step = MoEStep.uniform(4, 16, 2, expert_bytes=MB, expert_s=1e-5, pre_s=2e-4)
    routing = parse_routing("zipf:1.2")
    ours, lru = (
        simulate_experts(step, routing, 48, p, HARDWARE, 32 * MB, warmup=16)
        for p in (OURS, LRU)
    )
    assert ours.expert_hit_rate > lru.expert_hit_rate
    assert ours.bytes_moved_per_token < lru.bytes_moved_per_token


def test_a_budget_below_one_expert_per_layer() -> None:
    for policy in (OURS, ON_DEMAND, LRU, MOE_INFINITY):
        with pytest.raises(ExpertError, match="below one expert per layer"):
            simulate_experts(TIGHT, HAND, 6, policy, HARDWARE, 2 * MB - 1)
    with pytest.raises(ExpertError, match="needs an expert budget"):
        simulate_experts(TIGHT, HAND, 6, LRU, HARDWARE, None)


def test_errors() -> None:
    with pytest.raises(ExpertError, match="unknown policy 'fifo'"):
        simulate_experts(TIGHT, HAND, 6, "fifo", HARDWARE, 4 * MB)
    with pytest.raises(ExpertError, match="at least one token"):
        simulate_experts(TIGHT, HAND, 0, LRU, HARDWARE, 4 * MB)
    with pytest.raises(RoutingError, match=r"hand\.json: the trace has 6 tokens; 7"):
        simulate_experts(TIGHT, HAND, 6, LRU, HARDWARE, 4 * MB, warmup=1)
    with pytest.raises(ExpertError, match="leaving no fetch buffer"):
        simulate_experts(TIGHT, HAND, 6, OURS, HARDWARE, 3 * MB, hot_set=[[0, 1], [1]])
    with pytest.raises(ExpertError, match="top_k 5 must be in"):
        MoEStep.uniform(1, 4, 5, expert_bytes=MB, expert_s=0.0)


def test_report_and_table() -> None:
    reports = [_hand(p, 4 * MB).report() for p in (OURS, LRU)]
    assert set(reports[0]) == {
        "policy",
        "tokens",
        "expert_hit_rate",
        "bytes_moved_per_token",
        "exposed_transfer_s",
        "tokens_per_s",
        "peak_hbm_bytes",
    }
    lines = format_expert_table(reports).splitlines()
    assert lines[0].split() == [
        "policy",
        "tokens/s",
        "hit",
        "rate",
        "moved/token",
        "exposed/token",
        "peak",
        "HBM",
    ]
    assert [line.split()[0] for line in lines[1:]] == [OURS, LRU]
    assert "0.750" in lines[1]  # ours: 9 hits of 12


def test_from_config_prices_each_kernel() -> None:
    """
    tiny-moe (hidden 64, expert FFN 32, bf16): an expert is a 64x64
    gate-and-up GEMV (8192 B) and a 32x64 down GEMV (4096 B), each
    bandwidth-bound at 1.6 TB/s x 0.8; the routed experts run as two
    grouped GEMVs, 10 us of launch each; a shared expert launches its own.
    """
    cfg = CONFIGS["tiny-moe"]
    step = MoEStep.from_config(cfg, HARDWARE, kv_len=16)
    assert len(step.layers) == cfg.n_layers - cfg.n_dense_layers
    assert (step.experts, step.top_k) == (4, 2)
    layer = step.layers[0]
    assert layer.expert_bytes[0] == 3 * 64 * 32 * 2
    bandwidth = 1.6e12 * 0.8
    assert layer.expert_s[0] == pytest.approx((8192 + 4096) / bandwidth)
    assert layer.launch_s == pytest.approx(2 * 10e-6)
    assert roofline_s(HARDWARE, 2.0 * 4096, 8192, "bf16") == pytest.approx(
        10e-6 + 8192 / bandwidth
    )
    # one shared expert
    assert layer.post_s == pytest.approx(layer.expert_s[0] + layer.launch_s)
    with pytest.raises(ExpertError, match="no routed experts"):
        MoEStep.from_config(CONFIGS["tiny-llama"], HARDWARE, kv_len=16)


def test_our_candidates_split_the_budget_several_ways() -> None:
    """
    2 layers of 4 experts of 1 MB, top-1, 4 MB: room for one fetch leaves 3
    MB of hot experts, speculation one more buffer (2 MB); split over the
    layers, each 2 MB share keeps one hot expert beside its own cache.
    """
    frequencies = HAND.frequencies(2, 4, 1)
    plans = our_candidates(TIGHT, frequencies, 4 * MB, None)
    assert [(p.speculate, p.rooms, p.hot) for p in plans] == [
        (False, None, [[0, 1], [1]]),
        (True, None, [[0], [1]]),
        (False, (MB, MB), [[0], [1]]),
    ]
    assert our_candidates(TIGHT, frequencies, 8 * MB, None) == [
        OurPlan([[0, 1, 2, 3], [0, 1, 2, 3]])
    ]


def test_ours_splits_like_lru_where_that_is_faster() -> None:
    """
    2 MB on the hand trace: one expert per layer. The split plan holds no
    hot expert and one cache slot per layer, LRU itself; ours plans on the
    trace itself (an in-sample profile), so it is at least as fast.
    """
    ours = _hand(OURS, 2 * MB)
    lru = _hand(LRU, 2 * MB)
    assert ours.tokens_per_s >= lru.tokens_per_s
    assert ours.hits >= lru.hits


def test_plan_ours_weighs_an_independent_sample() -> None:
    """The plan's sample is another stream of the same profile: same popularity, other draws."""
    routing = parse_routing("zipf:1.0")
    measured = routing.sample(2, 8, 2, 64, seed=3)
    planning = routing.sample(2, 8, 2, 64, seed=3, stream=2)
    assert measured != planning
    assert routing.sample(2, 8, 2, 64, seed=3, stream=1) == measured
    step = MoEStep.uniform(2, 8, 2, expert_bytes=MB, expert_s=1e-4, pre_s=1e-4)
    plan = plan_ours(step, routing, HARDWARE, 6 * MB, seed=3, tokens=64)
    assert plan in our_candidates(step, routing.frequencies(2, 8, 2, 3), 6 * MB, None)
