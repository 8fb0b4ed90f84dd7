"""
The planning loop of one function: its program graph is extracted once;
each HBM target is planned, its fetches placed and the result simulated on
that graph; the IR is written once, for the plan chosen (and, to price a
plan as written, for a moment: it is put back as it was).

A target is met in addresses, not only in bytes: a plan fits when the arena
of its static layout (`hyperoffload.sim.arena`) is within the target. Where
the live bytes fit but the layout does not, the loop plans again for a
target lower by the excess (up to `ARENA_ROUNDS` times), for the plan with
recomputation and the one without alike, before choosing between them.

A plan is priced as the program it writes. A plan that only moves values
is priced on the graph (`plan_schedule` is the schedule its IR extracts
to); one that recomputes is written into the function, extracted and
simulated, and the function put back, because clones fuse with the kernels
around them (and the originals they leave with one consumer fuse with it)
otherwise than the graph's recipes, which run each clone as a kernel of its
own, say; so is one that fetches a value while the store of the copy it
replaces still reads it (`SimResult.fetches_into_held`). No plan chosen
peaks above the function as it came: the plan for that peak is taken
instead.

What targets repeat is done once per loop: a plan priced as written once
per IR it writes (`ValuePlan.key`), the ranked planner's plan once per
options and its simulations once per set of values, an arena once per run.

```python
loop = PlanningLoop(function, graph, hardware, LoopOptions(PlanOptions(target=0), MoveOptions()))
trial = loop.trial(32 * 10**9)   # plan, move-window, simulation: no IR touched
loop.write(trial)                # the offload ops, in the IR
```
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from itertools import product

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import extract_schedule
from hyperoffload.analysis.fusion import Fusion
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.dialects.hyperoffload import PrefetchOp
from hyperoffload.dialects.residency import ancestor_in
from hyperoffload.ir.snapshot import FunctionSnapshot, restored_afterwards
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.layout import DEFAULT_ALIGNMENT
from hyperoffload.model.schedule import Schedule
from hyperoffload.planning.arrange import Skeleton, arrange
from hyperoffload.planning.fetch_windows import place_fetches
from hyperoffload.planning.milp import plan_exact
from hyperoffload.planning.placement import MoveOptions
from hyperoffload.planning.planner import (
    Plan,
    PlanError,
    PlanOptions,
    Simulations,
    offload_choices,
    plan_offload,
    plan_schedule,
)
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.planning.write_plan import write_plan
from hyperoffload.sim.arena import planned_arena
from hyperoffload.sim.simulator import SimResult, simulate
from hyperoffload.support.positions import SkeletonPosition


@dataclass(frozen=True)
class LoopOptions:
    plan: PlanOptions
    """How to plan; the target is each trial's."""
    move: MoveOptions | None = None
    """How to place fetches (None: where insertion puts them)."""
    lazy_detach: bool = False
    """Detach right before the fetch instead of after the use before the gap."""
    layout: str = "auto"
    """The static layout strategy a plan's arena is judged with."""
    alignment: int = DEFAULT_ALIGNMENT
    """Of arena offsets and sizes, in bytes."""


ARENA_ROUNDS = 3
"""Plans for a lower target tried when a plan's live bytes fit and its arena does not."""

STALL_FACTORS = (1.0, 1.1, 1.2, 1.3)
"""Targets a plan that waits for its stores is made for, as multiples of the target."""

WAITING_FACTORS = (1.0, 0.9)
"""
Targets the plan taken just in time that waits for its stores is made for,
as multiples of the target (`PlanOptions.wait_for_stores`).
"""

RECOMPUTE_BUDGET = 0.05
"""
The share of the step's compute time the cheapest recomputations may take
before any offload, in the plan weighed where none is set (`PlanningLoop.trial`).
"""

FUSING_TRIES = 4
"""Values whose recomputation `PlanningLoop.fusing` tries, the cheapest per byte first."""


@dataclass(frozen=True)
class Trial:
    """One target, planned and simulated on the graph."""

    target: int
    inserted: Plan
    """The plan with its fetches where insertion puts them."""
    plan: Plan
    """The plan to write (its fetches moved, if that paid)."""
    schedule: Schedule
    result: SimResult
    """Its simulation (no capacity enforced, nothing recorded)."""
    moved: bool
    layout: str = "auto"
    alignment: int = DEFAULT_ALIGNMENT
    capacity: int | None = None
    """
    The HBM its simulation ran in: None, unlimited; the target, for a plan
    that waits for its stores (`PlanningLoop._stalling`).
    """
    arenas: dict[Hashable, int] | None = field(default=None, compare=False, repr=False)
    """
    Arenas laid out already, by the stays and options laid out (its loop's:
    plans for other targets often stay in HBM alike); None: none kept.
    """

    @cached_property
    def arena_bytes(self) -> int:
        """The arena of the plan's static layout (computed when first asked)."""
        if self.arenas is None:
            return self._laid_out()
        key = (tuple(self.result.allocations), self.layout, self.alignment)
        if key not in self.arenas:
            self.arenas[key] = self._laid_out()
        return self.arenas[key]

    def _laid_out(self) -> int:
        return planned_arena(self.result, self.layout, self.alignment).arena_bytes

    def fits(self, capacity: int) -> bool:
        """Its live bytes and its arena both within `capacity`."""
        return self.result.peak_hbm_bytes <= capacity and self.arena_bytes <= capacity


class PlanningLoop:
    """Plan one function for any number of targets; write one plan into it."""

    def __init__(
        self,
        function: FuncOp,
        graph: ProgramGraph,
        hardware: Hardware,
        options: LoopOptions,
    ):
        self.function = function
        self.graph = graph
        self.hardware = hardware
        self.options = options
        self.capacity: int | None = None
        """The HBM the plan written runs in (`Trial.capacity`; None: unlimited)."""
        self._written: dict[Hashable, tuple[Plan, Schedule, SimResult]] = {}
        """Plans priced as written (`_as_written`), by what their IR is made of."""
        self._planned: dict[PlanOptions, Trial] = {}
        """The ranked planner's trials (`_heuristic`), by their options."""
        self._arenas: dict[Hashable, int] = {}
        """Arenas laid out (`Trial.arenas`)."""
        self._simulations = Simulations()
        """The ranked planner's simulations, for every target (`plan_offload`)."""
        self._before_write: FunctionSnapshot | None = None
        """The function before `write` (what its ops read then)."""

    @staticmethod
    def for_function(
        function: FuncOp, hardware: Hardware, options: LoopOptions
    ) -> PlanningLoop:
        """The loop of `function`, its graph extracted now (the one extraction)."""
        graph = ProgramGraph.build(function, CostModel(hardware))
        return PlanningLoop(function, graph, hardware, options)

    def trial(self, target: int) -> Trial:
        """
        Plan for `target`, in addresses (see the module docstring); raises
        `PlanError` for a target no plan can meet. With recomputation, the
        joint plan and the offload-only one are each fitted in addresses,
        then the better is taken. Where no plan meets the target, those that
        may also move values over gaps before kernels running ops fused into
        them from before (`PlanOptions.fused_gaps`) are weighed too: they
        reach lower (the seeds' 4-layer step at 17 GB) but rank values
        otherwise, and where both meet a target have been seen slower
        (LLaMA-3-8B's 2-layer step at its tightest curve point: +333%
        against +289%). Where that plan exposes transfer time and
        several tiers are allowed, the plan on the hardware's offload tier
        alone, each refinement tried too, is weighed against it
        (`_one_tier`), and so, first, is the plan that takes the cheapest
        recomputations before any offload (`_budgeted`). With `solver=milp`,
        the MILP's plan started from the one kept, where it is better
        (`_better`).
        """
        options = replace(self.options.plan, target=target)
        trial = self._weighed(options)
        if not trial.fits(target) and not options.fused_gaps:
            fused = replace(options, fused_gaps=True)
            trial = _better(trial, self._weighed(fused))
        if options.solver == "milp":  # started from the heuristic, never worse
            exact = partial(self._exact, start=trial.plan)
            trial = _better(self._in_addresses(exact, options), trial)
        return self._never_above_unplanned(trial, options)

    def _weighed(self, options: PlanOptions) -> Trial:
        """The best of the ranked plan for `options`, refined, and its variants."""
        trial = self._refined(options)
        budgeted = self._budgeted(trial, options)
        if budgeted is not None:
            trial = _better(trial, self._refined(budgeted))
        one = self._one_tier(trial, options)
        if one is not None:
            trial = _better(trial, self._refined(one))
        return trial

    def _refined(self, options: PlanOptions) -> Trial:
        """The ranked plan for `options`, fitted in addresses, then each refinement tried."""
        trial = self._in_addresses(self._heuristic, options)
        if options.recompute != "none":
            offload_only = replace(options, recompute="none")
            trial = _better(trial, self._in_addresses(self._heuristic, offload_only))
        trial = self._unparked(trial, options)
        trial = self._just_in_time(trial, options)
        trial = self._with_fusing(trial)
        return self._stalling(trial, options)

    @cached_property
    def unplanned_peak(self) -> int:
        """The peak of the function as it came (its graph's schedule), in unlimited HBM."""
        return simulate(
            self.graph.schedule, self.hardware, None, record=False
        ).peak_hbm_bytes

    def _never_above_unplanned(self, trial: Trial, options: PlanOptions) -> Trial:
        """
        Where `trial` peaks above the function as it came, the plan for that
        peak (which moves nothing it need not) if it peaks lower: no plan
        holds more HBM than none.
        """
        if trial.result.peak_hbm_bytes <= self.unplanned_peak:
            return trial
        try:
            unplanned = self._heuristic(replace(options, target=self.unplanned_peak))
        except PlanError:
            return trial
        if unplanned.result.peak_hbm_bytes >= trial.result.peak_hbm_bytes:
            return trial
        return replace(unplanned, target=options.target)

    def _budgeted(self, trial: Trial, options: PlanOptions) -> PlanOptions | None:
        """
        Where `trial` misses its target or exposes transfer time and
        recomputation is allowed with no budget, `options` with the cheapest
        recomputations taken first, up to `RECOMPUTE_BUDGET` of the step's
        compute time (as a target search within a slowdown plans), whose plan
        `trial` is weighed against: ranked after the offloads that hide, a
        recomputation comes too late to spare the transfers a tight target
        exposes (the seeds' 4-layer LLaMA-3-8B step at a 34.15 GB target:
        +25.4% without, -0.3% with).
        """
        if (
            options.recompute == "none"
            or options.recompute_budget is not None
            or (trial.fits(trial.target) and trial.result.exposed_transfer_s <= 0)
        ):
            return None
        return replace(options, recompute_budget=RECOMPUTE_BUDGET)

    def _one_tier(self, trial: Trial, options: PlanOptions) -> PlanOptions | None:
        """
        Where `trial` exposes transfer time and several tiers are allowed,
        `options` with the hardware's offload tier alone, whose plan (each
        refinement tried too) `trial` is weighed against: the tier chooser
        sends cold values to the slowest tier whose round trip fits their
        gap, but under a tight target a fetch cannot start until memory
        frees, and the slower links then return them late while the fast
        one idles (DeepSeek-V3's training step at a 45 GB target: +14.5%
        with the drive, +1.8% on the remote link alone).
        """
        allowed = [t for t in options.tiers if t in self.hardware.links]
        tier = self.hardware.offload_tier
        if (
            len(allowed) < 2
            or tier not in allowed
            or trial.result.exposed_transfer_s <= 0
        ):
            return None
        return replace(options, tiers=(tier,))

    def _unparked(self, trial: Trial, options: PlanOptions) -> Trial:
        """
        Where `trial` places arguments and misses its target or exposes
        transfer time, the best of it, the plan that parks none of the
        arguments it keeps in HBM, and the plan that leaves every tagged
        argument in its tier. Parking candidates change which prefix of the
        ranking meets a target, and near the lowest targets the plan without
        them has been seen to reach further; under a tight target on a step
        whose weights dominate, fetching every weight from its tier beside
        the activations has been seen to expose less than keeping some.
        """
        if not options.place_arguments or (
            trial.fits(trial.target) and trial.result.exposed_transfer_s <= 0
        ):
            return trial
        if options.park_arguments:
            unparked = replace(options, park_arguments=False)
            trial = _better(trial, self._in_addresses(self._heuristic, unparked))
        in_tier = replace(options, place_arguments=False)
        return _better(trial, self._in_addresses(self._heuristic, in_tier))

    def _just_in_time(self, trial: Trial, options: PlanOptions) -> Trial:
        """
        Where `trial` places arguments and misses its target or exposes
        transfer time, the better of it and the plan taken just in time
        (`PlanOptions.selection`: furthest next use first wherever the step
        exceeds the target, as a runtime cache evicts), every copy in the
        hardware's offload tier: the ranked prefix takes values by bytes x
        gap, many of which are not out of HBM where the step peaks, and
        under a tight target moves several times the bytes a runtime would.
        Where the better of those still misses the target or exposes
        transfer time, the better of it and the ranked plan that may also
        retire arguments kept in HBM after their last use (stored at entry
        on the idle direction, as a runtime evicts a weight after its last
        read: on the LLaMA-3-8B 2-layer step at seq 128, whose weights
        dominate, it exposes half of what fetching them from their tier does).
        The plans taken just in time that wait for their stores, for each of
        `WAITING_FACTORS` x the target, are weighed too, run in an HBM of the
        target (`_in_target`).
        """
        if not options.place_arguments or (
            trial.fits(trial.target) and trial.result.exposed_transfer_s <= 0
        ):
            return trial
        tiers = tuple(t for t in options.tiers if t == self.hardware.offload_tier)
        timely = replace(options, selection="next-use", tiers=tiers or options.tiers)
        trial = _better(trial, self._in_addresses(self._heuristic, timely))
        waiting = replace(timely, wait_for_stores=True)
        trial = self._in_target(trial, [waiting], WAITING_FACTORS)
        if not options.park_arguments or (
            trial.fits(trial.target) and trial.result.exposed_transfer_s <= 0
        ):
            return trial
        retiring = replace(options, retire_arguments=True)
        return _better(trial, self._in_addresses(self._heuristic, retiring))

    def _stalling(self, trial: Trial, options: PlanOptions) -> Trial:
        """
        Where `trial` misses its target, or meets it only waiting for its
        stores (`Trial.capacity`), the best of it and the ranked plans
        for targets up to `STALL_FACTORS` above it that run in an HBM of the
        target without running out: a store ending after the memory its
        detach frees is needed holds the allocation that needs it, and
        compute waits for the store (the simulator's capacity, an allocation
        that does not fit waiting for the frees pending, as a runtime
        evicting with compute waiting for each store does). Such a plan
        exposes store time where none hides; it is written as any other and
        its figures are those of the written IR run in an HBM of the target
        (`simulate_written`).
        """
        if trial.fits(options.target) and trial.capacity is None:
            return trial
        variants = [options]
        if options.recompute != "none":  # as `trial` weighs offload alone too
            variants.append(replace(options, recompute="none"))
        return self._in_target(trial, variants, STALL_FACTORS)

    def _in_target(
        self, trial: Trial, variants: list[PlanOptions], factors: tuple[float, ...]
    ) -> Trial:
        """
        The best of `trial` and the ranked planner's plans for each of
        `variants` at each of `factors` x its target that run in an HBM of
        the target without running out (an allocation waiting for the frees
        pending), judged so (`Trial.capacity`).
        """
        target = trial.target
        for factor, variant in product(factors, variants):
            try:
                planned = self._heuristic(replace(variant, target=int(target * factor)))
            except PlanError:
                continue
            result = simulate(planned.schedule, self.hardware, target, record=False)
            if result.oom is None:
                stalled = replace(
                    planned, target=target, result=result, capacity=target
                )
                trial = _better(trial, stalled)
        return trial

    @cached_property
    def fusing(self) -> list[ValuePlan]:
        """
        Recomputations that make the program written faster where nothing
        else moves (computed once per loop): of the recomputation candidates,
        the cheapest per byte first (as PyTorch's activation memory budget
        ranks them), up to `FUSING_TRIES` values, each kept where the written
        program runs faster with it than without. The planner's graph runs
        each clone as a kernel of its own; written, a value recomputed for the
        backward leaves its producer with one reader to fuse into and the
        clone fuses with its own (the LLaMA-3-8B step's logits: computed
        again before the loss's backward, neither copy is ever in HBM).
        """
        options = self.options.plan
        if options.recompute == "none" or not options.optional:
            return []
        start = replace(options, target=self.graph.peak)
        _, candidates = offload_choices(self.graph, self.hardware, start, False)
        ranked = sorted(
            (c for c in candidates if c.recompute),
            key=lambda c: c.recipes[0].time_s / max(c.info.bytes, 1),
        )
        base = self._heuristic(start)
        best = base.result
        kept: list[ValuePlan] = []
        tried: set[int] = set()
        for candidate in ranked:
            if len(tried) >= FUSING_TRIES:
                break
            if id(candidate.info) in tried:
                continue
            tried.add(id(candidate.info))
            trial = self._recomputing(base, [*kept, candidate])
            if trial is not None and (
                trial.result.makespan_s < best.makespan_s
                and trial.result.peak_hbm_bytes <= best.peak_hbm_bytes
            ):
                kept.append(candidate)
                best = trial.result
        return kept

    def _with_fusing(self, trial: Trial) -> Trial:
        """The better of `trial` and `trial` with the `fusing` recomputations it leaves room for."""
        fused = self._recomputing(trial, self.fusing)
        return trial if fused is None else _better(trial, fused)

    def _recomputing(self, trial: Trial, extra: list[ValuePlan]) -> Trial | None:
        """
        `trial` with the recomputations `extra` added, priced as written;
        those of a value the plan moves or recomputes already, or whose
        clones read a buffer it moves, are left out (None: all of them).
        """
        planned = {id(p.info) for p in trial.plan.values}
        moved = {p.info.buffer for p in trial.plan.values}
        added = [
            p
            for p in extra
            if id(p.info) not in planned
            and not any(b in moved for r in p.recipes for b in r.reads)
        ]
        if not added:
            return None
        plan = replace(trial.plan, values=[*trial.plan.values, *added])
        distance = self.options.plan.prefetch_distance
        schedule = plan_schedule(self.graph, plan, self.hardware, distance)
        return self._judged(replace(trial, plan=plan, schedule=schedule))

    def _in_addresses(
        self, plan: Callable[[PlanOptions], Trial], options: PlanOptions
    ) -> Trial:
        """
        `plan(options)`; where its live bytes fit the target and its arena
        does not, the better of it and plans for a target lower by the excess.
        """
        target = options.target
        trial = plan(options)
        planned_for = target
        for _ in range(ARENA_ROUNDS):
            if trial.result.peak_hbm_bytes > target or trial.arena_bytes <= target:
                break
            planned_for -= trial.arena_bytes - target
            try:
                lower = plan(replace(options, target=planned_for))
            except PlanError:  # below what any plan reaches
                break
            trial = _better(trial, replace(lower, target=target))
        return trial

    def _exact(self, options: PlanOptions, start: Plan) -> Trial:
        """The MILP's plan for `options.target`, from `start` (it places its fetches)."""
        plan = plan_exact(self.graph, self.hardware, options, start)
        distance = options.prefetch_distance
        schedule = plan_schedule(self.graph, plan, self.hardware, distance)
        result = simulate(schedule, self.hardware, None, record=False)
        return self._judged(Trial(options.target, plan, plan, schedule, result, False))

    def _heuristic(self, options: PlanOptions) -> Trial:
        """
        The ranked planner's plan for `options.target`, placed if asked
        (once per options: `_stalling` asks again for the target itself,
        `_never_above_unplanned` for the unplanned peak at every target).
        """
        if options not in self._planned:
            self._planned[options] = self._planned_anew(options)
        return self._planned[options]

    def _planned_anew(self, options: PlanOptions) -> Trial:
        """`_heuristic`'s trial, made."""
        distance = options.prefetch_distance
        plan = plan_offload(self.graph, self.hardware, options, self._simulations)
        if self.options.move is None:
            schedule = plan_schedule(self.graph, plan, self.hardware, distance)
            result = simulate(schedule, self.hardware, None, record=False)
            return self._judged(
                Trial(options.target, plan, plan, schedule, result, False)
            )
        placed = place_fetches(
            self.graph, plan, self.hardware, options.target, self.options.move, distance
        )
        return self._judged(
            Trial(
                options.target,
                plan,
                placed.plan,
                placed.schedule,
                placed.result,
                placed.moved,
            )
        )

    def _judged(self, trial: Trial) -> Trial:
        """
        `trial` priced as the program it writes (`_as_written`), its arena
        judged with the loop's layout options.
        """
        return replace(
            self._as_written(trial),
            layout=self.options.layout,
            alignment=self.options.alignment,
            arenas=self._arenas,
        )

    def _as_written(self, trial: Trial) -> Trial:
        """
        `trial` priced as the program it writes: a plan that recomputes is
        written into the function, which is extracted and simulated, then
        put back as it was (`restored_afterwards`; see the module
        docstring), as is one that fetches a value while the store of the
        copy it replaces still reads it (the graph's schedule fetches into
        the buffer still held, the IR into a tensor of its own: both held
        until the store ends); any other as it is.
        """
        if (
            not any(value.recompute for value in trial.plan.values)
            and trial.result.fetches_into_held == 0
        ):
            return trial
        key = _written_key(trial)
        if key not in self._written:  # the same IR is written for it as before
            graph = self.graph
            with restored_afterwards(self.function) as before:
                self._write_into(self.function, graph.ops, graph.fusion, trial)
                costs = graph.fusion.costs.keeping(before.unrewired())
                schedule = extract_schedule(self.function, costs)
            result = simulate(schedule, self.hardware, None, record=False)
            self._written[key] = (trial.plan, schedule, result)
        _, schedule, result = self._written[key]
        return replace(trial, schedule=schedule, result=result)

    def write(self, trial: Trial) -> Trial:
        """
        Write `trial`'s plan into the function (once: the graph describes it
        as it was) and return it.
        """
        self._before_write = FunctionSnapshot(self.function)
        self._write_into(self.function, self.graph.ops, self.graph.fusion, trial)
        self.capacity = trial.capacity
        return trial

    def simulate_written(self) -> SimResult:
        """
        The function as it stands (after `write`), extracted and simulated
        in the HBM its plan was priced in (the work of each op that reads
        what it read when the graph was extracted is not measured again).
        """
        before = self._before_write
        costs = (
            CostModel(self.hardware)
            if before is None
            else self.graph.fusion.costs.keeping(before.unrewired())
        )
        schedule = extract_schedule(self.function, costs)
        return simulate(schedule, self.hardware, self.capacity, record=False)

    def _write_into(
        self, function: FuncOp, ops: list[Operation], fusion: Fusion, trial: Trial
    ) -> None:
        """Write `trial` into `function`, whose top-level ops and kernels are the graph's."""
        distance = self.options.plan.prefetch_distance
        written = write_plan(
            function,
            ops,
            trial.plan,
            distance,
            self.hardware.offload_tier,
            self.options.lazy_detach,
            fusion,
        )
        if not trial.moved:
            return
        if written.cloned:  # the kernels the clones joined, as written
            fusion = Fusion(function.body.block, CostModel(self.hardware))
        prefetches = written.prefetches
        # each fetch at the position it was moved to, those at one position
        # in their issue order (as the planner's schedule has them)
        moved = _fetch_positions(trial.plan, distance)
        order = sorted(range(len(prefetches)), key=lambda k: moved[k])
        # positions count the ops the plan wrote too (recomputations); a
        # fetch moved before an offload op the function came with goes
        # before the compute op after it
        block = function.body.block
        skeleton = Skeleton(block)
        positions: dict[PrefetchOp, SkeletonPosition] = {
            prefetches[k]: min(
                skeleton.position_of(ops[moved[k][0]]),
                _first_reader(skeleton, prefetches[k]),
            )
            for k in order
        }
        arrange(block, positions, fusion)


def _first_reader(skeleton: Skeleton, prefetch: PrefetchOp) -> SkeletonPosition:
    """
    The position of the first op reading what `prefetch` fetches (a clone
    of a fused op may read it before the op its plan was placed for).
    """
    block = skeleton.block
    readers = (ancestor_in(block, use.operation) for use in prefetch.result.uses)
    return min(
        (skeleton.position_of(op) for op in readers if op is not None),
        default=SkeletonPosition(len(skeleton.ops)),
    )


def _written_key(trial: Trial) -> Hashable:
    """
    What the IR `_write_into` writes for `trial` is made of: its planned
    values (`ValuePlan.key`), the arguments placed in HBM, and whether its
    fetches moved.
    """
    return (
        tuple(v.key() for v in trial.plan.values),
        tuple(id(info.value) for info in trial.plan.placed),
        trial.moved,
    )


def _fetch_positions(plan: Plan, distance: int) -> list[tuple[int, int]]:
    """The `issue_order` of each fetch of `plan` (the op it is issued before first), in plan order."""
    return [
        value_plan.issue_order(index, distance)
        for value_plan in plan.values
        if value_plan.write_back is None and not value_plan.recompute
        for index in range(len(value_plan.gaps))
    ]


def _better(trial: Trial, other: Trial) -> Trial:
    """
    Of two plans for one target: the one that fits it (both: the faster,
    then the smaller arena); if neither does, the lower peak.
    """

    def key(t: Trial) -> tuple[bool, float, int]:
        if t.fits(t.target):
            return (False, t.result.makespan_s, t.arena_bytes)
        return (True, float(t.result.peak_hbm_bytes), t.result.peak_hbm_bytes)

    return trial if key(trial) <= key(other) else other
