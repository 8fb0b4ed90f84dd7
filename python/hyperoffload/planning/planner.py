"""
The insertion planner: decides which tensors leave HBM and over which gaps,
on the program graph (`hyperoffload.analysis.lifetimes`), never walking IR.

Rules (from the HyperOffload seeds):
- an argument that lives outside HBM (`hyperoffload.tier`: parameters,
  optimizer state, KV cache) is fetched before each cluster of its uses and
  released after the cluster (uses closer than `min_gap`, or than the time
  its fetch takes, form one cluster); under a target the program misses,
  it is kept across a gap to its next cluster where the plan leaves room
  (`_joined`: a fetch saved);
- a result whose `hyperoffload.tier` result attribute names a tier (updated
  optimizer state) is written back after it is produced and released after its
  last use;
- any other tensor (activations, untagged arguments) is a candidate for each
  idle gap of at least `min_gap` seconds and `min_bytes` bytes: stored after
  its producer, released after the use before the gap, fetched before the use
  after it. Candidates are ranked by benefit (bytes x gap time), those whose
  store and fetch hide in the gap first, and taken only until the simulated
  peak meets the target;
- with `recompute`, such a value may instead be computed again before the
  use after the gap, by clones of the kernels that make it back to inputs
  resident there (`hyperoffload.planning.recipes`; see `candidates`).

With `place_arguments`, the first rule becomes a choice: where each tagged
argument lives between calls. An argument left out of the plan lives in HBM
for the whole call (`Plan.placed`: the caller keeps it there, its attribute
becomes `hbm`); one taken stays in its tier, fetched before each cluster of
uses as above. The arguments are candidates beside the others, one per
argument, so that as much state stays resident as the target allows and a
step that runs again and again (decode over a KV cache) does not move all of
it over the link at each call. Those whose fetches hide come first: taken in
order of benefit, each reserves link time for its fetches, as late as
possible before the use and at most twice the fetch time ahead, and is
fetched from there; one that no longer fits in the link time left is
exposed. Benefit: the bytes it can take off the peak (nothing for one that is
resident at the peak anyway, e.g. used right after it) x its time out of HBM
(the step's compute time less the windows from each fetch to the last use of
its cluster), ties by bytes x its time before its first use (the latest
first). An argument kept in HBM may also be parked over a gap between two
of its uses, as an activation is: stored once the call starts (the caller
holds no other copy), released after the use before the gap, fetched back
before the use after it. A training step's weight parked between its
forward and backward uses costs a store on the idle direction and one
fetch, where the one left in its tier is fetched before its first use, at
the start of the step, with nothing to hide behind. An argument that names
the result holding its update (`ALIASING_ARG_ATTR`, a training step's
weights and optimizer states) takes it along: the update is written back
where the argument stays (`merge`), and returned in HBM where the argument
is kept there (`Plan.kept_results`).

With `selection="next-use"` the candidates are taken just in time instead
(`hyperoffload.planning.next_use`): furthest next use first wherever the
step exceeds the target, as a runtime cache evicts; a tagged argument kept
in HBM may then also be retired after its last use (stored once the call
starts, never fetched back: it ends the call in its stored copy, as a
parked argument does), as with `retire_arguments`.

A plan that meets the target does without the candidates it does not need
(`_pruned`): the most exposed first, each dropped where the peak still
meets the target and the step is no slower.

Every plan judged goes through the tier chooser
(`hyperoffload.planning.tiers`): each copy's tier (`ValuePlan.tier`) is the
slowest with room whose round trip hides for a stored value, and its own
tier while it has room for the caller's data.

With `compress_kv` (`int8`), every move of a KV value (an argument of
category `kv`, a written-back KV result) is compressed: its transfers are
priced at the compressed bytes plus their codec on the compute stream
(`hyperoffload.model.compression.transfer_time`, the one helper every transfer
time here goes through), and its store and prefetch carry the scheme.

```python
plan = plan_offload(graph, hardware, PlanOptions(target=32 * 10**9))
[(p.info.name, [(g.after, g.before) for g in p.gaps]) for p in plan.values]
placed = plan_offload(graph, hardware, PlanOptions(24 * 10**9, place_arguments=True))
[info.name for info in placed.placed]  # tagged arguments kept in HBM
```
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Literal

from xdsl.dialects import tensor
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, StringAttr
from xdsl.ir import BlockArgument, SSAValue

from hyperoffload.analysis.compression import value_compression
from hyperoffload.analysis.lifetimes import (
    CATEGORIES,
    CATEGORY_ATTR,
    Gap,
    ProgramGraph,
    ValueInfo,
)
from hyperoffload.dialects.hyperoffload import (
    ALIASING_ARG_ATTR,
    OFFLOAD_OPS,
    TIER_ARG_ATTR,
    RemoteType,
    TierAttr,
)
from hyperoffload.ir.diagnostics import Severity, format_diagnostic
from hyperoffload.model.compression import Compressed, transfer_time
from hyperoffload.model.hardware import Hardware, Link
from hyperoffload.model.moves import Move, Recompute, apply_moves
from hyperoffload.model.schedule import Schedule
from hyperoffload.planning.next_use import select_by_next_use
from hyperoffload.planning.recipes import Recipe, RecipeBuilder, recomputation_steps
from hyperoffload.planning.tiers import choose_tiers
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.sim.simulator import SimResult, simulate
from hyperoffload.support.positions import OpIndex
from hyperoffload.support.tiers import OFFLOAD_TIERS, Tier


class PlanError(ValueError):
    """A target no plan can meet."""


@dataclass(frozen=True)
class PlanOptions:
    target: int
    """Peak HBM bytes to meet."""
    min_bytes: int = 0
    min_gap_s: float = 0.0
    categories: tuple[str, ...] = CATEGORIES
    prefetch_distance: int = 1
    """Ops between a fetch and the use it serves, at insertion."""
    optional: bool = True
    """Offload candidates beyond what the rules require (else only the rules)."""
    place_arguments: bool = False
    """Tagged arguments may live in HBM: they become candidates, not rules."""
    recompute: Literal["none", "selective", "auto"] = "none"
    """
    Bridge a gap by computing the value again where its transfer would be
    exposed: `selective` only through kernels without a contraction, `auto`
    through any whose recomputation costs less than the exposed transfer.
    """
    max_recompute_depth: int = 2
    """Kernels one recomputation may run again, back from the value (`recipes`)."""
    recompute_budget: float | None = None
    """
    Recomputations taking up to this fraction of the step's compute time in
    all are tried before any offload (`cheapest`); None: after the offloads
    that hide. The pipeline sets it to its `max-slowdown`.
    """
    offload: bool = True
    """Optional offloads may be chosen (False: only recomputations, with `recompute`)."""
    solver: Literal["heuristic", "milp"] = "heuristic"
    """The ranked heuristic, or the exact reference (`hyperoffload.planning.milp`)."""
    milp_time_limit_s: float = 10.0
    """Seconds the MILP solver may take per plan (`solver="milp"`)."""
    milp_max_steps: int = 400
    """Compute steps beyond which the MILP refuses a function (`PlanError`)."""
    compress_kv: str | None = None
    """Compress every move of a KV value with this scheme (`int8`); None: none."""
    park_arguments: bool = True
    """With `place_arguments`, a tagged argument kept in HBM may be parked between its uses."""
    tiers: tuple[Tier, ...] = OFFLOAD_TIERS
    """
    Where stored values (and the caller's data its own tier has no room for)
    may go, of the tiers the hardware offers (`hyperoffload.planning.tiers`).
    """
    retire_arguments: bool = False
    """
    With `place_arguments` and `park_arguments`, a tagged argument kept in
    HBM may also be retired after its last use (`_retired`); `next-use`
    selection always may.
    """
    selection: Literal["ranked", "next-use"] = "ranked"
    """
    How optional candidates are taken: the ranked prefix, or just in time,
    furthest next use first where the step exceeds the target
    (`hyperoffload.planning.next_use`; tagged arguments kept in HBM, parked
    or retired, as a runtime cache keeps them).
    """


@dataclass
class Plan:
    values: list[ValuePlan] = field(default_factory=list[ValuePlan])
    peak_before: int = 0
    peak_after: int = 0
    met: bool = True
    optional: bool = False
    """Whether the plan offloads candidates beyond what the rules require."""
    placed: list[ValueInfo] = field(default_factory=list[ValueInfo])
    """Tagged arguments the plan keeps in HBM for the whole call (`place_arguments`)."""
    kept_results: list[int] = field(default_factory=list[int])
    """Positions of tagged results returned in HBM, not written back (`place_arguments`)."""


def _result_tiers(graph: ProgramGraph) -> list[Tier | None]:
    res_attrs = graph.function.res_attrs
    tiers: list[Tier | None] = []
    for attrs in res_attrs.data if res_attrs else ():
        assert isinstance(attrs, DictionaryAttr)
        tier = attrs.data.get(TIER_ARG_ATTR)
        tiers.append(
            tier.tier if isinstance(tier, TierAttr) and tier.tier != Tier.HBM else None
        )
    return tiers


def _updated_by(graph: ProgramGraph) -> dict[int, int]:
    """Argument index -> the position of the result holding its update (`ALIASING_ARG_ATTR`)."""
    arg_attrs = graph.function.arg_attrs
    found: dict[int, int] = {}
    for index, attrs in enumerate(arg_attrs.data if arg_attrs else ()):
        assert isinstance(attrs, DictionaryAttr)
        position = attrs.data.get(ALIASING_ARG_ATTR)
        if isinstance(position, IntegerAttr):
            found[index] = position.value.data
    return found


def _kv_results(graph: ProgramGraph) -> list[bool]:
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


JIT_ROUNDS = 3
"""Selections tried for lower targets when the just-in-time plan misses (`_just_in_time`)."""

PRUNE_TRIES = 24
"""Candidates a plan that meets its target tries to do without (`_pruned`)."""

_Ranked = tuple[float, float, ValuePlan]
"""A candidate with its benefit, then a tie-breaker (larger first)."""


Simulations = dict[Hashable, tuple[list[ValuePlan], SimResult]]
"""
Plans simulated on one graph and hardware, by their prefetch distance and
their values' keys (`ValuePlan.key`), each with the plans it was made for.
"""


class _Planner:
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

    def moves(self, plan: ValuePlan) -> list[Move]:
        info = plan.info
        assert info.buffer is not None
        moves: list[Move] = []
        if plan.recompute:
            return moves
        store_after = (
            self.last_step_at_or_before(info.producer) if plan.stored else None
        )
        if plan.write_back is not None:  # stored once, never fetched back
            tier = plan.copy_tier(self.hw.offload_tier)
            compressed = self.compressed(plan)
            return [
                Move(info.buffer, store_after, None, None, None, None, compressed, tier)
            ]
        for index, gap in enumerate(plan.gaps):
            fetch_op = plan.fetch_op(index, self.options.prefetch_distance)
            release = (
                None
                if gap.after < 0 and plan.initially_out
                else self.last_step_at_or_before(gap.after)
            )
            moves.append(
                Move(
                    info.buffer,
                    store_after,
                    release,
                    self.first_step_at_or_after(fetch_op),
                    self.first_step_at_or_after(gap.before),
                    compressed=self.compressed(plan),
                    tier=plan.copy_tier(self.hw.offload_tier),
                )
            )
        return moves

    def recomputes(self, plans: list[ValuePlan]) -> list[Recompute]:
        """
        A free after the use before each gap of a recomputed value, and its
        recipe's kernels before the use after it, once per position however
        many values share them.
        """
        groups: dict[int, list[tuple[ValuePlan, Gap, Recipe]]] = {}
        for plan in plans:
            if plan.recompute:
                for gap, recipe in zip(plan.gaps, plan.recipes, strict=True):
                    groups.setdefault(recipe.at, []).append((plan, gap, recipe))
        recomputes: list[Recompute] = []
        for at, group in groups.items():
            targets = {p.info.buffer for p, _, _ in group if p.info.buffer is not None}
            recipes = [recipe for *_, recipe in group]
            steps = recomputation_steps(self.computes, recipes, targets)
            for index, (plan, gap, _) in enumerate(group):
                assert plan.info.buffer is not None
                recomputes.append(
                    Recompute(
                        plan.info.buffer,
                        self.last_step_at_or_before(gap.after),
                        self.first_step_at_or_after(at),
                        tuple(steps) if index == 0 else (),
                    )
                )
        return recomputes

    def releases(self, plan: ValuePlan) -> list[tuple[int, int]]:
        """
        The free after the last use of an argument living outside HBM, brought
        back, or of a written-back result (the caller gets its copy).
        """
        info = plan.info
        if plan.recompute:
            return []
        if plan.write_back is not None and info.buffer is not None:
            last = info.last_use_before(len(self.graph.ops) - 1)  # the return
            return [(info.buffer, self.last_step_at_or_before(last))]
        if (
            not plan.gaps
            or info.last_use >= len(self.graph.ops) - 1
            or info.buffer is None
        ):
            return []
        if not self.graph.schedule.buffers[info.buffer].pinned or info.tier == Tier.HBM:
            return []  # freed after its last use anyway, or in HBM at return
        # never before the step that waits for the last fetch (uses that run
        # no kernel of their own, such as views, map to an earlier step)
        fetched = self.first_step_at_or_after(plan.gaps[-1].before)
        return [(info.buffer, max(self.last_step_at_or_before(info.last_use), fetched))]

    def schedule(self, plans: list[ValuePlan]) -> Schedule:
        """
        The graph's schedule with the moves of `plans` applied, as the IR
        written orders them: stores in plan order, fetches in their
        `issue_order`.
        """
        distance = self.options.prefetch_distance
        stores: list[Move] = []
        fetches: list[tuple[tuple[int, int], Move]] = []
        for plan in plans:
            moves = self.moves(plan)
            if moves and moves[0].store_after is not None:
                stores.append(replace(moves[0], release=None, fetch=None, use=None))
            if plan.write_back is None:
                orders = [plan.issue_order(i, distance) for i in range(len(moves))]
                fetches += zip(orders, moves, strict=True)
        fetches.sort(key=lambda e: e[0])
        moves = stores + [move for _, move in fetches]
        releases = [r for p in plans for r in self.releases(p)]
        recomputes = self.recomputes(plans)
        schedule = apply_moves(
            _kept_in_hbm(self.graph.schedule, plans),
            moves,
            self.hw,
            releases,
            recomputes,
        )
        for plan in plans:  # an argument never read is never fetched
            if plan.initially_out and not plan.gaps and plan.info.buffer is not None:
                schedule.buffers[plan.info.buffer].initial = False
        return schedule

    def tiered(self, plans: list[ValuePlan]) -> list[ValuePlan]:
        """`plans` with the tier of each copy chosen (`hyperoffload.planning.tiers`)."""
        planned = {p.info.value for p in plans}
        if self.placing():  # a tagged argument no plan takes lives in HBM
            planned |= {info.value for info in self.tagged_arguments()}
        stay = [
            info
            for info in self.graph.values
            if info.producer < 0
            and info.tier != Tier.HBM
            and info.buffer is not None
            and info.value not in planned
        ]
        return choose_tiers(plans, self.graph, self.hw, self.options.tiers, stay)

    def peak(self, plans: list[ValuePlan]) -> int:
        return self.simulated(plans).peak_hbm_bytes

    def simulated(self, plans: list[ValuePlan]) -> SimResult:
        """
        `plans` simulated (no capacity, nothing recorded); once, where the
        planner keeps `simulations` (plans for other targets try the same).
        """
        if self.simulations is None:
            return simulate(self.schedule(plans), self.hw, None, record=False)
        key = (self.options.prefetch_distance, tuple(p.key() for p in plans))
        if key not in self.simulations:
            result = simulate(self.schedule(plans), self.hw, None, record=False)
            self.simulations[key] = (list(plans), result)
        return self.simulations[key][1]

    # rules

    def placing(self) -> bool:
        """Whether tagged arguments are candidates rather than rules."""
        return self.options.place_arguments and self.options.optional

    @cached_property
    def updates(self) -> dict[int, tuple[int, ValueInfo, Tier]]:
        """
        For each tagged argument that is a candidate and names the tagged
        result holding its update (`ALIASING_ARG_ATTR`; the ranked heuristic
        with `place_arguments`), that result's (position, value, tier), by
        the argument's `id`: the result is written back where the argument
        stays, and returned in HBM where the argument is kept in HBM, so
        that the next call finds each where this one took it from.
        """
        options = self.options
        if not (
            self.placing()
            and options.offload
            and options.selection == "ranked"
            and options.solver == "heuristic"
        ):
            return {}
        results = {t[0]: t for t in self.tagged_results}
        updated_by = _updated_by(self.graph)
        found: dict[int, tuple[int, ValueInfo, Tier]] = {}
        for info in self.tagged_arguments():
            assert isinstance(info.value, BlockArgument)
            position = updated_by.get(info.value.index)
            if position in results:
                found[id(info)] = results[position]
        return found

    @cached_property
    def tagged_results(self) -> list[tuple[int, ValueInfo, Tier]]:
        """
        (position, value, tier) of each result tagged with a tier outside HBM
        that may be written back alone (`owns`); an argument left in its
        tier is not one.
        """
        result_tiers = _result_tiers(self.graph)
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
                tier = result_tiers[position] if position < len(result_tiers) else None
                if tier is not None and self.owns(info):
                    found.append((position, info, tier))
        return found

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

    def mandatory(self) -> list[ValuePlan]:
        plans: list[ValuePlan] = []
        results: dict[int, list[tuple[int, ValueInfo, Tier]]] = {}
        follow = {position for position, _, _ in self.updates.values()}
        for tagged in self.tagged_results:
            if tagged[0] not in follow:  # else written back with its argument (`merge`)
                results.setdefault(id(tagged[1]), []).append(tagged)
        for info in self.graph.values:
            if info.buffer is None or isinstance(info.value.type, RemoteType):
                continue
            if info.producer < 0 and info.tier != Tier.HBM:
                if info.category not in self.options.categories:
                    continue
                if not info.uses:  # never read: it stays in its tier
                    plans.append(ValuePlan(info, [], stored=False, initially_out=True))
                elif not self.placing():
                    plans.append(self._clusters(info))
                continue
            plans += [self._result_write_back(*t) for t in results.get(id(info), [])]
        return plans

    @cached_property
    def kv_results(self) -> list[bool]:
        """`_kv_results` of the graph."""
        return _kv_results(self.graph)

    def _result_write_back(
        self, position: int, info: ValueInfo, tier: Tier
    ) -> ValuePlan:
        """The write-back of the result at `position` (compressed if it holds KV state)."""
        kv = position < len(self.kv_results) and self.kv_results[position]
        return self._write_back(info, tier, self.compress_of(info, kv))

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

    def _write_back(
        self, info: ValueInfo, tier: Tier, compress: str | None = None
    ) -> ValuePlan:
        """
        Stored after its producer, released after its last use or that of a
        value sharing its buffer (a view read later), returned as the copy.
        """
        assert info.buffer is not None
        aliases = self.aliases.get(info.buffer, [])
        uses = sorted({use for alias in (info, *aliases) for use in alias.uses})
        return ValuePlan(
            replace(info, uses=uses),
            [],
            stored=True,
            write_back=tier,
            compress=compress,
        )

    def _clusters(self, info: ValueInfo) -> ValuePlan:
        """
        Out of HBM from entry to the first use and between clusters of uses:
        uses split into clusters where the gap is at least `min_gap` and long
        enough to hide the fetch of the next cluster. An argument read through
        views (a reshaped KV cache) is one cluster, from the first use of it
        or its views to the last: the views read the copy fetched first.
        """
        aliases = [] if info.buffer is None else self.aliases.get(info.buffer, [])
        views = [v for v in aliases if v is not info]
        compress = self.compress_of(info)
        if views:
            uses = sorted({use for v in (info, *views) for use in v.uses})
            entry = Gap(
                OpIndex(-1), uses[0], uses[0], self.graph.time_between(-1, uses[0])
            )
            info = replace(info, uses=uses, gap_list=[entry])
            return ValuePlan(
                info, [entry], stored=False, initially_out=True, compress=compress
            )
        fetch = self.transfer_time(self.hw.link(info.tier), info, True, compress)
        split = max(self.options.min_gap_s, fetch)
        gaps = [
            g for g in info.gaps() if g.after < 0 or (g.ops > 0 and g.time_s >= split)
        ]
        return ValuePlan(
            info, gaps, stored=False, initially_out=True, compress=compress
        )

    def candidates(self, taken: set[int], retire: bool = False) -> list[ValuePlan]:
        """
        Optional plans, best first: one per idle gap of an activation or an
        untagged argument (stored, then fetched back), and with
        `place_arguments` one per tagged argument (its `_clusters` plan);
        with `retire` too, one per tagged argument kept in HBM that may be
        parked (`_retired`: stored at entry, released after its last use).
        Offloads that hide in their gap come first; then, with `recompute`
        (a value whose inputs are resident at the use after the gap),
        recomputations that take less than the transfer would expose, then
        recomputations where the offload hides (for when its store or fetch
        still overlaps the peak); exposed offloads last. A recomputation
        taken replaces the value's offloads (`merge_value_plans`).
        """
        options = self.options
        link = self.hw.link(self.default_tier())
        # an update written back with its argument is not moved otherwise
        taken = taken | {t[1].buffer for t in self.updates.values() if t[1].buffer}
        hidden: list[_Ranked] = []
        instead: list[_Ranked] = []  # recomputations instead of exposed transfers
        beyond: list[_Ranked] = []  # recomputations where the offload hides
        exposed: list[_Ranked] = []
        # tagged arguments kept in HBM may be parked between their uses
        parking = self.placing() and options.park_arguments
        placing = self.tagged_arguments() if parking else []
        placeable = {id(info) for info in placing}
        for info in self.graph.values:
            if (
                info.buffer is None
                or info.buffer in taken
                or isinstance(info.value.type, RemoteType)
                or (info.tier != Tier.HBM and id(info) not in placeable)
                or info.bytes < max(options.min_bytes, 1)
                or self.graph.schedule.buffers[info.buffer].kind
                in ("constant", "prefetched")
                or info.category not in options.categories
                or any(isinstance(u.operation, OFFLOAD_OPS) for u in info.value.uses)
                or isinstance(info.value.owner, tensor.EmptyOp)  # nothing to store
            ):
                continue  # offload ops already written move it: left as it is
            busy = self.aliases_busy_until(info)
            if busy is None:
                continue
            compress = self.compress_of(info)
            round_trip = self.transfer_time(
                link, info, False, compress
            ) + self.transfer_time(link, info, True, compress)
            gaps = info.gaps()
            if id(info) in placeable:  # kept in HBM, parked between its uses
                gaps = [g for g in gaps if g.after >= 0]
            if retire and id(info) in placeable:
                retired = self._retired(info, compress)
                if retired is not None:
                    hidden.append(retired)
            for gap in self.idle(gaps, busy):
                benefit = info.bytes * gap.time_s
                offload = ValuePlan(info, [gap], stored=True, compress=compress)
                hides = round_trip <= gap.time_s
                (hidden if hides else exposed).append((benefit, benefit, offload))
            if options.recompute == "none" or id(info) in placeable:
                continue
            for gap in self.idle(self.recipes.gaps(info), busy):
                recipe = self.recipes.recipe(info, gap)
                hides = round_trip <= gap.time_s
                if (
                    gap.after > info.producer  # else the original is never read
                    and recipe is not None
                    and (hides or recipe.time_s < round_trip - gap.time_s)
                ):
                    benefit = info.bytes * gap.time_s
                    plan = ValuePlan(
                        info, [gap], stored=False, recompute=True, recipes=[recipe]
                    )
                    (beyond if hides else instead).append((benefit, benefit, plan))
        if self.placing() and options.offload:
            placeable = self.argument_candidates()
            hidden += placeable[0]
            exposed += placeable[1]
        for ranked in (hidden, instead, beyond, exposed):
            ranked.sort(key=lambda c: (-c[0], -c[1]))
        cheap = self.cheapest(instead + beyond)
        first = {id(plan) for plan in cheap}
        recomputes = [c for c in instead + beyond if id(c[2]) not in first]
        if not options.offload:
            return cheap + [plan for *_, plan in recomputes]
        return cheap + [plan for *_, plan in hidden + recomputes + exposed]

    def _retired(self, info: ValueInfo, compress: str | None) -> _Ranked | None:
        """
        A tagged argument kept in HBM retired after its last use, as a runtime
        cache evicts it: stored once the call starts (on the direction from
        the device, idle then), released after its last use (once the store
        is done), never fetched back; it ends the call in its stored copy, as
        a parked argument does. Benefit: its bytes x the time it is out of
        HBM, from the later of its last use and its store to the end of the
        step. None where that time is nil.
        """
        link = self.hw.link(info.tier)
        store = self.transfer_time(link, info, False, compress)
        prefix = self.graph.prefix
        last = info.last_use_before(len(self.graph.ops) - 1)
        out = prefix[-1] - max(prefix[min(last + 1, len(prefix) - 1)], store)
        if out <= 0:
            return None
        retired = ValuePlan(
            info, [], stored=True, write_back=info.tier, compress=compress
        )
        return (info.bytes * out, info.bytes * out, retired)

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

    def cheapest(self, recomputes: list[_Ranked]) -> list[ValuePlan]:
        """
        The recomputations that come before any offload: the cheapest per
        byte first (ties: the longer gap), while their time adds up to at
        most `recompute_budget` of the step's compute time.
        """
        if self.options.recompute_budget is None:
            return []
        budget = self.options.recompute_budget * self.graph.prefix[-1]
        chosen: list[ValuePlan] = []
        for *_, plan in sorted(
            recomputes,
            key=lambda c: (c[2].recipes[0].time_s / max(c[2].info.bytes, 1), -c[0]),
        ):
            if plan.recipes[0].time_s <= budget:
                budget -= plan.recipes[0].time_s
                chosen.append(plan)
        return chosen

    def idle(self, gaps: list[Gap], busy: int) -> list[Gap]:
        """The parts of `gaps` after op `busy` worth bridging (`min_gap_s`, one op or more)."""
        parts = [self.after_aliases(gap, busy) for gap in gaps]
        return [
            g
            for g in parts
            if g is not None and g.ops >= 1 and g.time_s >= self.options.min_gap_s
        ]

    def after_aliases(self, gap: Gap, busy: int) -> Gap | None:
        """The part of `gap` after op `busy`, where no alias holds the buffer."""
        if busy <= gap.after:
            return gap
        if busy >= gap.before:
            return None
        return Gap(
            OpIndex(busy),
            gap.before,
            gap.before - busy - 1,
            self.graph.time_between(busy, gap.before),
        )

    def aliases_busy_until(self, info: ValueInfo) -> int | None:
        """
        The last op producing or reading another value in `info`'s buffer (a
        view, or an in-place result): only a gap after it frees the buffer.
        None: the buffer is not an activation's, so its aliases keep it.
        """
        assert info.buffer is not None
        others = [o for o in self.aliases.get(info.buffer, []) if o is not info]
        if not others:
            return -1
        if self.graph.schedule.buffers[info.buffer].kind != "activation":
            return None
        return max(max([o.producer, *o.uses]) for o in others)

    def argument_candidates(self) -> tuple[list[_Ranked], list[_Ranked]]:
        """
        One candidate per tagged argument (it stays in its tier), split into
        those whose fetches hide and the others. Benefit: the bytes it can take
        off the peak x its time out of HBM, then its bytes x its time before
        its first use (and between clusters).

        Fetches hide if they fit in the link time the better candidates left
        before their uses, at most twice their duration ahead (earlier, the
        copy would hold HBM too long): arguments are taken in order of benefit
        and each one that hides reserves that link time and is fetched from
        there.
        """
        ranked: list[tuple[float, float, float, ValuePlan]] = []
        for info in self.tagged_arguments():
            plan = self._clusters(info)
            fetch = self.transfer_time(
                self.hw.link(info.tier), info, True, plan.compress
            )
            windows = self.windows(
                plan, [self.lead(gap.before, fetch) for gap in plan.gaps]
            )
            resident = sum(
                self.graph.prefix[b + 1] - self.graph.prefix[a] for a, b in windows
            )
            out = self.graph.prefix[-1] - resident
            later = sum(gap.time_s for gap in plan.gaps)
            ranked.append(
                (self.reducible(plan, windows) * out, info.bytes * later, fetch, plan)
            )
        ranked.sort(key=lambda c: (-c[0], -c[1]))
        free = list(self.graph.op_time)  # link time not yet reserved, per op
        free_out = list(self.graph.op_time)  # the same, from the device
        hidden: list[_Ranked] = []
        exposed: list[_Ranked] = []
        for benefit, size, fetch, plan in ranked:
            stores = list(free_out)
            starts = (
                self.reserve(free, plan, fetch)
                if self.reserve_update(stores, plan)
                else None
            )
            if starts is None:
                exposed.append((benefit, size, plan))
            else:
                plan.fetch_ops = starts
                free_out[:] = stores
                hidden.append((benefit, size, plan))
        return hidden, exposed

    def reserve_update(self, free: list[float], plan: ValuePlan) -> bool:
        """
        Reserve link time in `free` for the write-back of the update of
        `plan`'s argument (`updates`), from the op after the update is made
        on; whether it fits before the step ends (True, nothing reserved,
        for an argument without one). An update made at the end of the step
        (the first layer's, with the optimizer in the backward pass) has no
        compute left to hide its store behind.
        """
        update = self.updates.get(id(plan.info))
        if update is None:
            return True
        _, info, tier = update
        need = self.transfer_time(self.hw.link(tier), info, False, None)
        trial = list(free)
        for op in range(info.producer + 1, len(trial)):
            taken = min(trial[op], need)
            trial[op] -= taken
            need -= taken
            if need <= 1e-12:
                free[:] = trial
                return True
        return False

    def lead(self, before: int, fetch: float) -> int:
        """The last op starting `fetch` seconds of compute or more before op `before` (or 0)."""
        prefix = self.graph.prefix
        return max(0, bisect_right(prefix, prefix[before] - fetch) - 1)

    def reserve(
        self, free: list[float], plan: ValuePlan, fetch: float
    ) -> list[int] | None:
        """
        Reserve link time in `free` for each fetch of `plan`, as late as
        possible before its use and within twice the fetch time; the op before
        which each fetch is issued (after the op where only the first sliver
        of it would run, less than half that op), or None (nothing reserved)
        if one does not fit.
        """
        trial = list(free)
        starts: list[int] = []
        for gap in plan.gaps:
            need, op, taken = fetch, gap.before, 0.0
            earliest = self.graph.prefix[gap.before] - 2 * fetch
            while need > 0 and op > 0 and self.graph.prefix[op] > earliest:
                op -= 1
                taken = min(trial[op], need)
                trial[op] -= taken
                need -= taken
            if need > 1e-12:
                return None
            sliver = op < gap.before and taken < self.graph.op_time[op] / 2
            starts.append(op + 1 if sliver else op)
        free[:] = trial
        return starts

    def windows(self, plan: ValuePlan, starts: list[int]) -> list[tuple[int, int]]:
        """Where the value is resident: each fetch's start to its cluster's last use."""
        ends = [gap.after for gap in plan.gaps[1:]] + [plan.info.last_use]
        return list(zip(starts, ends, strict=True))

    def reducible(self, plan: ValuePlan, windows: list[tuple[int, int]]) -> int:
        """
        The bytes keeping an argument in its tier can take off the peak: it is
        still resident in its `windows`, so the peak falls at most to the
        highest point of the timeline there (an argument used right after the
        peak cannot lower it without exposing its fetch).
        """
        timeline = self.graph.timeline
        highest = max(max(timeline[a : b + 1]) for a, b in windows)
        return max(0, min(plan.info.bytes, self.graph.peak - highest))

    def merge(self, chosen: list[ValuePlan], plans: list[ValuePlan]) -> list[ValuePlan]:
        """
        `merge_value_plans(plans)`, less the recomputations that would read a buffer some
        plan moves (what their clones read must stay where it is). A value
        recomputed through a chain of kernels keeps its longest gap only:
        chains cloned again over several gaps of one value are where the
        program written has been seen to fuse otherwise than the recipes say
        (on the LLaMA-3-8B step's loss), and `PlanningLoop.write` would then
        fall back to offloading alone.
        """
        merged = [_one_gap_per_chain(p) for p in merge_value_plans(plans)]
        updates = self.updates
        merged += [  # the update of an argument left in its tier goes back there
            self._result_write_back(*updates[id(p.info)])
            for p in merged
            if p.initially_out and id(p.info) in updates
        ]
        moved = {p.info.buffer for p in (*chosen, *merged)}
        return [
            p for p in merged if not any(b in moved for r in p.recipes for b in r.reads)
        ]

    def infeasible(self) -> None:
        for step, needed in self.graph.schedule.working_sets():
            if needed > self.options.target:
                raise PlanError(
                    format_diagnostic(
                        step.loc,
                        Severity.ERROR,
                        f"no plan meets the HBM target of {self.options.target} B: "
                        f"'{step.name}' alone needs {needed} B (its inputs and outputs)",
                    )
                )

    def run(self) -> Plan:
        self.infeasible()
        self.default_tier()  # raises if no tier allowed exists
        plan = Plan(peak_before=self.peak([]))
        chosen = self.tiered(self.mandatory())
        peak = self.peak(chosen)
        if peak > self.options.target and self.options.optional:
            candidates = self.candidates(
                {p.info.buffer for p in chosen if p.info.buffer is not None},
                retire=self.options.selection == "next-use"
                or self.options.retire_arguments,
            )
            if self.options.selection == "next-use":
                taken, peak = self._just_in_time(chosen, candidates)
                count = len(taken)
            else:
                count, peak = self._smallest_prefix(chosen, candidates, peak)
                taken = candidates[:count]
            if peak <= self.options.target:
                taken, peak = self._pruned(chosen, taken, peak)
            chosen = self.tiered(chosen + self.merge(chosen, taken))
            plan.optional = count > 0
        if plan.peak_before > self.options.target >= peak:
            chosen, peak = self._joined(chosen, peak)
        plan.values, plan.peak_after = chosen, peak
        plan.met = peak <= self.options.target
        if self.placing():
            remote = {p.info.value for p in chosen if p.initially_out}
            plan.placed = [i for i in self.tagged_arguments() if i.value not in remote]
            updates = self.updates
            plan.kept_results = sorted(
                updates[id(i)][0] for i in plan.placed if id(i) in updates
            )
        return plan

    def _just_in_time(
        self, chosen: list[ValuePlan], candidates: list[ValuePlan]
    ) -> tuple[list[ValuePlan], int]:
        """
        The candidates `select_by_next_use` takes (offloads and retired
        arguments; no argument left in its tier, no recomputation), for the
        target, then for a target lower by what the simulated peak exceeds
        it (up to `JIT_ROUNDS` times): stores that end late hold their bytes
        longer than the timeline says. The plan with the lowest peak if none
        meets the target.
        """
        pool = [c for c in candidates if not c.recompute]
        target = self.options.target
        best: tuple[list[ValuePlan], int] | None = None
        goal = target
        for _ in range(JIT_ROUNDS):
            taken = select_by_next_use(
                pool, self.graph.timeline, self.graph.prefix, goal, self.timing
            )
            peak = self.peak(self.tiered(chosen + self.merge(chosen, taken)))
            if best is None or peak < best[1]:
                best = (taken, peak)
            if peak <= target:
                break
            goal -= peak - target
        assert best is not None
        return best

    def timing(self, plan: ValuePlan) -> tuple[float, float]:
        """`plan`'s store and fetch seconds on the link of its copy's tier (by default)."""
        tier = plan.write_back or (
            plan.info.tier if plan.initially_out else self.default_tier()
        )
        link = self.hw.link(tier)
        store = self.transfer_time(link, plan.info, False, plan.compress)
        return store, self.transfer_time(link, plan.info, True, plan.compress)

    def _joined(
        self, chosen: list[ValuePlan], peak: int
    ) -> tuple[list[ValuePlan], int]:
        """
        `chosen` with an argument left in its tier kept in HBM across some of
        the gaps between its clusters of uses, where the target leaves room:
        the largest first (each join saves a fetch of its bytes), up to
        `PRUNE_TRIES`, each kept where the peak still meets the target and
        the step is no slower. A split at every gap that hides a fetch
        spends link time the target does not ask for.
        """
        joins = sorted(
            (
                (plan.info.bytes, index, position, plan.gaps[position])
                for index, plan in enumerate(chosen)
                if plan.initially_out
                for position in range(1, len(plan.gaps))
            ),
            key=lambda j: (-j[0], j[1], j[2]),
        )
        if not joins:
            return chosen, peak
        makespan = self.simulated(chosen).makespan_s
        for _, index, _, gap in joins[:PRUNE_TRIES]:
            plan = chosen[index]
            at = next(k for k, g in enumerate(plan.gaps) if g is gap)
            fetch_ops = plan.fetch_ops
            joined = replace(
                plan,
                gaps=plan.gaps[:at] + plan.gaps[at + 1 :],
                fetch_ops=None
                if fetch_ops is None
                else fetch_ops[:at] + fetch_ops[at + 1 :],
            )
            trial = [*chosen[:index], joined, *chosen[index + 1 :]]
            result = self.simulated(trial)
            if (
                result.peak_hbm_bytes <= self.options.target
                and result.makespan_s <= makespan
            ):
                chosen, peak, makespan = trial, result.peak_hbm_bytes, result.makespan_s
        return chosen, peak

    def exposure(self, plan: ValuePlan) -> float:
        """
        Link time `plan`'s moves cannot hide in its gaps (on the default
        tier's link; a recomputation: its kernels' time).
        """
        if plan.recompute:
            return sum(r.time_s for r in plan.recipes)
        link = self.hw.link(self.default_tier())
        info, scheme = plan.info, plan.compress
        fetch = self.transfer_time(link, info, True, scheme)
        store = (
            0.0 if plan.initially_out else self.transfer_time(link, info, False, scheme)
        )
        return sum(max(0.0, store + fetch - gap.time_s) for gap in plan.gaps)

    def _pruned(
        self, chosen: list[ValuePlan], taken: list[ValuePlan], peak: int
    ) -> tuple[list[ValuePlan], int]:
        """
        `taken` less the candidates the target does not need, the most
        exposed tried first (up to `PRUNE_TRIES`): a prefix of the ranking
        that meets the target can overshoot it by a large candidate taken
        last, and what it no longer needs only costs link time.
        """
        ranked = sorted(
            (c for c in taken if self.exposure(c) > 0),
            key=lambda c: -self.exposure(c),
        )
        if not ranked:
            return taken, peak
        makespan = self.simulated(
            self.tiered(chosen + self.merge(chosen, taken))
        ).makespan_s
        for candidate in ranked[:PRUNE_TRIES]:
            fewer = [c for c in taken if c is not candidate]
            result = self.simulated(self.tiered(chosen + self.merge(chosen, fewer)))
            if (
                result.peak_hbm_bytes <= self.options.target
                and result.makespan_s <= makespan
            ):
                taken, peak, makespan = fewer, result.peak_hbm_bytes, result.makespan_s
        return taken, peak

    def _smallest_prefix(
        self, chosen: list[ValuePlan], candidates: list[ValuePlan], peak: int
    ) -> tuple[int, int]:
        """
        The fewest top candidates whose moves bring the peak to the target (a
        bisection: the peak falls roughly as more are taken); if no prefix
        tried meets it, the tried prefix with the lowest peak.
        """
        best = (0, peak)
        low, high = 1, len(candidates)
        while low <= high:
            middle = (low + high) // 2
            reached = self.peak(
                self.tiered(chosen + self.merge(chosen, candidates[:middle]))
            )
            if reached <= self.options.target:
                best, high = (middle, reached), middle - 1
            else:
                if reached < best[1] and best[1] > self.options.target:
                    best = (middle, reached)
                low = middle + 1
        return best


def _kept_in_hbm(schedule: Schedule, plans: list[ValuePlan]) -> Schedule:
    """
    `schedule` with each tagged argument that `plans` park between uses (kept
    in HBM by the caller, so no copy exists outside it) at home in HBM: its
    store is priced, as the IR written (the argument tagged `hbm`) runs it.
    """
    parked = {
        p.info.buffer
        for p in plans
        if p.info.producer < 0
        and p.stored
        and not p.initially_out
        and p.info.buffer is not None
        and schedule.buffers[p.info.buffer].home != Tier.HBM
    }
    if not parked:
        return schedule
    buffers = [
        replace(b, home=Tier.HBM) if b.id in parked else b for b in schedule.buffers
    ]
    return replace(schedule, buffers=buffers)


def _one_gap_per_chain(plan: ValuePlan) -> ValuePlan:
    """`plan` over its longest gap alone if it recomputes through a chain over several."""
    if len(plan.gaps) < 2 or all(len(r.steps) < 2 for r in plan.recipes):
        return plan
    longest = max(range(len(plan.gaps)), key=lambda i: plan.gaps[i].time_s)
    return replace(plan, gaps=[plan.gaps[longest]], recipes=[plan.recipes[longest]])


def merge_value_plans(plans: list[ValuePlan]) -> list[ValuePlan]:
    """One plan per value, its gaps in order (gaps of one value never overlap)."""
    merged: dict[int, ValuePlan] = {}
    for plan in plans:
        key = id(plan.info)
        if key in merged and merged[key].recompute != plan.recompute:
            if not plan.recompute:
                continue  # an offload never replaces a recomputation
            del merged[key]  # a recomputation replaces the offload: one way per value
        if key in merged and merged[key].initially_out and not plan.initially_out:
            continue  # an argument left in its tier is not parked as well
        retiring = plan.write_back is not None and plan.info.producer < 0
        if retiring and key in merged:
            continue  # parked, it is retired after its last use anyway
        if key in merged and merged[key].write_back is not None and plan.gaps:
            del merged[key]  # parked instead of retired: the gaps decide
        if retiring:
            merged[key] = replace(plan, gaps=[])
        elif plan.initially_out:  # an argument left in its tier: one plan, kept whole
            merged[key] = ValuePlan(
                plan.info,
                list(plan.gaps),
                stored=False,
                initially_out=True,
                fetch_ops=plan.fetch_ops,
                compress=plan.compress,
            )
        elif key in merged:
            into = merged[key]
            into.fetch_ops = (
                None
                if into.fetch_ops is None or plan.fetch_ops is None
                else into.fetch_ops + plan.fetch_ops
            )
            into.gaps += plan.gaps
            into.recipes += plan.recipes
        else:
            merged[key] = ValuePlan(
                plan.info,
                list(plan.gaps),
                stored=not plan.recompute,
                recompute=plan.recompute,
                recipes=list(plan.recipes),
                compress=None if plan.recompute else plan.compress,
                fetch_ops=None if plan.fetch_ops is None else list(plan.fetch_ops),
            )
    for plan in merged.values():
        if plan.recipes:
            pairs = sorted(
                zip(plan.gaps, plan.recipes, strict=True), key=lambda e: e[0].after
            )
            plan.gaps, plan.recipes = [g for g, _ in pairs], [r for _, r in pairs]
        elif plan.fetch_ops is not None and not plan.initially_out:
            moved = sorted(
                zip(plan.gaps, plan.fetch_ops, strict=True), key=lambda e: e[0].after
            )
            plan.gaps, plan.fetch_ops = [g for g, _ in moved], [f for _, f in moved]
        else:
            plan.gaps.sort(key=lambda g: g.after)
    return list(merged.values())


def plan_offload(
    graph: ProgramGraph,
    hardware: Hardware,
    options: PlanOptions,
    simulations: Simulations | None = None,
) -> Plan:
    """
    Which values leave HBM over which gaps, so that the peak meets the
    target; `simulations`, if given, kept and reused across calls on the
    same graph and hardware.
    """
    return _Planner(graph, hardware, options, simulations).run()


def plan_schedule(
    graph: ProgramGraph, plan: Plan, hardware: Hardware, prefetch_distance: int = 1
) -> Schedule:
    """The schedule `plan` runs as: what the IR with the plan written in extracts to."""
    options = PlanOptions(target=0, prefetch_distance=prefetch_distance)
    return _Planner(graph, hardware, options).schedule(plan.values)


def offload_choices(
    graph: ProgramGraph,
    hardware: Hardware,
    options: PlanOptions,
    check_target: bool = True,
) -> tuple[list[ValuePlan], list[ValuePlan]]:
    """
    What `plan_offload` chooses from: the plans the rules require, and the
    optional candidates, best first (none unless `options.optional`). The
    exact reference (`hyperoffload.planning.milp`) chooses from the same.
    With `check_target`, a target below one op's working set is a `PlanError`.
    """
    planner = _Planner(graph, hardware, options)
    if check_target:
        planner.infeasible()
    required = planner.mandatory()
    if not options.optional:
        return required, []
    taken = {p.info.buffer for p in required if p.info.buffer is not None}
    return required, planner.candidates(taken)
