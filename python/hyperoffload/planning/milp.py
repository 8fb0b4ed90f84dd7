"""
The exact reference: offload (and recomputation) planning as a
mixed-integer linear program, solved with HiGHS (`highspy`, the `milp`
extra), for programs of up to a few hundred compute steps (`solver=milp` on
`hyperoffload-insert` and `hyperoffload-pipeline`; `bench/milp_gap.py`
measures the heuristic against it).

It chooses from every candidate the heuristic planner ranks
(`hyperoffload.planning.planner.offload_choices`, all of them, not the
prefix the heuristic keeps): the plans the rules require (tagged arguments
fetched per cluster of uses, written-back results) and the optional
candidates (an activation or untagged argument out of HBM over one idle
gap, by a store and a fetch, its copy in any tier of `PlanOptions.tiers` the
hardware has, or, with `recompute`, by computing it again; with
`place_arguments`, a tagged argument left in its tier). It decides which
candidates to take and, for every gap taken, before which compute step its
fetch is issued, so as to minimise the peak of the memory timeline subject
to the exposed transfer time; its answer is a `Plan` that `plan_schedule`
and `simulate` judge exactly as they judge the heuristic's.

Never worse than its start: `plan_milp` judges the start plan it is given
(the heuristic's) and every plan it solves for in the simulator, and returns
the best (within the slowdown, then the least `max(peak, target)`, then the
least makespan). The planning loop does the same with whole trials.

Time is discretised at compute steps: positions 0..K-1 are the compute steps
(the ops with a compute step, in order) and K the end of the function. Slot
`j` of a link direction is the stall of the compute stream before position
`j` (a variable, `e_j`) followed by compute step `j` (its fixed time).

Variables (a gap `i` of a choice `g`, of a value `v`):
- `x_g` binary: the choice is taken (fixed to 1 for a required plan); the
  copies of one candidate in several tiers are several choices, and a value
  is stored in one tier at most;
- `S_ij` binary, non-decreasing in `j`, `S_i,b = x_g` at the use `b`: the
  fetch has been issued by position `j` (issued at the first `j` with 1);
- `st_v` binary: the value is stored (after its producer; once, whatever
  the number of its gaps), `D_vj` binary, non-decreasing: the store is
  complete before compute step `j` starts;
- `w_ij` in [0, 1]: the value is out of HBM at position `j` of its gap:
  `w_ij <= x_g - S_ij` and, for a stored value, `w_ij <= D_vj` (the copy is
  freed once the store completes; `x_g - S_ij` for a copy that exists, a
  tagged argument's); a tagged argument is also out after its last use;
- `u` >= 0: link time each transfer uses in each slot of its direction, at
  most the slot's length, only once it is issued (`S_ij`; after the
  producer for a store) and, for a fetch, once its store is complete (`D`
  before the stall, `D` of the next step within the step); a fetch's `u`
  add up to its transfer time by its use (it completes before its use), a
  store's to its transfer time;
- `e_j` >= 0 the stall before position `j` (`E`: their sum), `P` the peak.

Constraints: per slot and link direction, the transfers' `u` fit in the
slot (transfers on one direction do not overlap in time); where a link's
`duplex_efficiency` is below 1, both directions together fit in
`max(1, 2 x efficiency)` of the slot; the live bytes of the unplanned
timeline less the bytes out of HBM are at most `P` at every position (the
simulator's peak is taken at allocations, which happen at step starts and at
fetches, so this is its memory at every event); `E` plus recomputation time
at most `max_slowdown x compute time` when a slowdown is given.

Two models, one to plan and one to bound. In the planning model stores run
in compute slots only: a stall is a variable the model may place before any
step, where the simulator stalls only to wait for a fetch, and a stall
placed for nothing must not finish a store early (and free its copy). The
relaxed model lets stores run in stalls too, and asks that a stall hold
transfers all along: every plan of the model's form within the slowdown,
as the simulator runs it, is a solution of it (transfers fluid, any order,
the latency inside each transfer's time), so its bound is a lower bound on
the peak of every such plan. With a slowdown the LP bound that counts the
link (`hyperoffload.analysis.link_bound`), valid for every plan within it
that keeps its arguments in HBM after their last use (as plans of both
models do), is taken where higher. A plan is `proven` optimal where its simulated
`max(peak, target)` meets that bound.

Objective, in two solves: first the least `max(P, target)` (with a target of
0: the least peak within the slowdown; `P` is a whole number of granules when
every size is a multiple of one, which tightens the bound); then, with `P`
held there, the least exposure plus a thousandth of the transfer time (no
move that does not pay). The first solve starts from a given plan (the
heuristic's, where it fits the model; else from the required gaps alone,
each fetched as early as it may be). The planning model gets half the time
limit (two thirds of a round's time to the first solve, the second no
longer than the first took, the rest for repair rounds: where the simulator
finds a plan slower than the limit, the exposure budget is cut and the MILP
solved again, `MilpOptions.repair_rounds`); the relaxed model the rest, its
first solve only, started from the best plan so far. HiGHS is interrupted
at the deadline.

Recomputation (with `recompute`, as the planner's candidates): a binary
`r` per candidate gap takes the value out of HBM from after the use before
the gap to the step its clones run before, adds the clones' compute time to
the slowdown (and to the second objective), and excludes every choice that
moves the value or anything the clones read. The clones' own memory while
they run is not in the model (the simulator judges it).

```python
result = plan_milp(graph, hardware, PlanOptions(target=0), MilpOptions(max_slowdown=0.05))
result.plan, result.proven, result.bound_bytes  # a Plan, judged by the simulator
```
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from math import isfinite
from typing import TYPE_CHECKING, Literal

import numpy as np

from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.analysis.link_bound import link_lower_bound
from hyperoffload.ir.diagnostics import Severity, emit
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.schedule import Schedule
from hyperoffload.planning.milp_build import formulate
from hyperoffload.planning.milp_decode import decode, start_columns
from hyperoffload.planning.milp_model import MAX_STEPS, Formulation, MilpOptions
from hyperoffload.planning.milp_solver import (
    Deadline,
    has_solution,
    new_solver,
    status_of,
)
from hyperoffload.planning.planner import (
    Plan,
    PlanError,
    PlanOptions,
    plan_offload,
    plan_schedule,
)
from hyperoffload.sim.simulator import simulate
from hyperoffload.support.units import format_bytes

if TYPE_CHECKING:
    import highspy

__all__ = ["MAX_STEPS", "MilpOptions", "MilpResult", "plan_exact", "plan_milp"]

SOURCE = "hyperoffload-milp"
"""Where the remarks of `plan_exact` come from."""

_PLANNING_SHARE = 1 / 2
"""The share of the time limit the planning model's solves get (the rest: the bound's)."""
_PHASE_ONE_SHARE = 2 / 3
"""The share of the time limit the first solve (the peak) gets."""
_TRAFFIC_WEIGHT = 1e-3
"""Weight of transfer time against exposure in the second solve."""


@dataclass(frozen=True)
class MilpResult:
    plan: Plan
    """The plan, its `peak_after` simulated as the heuristic's is."""
    status: str
    """
    `optimal` (`proven`); `none within the limit` (no plan found, the start
    plan included, runs within the slowdown in the simulator);
    `relaxation below` (the relaxed model's optimum, its bound, lies below
    every plan found: a plan of its fluid link the simulator does not run);
    or the bound's solve's (`time limit`, ...).
    """
    peak_bytes: int
    """The live peak of the plan in the model (the simulated one for the start plan)."""
    bound_bytes: int
    """
    A lower bound on `max(peak, target)` over the plans of the model's form
    (its candidates, windows and stores) within the slowdown: the relaxed
    model's, or with a slowdown `hyperoffload.analysis.link_bound`'s where
    higher (that one holds for every plan); a start plan of another form
    may lie below the former.
    """
    gap: float
    """
    (objective - bound) / objective, the objective the plan returned's
    simulated `max(peak, target)`: 0 when proven, negative when the plan is
    of another form and below the bound.
    """
    exposed_s: float
    """The exposure the model planned (the simulated one for the start plan)."""
    slowdown: float
    """The plan's slowdown as the simulator measures it."""
    rounds: int
    """Solves made (more than one: the simulator found a plan too slow)."""
    peak_seconds: float
    """The first solve's time (to the peak and its bound)."""
    seconds: float
    """Wall-clock time of the solves."""
    columns: int
    rows: int
    proven: bool = False
    """
    The plan is optimal among plans of the model's form: within the
    slowdown in the simulator, its `max(peak, target)` meets `bound_bytes`.
    """
    source: Literal["milp", "start"] = "milp"
    """Whose plan is returned: a solve's, or the start plan (it was better)."""


def _check_size(graph: ProgramGraph, milp: MilpOptions) -> None:
    steps = len(graph.compute_of_op)
    if steps > milp.max_steps:
        raise PlanError(
            f"solver=milp: @{graph.function.sym_name.data} has {steps} compute "
            f"steps, more than the {milp.max_steps} the exact reference takes "
            "(milp-max-steps); use solver=heuristic"
        )


def plan_exact(
    graph: ProgramGraph,
    hardware: Hardware,
    options: PlanOptions,
    start: Plan | None = None,
) -> Plan:
    """
    `solver=milp` in the planning loop: the MILP plan for `options.target`
    (least peak down to the target, then least exposure), started from
    `start` (the heuristic's plan; by default `plan_offload`'s) and never
    worse than it in the simulator, within `options.milp_time_limit_s`; a
    remark reports the model's peak and bound, the gap, the time and the
    simulated peak of the plan returned (and whose it is).
    """
    milp = MilpOptions(
        time_limit_s=options.milp_time_limit_s, max_steps=options.milp_max_steps
    )
    new_solver()
    _check_size(graph, milp)
    start = start or plan_offload(graph, hardware, options)
    result = plan_milp(graph, hardware, options, milp, start_plan=start)
    whose = "" if result.source == "milp" else " (the start plan's: better)"
    emit(
        SOURCE,
        Severity.REMARK,
        f"@{graph.function.sym_name.data}: target {format_bytes(options.target)}: "
        f"model peak {format_bytes(result.peak_bytes)}, model bound "
        f"{format_bytes(result.bound_bytes)}, gap {result.gap:.2%} "
        f"({result.status}, {result.seconds:.2f} s); simulated peak "
        f"{format_bytes(result.plan.peak_after)}{whose}",
    )
    return result.plan


@dataclass
class _Solved:
    values: list[float]
    status: str
    peak: float
    bound: float
    """Of the first solve, in units of the unplanned peak."""
    seconds: float
    """The first solve's."""
    live: int
    """The highest live bytes of the solution returned (after both solves)."""


def _solve(
    formulation: Formulation,
    budget: float | None,
    start_plan: Plan | None,
    deadline: float,
    second: bool = True,
) -> _Solved:
    """
    Both solves (`second`: the least exposure at the peak found too) with
    exposure at most `budget` (x compute), by `deadline`.
    """
    model = formulation.model
    if formulation.slowdown_row is not None and budget is not None:
        model.row_upper[formulation.slowdown_row] = budget
    solver = new_solver()
    solver.setOptionValue("threads", formulation.milp.threads)
    started = time.perf_counter()
    model.pass_to(solver)
    solver.changeColCost(formulation.peak, 1.0)
    stop = Deadline(solver)
    distance = formulation.options.prefetch_distance
    for candidate in [start_plan, None] if start_plan else [None]:
        columns, values = start_columns(formulation, candidate, distance)
        solver.setSolution(
            len(columns), np.array(columns, dtype=np.int32), np.array(values)
        )
        now = time.perf_counter()
        stop.run(now + (deadline - now) * _PHASE_ONE_SHARE)
        if has_solution(solver) or deadline - time.perf_counter() <= 1e-3:
            break
        # the plan given does not fit the model: from the plain start
    status = status_of(solver)
    seconds = solver.getRunTime()
    if not has_solution(solver):
        return _Solved([], status, 0.0, 0.0, seconds, 0)
    incumbent = solver.getSolution()
    values = list(incumbent.col_value)
    peak = values[formulation.peak]
    bound = solver.getInfo().mip_dual_bound  # -inf before the first LP
    bound = min(bound, peak) if isfinite(bound) else 0.0
    if second and stop.worth(deadline):  # the least exposure and traffic at that peak
        _second_objective(solver, formulation, peak)
        solver.setSolution(incumbent)
        # no longer than the first took: what is left is for repair rounds
        now = time.perf_counter()
        stop.run(min(deadline, now + max(1.0, now - started)))
        if has_solution(solver):
            values = list(solver.getSolution().col_value)
    return _Solved(values, status, peak, bound, seconds, formulation.live_peak(values))


def plan_milp(
    graph: ProgramGraph,
    hardware: Hardware,
    options: PlanOptions,
    milp: MilpOptions | None = None,
    start_plan: Plan | None = None,
    start_schedule: Schedule | None = None,
) -> MilpResult:
    """
    The plan with the least peak (at least `options.target`) within the
    slowdown, then the least exposure at that peak (see the module
    docstring), starting from `start_plan` (e.g. the heuristic's) where it
    fits the model.

    The simulator judges each plan: where it finds one slower than
    `max_slowdown` (the model's link is fluid), the model's exposure budget is
    cut in proportion and the MILP solved again, up to `repair_rounds` times
    within the same time limit (the second solve of a round takes no longer
    than its first, to leave them time). The plan returned is the best the
    simulator saw (`_rank`) of the solves' and `start_plan` itself: never
    worse than the start. The start is judged as `start_schedule` runs
    where given (the heuristic's trial: its fetches placed, fused and issued
    just in time as the pipeline writes them), else as `plan_schedule`
    builds it. The bound and the gap are the first solve's, at
    `max_slowdown` itself.

    Raises `PlanError` when HiGHS is missing, the function has more than
    `max_steps` compute steps, or no plan is found in time (and no start
    plan is given).
    """
    milp = milp or MilpOptions()
    new_solver()
    _check_size(graph, milp)
    name = graph.function.sym_name.data
    start = time.perf_counter()
    deadline = start + milp.time_limit_s
    planning = start + milp.time_limit_s * _PLANNING_SHARE
    formulation = formulate(graph, hardware, options, milp)
    judge = _Judge(graph, hardware, options, milp.max_slowdown)
    budget = milp.max_slowdown
    kept: _Judged | None = None
    rounds = 0
    while True:
        solved = _solve(formulation, budget, start_plan, planning)
        rounds += 1
        if not solved.values:
            if kept is not None or start_plan is not None:
                break
            seconds = time.perf_counter() - start
            why = f"no plan ({solved.status})"
            if solved.status == "time limit":
                why = f"no plan within the time limit of {milp.time_limit_s:g} s"
            elif solved.status == "infeasible" and milp.max_slowdown is not None:
                why = f"no plan within a slowdown of {milp.max_slowdown:.2%}"
            raise PlanError(f"solver=milp: @{name}: {why} ({seconds:.2f} s)")
        plan, exposed = decode(formulation, solved.values)
        judged = judge(plan, exposed, solved.live, "milp")
        if kept is None or judged.rank < kept.rank:
            kept = judged
        limit = milp.max_slowdown
        if (
            judged.within
            or budget is None
            or limit is None
            or rounds > milp.repair_rounds
            or planning - time.perf_counter() <= 1e-3
        ):
            break
        budget = budget * limit / judged.slowdown
    if start_plan is not None:
        started = judge(start_plan, None, None, "start", start_schedule)
        if kept is None or started.rank < kept.rank:
            kept = started
    assert kept is not None
    # the bound: the relaxed model, at the slowdown itself, from the plan kept
    relaxed = formulate(graph, hardware, options, milp, relaxed=True)
    bounded = _solve(relaxed, milp.max_slowdown, kept.plan, deadline, second=False)
    if bounded.values:
        plan, exposed = decode(relaxed, bounded.values)
        judged = judge(plan, exposed, bounded.live, "milp")
        if judged.rank < kept.rank:
            kept = judged
    objective = max(
        kept.plan.peak_after, formulation.floor_bytes()
    )  # max(peak, target)
    bound = relaxed.bytes_of(bounded.bound, up=True) if bounded.values else 0
    if milp.max_slowdown is not None:  # the LP bound holds for every plan too
        # of the model's form: an untagged argument stays after its last use
        link = link_lower_bound(graph, hardware, milp.max_slowdown, release_held=False)
        bound = max(bound, link.bytes, formulation.floor_bytes())
    proven = kept.within and objective == bound
    if proven:
        status = "optimal"
    elif not kept.within:
        status = "none within the limit"
    elif bounded.status == "optimal":
        status = "relaxation below"  # its optimum is a plan the simulator does not run
    else:
        status = bounded.status  # `time limit`, ...
    gap = (objective - bound) / objective if objective > 0 else 0.0
    return MilpResult(
        kept.plan,
        status,
        kept.model_peak if kept.model_peak is not None else kept.plan.peak_after,
        bound,
        gap,
        kept.exposed,
        kept.slowdown,
        rounds,
        bounded.seconds,
        time.perf_counter() - start,
        len(relaxed.model.lower),
        len(relaxed.model.row_lower),
        proven,
        kept.source,
    )


@dataclass(frozen=True)
class _Judged:
    """A plan as the simulator runs it."""

    plan: Plan
    exposed: float
    slowdown: float
    within: bool
    rank: tuple[int, float, float]
    model_peak: int | None
    source: Literal["milp", "start"]


class _Judge:
    """
    Simulates plans of one graph and ranks them: within the slowdown first,
    then the least `max(peak, target)`, then the least makespan (outside the
    slowdown: the least slowdown).
    """

    def __init__(
        self,
        graph: ProgramGraph,
        hardware: Hardware,
        options: PlanOptions,
        max_slowdown: float | None,
    ):
        self.graph, self.hardware, self.options = graph, hardware, options
        self.max_slowdown = max_slowdown
        self.reference = simulate(graph.schedule, hardware, None, record=False)

    def __call__(
        self,
        plan: Plan,
        exposed: float | None,
        model_peak: int | None,
        source: Literal["milp", "start"],
        schedule: Schedule | None = None,
    ) -> _Judged:
        """`plan` run as `schedule` (default: as `plan_schedule` builds it)."""
        if schedule is None:
            distance = self.options.prefetch_distance
            schedule = plan_schedule(self.graph, plan, self.hardware, distance)
        run = simulate(schedule, self.hardware, None, record=False)
        plan = replace(
            plan,
            peak_before=self.reference.peak_hbm_bytes,
            peak_after=run.peak_hbm_bytes,
            met=run.peak_hbm_bytes <= self.options.target,
        )
        base = self.reference.makespan_s
        slowdown = run.makespan_s / base - 1 if base else 0.0
        within = self.max_slowdown is None or slowdown <= self.max_slowdown + 1e-9
        objective = float(max(run.peak_hbm_bytes, self.options.target))
        rank = (0, objective, run.makespan_s) if within else (1, slowdown, 0.0)
        if exposed is None:
            exposed = max(0.0, run.makespan_s - base)
        return _Judged(plan, exposed, slowdown, within, rank, model_peak, source)


def _second_objective(
    solver: highspy.Highs, formulation: Formulation, peak: float
) -> None:
    """Hold the peak at `peak`; minimise exposure, then transfer time."""
    solver.changeColCost(formulation.peak, 0.0)
    solver.changeColBounds(
        formulation.peak, formulation.model.lower[formulation.peak], peak + 1e-7
    )
    for stall in formulation.stall:
        solver.changeColCost(stall, 1.0)
    for c in range(formulation.num_required, len(formulation.choices)):
        fetches = sum(g.duration for g in formulation.gaps if g.choice == c)
        solver.changeColCost(formulation.take[c], _TRAFFIC_WEIGHT * fetches)
    for store in formulation.stores:
        solver.changeColCost(store.column, _TRAFFIC_WEIGHT * store.duration)
    for column, time_s in formulation.recompute_time():
        solver.changeColCost(column, time_s)
