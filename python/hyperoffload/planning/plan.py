"""
What the insertion planner (`hyperoffload.planning.planner`) takes and
gives: its options, the plan of a function, and the error for a target no
plan can meet.

```python
options = PlanOptions(target=32 * 10**9, place_arguments=True)
plan = plan_offload(graph, hardware, options)
plan.met, plan.peak_before, plan.peak_after  # e.g. True, 41e9, 31.8e9
```
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Literal

from hyperoffload.analysis.lifetimes import CATEGORIES, ValueInfo
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.sim.simulator import SimResult
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
    HBM may also be retired after its last use (`candidates._retired`); `next-use`
    selection always may.
    """
    selection: Literal["ranked", "next-use"] = "ranked"
    """
    How optional candidates are taken: the ranked prefix, or just in time,
    furthest next use first where the step exceeds the target
    (`hyperoffload.planning.next_use`; tagged arguments kept in HBM, parked
    or retired, as a runtime cache keeps them).
    """
    wait_for_stores: bool = False
    """
    With `next-use` selection, a candidate whose store is not done by the op
    over the target may be taken there, the compute stream waiting for the
    store (as a runtime cache evicts); the plan is judged in an HBM of the
    target, where an allocation waits for the frees pending.
    """
    fused_gaps: bool = False
    """
    Whether a value may also leave HBM over a gap before a kernel that runs
    ops fused into it from before the gap (`Gap.fused`: written with clones
    of those ops there).
    """


@dataclass
class Plan:
    """One function's plan: each value's plan, and the peak before and after."""

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


@dataclass
class Simulations:
    """
    What the ranked planner works out on one graph and hardware, kept
    across the targets and variants it plans for.
    """

    results: dict[Hashable, tuple[list[ValuePlan], SimResult]] = field(
        default_factory=dict[Hashable, tuple[list[ValuePlan], SimResult]]
    )
    """Plans simulated, by their prefetch distance and their values' keys
    (`ValuePlan.key`), each with the plans it was made for."""
    plans: dict[Hashable, list[ValuePlan]] = field(
        default_factory=dict[Hashable, list[ValuePlan]]
    )
    """Lists of plans worked out (`PlanContext.kept`): those the rules
    require, the ranked candidates, and what a prefix of them makes with the
    required ones, by what they are, their options but the target (none
    depends on it) and what they are made from: a bisection for one target
    judges many of the prefixes another judged."""
