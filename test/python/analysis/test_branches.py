"""
`taken_path`: a program with `scf.if` seen along one path, and the extractor
refusing a program that still branches.
"""

import pytest
from xdsl.context import Context
from xdsl.dialects import scf

from hyperoffload.analysis.branches import has_branches, taken_path
from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import (
    ExtractionError,
    extract_schedule,
    main_function,
)
from hyperoffload.analysis.program import Program
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware

T = "tensor<4xf32>"
PROGRAM = f"""
func.func @f(%x: {T}, %a: i1, %b: i1) -> {T} {{
  %y = scf.if %a -> ({T}) {{
    %m = arith.mulf %x, %x : {T}
    %z = scf.if %b -> ({T}) {{
      %s = arith.subf %m, %x : {T}
      scf.yield %s : {T}
    }} else {{
      scf.yield %m : {T}
    }}
    scf.yield %z : {T}
  }} else {{
    %n = arith.negf %x : {T}
    scf.yield %n : {T}
  }}
  %r = arith.addf %x, %y : {T}
  func.return %r : {T}
}}
"""


def _ops(ctx: Context, take: bool | None = None) -> list[str]:
    module = parse_mlir(ctx, PROGRAM, "branches.mlir")
    path = taken_path(module) if take is None else taken_path(module, lambda _: take)
    assert not has_branches(path)
    assert has_branches(module)  # the input is left as it was
    return [op.name for op in main_function(path).body.block.ops]


def test_every_then(ctx: Context) -> None:
    assert _ops(ctx) == ["arith.mulf", "arith.subf", "arith.addf", "func.return"]


def test_every_else(ctx: Context) -> None:
    assert _ops(ctx, False) == ["arith.negf", "arith.addf", "func.return"]


def test_results_become_the_yielded_values(ctx: Context) -> None:
    path = taken_path(parse_mlir(ctx, PROGRAM, "branches.mlir"))
    mulf, subf, addf, _ = main_function(path).body.block.ops
    assert subf.operands[0] is mulf.results[0]
    assert addf.operands[1] is subf.results[0]


def test_extractor_takes_one_path(ctx: Context) -> None:
    module = parse_mlir(ctx, PROGRAM, "branches.mlir")
    hardware = load_hardware("ascend-910c")
    with pytest.raises(ExtractionError, match=r"'scf\.if' is not supported") as error:
        extract_schedule(main_function(module), CostModel(hardware))
    assert error.value.where == "branches.mlir:3:3"
    planned = Program(module, hardware).planned
    assert [s.name for s in planned.steps if s.kind == "compute"] == [
        "arith.mulf",
        "arith.subf",
        "arith.addf",
    ]
    assert any(isinstance(op, scf.IfOp) for op in module.walk())
