"""
The insertion planner: decides which tensors leave HBM and over which gaps,
on the program graph (`hyperoffload.analysis.lifetimes`), never walking IR.

Rules (from the HyperOffload seeds):
- an argument that lives outside HBM (`hyperoffload.tier`: parameters,
  optimizer state, KV cache) is fetched before each cluster of its uses and
  released after the cluster (uses closer than `min_gap`, or than the time
  its fetch takes, form one cluster); under a target the program misses,
  it is kept across a gap to its next cluster where the plan leaves room
  (`feasibility.joined`: a fetch saved);
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
  resident there (`hyperoffload.planning.recipes`; see
  `hyperoffload.planning.candidates`).

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
where the argument stays (`merge.merge`), and returned in HBM where the argument
is kept there (`Plan.kept_results`).

With `selection="next-use"` the candidates are taken just in time instead
(`hyperoffload.planning.next_use`): furthest next use first wherever the
step exceeds the target, as a runtime cache evicts; a tagged argument kept
in HBM may then also be retired after its last use (stored once the call
starts, never fetched back: it ends the call in its stored copy, as a
parked argument does), as with `retire_arguments`.

A plan that meets the target does without the candidates it does not need
(`feasibility.pruned`): the most exposed first, each dropped where the peak
still meets the target and the step is no slower.

Every plan judged goes through the tier chooser
(`hyperoffload.planning.tiers`): each copy's tier (`ValuePlan.tier`) is the
slowest with room whose round trip hides for a stored value, and its own
tier while it has room for the caller's data.

With `compress_kv` (`int8`), every move of a KV value (an argument of
category `kv`, a written-back KV result) is compressed: its transfers are
priced at the compressed bytes plus their codec on the compute stream
(`hyperoffload.model.compression.transfer_time`, the one helper every transfer
time here goes through), and its store and prefetch carry the scheme.

The parts, each a module of `hyperoffload.planning` over one `PlanContext`
(the graph, hardware, options and what is derived from them once):
- `required`: the plans the rules require;
- `candidates`: the optional plans, ranked;
- `pricing`: link time (transfer times, exposure, link time reserved per
  op) and each copy's tier;
- `merge`: one plan per value from the candidates taken;
- `planned_schedule`: the schedule a plan runs as;
- `feasibility`: simulation, and the fewest candidates that meet the target.

```python
plan = plan_offload(graph, hardware, PlanOptions(target=32 * 10**9))
[(p.info.name, [(g.after, g.before) for g in p.gaps]) for p in plan.values]
placed = plan_offload(graph, hardware, PlanOptions(24 * 10**9, place_arguments=True))
[info.name for info in placed.placed]  # tagged arguments kept in HBM
```
"""

from __future__ import annotations

from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.model.hardware import Hardware
from hyperoffload.planning.candidates import candidates
from hyperoffload.planning.feasibility import (
    combined,
    infeasible,
    joined,
    just_in_time,
    peak_of,
    pruned,
    smallest_prefix,
)
from hyperoffload.planning.merge import merge_value_plans
from hyperoffload.planning.plan import Plan, PlanError, PlanOptions, Simulations
from hyperoffload.planning.plan_context import PlanContext
from hyperoffload.planning.planned_schedule import plan_schedule
from hyperoffload.planning.pricing import tiered
from hyperoffload.planning.required import mandatory
from hyperoffload.planning.value_plan import ValuePlan

__all__ = [
    "Plan",
    "PlanError",
    "PlanOptions",
    "Simulations",
    "merge_value_plans",
    "offload_choices",
    "plan_offload",
    "plan_schedule",
]


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
    ctx = PlanContext(graph, hardware, options, simulations)
    infeasible(ctx)
    ctx.default_tier()  # raises if no tier allowed exists
    plan = Plan(peak_before=peak_of(ctx, []))
    chosen = _required(ctx)
    peak = peak_of(ctx, chosen)
    if peak > options.target and options.optional:
        ranked = _ranked(ctx, chosen)
        if options.selection == "next-use":
            taken, peak = just_in_time(ctx, chosen, ranked)
            count = len(taken)
        else:
            count, peak = smallest_prefix(ctx, chosen, ranked, peak)
            taken = ranked[:count]
        if peak <= options.target:
            taken, peak = pruned(ctx, chosen, taken, peak)
        chosen = combined(ctx, chosen, taken)
        plan.optional = count > 0
    if plan.peak_before > options.target >= peak:
        chosen, peak = joined(ctx, chosen, peak)
    plan.values, plan.peak_after = chosen, peak
    plan.met = peak <= options.target
    if ctx.placing():
        remote = {p.info.value for p in chosen if p.initially_out}
        plan.placed = [i for i in ctx.tagged_arguments() if i.value not in remote]
        updates = ctx.updates
        plan.kept_results = sorted(
            updates[id(i)][0] for i in plan.placed if id(i) in updates
        )
    return plan


def _required(ctx: PlanContext) -> list[ValuePlan]:
    """The plans the rules require, tiers chosen (`kept`)."""
    return ctx.kept(("required",), lambda: tiered(ctx, mandatory(ctx)))


def _ranked(ctx: PlanContext, chosen: list[ValuePlan]) -> list[ValuePlan]:
    """The optional candidates beside `chosen`, best first (`kept`)."""
    options = ctx.options
    taken = {p.info.buffer for p in chosen if p.info.buffer is not None}
    retire = options.selection == "next-use" or options.retire_arguments
    return ctx.kept(
        ("ranked", frozenset(taken)), lambda: candidates(ctx, taken, retire=retire)
    )


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
    ctx = PlanContext(graph, hardware, options)
    if check_target:
        infeasible(ctx)
    required = mandatory(ctx)
    if not options.optional:
        return required, []
    taken = {p.info.buffer for p in required if p.info.buffer is not None}
    return required, candidates(ctx, taken)
