"""`LinkTime`: greedy takes that skip spent ops, against the windowed cumulative sum they replace."""

import numpy as np
import pytest

from hyperoffload.planning.link_time import LinkTime


def reference_take(
    free: np.ndarray, low: int, high: int, seconds: float, backward: bool
) -> None:
    """The earlier rule: the window's cumulative sum, spent up to `seconds`."""
    window = free[low:high][::-1] if backward else free[low:high]
    if window.size == 0:
        return
    taken = np.cumsum(window)
    full = int(np.searchsorted(taken, seconds))
    window[: min(full, window.size)] = 0.0
    if full < window.size:
        window[full] = taken[full] - seconds


def test_a_fetch_takes_from_the_ops_nearest_its_use():
    link = LinkTime(np.array([1e-3, 1e-3, 1e-3]))
    link.take(0, 3, 1.5e-3, backward=True)
    assert link.free.tolist() == pytest.approx([1e-3, 5e-4, 0.0])
    assert link.total(0, 3) == pytest.approx(1.5e-3)


def test_a_store_takes_from_the_ops_after_its_producer():
    link = LinkTime(np.array([1e-3, 2e-3, 1e-3, 4e-3]))
    link.take(1, 4, 2.5e-3, backward=False)
    assert link.free.tolist() == pytest.approx([1e-3, 0.0, 5e-4, 4e-3])


def test_short_of_time_it_takes_all_there_is_and_no_more():
    link = LinkTime(np.array([1e-3, 1e-3, 1e-3, 1e-3]))
    link.take(1, 3, 1.0, backward=True)
    assert link.free.tolist() == pytest.approx([1e-3, 0.0, 0.0, 1e-3])
    link.take(0, 4, 1.5e-3, backward=True)  # skips the spent ops 1 and 2
    assert link.free.tolist() == pytest.approx([5e-4, 0.0, 0.0, 0.0])


def test_it_agrees_with_the_windowed_cumulative_sum():
    rng = np.random.default_rng(7)
    ops = 300
    times = rng.uniform(0.0, 1e-3, ops)
    times[rng.integers(0, ops, 30)] = 0.0  # ops without compute time
    link = LinkTime(times)
    expected = times.copy()
    for _ in range(2000):
        low, high = sorted(int(i) for i in rng.integers(0, ops + 1, 2))
        seconds = float(rng.uniform(0.0, 5e-3))
        backward = bool(rng.integers(0, 2))
        total = float(expected[low:high].sum())
        assert link.total(low, high) == pytest.approx(total, abs=1e-12)
        link.take(low, high, seconds, backward)
        reference_take(expected, low, high, seconds, backward)
        np.testing.assert_allclose(link.free, expected, rtol=0, atol=1e-12)
