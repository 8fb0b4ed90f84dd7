"""
What every part of the insertion planner reads: the graph, the hardware, the
options and the simulations kept across targets, with the facts derived from
them once (compute steps, recipes, aliases, the tagged arguments and
results) and the transfer time every price here goes through.

```python
ctx = PlanContext(graph, hardware, PlanOptions(target=32 * 10**9))
ctx.last_step_at_or_before(op)   # the compute step an op's free follows
[info.name for info in ctx.tagged_arguments()]   # arguments living outside HBM
```
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable
from dataclasses import replace
from functools import cached_property

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import BlockArgument, SSAValue

from hyperoffload.analysis.compression import value_compression
from hyperoffload.analysis.lifetimes import CATEGORY_ATTR, ProgramGraph, ValueInfo
from hyperoffload.dialects.hyperoffload import RemoteType, updated_results
from hyperoffload.model.compression import Compressed, transfer_time
from hyperoffload.model.hardware import Hardware, Link
from hyperoffload.planning.plan import PlanError, PlanOptions, Simulations
from hyperoffload.planning.recipes import RecipeBuilder
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support.tiers import Tier


def kv_results(graph: ProgramGraph) -> list[bool]:
    """
    Which results hold KV state: those whose result attributes say
    `hyperoffload.category = "kv"`, and, without a category, every result of a
    function taking KV arguments (a decode step's new cache entries carry
    only their tier).
    """
    takes_kv = any(info.producer < 0 and info.category == "kv" for info in graph.values)
    res_attrs = graph.function.res_attrs
    kv: list[bool] = []
    for attrs in res_attrs.data if res_attrs else ():
        category = attrs.data.get(CATEGORY_ATTR)
        named = category.data if isinstance(category, StringAttr) else None
        kv.append(named == "kv" or (named is None and takes_kv))
    return kv


class PlanContext:
    """One function, its hardware and the options it is planned with."""

    def __init__(
        self,
        graph: ProgramGraph,
        hardware: Hardware,
        options: PlanOptions,
        simulations: Simulations | None = None,
    ):
        self.graph = graph
        self.hw = hardware
        self.options = options
        self.simulations = simulations
        starts = sorted(graph.compute_of_op)
        self.compute_ops = starts  # op indices that have a compute step, in order
        mode = "auto" if options.recompute == "none" else options.recompute
        self.recipes = RecipeBuilder(graph, mode, options.max_recompute_depth)
        self.computes = self.recipes.computes
        self.aliases = self.recipes.aliases

    # positions: op index -> compute-step index

    def last_step_at_or_before(self, op: int) -> int:
        """The last compute step at or before op `op` (-1: none)."""
        return bisect_right(self.compute_ops, op) - 1

    def first_step_at_or_after(self, op: int) -> int:
        """The first compute step at or after op `op`."""
        return bisect_left(self.compute_ops, op)

    # compressed transfers

    def compress_of(self, info: ValueInfo, kv: bool = False) -> str | None:
        """The scheme `info`'s moves compress with: `compress_kv` for KV values."""
        if info.category == "kv" or kv:
            return self.options.compress_kv
        return None

    def compressed(self, plan: ValuePlan) -> Compressed | None:
        """How `plan`'s value crosses the link, if it is compressed."""
        return value_compression(plan.info.value, plan.compress, self.hw)

    def transfer_time(
        self, link: Link, info: ValueInfo, to_device: bool, scheme: str | None
    ) -> float:
        """When `info` is usable after crossing `link` (compressed with `scheme`)."""
        compressed = value_compression(info.value, scheme, self.hw)
        return transfer_time(link, info.bytes, to_device, compressed)

    def kept(
        self, what: Hashable, make: Callable[[], list[ValuePlan]]
    ) -> list[ValuePlan]:
        """
        `make()`, worked out once per `what` and options but the target
        where the planner keeps `simulations` (`Simulations.plans`); a new
        list each time, of the same plans.
        """
        if self.simulations is None:
            return make()
        known = self.simulations.plans
        key = (what, replace(self.options, target=0))
        if key not in known:
            known[key] = make()
        return list(known[key])

    def default_tier(self) -> Tier:
        """The hardware's offload tier if `tiers` allows it, else the fastest allowed."""
        allowed = [t for t in self.options.tiers if t in self.hw.links]
        if not allowed:
            raise PlanError(
                f"hardware '{self.hw.name}' offers none of the tiers "
                f"{', '.join(self.options.tiers)} (it has: {', '.join(self.hw.links)})"
            )
        if self.hw.offload_tier in allowed:
            return self.hw.offload_tier
        return min(allowed, key=lambda t: self.hw.link(t).transfer_time(1 << 20, True))

    # the caller's data: tagged arguments and results

    def placing(self) -> bool:
        """Whether tagged arguments are candidates rather than rules."""
        return self.options.place_arguments and self.options.optional

    def tagged_arguments(self) -> list[ValueInfo]:
        """Used arguments living outside HBM, in the categories that may move."""
        return [
            info
            for info in self.graph.values
            if info.buffer is not None
            and not isinstance(info.value.type, RemoteType)
            and info.producer < 0
            and info.tier != Tier.HBM
            and info.uses
            and info.category in self.options.categories
        ]

    @cached_property
    def tagged_results(self) -> list[tuple[int, ValueInfo, Tier]]:
        """
        (position, value, tier) of each result tagged with a tier outside HBM
        that may be written back alone (`owns`); an argument left in its
        tier is not one.
        """
        tiers = self.graph.result_tiers()
        returned = self.graph.ops[-1].operands if self.graph.ops else ()
        positions: dict[SSAValue, list[int]] = {}  # each returned value's places
        for position, value in enumerate(returned):
            positions.setdefault(value, []).append(position)
        found: list[tuple[int, ValueInfo, Tier]] = []
        for info in self.graph.values:
            if (
                info.buffer is None
                or isinstance(info.value.type, RemoteType)
                or (info.producer < 0 and info.tier != Tier.HBM)
            ):
                continue
            for position in positions.get(info.value, ()):
                tier = tiers[position] if position < len(tiers) else None
                if tier is not None and self.owns(info):
                    found.append((position, info, tier))
        return found

    @cached_property
    def updates(self) -> dict[int, tuple[int, ValueInfo, Tier]]:
        """
        For each tagged argument that is a candidate and names the tagged
        result holding its update (`ALIASING_ARG_ATTR`; the heuristic with
        `place_arguments`, either selection), that result's (position, value, tier), by
        the argument's `id`: the result is written back where the argument
        stays, and returned in HBM where the argument is kept in HBM, so
        that the next call finds each where this one took it from.
        """
        options = self.options
        if not (self.placing() and options.offload and options.solver == "heuristic"):
            return {}
        results = {t[0]: t for t in self.tagged_results}
        updated_by = updated_results(self.graph.function)
        found: dict[int, tuple[int, ValueInfo, Tier]] = {}
        for info in self.tagged_arguments():
            assert isinstance(info.value, BlockArgument)
            position = updated_by.get(info.value.index)
            if position in results:
                found[id(info)] = results[position]
        return found

    @cached_property
    def kv_results(self) -> list[bool]:
        """`kv_results` of the graph."""
        return kv_results(self.graph)

    def owns(self, info: ValueInfo) -> bool:
        """
        Whether `info` may be written back alone: its buffer is its own (it is
        not a view of a value made before it) and no other value in it is
        returned (the caller would get that one in HBM). Views read inside the
        function are fine: the buffer is released after their last use.
        """
        assert info.buffer is not None
        others = [o for o in self.aliases.get(info.buffer, []) if o is not info]
        return not any(o.producer < info.producer or o.returned for o in others)
