"""
Peers and link duplex on hand-built schedules, worked out by hand. Hardware
(inputs/round.toml): a remote link of 100 MB/s each way with no latency, so
moving 1024 B takes 10.24 us.
"""

from dataclasses import replace
from pathlib import Path

import pytest

from hyperoffload.model.hardware import Hardware, load_hardware
from hyperoffload.model.schedule import Buffer, Compute, Schedule, Step, Transfer, Wait
from hyperoffload.policies.peers import PolicyOptions, distance_moves, run_policy
from hyperoffload.sim.simulator import simulate
from hyperoffload.support.tiers import Tier

US = 1e-6
KB = 1024


@pytest.fixture(scope="module")
def hardware() -> Hardware:
    return load_hardware(str(Path(__file__).parents[2] / "inputs" / "round.toml"))


def test_a_transfer_against_a_busy_direction_is_slower(hardware: Hardware) -> None:
    # A store of x starts at 0 with the link idle: 10.24 us. The fetch of y
    # starts at 0 too, while the store runs: at half the bandwidth, 20.48 us.
    half = replace(hardware.links[Tier.REMOTE], duplex_efficiency=0.5)
    halved = replace(hardware, links={Tier.REMOTE: half})
    buffers = [
        Buffer(0, "x", KB, Tier.HBM, "argument", pinned=True, initial=True),
        Buffer(1, "x (remote)", KB, Tier.REMOTE, "copy"),
        Buffer(2, "y (remote)", KB, Tier.REMOTE, "copy", initial=True),
        Buffer(3, "y", KB, Tier.HBM, "prefetched"),
    ]
    steps: list[Step] = [
        Transfer(0, 0, 1, KB, Tier.REMOTE, to_device=False),
        Transfer(1, 2, 3, KB, Tier.REMOTE, to_device=True),
        Wait(1),
    ]
    schedule = Schedule("f", buffers, steps)
    assert simulate(schedule, halved).makespan_s == pytest.approx(20.48 * US)
    assert simulate(schedule, hardware).makespan_s == pytest.approx(10.24 * US)


def _weights_late() -> Schedule:
    """x in HBM, a weight w in the remote tier; step 1 reads w after 20 us of step 0."""
    buffers = [
        Buffer(0, "x", KB, Tier.HBM, "argument", pinned=True, initial=True),
        Buffer(
            1, "w", KB, Tier.HBM, "argument", Tier.REMOTE, pinned=True, initial=True
        ),
        Buffer(2, "a", KB, Tier.HBM, "activation"),
        Buffer(3, "b", KB, Tier.HBM, "activation", pinned=True),
    ]
    steps: list[Step] = [
        Compute("a", "t:1", 20 * US, 0, 0, reads=[0], allocs=[2]),
        Compute("b", "t:2", 5 * US, 0, 0, reads=[2, 1], allocs=[3], frees=[2]),
    ]
    return Schedule("f", buffers, steps)


def _run(
    policy: str, hardware: Hardware, capacity: int | None, **options: object
) -> float:
    schedule = _weights_late()
    chosen = replace(PolicyOptions(), **options)
    return run_policy(policy, schedule, schedule, hardware, capacity, chosen).makespan_s


def test_runtime_prefetch_hides_the_fetch_reactive_lru_exposes(
    hardware: Hardware,
) -> None:
    # reactive-lru misses w at step 1: fetched 20 -> 30.24 us, step 1 ends at
    # 35.24. runtime-prefetch (horizon 1) fetches w while step 0 runs
    # (0 -> 10.24 us): step 1 runs 20 -> 25 us.
    assert _run("reactive-lru", hardware, None) == pytest.approx(35.24 * US)
    assert _run("runtime-prefetch", hardware, None) == pytest.approx(25 * US)
    # In 3 KB, step 1's output b does not fit beside x, w and a. reactive-lru
    # allocates b, then misses w and evicts x, the least recently used: x is
    # stored first (20 -> 30.24 us), w fetched (-> 40.48), step 1 ends at
    # 45.48 us. runtime-prefetch already holds w; evicting for b, it stores x
    # (read no more; the caller's) and step 1 runs 30.24 -> 35.24 us.
    assert _run("reactive-lru", hardware, 3 * KB) == pytest.approx(45.48 * US)
    assert _run("runtime-prefetch", hardware, 3 * KB) == pytest.approx(35.24 * US)
    # without a horizon it fetches on a miss, as reactive-lru does
    assert _run("runtime-prefetch", hardware, None, horizon=0) == pytest.approx(
        35.24 * US
    )


def test_peers_may_keep_tagged_arguments_resident(hardware: Hardware) -> None:
    # w resident in HBM at entry: nothing to fetch, 25 us for either runtime
    for policy in ("reactive-lru", "runtime-prefetch"):
        assert _run(policy, hardware, None, resident_arguments=True) == pytest.approx(
            25 * US
        )
    # in its tier, a static peer fetches w before its first use (2 steps
    # ahead: before step 0) and frees it after its last
    offload = distance_moves(_weights_late(), PolicyOptions())
    assert [(m.buffer, m.fetch, m.use) for m in offload.moves] == [(1, 0, 1)]
    assert offload.releases == [(1, 1)]
    assert _run("distance", hardware, None) == pytest.approx(25 * US)
    schedule = _weights_late()
    resident = PolicyOptions(resident_arguments=True)
    kept = run_policy("distance", schedule, schedule, hardware, None, resident)
    assert kept.transfers == 0
