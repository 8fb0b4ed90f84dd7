"""
The plan the pass writes is the plan it priced: on small training steps and
a decode step, the planning loop's figures for the plan it chose (the ones
its search and its warnings read) and a simulation of the IR it wrote agree
within 1% on time and on peak.

Each case exercises a way the two once diverged: results written back to
the pool (their stores were not priced), recomputation (clones fuse with
the kernels around them otherwise than the recipes said), fetches moved
within their windows, tagged arguments placed (and parked between their
uses), and the target search.
"""

import pytest
from planning_cases import INPUTS, ROOT, Case
from xdsl.context import Context

from hyperoffload.dialects.hyperoffload import PrefetchOp, StoreOp
from hyperoffload.passes.pipeline import PipelinePass

TOLERANCE = 0.01


CASES = {
    # taken just in time (`hyperoffload.planning.next_use`): arguments in
    # their tier and activations over their gaps, fetches as late as they
    # hide (at 4.5GB it once recomputed, its clones fusing with the kernels
    # around them: priced as separate kernels, the written peak was 7.8%
    # above the estimate; the plan taken just in time is faster now, and
    # recomputes the logits, whose clone fuses with its reader, as written)
    "llama3-8b 2 layers train, just in time": Case(
        INPUTS / "llama3_8b_2layers_train.mlir",
        {"hbm_capacity": "4.5GB", "place_arguments": True},
        recomputes=True,
    ),
    # recomputation: the clones fuse with the kernels around them
    "tiny-llama train, recomputation": Case(
        ROOT / "examples" / "tiny_llama_train.mlir",
        {"hbm_capacity": "375KB"},
        recomputes=True,
    ),
    # gradients stored to the pool as they are produced: on LLaMA-3-8B's
    # shapes their stores take longer than the step (the estimate once left
    # them out: +1007% written against its estimate, the peak +42%)
    "llama3-8b 2 layers train, gradients written back": Case(
        INPUTS / "llama3_8b_2layers_train.mlir",
        {"hbm_capacity": "5GB", "place_arguments": True},
        write_back=True,
    ),
    # weights kept in HBM and parked between their forward and backward
    # uses: stored at entry, fetched back (the caller holds no other copy)
    "llama3-8b 2 layers train, weights parked": Case(
        INPUTS / "llama3_8b_2layers_train.mlir",
        {"hbm_capacity": "5.9GB", "place_arguments": True},
        parks=True,
    ),
    "tiny-llama bf16 train, gradients written back": Case(
        INPUTS / "tiny_llama_train_bf16.mlir",
        {"hbm_capacity": "200KB"},
        write_back=True,
    ),
    "tiny-gpt train": Case(
        INPUTS / "tiny_gpt_train.mlir", {"hbm_capacity": "500KB", "recompute": "none"}
    ),
    # activations fetched back over gaps shorter than their stores: the
    # graph's schedule fetched into the buffer its store still read, at no
    # cost, where the IR fetches into a tensor of its own and holds both
    # (fuzz program 340 of seed 1: written 3632 B against an estimate of
    # 3248 B, above the unplanned program's 3280 B)
    "fuzz transformer forward, fetched while stored": Case(
        INPUTS / "fuzz" / "pipeline-fetch-while-stored.mlir",
        {
            "hbm_capacity": "1588",
            "detach": "eager",
            "categories": "activations",
            "place_arguments": True,
        },
    ),
    # the KV cache and weights placed, the smallest target within 2% searched
    "tiny-llama decode, searched": Case(
        INPUTS / "tiny_llama_decode.mlir",
        {"max_slowdown": 0.02, "place_arguments": True},
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_the_written_program_runs_as_planned(ctx: Context, case: Case):
    module = case.module(ctx)
    (planned,) = PipelinePass(**case.options).plan(module)  # type: ignore[arg-type]
    loop, trial = planned
    ops = list(loop.function.walk())
    assert any(isinstance(op, PrefetchOp) for op in ops)
    if case.write_back:
        assert any(isinstance(op, StoreOp) for op in ops)
    if case.recomputes:
        assert any(v.recompute for v in trial.plan.values)
    if case.parks:
        assert any(v.info.producer < 0 and v.stored for v in trial.plan.values)
    written = loop.simulate_written()
    estimate = trial.result
    assert written.makespan_s == pytest.approx(estimate.makespan_s, rel=TOLERANCE)
    assert written.peak_hbm_bytes == pytest.approx(
        estimate.peak_hbm_bytes, rel=TOLERANCE
    )


def test_a_plan_never_peaks_above_the_program_that_moves_nothing(ctx: Context):
    case = CASES["fuzz transformer forward, fetched while stored"]
    (planned,) = PipelinePass(**case.options).plan(case.module(ctx))  # type: ignore[arg-type]
    loop, _ = planned
    assert loop.simulate_written().peak_hbm_bytes <= loop.unplanned_peak
