"""
The cross-tool residency oracle on the suite's small programs: each planned
by the pipeline at a few targets, the verifier, the simulator,
`hyperoffload-assign-offsets` and the ExecutionEngine lowering
(`convert-hyperoffload-to-linalg`) all accept the plan, and all reject it at
the same read once a detach is moved before a use of what it releases
(`fuzz.differential.residency_disagreement`). A deterministic sample: the
examples and test inputs under 60 KB, each at two targets (a quarter and
three quarters of the way from the largest single-op working set to the
unplanned peak). On a program with branches (`scf.if`), the simulator and
`hyperoffload-assign-offsets` follow one path and say so (`abstains`): the
verifier and the lowering agree there.
"""

from pathlib import Path

import pytest

from fuzz import differential
from fuzz.programs import Program

ROOT = Path(__file__).resolve().parents[3]
PROGRAMS = [
    "examples/offload_mlp.mlir",
    "test/inputs/window_decode.mlir",
    "test/inputs/two_expert_decode.mlir",
    "test/inputs/torch_attention.mlir",
    "examples/tiny_llama_forward.mlir",
    "test/inputs/tiny_llama_decode.mlir",
]
FRACTIONS = [0.25, 0.75]


@pytest.fixture(scope="module", params=PROGRAMS)
def prepared(request: pytest.FixtureRequest) -> differential._Prepared:  # pyright: ignore[reportPrivateUsage]
    text = (ROOT / str(request.param)).read_text()
    return differential._Prepared(Program("input", text))  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize("fraction", FRACTIONS)
def test_every_tool_agrees_on_the_plan(
    prepared: differential._Prepared,  # pyright: ignore[reportPrivateUsage]
    fraction: float,
) -> None:
    target = prepared.target(fraction)
    planned = differential._apply(  # pyright: ignore[reportPrivateUsage]
        prepared, f"hyperoffload-pipeline{{hbm-capacity={target}}}"
    )
    assert differential.residency_disagreement(prepared, planned) == ""
    verdicts = differential.residency_verdicts(prepared, planned)
    assert not verdicts["verify"]
    assert not verdicts["lowering"]
    broken = differential.detach_too_early(planned)
    if broken is not None:
        disagreement = differential.residency_disagreement(prepared, broken, True)
        assert disagreement == ""
