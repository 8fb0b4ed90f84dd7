"""
A module upstream's parser read was verified by upstream (the bindings'
parse verifies): its first `verify_module` runs xDSL's verifiers only on the
ops upstream does not register (ours), and still checks the residency.
"""

import pytest
from xdsl.dialects.arith import AddfOp
from xdsl.dialects.builtin import UnitAttr
from xdsl.utils.exceptions import VerifyException

from hyperoffload.ir.context import make_context
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.engines import Engine, parse_with_engine
from hyperoffload.ir.upstream import UpstreamParseError

ADD = (
    "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %b = arith.addf %a, %a : tensor<4xf32>\n"
    "  return %b : tensor<4xf32>\n"
    "}\n"
)

BAD_PREFETCH = (
    "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    '  %b = "hyperoffload.prefetch"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n'
    "  return %b : tensor<4xf32>\n"
    "}\n"
)


MISMATCH = (
    "func.func @f(%a: i32, %b: i64) -> i32 {\n"
    '  %c = "arith.addi"(%a, %b) : (i32, i64) -> i32\n'
    "  return %c : i32\n"
    "}\n"
)


def _record_verifications(monkeypatch: pytest.MonkeyPatch, into: list[AddfOp]) -> None:
    """Make `arith.addf`'s verifier note each op it is run on."""

    def verify(op: AddfOp) -> None:
        into.append(op)

    monkeypatch.setattr(AddfOp, "verify_", verify)


def _calls_of_addf_verifier(
    monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> list[AddfOp]:
    """The `arith.addf` ops whose xDSL verifier the first `verify_module` ran."""
    module = parse_with_engine(make_context(), ADD, "add.mlir", engine=engine)
    called: list[AddfOp] = []
    _record_verifications(monkeypatch, called)
    verify_module(module)
    return called


def test_upstream_verdict_stands_for_the_ops_it_registers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _calls_of_addf_verifier(monkeypatch, Engine.UPSTREAM) == []
    assert len(_calls_of_addf_verifier(monkeypatch, Engine.XDSL)) == 1


def test_a_second_verification_checks_what_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = parse_with_engine(make_context(), ADD, "add.mlir", engine=Engine.UPSTREAM)
    verify_module(module)  # the module as read: upstream verified it
    called: list[AddfOp] = []
    _record_verifications(monkeypatch, called)
    verify_module(module)  # unchanged: accepted as upstream verified it
    assert called == []
    (add,) = [op for op in module.walk() if isinstance(op, AddfOp)]
    add.attributes["note"] = UnitAttr()  # a pass changed it, say
    verify_module(module)
    assert called == [add]


def test_our_ops_are_verified_in_a_module_upstream_read() -> None:
    module = parse_with_engine(
        make_context(), BAD_PREFETCH, "bad.mlir", engine=Engine.UPSTREAM
    )
    with pytest.raises(VerifyException, match=r"^bad\.mlir:2:8: error: .*remote"):
        verify_module(module)


def test_upstream_parse_verifies_what_it_reads() -> None:
    """The premise: an op upstream rejects never reaches `verify_module`."""
    with pytest.raises(UpstreamParseError, match=r"^add\.mlir:2:8: error: .*same type"):
        parse_with_engine(make_context(), MISMATCH, "add.mlir", engine=Engine.UPSTREAM)
