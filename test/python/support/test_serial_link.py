"""Just-in-time issue on a serial link: the idle link time taken back from the use."""

import numpy as np

from hyperoffload.support.serial_link import issue_just_in_time


def test_fetches_latest_first_queue_behind_each_other() -> None:
    # ops of 1 s: a 1.5 s fetch for op 3 begins during op 1, half of it
    # left idle; a 1 s fetch for op 2 ends where that one begins (1.5 s),
    # so it begins during op 0
    free = np.ones(4)
    assert issue_just_in_time(free, 0, 3, 1.5) == 1
    assert free.tolist() == [1.0, 0.5, 0.0, 1.0]
    assert issue_just_in_time(free, 0, 2, 1.0) == 0
    assert free.tolist() == [0.5, 0.0, 0.0, 1.0]


def test_a_fetch_that_ends_at_an_op_boundary_is_issued_before_that_op() -> None:
    # 0.7 + 0.1 is 0.7999999999999999 in floats: the slack matches the
    # boundary anyway (the transfer begins where op 1 does)
    free = np.array([1.0, 0.1, 0.7])
    assert issue_just_in_time(free, 0, 3, 0.8) == 1


def test_a_later_fetch_fills_the_idle_time_before_its_use() -> None:
    # taken out of deadline order: the fetch for op 4 left op 3 idle
    free = np.ones(5)
    assert issue_just_in_time(free, 0, 3, 1.0) == 2
    assert issue_just_in_time(free, 0, 4, 1.0) == 3
    assert issue_just_in_time(free, 0, 4, 1.0) == 1


def test_a_fetch_that_cannot_hide_is_issued_at_its_earliest_op() -> None:
    free = np.ones(4)
    assert issue_just_in_time(free, 1, 3, 5.0) == 1
    assert free.tolist() == [1.0, 0.0, 0.0, 1.0]  # nothing before `low` taken
