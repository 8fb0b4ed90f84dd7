"""
Plans in and out of the exact reference's MILP (`hyperoffload.planning.milp`)
on a built `Formulation`: `start_columns` writes a plan as the integer
columns the solver starts from, `decode` reads the plan of a solution.

```python
columns, values = start_columns(formulation, heuristic_plan, distance=1)
plan, exposed = decode(formulation, solver.getSolution().col_value)
```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hyperoffload.planning.milp_model import Formulation, ModelGap
from hyperoffload.planning.planner import Plan, merge_value_plans
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support.tiers import Tier

GapKey = tuple[object, int, int, Tier]
"""A gap of a value: (value, after, before, the tier of its copy)."""

Columns = tuple[list[int], list[float]]
"""Integer columns and the values a start gives them."""


# a start


def start_columns(f: Formulation, plan: Plan | None, distance: int) -> Columns:
    """
    The integer columns of a plan the solver starts from (it completes the
    rest): `plan`'s choices and fetch positions where its gaps are
    candidates here, else only the required gaps, each fetched as early as
    its window allows.
    """
    fetches, recomputed = _planned_fetches(f, plan, distance)
    taken, positions = _taken(f, fetches)
    columns, values = _fetch_starts(f, taken, positions)
    for c in range(f.num_required, len(f.choices)):
        columns.append(f.take[c])
        values.append(1.0 if c in taken else 0.0)
    for index, store in enumerate(f.stores):
        columns.append(store.column)
        stored = any(g.store == index and g.choice in taken for g in f.gaps)
        values.append(1.0 if stored else 0.0)
    for r, candidate in zip(f.recompute_take, f.recomputes, strict=True):
        (gap,) = candidate.gaps
        columns.append(r)
        key = (candidate.info.value, gap.after, gap.before)
        values.append(1.0 if key in recomputed else 0.0)
    return columns, values


def _planned_fetches(
    f: Formulation, plan: Plan | None, distance: int
) -> tuple[dict[GapKey, int], set[tuple[object, int, int]]]:
    """The position each gap of `plan` is fetched at, and its recomputed gaps."""
    fetches: dict[GapKey, int] = {}
    recomputed: set[tuple[object, int, int]] = set()
    for value_plan in plan.values if plan else ():
        if value_plan.recompute:
            recomputed.update(
                (value_plan.info.value, g.after, g.before) for g in value_plan.gaps
            )
            continue
        tier = value_plan.copy_tier(f.hw.offload_tier)
        for index, gap in enumerate(value_plan.gaps):
            op = value_plan.fetch_op(index, distance)
            key = (value_plan.info.value, gap.after, gap.before, tier)
            fetches[key] = f.first_at_or_after(op)
    return fetches, recomputed


def _taken(
    f: Formulation, fetches: dict[GapKey, int]
) -> tuple[set[int], list[int | None]]:
    """
    The choices the start takes (the required ones, and those with a gap
    fetched), and each model gap's fetch position (None: not planned).
    """
    taken: set[int] = set(range(f.num_required))
    positions: list[int | None] = []
    for gap in f.gaps:
        choice = f.choices[gap.choice]
        original = choice.gaps[gap.index]
        tier = choice.copy_tier(f.hw.offload_tier)
        key = (choice.info.value, original.after, original.before, tier)
        position = fetches.get(key)
        if gap.choice < f.num_required and position is None:
            position = gap.release + 1
        if position is not None:
            taken.add(gap.choice)
        positions.append(position)
    return taken, positions


def _fetch_starts(
    f: Formulation, taken: set[int], positions: list[int | None]
) -> Columns:
    """`S` of every gap: 1 from its fetch on (within its window) where taken."""
    columns: list[int] = []
    values: list[float] = []
    for gap, position in zip(f.gaps, positions, strict=True):
        issued = position if gap.choice in taken else None
        if issued is not None:
            issued = min(max(issued, gap.release + 1), gap.use)
        for k, column in enumerate(gap.fetch[:-1]):  # the last is `x`
            at = gap.release + 1 + k
            columns.append(column)
            values.append(1.0 if issued is not None and at >= issued else 0.0)
    return columns, values


# the answer


def decode(f: Formulation, values: Sequence[float]) -> tuple[Plan, float]:
    """The plan of a solution and its exposure (in seconds)."""
    chosen = _chosen(f, values)
    recomputed = [
        plan
        for r, plan in zip(f.recompute_take, f.recomputes, strict=True)
        if values[r] > 0.5
    ]
    values_plans = list(f.gapless) + _merged(f, chosen) + merge_value_plans(recomputed)
    result = Plan(values=values_plans)
    result.optional = any(c >= f.num_required for c in chosen)
    if f.options.place_arguments and f.options.optional:
        remote = {p.info.value for p in values_plans}
        result.placed = [
            p.info
            for p in f.candidates
            if p.initially_out and p.info.value not in remote
        ]
    exposed = sum(values[e] for e in f.stall) * f.compute
    return result, exposed


def _chosen(f: Formulation, values: Sequence[float]) -> dict[int, list[int]]:
    """Each choice taken -> the fetch op of each of its gaps."""
    chosen: dict[int, list[int]] = {}
    for gap in f.gaps:
        if values[f.take[gap.choice]] < 0.5:
            continue
        plan = f.choices[gap.choice]
        fetches = chosen.setdefault(gap.choice, [0] * len(plan.gaps))
        fetches[gap.index] = _fetch_op(f, gap, values)
    return chosen


def _fetch_op(f: Formulation, gap: ModelGap, values: Sequence[float]) -> int:
    """The op a taken gap's fetch is issued before: its first `S` at 1."""
    position = next(
        (gap.release + 1 + k for k, s in enumerate(gap.fetch) if values[s] > 0.5),
        gap.use,
    )
    if position >= gap.use:
        return f.choices[gap.choice].gaps[gap.index].before
    return f.steps[position]


def _merged(f: Formulation, chosen: dict[int, list[int]]) -> list[ValuePlan]:
    """
    One plan per value (its gaps in order, over the choices taken); fetches
    issued before one step run first come, first served: the one needed
    first is issued first.
    """
    merged: dict[int, ValuePlan] = {}
    for c, fetches in chosen.items():
        plan = f.choices[c]
        key = id(plan.info)
        if key in merged and not plan.initially_out:
            current = merged[key]
            pairs = sorted(
                zip(
                    current.gaps + plan.gaps,
                    (current.fetch_ops or []) + fetches,
                    strict=True,
                ),
                key=lambda pair: pair[0].after,
            )
            current.gaps = [g for g, _ in pairs]
            current.fetch_ops = [op for _, op in pairs]
        else:
            merged[key] = replace(plan, gaps=list(plan.gaps), fetch_ops=fetches)
    return sorted(
        merged.values(),
        key=lambda p: min(
            (op, g.before) for op, g in zip(p.fetch_ops or [], p.gaps, strict=True)
        ),
    )
