"""
`restored_afterwards` puts a function back as it was after a plan is written
into it: the tiny LLaMA training step, planned at 375 KB, recomputes, moves
its fetches and retypes the weights it keeps in the remote pool (their
arguments become remote copies); the restored function prints as before and
holds the very ops and arguments it held, each use where its op reads it.
"""

from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from hyperoffload.analysis.extract import main_function
from hyperoffload.dialects.hyperoffload import RemoteType
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.ir.snapshot import restored_afterwards
from hyperoffload.model.hardware import load_hardware
from hyperoffload.planning.loop import LoopOptions, PlanningLoop, Trial
from hyperoffload.planning.placement import MoveOptions
from hyperoffload.planning.planner import PlanOptions
from hyperoffload.planning.write_plan import write_plan

STEP = Path(__file__).resolve().parents[3] / "examples" / "tiny_llama_train.mlir"
HARDWARE = load_hardware("ascend-910c")


def planned(ctx: Context) -> tuple[PlanningLoop, Trial]:
    function = main_function(parse_mlir(ctx, STEP.read_text(), STEP.name))
    options = LoopOptions(PlanOptions(target=0, recompute="auto"), MoveOptions())
    loop = PlanningLoop.for_function(function, HARDWARE, options)
    return loop, loop.trial(375_000)


def write(loop: PlanningLoop, trial: Trial) -> None:
    graph = loop.graph
    write_plan(
        loop.function,
        graph.ops,
        trial.plan,
        1,
        HARDWARE.offload_tier,
        False,
        graph.fusion,
    )


def uses_agree(function: FuncOp) -> None:
    """Each value's uses are exactly the operands that read it."""
    reads: dict[SSAValue, set[tuple[Operation, int]]] = {}
    for op in function.walk():
        for index, operand in enumerate(op.operands):
            reads.setdefault(operand, set()).add((op, index))
    for value, readers in reads.items():
        assert {(use.operation, use.index) for use in value.uses} == readers


def test_a_function_is_put_back_after_a_plan_is_written_into_it(ctx: Context):
    loop, trial = planned(ctx)
    assert any(value.recompute for value in trial.plan.values)
    assert any(value.initially_out for value in trial.plan.values)
    function = loop.function
    block = function.body.block
    text, ops, args = str(function), list(block.ops), block.args
    with restored_afterwards(function) as before:
        write(loop, trial)
        assert len(block.ops) > len(ops)
        assert any(isinstance(arg.type, RemoteType) for arg in block.args)
        assert 0 < len(before.unrewired()) < len(ops)
    assert str(function) == text
    assert list(block.ops) == ops
    assert block.args == args
    uses_agree(function)


def test_a_function_is_put_back_when_the_block_raises(ctx: Context):
    loop, trial = planned(ctx)
    text = str(loop.function)

    def fail_after_writing() -> None:
        with restored_afterwards(loop.function):
            write(loop, trial)
            raise RuntimeError("extraction failed")

    with pytest.raises(RuntimeError):
        fail_after_writing()
    assert str(loop.function) == text
    uses_agree(loop.function)


def test_written_again_the_plan_writes_the_same_ir(ctx: Context):
    loop, trial = planned(ctx)
    with restored_afterwards(loop.function):
        write(loop, trial)
        first = str(loop.function)
    write(loop, trial)
    assert str(loop.function) == first
