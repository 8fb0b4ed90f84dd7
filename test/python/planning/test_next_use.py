"""
Just-in-time selection (`hyperoffload.planning.next_use`): what it takes on
a hand-made timeline, and the bookkeeping it keeps as it goes (the bytes
live, the store queue, the link time left), held to the same figures
computed from scratch after every candidate taken.
"""

import random
from bisect import bisect_left
from functools import partial

import numpy as np
import pytest
from xdsl.dialects.builtin import f32
from xdsl.utils.test_value import create_ssa_value

from hyperoffload.analysis.lifetimes import Gap, ValueInfo
from hyperoffload.planning.next_use import Selection, Taken, select_by_next_use
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support.positions import OpIndex
from hyperoffload.support.tiers import Tier


def _plan(name: str, size: int, uses: list[int], stored: bool = True) -> ValuePlan:
    """A value made at op `uses[0]`, out of HBM over the gap between its first two uses."""
    producer, first, second = uses[0], uses[0], uses[1]
    info = ValueInfo(
        create_ssa_value(f32),
        name,
        size,
        OpIndex(producer),
        [OpIndex(u) for u in uses],
        "activation",
        Tier.HBM,
        None,
    )
    gap = Gap(OpIndex(first), OpIndex(second), second - first - 1, second - first - 1.0)
    return ValuePlan(info, [gap], stored)


def _one_second_ops(ops: int) -> list[float]:
    return [float(k) for k in range(ops + 1)]


def test_a_value_stays_out_while_the_op_is_over_the_target():
    # 10 ops of 1 s; 150 B live everywhere, target 100 B; one 100 B value
    # made at op 0 and read at op 9: its store (1 s) ends at op 2; its fetch
    # (2 s) hides over ops 7-8, but ops 7 and 8 are over the target too, so
    # it is taken again there, its fetch issued later (before op 9)
    plan = _plan("v", 100, [0, 9])
    taken = select_by_next_use(
        [plan], [150] * 10, _one_second_ops(10), 100, lambda _: (1.0, 2.0)
    )
    assert len(taken) == 1
    assert taken[0].info is plan.info
    assert taken[0].fetch_ops == [9]


def test_a_fetch_that_hides_is_issued_as_late_as_it_hides():
    # over the target only at ops 2-4: the fetch (2 s) is issued before
    # op 7, the latest it still ends before op 9
    plan = _plan("v", 100, [0, 9])
    timeline = [50, 50, 150, 150, 150, 50, 50, 50, 50, 50]
    taken = select_by_next_use(
        [plan], timeline, _one_second_ops(10), 100, lambda _: (1.0, 2.0)
    )
    assert [p.fetch_ops for p in taken] == [[7]]


def test_a_store_not_done_by_the_op_is_waited_for_only_if_allowed():
    # over the target at op 2 only; the value's store (5 s) is done by op 5:
    # without waiting it is not out of HBM at op 2, with waiting the compute
    # stream waits for its store there
    plan = _plan("v", 100, [0, 9])
    timeline = [50, 50, 150, 50, 50, 50, 50, 50, 50, 50]
    prefix = _one_second_ops(10)
    assert select_by_next_use([plan], timeline, prefix, 100, lambda _: (5.0, 1.0)) == []
    selection = Selection(timeline, prefix, 100, wait_for_stores=True)
    assert selection.take(plan, 2, lambda _: (5.0, 1.0))
    (entry,) = selection.taken.values()
    assert (entry.due, entry.start) == (2, 2)
    assert selection.memory[2] == 50


def test_a_value_waited_for_and_taken_again_still_waits_for_its_store():
    # over the target everywhere: taken at op 2 (its 5 s store waited for),
    # fetched before op 7 for op 9; taken again at op 7, its fetch later
    # (before op 8), it is still out from op 2, where compute waits
    plan = _plan("v", 100, [0, 9])
    selection = Selection([150] * 10, _one_second_ops(10), 100, wait_for_stores=True)
    assert selection.take(plan, 2, lambda _: (5.0, 2.0))
    (first,) = selection.taken.values()
    assert first.fetch_ops == [7]
    assert selection.take(plan, 7, lambda _: (5.0, 2.0), first)
    (again,) = selection.taken.values()
    assert again is not first
    assert (again.due, again.start, again.fetch_ops) == (2, 2, [8])
    assert selection.memory.tolist() == [150, 150] + [50] * 6 + [150] * 2


def test_a_fetch_waited_for_is_issued_at_most_twice_its_time_ahead():
    # the link is busy over ops 0-8 (no time left): taken at op 3, without
    # waiting the 2 s fetch for op 9 is issued as early as it can be, before
    # op 4; with waiting, as late as its own time would hide it
    plan = _plan("v", 100, [0, 9])
    for waiting, fetch_op in ((False, 4), (True, 7)):
        selection = Selection(
            [150] * 10, _one_second_ops(10), 100, wait_for_stores=waiting
        )
        selection.fetch_link[:] = 0.0
        assert selection.take(plan, 3, lambda _: (0.5, 2.0))
        (entry,) = selection.taken.values()
        assert entry.fetch_ops == [fetch_op]


def test_an_argument_left_in_its_tier_takes_its_update_along():
    # a 30 B argument read at op 1 only (fetched before it, released after
    # it), its 80 B update made at op 2 and read last at op 3 before the
    # return: left in its tier, the update is written back, out of HBM from
    # op 4 on
    info = ValueInfo(
        create_ssa_value(f32),
        "w",
        30,
        OpIndex(-1),
        [OpIndex(1)],
        "params",
        Tier.REMOTE,
        None,
    )
    gap = Gap(OpIndex(-1), OpIndex(1), 1, 1.0)
    plan = ValuePlan(info, [gap], stored=False, initially_out=True)
    timeline = [250] * 10
    selection = Selection(timeline, _one_second_ops(10), 200, {id(info): (4, 80)})
    assert selection.take(plan, 5, lambda _: (0.0, 0.5))
    # fetched during op 0 for op 1, out from op 2; its update from op 4
    assert selection.memory.tolist() == [250, 250, 220, 220] + [140] * 6


def _argument(size: int, use: int) -> ValuePlan:
    """A tagged argument left in its tier, read at op `use` only."""
    info = ValueInfo(
        create_ssa_value(f32),
        "w",
        size,
        OpIndex(-1),
        [OpIndex(use)],
        "optimizer",
        Tier.REMOTE,
        None,
    )
    gap = Gap(OpIndex(-1), OpIndex(use), use, float(use))
    return ValuePlan(info, [gap], stored=False, initially_out=True)


def test_an_argument_waited_for_is_fetched_after_the_op_it_is_taken_at():
    # a 100 B argument read at op 9, over the target at ops 3 and 8; the link
    # is busy (no time left), so its 2 s fetch never hides. Taken at op 3,
    # without waiting it is fetched as early as it can be (before op 0) and
    # is not out of HBM at op 3: not taken. Waiting, it is fetched as late as
    # its own time would hide it (before op 7), then taken again at op 8 and
    # fetched after it (before op 9, compute waiting for it)
    timeline = [50, 50, 50, 150, 50, 50, 50, 50, 150, 50]
    for waiting in (False, True):
        selection = Selection(timeline, _one_second_ops(10), 100, None, waiting)
        selection.fetch_link[:] = 0.0
        assert selection.take(_argument(100, 9), 3, lambda _: (0.0, 2.0)) is waiting
    plan = _argument(100, 9)
    selection = Selection(timeline, _one_second_ops(10), 100, None, True)
    selection.fetch_link[:] = 0.0
    assert selection.take(plan, 3, lambda _: (0.0, 2.0))
    (first,) = selection.taken.values()
    assert first.fetch_ops == [7]
    assert first.out_until(8) is None  # in HBM again at op 8
    assert selection.take(plan, 8, lambda _: (0.0, 2.0), first)
    (again,) = selection.taken.values()
    assert again.fetch_ops == [9]
    assert selection.memory.tolist() == [-50, -50, -50, 50, -50, -50, -50, -50, 50, 50]


def _timing_of(
    table: dict[int, tuple[float, float]], plan: ValuePlan
) -> tuple[float, float]:
    return table[id(plan)]


def _from_scratch(selection: Selection) -> tuple[np.ndarray, dict[int, int]]:
    """The bytes live and each entry's start, its store queue run from the start."""
    taken = list(selection.taken.values())
    starts = {id(t): t.spans[0][0] for t in taken}
    link_free = 0.0
    for entry in sorted((t for t in taken if t.plan.stored), key=Taken.queue_key):
        begin = max(selection.prefix[entry.issue + 1], link_free)
        link_free = begin + entry.store_s
        done = bisect_left(selection.prefix, link_free - 1e-12)
        if entry.due is not None:  # the compute stream waits for it there
            done = min(done, entry.due)
        starts[id(entry)] = max(entry.spans[0][0], done)
    memory = selection.timeline.copy()
    for entry in taken:
        for low, high in entry.segments(starts[id(entry)]):
            memory[low:high] -= entry.plan.info.bytes
    return memory, starts


@pytest.mark.parametrize("wait_for_stores", [False, True])
def test_the_bookkeeping_matches_a_run_from_scratch(wait_for_stores: bool):
    rng = random.Random(7)
    waited = 0  # entries whose store the compute stream waits for
    for _ in range(20):
        ops = 40
        prefix = [0.0]
        for _ in range(ops):
            prefix.append(prefix[-1] + rng.choice([0.5, 1.0, 2.0]))
        plans: list[ValuePlan] = []
        for k in range(12):
            made = rng.randrange(0, ops - 4)
            used = rng.randrange(made + 3, ops)
            plans.append(_plan(f"v{k}", rng.choice([10, 20, 40]), [made, used]))
        timings = {
            id(p): (rng.choice([0.5, 1.5, 3.0]), rng.choice([0.5, 2.0])) for p in plans
        }
        selection = Selection([300] * ops, prefix, 100, wait_for_stores=wait_for_stores)
        link = np.diff(np.asarray(prefix))
        for op in range(ops):
            for plan in rng.sample(plans, 4):
                again = next(
                    (
                        t
                        for t in selection.by_value.get(id(plan.info), [])
                        if t.plan is plan
                    ),
                    None,
                )
                if again is not None and again.spans[0][1] > op:
                    continue
                selection.take(plan, op, partial(_timing_of, timings), again)
                memory, starts = _from_scratch(selection)
                assert (selection.memory == memory).all()
                assert all(t.start == starts[id(t)] for t in selection.taken.values())
                fetched = link.copy()
                for t in selection.taken.values():
                    if t.fetched is not None:
                        low = t.fetched.low
                        fetched[low : low + t.fetched.free.size] -= t.fetched.free
                assert np.allclose(selection.fetch_link, fetched)
                assert selection.excess_bytes == selection.excess(memory)
        waited += sum(t.due is not None for t in selection.taken.values())
    assert (waited > 0) == wait_for_stores
