"""
`verify_module` verifies again only the ops changed since it accepted them
(`hyperoffload.ir.accepted`): a rewired operand, a changed property, a call
whose callee changed are each caught; an unchanged op is not run again.
"""

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, f32, i32
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir

PROGRAM = """func.func @g(%x: f32) -> f32 {
  func.return %x : f32
}
func.func @f(%a: f32, %n: i32) -> f32 {
  %c = arith.constant 2.0 : f32
  %b = arith.addf %a, %c : f32
  %r = func.call @g(%b) : (f32) -> f32
  func.return %r : f32
}"""


def read(ctx: Context) -> ModuleOp:
    module = parse_mlir(ctx, PROGRAM, "accepted.mlir")
    verify_module(module)
    return module


def only(module: ModuleOp, kind: type[Operation]) -> Operation:
    (op,) = [op for op in module.walk() if isinstance(op, kind)]
    return op


def test_a_rewired_operand_is_verified_again(ctx: Context):
    module = read(ctx)
    add = only(module, arith.AddfOp)
    caller = [op for op in module.walk() if isinstance(op, func.FuncOp)][1]
    add.operands[1] = caller.args[1]  # an i32 into an f32 addition
    with pytest.raises(VerifyException, match=r"accepted\.mlir:6:"):
        verify_module(module)


def test_a_changed_property_is_verified_again(ctx: Context):
    module = read(ctx)
    constant = only(module, arith.ConstantOp)
    assert constant.properties["value"] == FloatAttr(2.0, f32)
    constant.properties["value"] = IntegerAttr(2, i32)  # an i32 for an f32 result
    with pytest.raises(VerifyException, match=r"accepted\.mlir:5:"):
        verify_module(module)


def test_a_call_is_verified_again_when_its_callee_changes(ctx: Context):
    module = read(ctx)
    callee = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    callee.replace_argument_type(0, i32, Rewriter())
    with pytest.raises(VerifyException, match="operand type mismatch"):
        verify_module(module)


def test_an_unchanged_op_is_not_verified_again(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
):
    module = read(ctx)
    verified: list[str] = []
    original = Operation.verify

    def counted(op: Operation, verify_nested_ops: bool = True) -> None:
        verified.append(op.name)
        original(op, verify_nested_ops)

    monkeypatch.setattr(Operation, "verify", counted)
    verify_module(module)
    # the module checks its symbols, the call looks up its callee: every time
    assert verified == ["builtin.module", "func.call"]
    add = only(module, arith.AddfOp)
    add.operands[0], add.operands[1] = add.operands[1], add.operands[0]
    verified.clear()
    verify_module(module)
    assert verified == ["builtin.module", "arith.addf", "func.call"]
