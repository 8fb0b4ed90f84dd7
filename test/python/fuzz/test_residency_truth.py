"""
One residency truth: the verifier, the simulator, `hyperoffload-assign-offsets`
and the lowering (`convert-hyperoffload-to-linalg`) accept the same plans and
reject the same plans (`fuzz.differential.residency_verdicts`). The passes
read residency through the verifier's function (`verify_residency`); the
simulator reads the plan's schedule. Checked on plans the planner writes
(random programs, the test inputs) and on plans broken on purpose (a detach
moved before a use of what it releases).
"""

from pathlib import Path

import pytest

from fuzz import differential
from fuzz.programs import Program
from hyperoffload.ir.parsing import parse_mlir

INPUTS = Path(__file__).resolve().parents[2] / "inputs"
PROGRAM = """\
func.func @step(%x: tensor<64xf32>, %w: tensor<64xf32>) -> tensor<64xf32> {
  %a = arith.mulf %x, %w : tensor<64xf32>
  %b = arith.addf %a, %x : tensor<64xf32>
  %c = arith.mulf %b, %a : tensor<64xf32>
  return %c : tensor<64xf32>
}
"""
USE_AFTER_DETACH = """\
func.func @step(%x: tensor<64xf32>, %w: tensor<64xf32>) -> tensor<64xf32> {
  %a = arith.mulf %x, %w : tensor<64xf32>
  %h = hyperoffload.store %a : tensor<64xf32> -> !hyperoffload.remote<tensor<64xf32>>
  hyperoffload.detach %a : tensor<64xf32>
  %b = arith.addf %a, %x : tensor<64xf32>
  %c = arith.mulf %b, %x : tensor<64xf32>
  return %c : tensor<64xf32>
}
"""


@pytest.mark.parametrize(
    ("index", "seed", "config"),
    [
        (0, 3, "insert"),
        (1, 3, "pipeline-25"),
        (2, 3, "move-window"),
        (6, 3, "pipeline-0"),
        (268, 1, "insert"),  # a detach moved before a view
        (170, 1, "pipeline-50"),  # before a store of a view
        (249, 1, "pipeline-0"),  # a recomputation refusing a chain over a detach
        (671, 1, "insert"),  # the same, the planner's own recomputation
    ],
)
def test_planned_random_programs_agree(index: int, seed: int, config: str) -> None:
    """The tools agree on the plan, and on the plan with a detach moved early."""
    outcome = differential.run_task(differential.Task(index, seed, config))
    assert outcome.outcome in ("ok", "diagnosed"), outcome.detail


def test_a_use_after_detach_is_rejected_by_every_tool() -> None:
    prepared = differential._Prepared(Program("dag", PROGRAM))  # pyright: ignore[reportPrivateUsage]
    broken = parse_mlir(prepared.ctx, USE_AFTER_DETACH, "broken.mlir")
    verdicts = differential.residency_verdicts(prepared, broken)
    assert set(verdicts) == set(differential.RESIDENCY_TOOLS)
    assert all(verdicts.values()), verdicts
    assert verdicts["verify"].startswith("broken.mlir:5:3: error: %a is used after")
    assert verdicts["assign-offsets"] == verdicts["verify"]
    assert verdicts["lowering"] == verdicts["verify"]
    assert verdicts["simulate"].startswith(
        "broken.mlir:5:3: 'arith.addf' reads %a, which is not resident in HBM"
    )
    assert differential.residency_disagreement(prepared, broken, invalid=True) == ""


def test_a_detach_moved_early_breaks_the_plan() -> None:
    prepared = differential._Prepared(Program("dag", PROGRAM))  # pyright: ignore[reportPrivateUsage]
    planned = parse_mlir(
        prepared.ctx,
        USE_AFTER_DETACH.replace(
            "  hyperoffload.detach %a : tensor<64xf32>\n", ""
        ).replace(
            "  %c = arith.mulf %b, %x : tensor<64xf32>\n",
            "  hyperoffload.detach %a : tensor<64xf32>\n"
            "  %c = arith.mulf %b, %x : tensor<64xf32>\n",
        ),
        "planned.mlir",
    )
    assert differential.residency_disagreement(prepared, planned) == ""
    assert set(differential.residency_verdicts(prepared, planned).values()) == {""}
    broken = differential.detach_too_early(planned)
    assert broken is not None
    assert all(differential.residency_verdicts(prepared, broken).values())


@pytest.mark.parametrize(
    ("name", "capacity"),
    [("tiny_llama_decode.mlir", "60KB"), ("window_decode.mlir", "20KB")],
)
def test_planned_test_inputs_agree(name: str, capacity: str) -> None:
    prepared = differential._Prepared(Program("input", (INPUTS / name).read_text()))  # pyright: ignore[reportPrivateUsage]
    planned = differential._apply(  # pyright: ignore[reportPrivateUsage]
        prepared, f"hyperoffload-pipeline{{hbm-capacity={capacity}}}"
    )
    assert differential.residency_disagreement(prepared, planned) == ""


FUSED = """\
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%x: tensor<16x16xf32>, %y: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %a = arith.mulf %x, %x : tensor<16x16xf32>
  DETACH
  %e = tensor.empty() : tensor<16x16xf32>
  %t = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%a, %y : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<16x16xf32>
  %z = arith.constant 0.000000e+00 : f32
  %e2 = tensor.empty() : tensor<16x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %m = linalg.matmul ins(%y, %t : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f : tensor<16x16xf32>) -> tensor<16x16xf32>
  %r = arith.addf %m, %a : tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}
"""


def test_a_read_in_a_fused_kernel_is_blamed_on_the_op_that_reads() -> None:
    """
    The elementwise `%t` runs in the matmul's kernel (fused into its
    consumer). The simulator blamed the kernel's root, `'linalg.matmul'
    reads %a`, which does not read %a (issue 33's `%88`), and the verifier
    named the first use of %a in use-list order, not in program order; both
    now blame the generic.
    """
    prepared = differential._Prepared(Program("dag", FUSED.replace("  DETACH\n", "")))  # pyright: ignore[reportPrivateUsage]
    broken = parse_mlir(
        prepared.ctx,
        FUSED.replace("DETACH", "hyperoffload.detach %a : tensor<16x16xf32>"),
        "broken.mlir",
    )
    verdicts = differential.residency_verdicts(prepared, broken)
    assert verdicts["simulate"].startswith(
        "broken.mlir:6:3: 'linalg.generic' reads %a, which is not resident"
    )
    assert "%a is still used by 'linalg.generic' after it" in verdicts["verify"]
    assert differential.residency_disagreement(prepared, broken, invalid=True) == ""


def test_tools_that_blame_different_reads_disagree() -> None:
    assert differential.same_read(
        ["x.mlir:3:1: error: %a is used after its detach", "'arith.addf' reads %a"]
    )
    assert not differential.same_read(
        ["%a is still used by 'linalg.generic' after it", "'linalg.matmul' reads %a"]
    )
    assert not differential.same_read(
        ["'linalg.generic' reads %a", "'linalg.generic' reads %b"]
    )


VIEWED = """\
func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %a = arith.mulf %x, %x : tensor<2x2xf32>
  %v = tensor.collapse_shape %a [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  DETACH
  %s = arith.addf %v, %v : tensor<4xf32>
  %h = hyperoffload.store %v : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
  %r = tensor.expand_shape %s [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
"""


@pytest.mark.parametrize("detached", ["%a : tensor<2x2xf32>", "%v : tensor<4xf32>"])
def test_a_read_through_a_view_is_blamed_on_the_op_that_reads(detached: str) -> None:
    """
    A view reads nothing (the simulator does not see it): every tool blames
    the first op reading the detached buffer through it, and names the
    buffer, whether the detach releases it or a view of it.
    """
    prepared = differential._Prepared(Program("dag", VIEWED.replace("  DETACH\n", "")))  # pyright: ignore[reportPrivateUsage]
    broken = parse_mlir(
        prepared.ctx,
        VIEWED.replace("DETACH", f"hyperoffload.detach {detached}"),
        "broken.mlir",
    )
    verdicts = differential.residency_verdicts(prepared, broken)
    assert verdicts["simulate"].startswith(
        "broken.mlir:5:3: 'arith.addf' reads %a, which is not resident"
    )
    assert verdicts["verify"].startswith(
        "broken.mlir:4:3: error: detach of live data that no store has persisted: "
        "%a is still used by 'arith.addf' after it, through its view %v"
    )
    assert differential.residency_disagreement(prepared, broken, invalid=True) == ""


def test_a_planned_detach_is_located_at_the_op_it_follows() -> None:
    """
    The ops a plan inserts carry the location of the op they serve, not the
    function's (program 268 of seed 1: a parameter read through views,
    fetched and detached).
    """
    prepared = differential._prepared(1, 268)  # pyright: ignore[reportPrivateUsage]
    planned = differential._apply(prepared, "hyperoffload-insert{hbm-capacity=803}")  # pyright: ignore[reportPrivateUsage]
    broken = differential.detach_too_early(planned)
    assert broken is not None
    verdicts = differential.residency_verdicts(prepared, broken)
    assert all(verdicts.values()), verdicts
    assert not any(":1:1:" in verdict for verdict in verdicts.values()), verdicts
