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
    ("index", "config"),
    [(0, "insert"), (1, "pipeline-25"), (2, "move-window"), (6, "pipeline-0")],
)
def test_planned_random_programs_agree(index: int, config: str) -> None:
    """The tools agree on the plan, and on the plan with a detach moved early."""
    outcome = differential.run_task(differential.Task(index, 3, config))
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
