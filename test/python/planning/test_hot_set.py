"""`hyperoffload.planning.hot_set`: the resident experts, greedy by hits per byte."""

from hyperoffload.model.moe import MoEStep
from hyperoffload.planning.hot_set import choose_hot_set


def test_choose_hot_set() -> None:
    step = MoEStep.uniform(2, 3, 1, expert_bytes=10, expert_s=0.0)
    frequencies = [[0.5, 0.2, 0.3], [0.1, 0.6, 0.35]]
    assert choose_hot_set(step, frequencies, 30) == [[0], [1, 2]]
    assert choose_hot_set(step, frequencies, 9) == [[], []]
    assert choose_hot_set(step, [[1, 0, 0], [1, 0, 0]], 60) == [[0], [0]]
