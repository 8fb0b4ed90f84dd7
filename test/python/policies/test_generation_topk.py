"""
The top-k generation replay (`hyperoffload.policies.generation_topk`), counted by
hand on test/inputs/round.toml (100 MB/s link, no latency): a block of
100 B takes 1 us to fetch, a call computes for 1 s.
"""

from pathlib import Path

import pytest

from hyperoffload.model.hardware import load_hardware
from hyperoffload.model.topk_step import TopkStep
from hyperoffload.policies.generation_topk import (
    least_hot,
    map_ranking,
    replay,
)

HARDWARE = load_hardware(str(Path(__file__).parents[2] / "inputs" / "round.toml"))
STEP = TopkStep(
    compute_s=1.0,
    layers=1,
    block_bytes=100,
    blocks=6,
    fixed=2,
    topk=1,
    entry_bytes=10,
    block=10,
)
# one layer; the selection is the first block of each ranking
RANKINGS = [[[1, 2, 3, 4]], [[2, 1, 3, 4]], [[1, 2, 3, 4]]]


def test_on_demand_cache_of_one_block_misses_every_call() -> None:
    result = replay(STEP, RANKINGS, 3, "on-demand", 1, HARDWARE)
    assert (result.hits, result.on_demand, result.ahead) == (0, 3, 0)
    assert result.exposed_s == pytest.approx(3e-6)
    assert result.kv_hbm_bytes == (2 + 1) * 100


def test_heat_table_fetches_the_runner_up_ahead() -> None:
    """
    Call 0 misses block 1 and fetches block 2 (next in its ranking) ahead,
    during its compute; calls 1 and 2 find their blocks resident.
    """
    result = replay(STEP, RANKINGS, 3, "plan", 2, HARDWARE)
    assert (result.hits, result.on_demand, result.ahead) == (2, 1, 1)
    assert result.hit_rate == pytest.approx(2 / 3)
    assert result.exposed_s == pytest.approx(1e-6)
    assert result.tokens_per_s == pytest.approx(3 / (3 + 1e-6))
    # two blocks fetched, three entries written back
    assert result.bytes_per_token == pytest.approx((200 + 30) / 3)
    assert result.kv_hbm_bytes == (2 + 2) * 100


def test_none_holds_every_block() -> None:
    result = replay(STEP, RANKINGS, 3, "none", 0, HARDWARE)
    assert result.hit_rate == 1.0
    assert result.exposed_s == 0.0
    assert result.kv_hbm_bytes == 6 * 100


def test_least_hot_within_one_percent() -> None:
    # 1 us exposed in 3 s is within 1%: the fewest hot blocks, one
    assert least_hot(STEP, RANKINGS, 3, HARDWARE).hot == 1


def test_rankings_map_in_proportion() -> None:
    # 8 recorded candidates (blocks 1..8) onto 4 (blocks 1..4)
    assert map_ranking([8, 1, 2, 5], range(1, 9), [1, 2, 3, 4]) == [4, 1, 3]
    # a recording without sinks has block 0 among its candidates
    assert map_ranking([1, 0], [0, 1], [0, 1, 2, 3]) == [2, 0]


def test_unknown_policy() -> None:
    with pytest.raises(ValueError, match="unknown top-k generation policy"):
        replay(STEP, RANKINGS, 3, "lru", 1, HARDWARE)


def test_warmup_calls_are_not_measured() -> None:
    """After call 0 (block 1 on demand, block 2 ahead), calls 1 and 2 hit."""
    result = replay(STEP, RANKINGS, 2, "plan", 2, HARDWARE, warmup=1)
    assert (result.selected, result.hits, result.on_demand, result.ahead) == (
        2,
        2,
        0,
        0,
    )
    assert result.exposed_s == 0.0
