"""
Compile-time fixes change no plan: each function made faster for large
programs (`bench/scaling.py` measures them) is kept here in its earlier
form, and the pipeline run with the earlier form and with the current one on
small programs must print byte-identical IR.

- `required.mandatory` matched every value against every returned value (a
  training step returns a gradient per parameter: quadratic in its size); it
  now looks each value's positions up.
"""

import io
from collections.abc import Callable

import pytest
from planning_cases import INPUTS, ROOT, Case
from xdsl.context import Context
from xdsl.printer import Printer

from hyperoffload.dialects.hyperoffload import PrefetchOp, RemoteType, StoreOp
from hyperoffload.passes.pipeline import PipelinePass
from hyperoffload.planning import planner
from hyperoffload.planning.plan_context import PlanContext, kv_results
from hyperoffload.planning.required import clusters, write_back
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support.tiers import Tier


def mandatory_before(ctx: PlanContext) -> list[ValuePlan]:
    """`required.mandatory` as it was: each value against every returned one."""
    plans: list[ValuePlan] = []
    tiers = ctx.graph.result_tiers()
    kv = kv_results(ctx.graph)
    returned = ctx.graph.ops[-1].operands if ctx.graph.ops else ()
    for info in ctx.graph.values:
        if info.buffer is None or isinstance(info.value.type, RemoteType):
            continue
        if info.producer < 0 and info.tier != Tier.HBM:
            if info.category not in ctx.options.categories:
                continue
            if not info.uses:  # never read: it stays in its tier
                plans.append(ValuePlan(info, [], stored=False, initially_out=True))
            elif not ctx.placing():
                plans.append(clusters(ctx, info))
            continue
        for position, value in enumerate(returned):
            tier = tiers[position] if position < len(tiers) else None
            if value is info.value and tier is not None and ctx.owns(info):
                holds_kv = position < len(kv) and kv[position]
                plans.append(
                    write_back(ctx, info, tier, ctx.compress_of(info, holds_kv))
                )
    return plans


BEFORE: list[tuple[object, str, Callable[..., object]]] = [
    (planner, "mandatory", mandatory_before),
]
"""Each fixed function: its owner, its name and its earlier form."""


CASES = {
    "tiny-llama bf16 train, gradients written back": Case(
        INPUTS / "tiny_llama_train_bf16.mlir", {"hbm_capacity": "200KB"}, True
    ),
    "tiny-llama train, recomputation": Case(
        ROOT / "examples" / "tiny_llama_train.mlir", {"hbm_capacity": "375KB"}
    ),
    "adamw step, states written back": Case(
        ROOT / "test" / "passes" / "insert-optimizer-states.mlir", {}
    ),
}


def planned(ctx: Context, case: Case) -> str:
    module = case.module(ctx)
    PipelinePass(**case.options).apply(ctx, module)  # type: ignore[arg-type]
    ops = list(module.walk())
    assert any(isinstance(op, PrefetchOp) for op in ops)
    if case.write_back:
        assert any(isinstance(op, StoreOp) for op in ops)
    text = io.StringIO()
    Printer(stream=text).print_op(module)
    return text.getvalue()


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_the_fixes_write_the_plan_written_before(
    ctx: Context, case: Case, monkeypatch: pytest.MonkeyPatch
):
    now = planned(ctx, case)
    for owner, name, before in BEFORE:
        monkeypatch.setattr(owner, name, before)  # raises if it no longer exists
    assert planned(ctx, case) == now
