"""
Static and dynamic layouts of one HBM arena. Sizes are in units of U = 64 B
(the default alignment); an allocation's stay `[start, end)` is in event
numbers. The hand-made cases are worked out in the comments; the random
ones check every strategy against the definitions (and best fit against a
plain transcription of it, also with tiny blocks in the conflict index).
"""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperoffload.model import layout
from hyperoffload.model.layout import (
    DEFAULT_ALIGNMENT,
    STRATEGIES,
    Allocation,
    Layout,
    aligned,
    best_fit_by_size,
    check_layout,
    dynamic_best_fit,
    hill_climb,
    live_peak,
    static_layout,
)

U = DEFAULT_ALIGNMENT


def stays(*specs: tuple[int, int, int]) -> list[Allocation]:
    """Allocations `(units, start, end)`, buffer ids 0, 1, ..."""
    return [Allocation(i, units * U, s, e) for i, (units, s, e) in enumerate(specs)]


def reference_best_fit(allocations: list[Allocation]) -> list[int]:
    """Best fit by size as its docstring says, pair by pair."""
    sizes = [aligned(a.bytes) for a in allocations]
    order = sorted(
        range(len(allocations)),
        key=lambda i: (
            -sizes[i],
            allocations[i].start,
            allocations[i].start - allocations[i].end,
            i,
        ),
    )
    offsets = [0] * len(allocations)
    placed: list[int] = []
    for i in order:
        if sizes[i] == 0:
            continue
        spans = sorted(
            (offsets[k], offsets[k] + sizes[k])
            for k in placed
            if allocations[k].conflicts(allocations[i])
        )
        floor, best = 0, None
        for low, high in spans:
            if low - floor >= sizes[i] and (best is None or low - floor < best[0]):
                best = (low - floor, floor)
            floor = max(floor, high)
        offsets[i] = floor if best is None else best[1]
        placed.append(i)
    return offsets


def overlapping(allocations: list[Allocation], offsets: list[int]) -> bool:
    """Whether two conflicting allocations share an address, pair by pair."""
    spans = [
        (o, o + aligned(a.bytes)) for a, o in zip(allocations, offsets, strict=True)
    ]
    return any(
        a.conflicts(b) and spans[i][0] < spans[j][1] and spans[j][0] < spans[i][1]
        for i, a in enumerate(allocations)
        for j, b in enumerate(allocations[:i])
        if spans[i][0] < spans[i][1] and spans[j][0] < spans[j][1]
    )


def transformer_like(count: int, seed: int = 0) -> list[Allocation]:
    """Long-lived weights, activations kept for a backward pass, temporaries."""
    rng = random.Random(seed)
    steps = count // 2
    stays_: list[tuple[int, int, int]] = []  # (claim step, release step, bytes)
    for _ in range(count // 50):
        stays_.append(
            (rng.randrange(steps // 10), steps - rng.randrange(steps // 10), 1 << 20)
        )
    while len(stays_) < count:
        t = rng.randrange(steps)
        kind = rng.random()
        if kind < 0.05 and t < steps // 2:
            end = steps - t  # kept for the mirror step
        elif kind < 0.15:
            end = t + rng.randrange(8, 100)
        else:
            end = t + rng.randrange(1, 6)
        stays_.append((t, min(end, steps), rng.randrange(1, 1 << 16)))
    # Number the claims and releases one by one, releases first at a step.
    events = sorted(
        [(z, 0, i) for i, (_, z, _) in enumerate(stays_)]
        + [(a, 1, i) for i, (a, _, _) in enumerate(stays_)]
    )
    start, end = [0] * count, [0] * count
    for number, (_, claim, i) in enumerate(events):
        (start if claim else end)[i] = number
    return [Allocation(i, stays_[i][2], start[i], end[i]) for i in range(count)]


# aligned, live_peak


def test_aligned_rounds_up() -> None:
    assert [aligned(n) for n in (0, 1, 64, 65, 128)] == [0, 64, 64, 128, 128]
    assert aligned(100, 1) == 100
    assert aligned(100, 256) == 256
    with pytest.raises(ValueError, match="alignment"):
        aligned(1, 0)
    with pytest.raises(ValueError, match="negative"):
        aligned(-1)


def test_live_peak() -> None:
    # 1 U [0, 4) and 2 U [1, 2) are live together; 3 U [4, 6) starts as the first ends.
    allocations = stays((1, 0, 4), (2, 1, 2), (3, 4, 6))
    assert live_peak(allocations) == 3 * U
    assert live_peak(allocations[:2]) == 3 * U
    assert live_peak([Allocation(0, 1, 0, 1), Allocation(1, 65, 0, 1)]) == 3 * U
    assert live_peak([Allocation(0, 1, 0, 1), Allocation(1, 65, 0, 1)], 1) == 66
    assert live_peak([]) == 0
    assert live_peak([Allocation(0, 1000, 3, 3)]) == 0  # an empty stay is never live


# hand-made layouts

# A (1 U) [0, 2), B (2 U) [1, 4), C (2 U) [3, 5): at most 4 U live (B and C).
FRAGMENTING = stays((1, 0, 2), (2, 1, 4), (2, 3, 5))


def test_dynamic_best_fit_fragments_above_the_live_peak() -> None:
    # A at 0, B at 1 U; A's release leaves [0, 1 U) free, too small for C and
    # not at the top (3 U): C goes to 3 U, the arena to 5 U.
    target = 4 * U
    assert live_peak(FRAGMENTING) <= target
    dynamic = dynamic_best_fit(FRAGMENTING)
    assert dynamic == Layout([0, U, 3 * U], 5 * U, "dynamic-best-fit")
    assert dynamic.arena_bytes > target
    check_layout(FRAGMENTING, dynamic)


def test_best_fit_fits_at_the_live_peak() -> None:
    # B, C (2 U; B claimed first), then A: B at 0, C above B (they conflict),
    # A conflicts only with B: no gap below B, so above it at 2 U.
    best = best_fit_by_size(FRAGMENTING)
    assert best == Layout([2 * U, 0, 2 * U], 4 * U, "best-fit")
    assert best.arena_bytes == live_peak(FRAGMENTING)
    check_layout(FRAGMENTING, best)
    assert static_layout(FRAGMENTING) == best  # auto: hill-climbing cannot do better


def test_best_fit_takes_the_smallest_gap() -> None:
    # A (3 U) [0, 10) at 0; B (2 U) [0, 100) above A at 3 U; C (1 U) [1, 10)
    # above both at 5 U; D (1 U) [2, 100) at 6 U. S (1 U) [50, 60) meets only
    # B and D: of the gaps [0, 3 U) and [5 U, 6 U) it takes the smaller.
    allocations = stays((3, 0, 10), (2, 0, 100), (1, 1, 10), (1, 2, 100), (1, 50, 60))
    best = best_fit_by_size(allocations)
    assert best.offsets == [0, 3 * U, 5 * U, 6 * U, 5 * U]
    assert best.arena_bytes == 7 * U == live_peak(allocations)


def test_best_fit_takes_the_lowest_of_equal_gaps() -> None:
    # Four 1 U allocations stacked in claim order; S [50, 60) meets only the
    # second and the fourth: the gaps [0, 1 U) and [2 U, 3 U) are equal.
    allocations = stays((1, 0, 10), (1, 1, 100), (1, 2, 10), (1, 3, 100), (1, 50, 60))
    assert best_fit_by_size(allocations).offsets == [0, U, 2 * U, 3 * U, 0]


def test_dynamic_best_fit_extends_a_free_block_at_the_top() -> None:
    # A at 0, B at 1 U; B's release frees [1 U, 2 U), at the top: C (2 U) fits
    # nowhere and grows it from 1 U.
    allocations = stays((1, 0, 4), (1, 1, 2), (2, 3, 5))
    assert dynamic_best_fit(allocations) == Layout([0, U, U], 3 * U, "dynamic-best-fit")


def test_dynamic_best_fit_coalesces_freed_neighbours() -> None:
    # A, B, C, D at 0, 1, 2, 3 U. The releases of A, B, C leave [0, 3 U) in
    # one block: E (1 U) takes its bottom. D's release merges [1 U, 4 U),
    # where F (3 U) fits exactly.
    allocations = stays(
        (1, 0, 4), (1, 1, 5), (1, 2, 7), (1, 3, 9), (1, 8, 11), (3, 10, 12)
    )
    assert dynamic_best_fit(allocations) == Layout(
        [0, U, 2 * U, 3 * U, 0, U], 4 * U, "dynamic-best-fit"
    )


def test_dynamic_best_fit_takes_the_smallest_free_block() -> None:
    # A (2 U) at 0, X, B, Y (1 U) at 2, 3, 4 U. The releases of A and B leave
    # [0, 2 U) and [3 U, 4 U): E (1 U) takes the smaller, F (2 U) the other.
    allocations = stays(
        (2, 0, 4), (1, 1, 20), (1, 2, 5), (1, 3, 20), (1, 6, 20), (2, 7, 20)
    )
    assert dynamic_best_fit(allocations) == Layout(
        [0, 2 * U, 3 * U, 4 * U, 3 * U, 0], 5 * U, "dynamic-best-fit"
    )


def test_hill_climbing_beats_best_fit() -> None:
    # A chain C - D - B - A of conflicts: A (2 U) [5, 7), B (1 U) [3, 6),
    # C (2 U) [1, 2), D (1 U) [0, 4). Best fit puts C and A at 0, D above C
    # at 2 U, B above A and D at 3 U: 4 U, when 3 U are live at most
    # (e.g. B at 0, A at 1 U, C at 0, D at 2 U).
    allocations = stays((2, 5, 7), (1, 3, 6), (2, 1, 2), (1, 0, 4))
    best = best_fit_by_size(allocations)
    assert best == Layout([0, 3 * U, 0, 2 * U], 4 * U, "best-fit")
    climbed = static_layout(allocations, "hill-climb")
    assert climbed.arena_bytes == live_peak(allocations) == 3 * U
    check_layout(allocations, climbed)
    assert static_layout(allocations) == climbed
    assert climbed.strategy == "hill-climb"


def test_zero_sizes_share_any_address() -> None:
    allocations = [Allocation(0, 0, 0, 10), Allocation(1, 100, 0, 10)]
    for strategy in STRATEGIES:
        assert static_layout(allocations, strategy).offsets == [0, 0]
        assert static_layout(allocations, strategy).arena_bytes == 2 * U
    assert dynamic_best_fit(allocations) == Layout([0, 0], 2 * U, "dynamic-best-fit")
    check_layout(allocations, Layout([0, 0], 2 * U, "by hand"))
    check_layout([Allocation(0, 0, 0, 10)], Layout([128], 128, "by hand"))


def test_alignment_rounds_sizes() -> None:
    # 65 B and 1 B live together: 2 U + 1 U, or 65 + 1 B unaligned.
    allocations = [Allocation(0, 65, 0, 2), Allocation(1, 1, 1, 3)]
    assert best_fit_by_size(allocations) == Layout([0, 2 * U], 3 * U, "best-fit")
    assert best_fit_by_size(allocations, 1) == Layout([0, 65], 66, "best-fit")
    assert dynamic_best_fit(allocations, 1) == Layout([0, 65], 66, "dynamic-best-fit")
    check_layout(allocations, Layout([0, 65], 66, "unaligned"), alignment=1)
    with pytest.raises(ValueError, match="not a multiple of 64"):
        check_layout(allocations, Layout([0, 65], 66 + U, "unaligned"))


def test_empty_input() -> None:
    for strategy in STRATEGIES:
        assert static_layout([], strategy) == Layout(
            [], 0, "best-fit" if strategy in ("auto", "exact") else strategy
        )
    assert dynamic_best_fit([]) == Layout([], 0, "dynamic-best-fit")
    check_layout([], Layout([], 0, "none"))


def test_unknown_strategy() -> None:
    with pytest.raises(ValueError, match="auto, best-fit, hill-climb"):
        static_layout(FRAGMENTING, "first-fit")


def test_release_before_claim_is_an_error() -> None:
    with pytest.raises(ValueError, match="buffer 0 is released before"):
        best_fit_by_size([Allocation(0, 64, 5, 4)])


# check_layout


def test_check_layout_names_both_overlapping_buffers() -> None:
    allocations = [
        Allocation(7, 128, 0, 4),
        Allocation(9, 64, 2, 6),
        Allocation(3, 64, 4, 8),
    ]
    check_layout(allocations, Layout([0, 2 * U, 0], 3 * U, "by hand"))
    with pytest.raises(ValueError, match="conflicting allocations overlap") as error:
        check_layout(allocations, Layout([0, U, 0], 2 * U, "by hand"))
    message = str(error.value)
    assert "buffer 7 (events [0, 4)) at offset 0, 128 bytes" in message
    assert "buffer 9 (events [2, 6)) at offset 64, 64 bytes" in message
    assert "buffer 3" not in message  # released when 3 is claimed: no conflict


def test_check_layout_rejects_a_small_arena_and_a_bad_count() -> None:
    with pytest.raises(ValueError, match="ends above the arena of 192 bytes"):
        check_layout(FRAGMENTING, Layout([2 * U, 0, 2 * U], 3 * U, "by hand"))
    with pytest.raises(ValueError, match="2 offsets for 3 allocations"):
        check_layout(FRAGMENTING, Layout([0, 0], 4 * U, "by hand"))
    with pytest.raises(ValueError, match="offset -64"):
        check_layout(FRAGMENTING, Layout([-U, 0, 2 * U], 4 * U, "by hand"))


# random allocations

SIZES = (0, 1, 64, 100, 128, 200, 640, 1000)


@st.composite
def allocation_lists(draw: st.DrawFn, most: int = 24) -> list[Allocation]:
    """Stays of any kind: shared event numbers, empty stays, zero sizes."""
    result: list[Allocation] = []
    for buffer in range(draw(st.integers(0, most))):
        start = draw(st.integers(0, 30))
        length = draw(st.integers(0, 12))
        result.append(
            Allocation(buffer, draw(st.sampled_from(SIZES)), start, start + length)
        )
    return result


@settings(max_examples=60, deadline=None)
@given(allocation_lists())
def test_every_strategy_is_a_valid_layout(allocations: list[Allocation]) -> None:
    peak = live_peak(allocations)
    layouts = [static_layout(allocations, s, time_limit=5.0) for s in STRATEGIES]
    layouts.append(dynamic_best_fit(allocations))
    for result in layouts:
        check_layout(allocations, result)
        assert not overlapping(allocations, result.offsets)
        assert result.arena_bytes >= peak
        assert all(offset % U == 0 for offset in result.offsets)
    auto, best, climbed, exact, replayed = layouts
    assert climbed.arena_bytes <= best.arena_bytes
    candidates = (best, climbed, replayed)  # in order of preference on ties
    heuristic = min(candidates, key=lambda layout: layout.arena_bytes)
    # auto searches on from the heuristics' best, exact searches longer
    assert auto == heuristic or auto.arena_bytes < heuristic.arena_bytes
    assert exact.arena_bytes <= auto.arena_bytes


@settings(max_examples=60, deadline=None)
@given(allocation_lists(), st.integers(0, 3), st.integers(0, 400))
def test_layouts_are_deterministic(
    allocations: list[Allocation], seed: int, budget: int
) -> None:
    assert static_layout(allocations) == static_layout(list(allocations))
    assert dynamic_best_fit(allocations) == dynamic_best_fit(allocations)
    climbed = hill_climb(allocations, seed=seed, budget=budget)
    assert climbed == hill_climb(allocations, seed=seed, budget=budget)
    assert climbed.arena_bytes <= best_fit_by_size(allocations).arena_bytes
    check_layout(allocations, climbed)


@settings(max_examples=100, deadline=None)
@given(allocation_lists(40), st.sampled_from((1, 2, 3, 512)))
def test_best_fit_follows_its_definition(
    allocations: list[Allocation], block: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(layout, "_BLOCK", block)
        best = best_fit_by_size(allocations)
        assert best.offsets == reference_best_fit(allocations)
        climbed = hill_climb(allocations, budget=200)
        assert not overlapping(allocations, climbed.offsets)


@settings(max_examples=100, deadline=None)
@given(
    allocation_lists(30),
    st.sampled_from((1, 3, 512)),
    st.randoms(use_true_random=False),
)
def test_check_layout_finds_every_overlap(
    allocations: list[Allocation], block: int, rng: random.Random
) -> None:
    offsets = best_fit_by_size(allocations).offsets
    if allocations:  # move one allocation anywhere
        offsets[rng.randrange(len(allocations))] = U * rng.randrange(12)
    arena = max(
        [o + aligned(a.bytes) for a, o in zip(allocations, offsets, strict=True)] + [0]
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(layout, "_BLOCK", block)
        if overlapping(allocations, offsets):
            with pytest.raises(ValueError, match="conflicting allocations overlap"):
                check_layout(allocations, Layout(offsets, arena, "moved"))
        else:
            check_layout(allocations, Layout(offsets, arena, "moved"))


def test_a_transformer_like_program() -> None:
    # Several blocks of the conflict index, long stays across many of them.
    allocations = transformer_like(1500)
    peak = live_peak(allocations)
    for result in (best_fit_by_size(allocations), dynamic_best_fit(allocations)):
        check_layout(allocations, result)
        assert result.arena_bytes >= peak
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(layout, "_BLOCK", 16)
        assert best_fit_by_size(allocations).offsets == reference_best_fit(allocations)
