"""
`place_prefetches` on hand-made arrays: five skeleton ops of 1 s each
(`START[i]` is when op i starts, the last entry the end), prefetches of 10 B.
"""

import numpy as np
import numpy.typing as npt
import pytest

from hyperoffload.planning.placement import (
    MoveOptions,
    PrefetchWindow,
    place_prefetches,
)

START = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])


def window(
    latest: int,
    duration_s: float,
    earliest: int = 0,
    link: str = "remote",
    current: int | None = None,
    nbytes: int = 10,
) -> PrefetchWindow:
    return PrefetchWindow(
        earliest=earliest,
        latest=latest,
        bytes=nbytes,
        duration_s=duration_s,
        link=link,
        current=latest if current is None else current,
    )


def zeros() -> npt.NDArray[np.int64]:
    return np.zeros(5, dtype=np.int64)


def test_a_prefetch_is_issued_just_in_time():
    # 1.5 s must end by op 4's start (4 s): it begins at 2.5 s at the latest,
    # so it is issued before op 2 (starting at 3 s it would end at 4.5 s).
    # Its copy is then in HBM while ops 2 and 3 run.
    live = zeros()
    positions = place_prefetches([window(4, 1.5)], START, live, None, MoveOptions())
    assert positions == [2]
    assert live.tolist() == [0, 0, 10, 10, 0]


def test_an_issue_on_an_op_boundary_is_not_moved_earlier():
    # 2 s before op 4 is exactly the start of op 2.
    positions = place_prefetches([window(4, 2.0)], START, zeros(), None, MoveOptions())
    assert positions == [2]


def test_prefetches_on_one_link_queue_behind_each_other():
    # Both serve op 4. The first takes 2.5-4 s (issued before op 2); the
    # link is busy then, so the second must end by 2.5 s: 1-2.5 s, issued
    # before op 1. On separate links both go before op 2.
    windows = [window(4, 1.5), window(4, 1.5)]
    assert place_prefetches(windows, START, zeros(), None, MoveOptions()) == [2, 1]
    windows = [window(4, 1.5, link="remote"), window(4, 1.5, link="host")]
    assert place_prefetches(windows, START, zeros(), None, MoveOptions()) == [2, 2]


def test_a_prefetch_never_leaves_its_window():
    # 10 s cannot hide before op 4: it goes as early as allowed (op 1).
    positions = place_prefetches(
        [window(4, 10.0, earliest=1)], START, zeros(), None, MoveOptions()
    )
    assert positions == [1]


def test_alpha_zero_puts_each_prefetch_distance_ops_before_its_user():
    # Exposure carries no weight: the least memory, right before the user,
    # or `distance` ops ahead (never before the window).
    windows = [window(4, 1.5, earliest=1)]
    late = place_prefetches(windows, START, zeros(), None, MoveOptions(alpha=0))
    ahead = MoveOptions(alpha=0, distance=2)
    assert (late, place_prefetches(windows, START, zeros(), None, ahead)) == ([4], [2])
    far = MoveOptions(alpha=0, distance=9)
    assert place_prefetches(windows, START, zeros(), None, far) == [1]


def test_beta_zero_hides_the_transfer_whatever_the_target():
    # Memory carries no weight: just in time (before op 0 for 3.5 s), where
    # the default keeps op 2 within the 100 B target (after op 2).
    live = np.array([50, 50, 90, 50, 50], dtype=np.int64)
    windows = [window(4, 3.5, nbytes=20)]
    least = place_prefetches(windows, START, live.copy(), 100, MoveOptions(beta=0))
    assert least == [0]
    assert place_prefetches(windows, START, live.copy(), 100, MoveOptions()) == [3]


def test_a_distance_issues_a_prefetch_earlier_than_just_in_time():
    # Just in time, the prefetch for op 4 goes before op 2 (2.5-4 s) and the
    # one for op 3 before it on the link (1.5-2.5 s, before op 1). At least
    # three ops ahead, the first goes before op 1 and holds the link from
    # 1 s: the second must end by then, before op 0.
    windows = [window(4, 1.5), window(3, 1.0)]
    assert place_prefetches(windows, START, zeros(), None, MoveOptions()) == [2, 1]
    ahead = MoveOptions(distance=3)
    assert place_prefetches(windows, START, zeros(), None, ahead) == [1, 0]


def test_the_memory_target_is_respected():
    # 3.5 s before op 4 is 0.5 s: just in time it would go before op 0, but
    # with its 20 B op 2 would hold 90 + 20 > 100: it is issued after op 2.
    live = np.array([50, 50, 90, 50, 50], dtype=np.int64)
    windows = [window(4, 3.5, nbytes=20)]
    positions = place_prefetches(windows, START, live, 100, MoveOptions())
    assert positions == [3]
    assert live.tolist() == [50, 50, 90, 70, 50]
    # without a target it goes just in time, and op 2 reaches 110
    live = np.array([50, 50, 90, 50, 50], dtype=np.int64)
    assert place_prefetches(windows, START, live, None, MoveOptions()) == [0]
    assert live.tolist() == [70, 70, 110, 70, 50]


def test_live_bytes_count_a_prefetch_from_its_current_position():
    # Now issued before op 1, the 20 B copy is already in `live` over ops
    # 1-3: without it op 2 holds 90 B, so the target allows op 3 as above.
    live = np.array([50, 70, 110, 70, 50], dtype=np.int64)
    windows = [window(4, 3.5, nbytes=20, current=1)]
    positions = place_prefetches(windows, START, live, 100, MoveOptions())
    assert positions == [3]
    assert live.tolist() == [50, 50, 90, 70, 50]


def test_a_target_nothing_meets_puts_the_prefetch_before_its_user():
    # Every op is over 60 B with the copy: the latest position, op 4.
    live = np.array([50, 50, 90, 50, 50], dtype=np.int64)
    positions = place_prefetches(
        [window(4, 3.5, nbytes=20)], START, live, 60, MoveOptions()
    )
    assert positions == [4]
    assert live.tolist() == [50, 50, 90, 50, 50]


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        # no limit: all three before op 0
        (0, [0, 0, 0]),
        (3, [0, 0, 0]),
        # the third waits until the first is consumed (op 3)
        (2, [0, 0, 3]),
        # one at a time: each waits for the previous one's user
        (1, [0, 3, 4]),
    ],
)
def test_at_most_max_inflight_prefetches_are_in_flight(limit: int, expected: list[int]):
    # Three prefetches on three links (no queueing), used at ops 3, 4 and 5,
    # each as long as the ops before its user: all wanted before op 0.
    windows = [
        window(3, 3.0, link="remote"),
        window(4, 4.0, link="host"),
        window(5, 5.0, link="ssd"),
    ]
    options = MoveOptions(max_inflight=limit)
    assert place_prefetches(windows, START, zeros(), None, options) == expected
