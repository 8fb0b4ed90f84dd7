"""
Compile-time fixes change no plan: each function made faster for large
programs (`bench/scaling.py` measures them) is kept here in its earlier
form, and the pipeline run with the earlier form and with the current one on
small programs must print byte-identical IR.

- `_Planner.mandatory` matched every value against every returned value (a
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
from hyperoffload.planning.planner import (
    _kv_results,  # pyright: ignore[reportPrivateUsage]
    _Planner,  # pyright: ignore[reportPrivateUsage]
    _result_tiers,  # pyright: ignore[reportPrivateUsage]
)
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.support.tiers import Tier


def mandatory_before(self: _Planner) -> list[ValuePlan]:
    """`_Planner.mandatory` as it was: each value against every returned one."""
    plans: list[ValuePlan] = []
    result_tiers = _result_tiers(self.graph)
    kv_results = _kv_results(self.graph)
    returned = self.graph.ops[-1].operands if self.graph.ops else ()
    for info in self.graph.values:
        if info.buffer is None or isinstance(info.value.type, RemoteType):
            continue
        if info.producer < 0 and info.tier != Tier.HBM:
            if info.category not in self.options.categories:
                continue
            if not info.uses:  # never read: it stays in its tier
                plans.append(ValuePlan(info, [], stored=False, initially_out=True))
            elif not self.placing():
                plans.append(self._clusters(info))  # pyright: ignore[reportPrivateUsage]
            continue
        for position, value in enumerate(returned):
            tier = result_tiers[position] if position < len(result_tiers) else None
            if value is info.value and tier is not None and self.owns(info):
                kv = position < len(kv_results) and kv_results[position]
                plans.append(
                    self._write_back(info, tier, self.compress_of(info, kv))  # pyright: ignore[reportPrivateUsage]
                )
    return plans


BEFORE: list[tuple[object, str, Callable[..., object]]] = [
    (_Planner, "mandatory", mandatory_before),
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
