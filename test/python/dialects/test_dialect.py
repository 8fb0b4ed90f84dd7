"""The dialect through its Python API: construction, printing, verification."""

from io import StringIO

import pytest
from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Attribute, Block, Region
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from hyperoffload.dialects.hyperoffload import (
    DetachOp,
    PrefetchOp,
    RemoteType,
    StoreOp,
    Tier,
    TierAttr,
)
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir

T = TensorType(f32, [4])


def _function(*arg_types: Attribute) -> tuple[ModuleOp, Builder, Block]:
    block = Block(arg_types=arg_types)
    function = func.FuncOp("f", (arg_types, []), Region(block))
    return ModuleOp([function]), Builder(InsertPoint.at_end(block)), block


def _print(attr: Attribute, generic: bool) -> str:
    out = StringIO()
    Printer(stream=out, print_generic_format=generic).print_attribute(attr)
    return out.getvalue()


def test_built_program_verifies() -> None:
    module, b, block = _function(T, RemoteType(T, Tier.HOST))
    x, w = block.args
    handle = b.insert(StoreOp(x)).handle
    b.insert(DetachOp(x))
    wd = b.insert(PrefetchOp(w)).result
    xd = b.insert(PrefetchOp(handle)).result
    b.insert(arith.AddfOp(xd, wd))
    b.insert(func.ReturnOp())
    verify_module(module)
    assert handle.type == RemoteType(T)
    assert wd.type == T


@pytest.mark.parametrize(
    ("attr", "custom", "generic"),
    [
        (TierAttr(Tier.HOST), "#hyperoffload.tier<host>", '#hyperoffload.tier<"host">'),
        (
            RemoteType(T),
            "!hyperoffload.remote<tensor<4xf32>>",
            '!hyperoffload.remote<tensor<4xf32>, #hyperoffload.tier<"remote">>',
        ),
        (
            RemoteType(T, Tier.SSD),
            "!hyperoffload.remote<tensor<4xf32>, ssd>",
            '!hyperoffload.remote<tensor<4xf32>, #hyperoffload.tier<"ssd">>',
        ),
    ],
)
def test_custom_and_generic_spellings(
    attr: Attribute, custom: str, generic: str
) -> None:
    assert _print(attr, generic=False) == custom
    assert _print(attr, generic=True) == generic


def test_unknown_tier_is_rejected() -> None:
    with pytest.raises(ValueError, match="nvme"):
        TierAttr("nvme")


def test_remote_copy_cannot_live_in_hbm() -> None:
    with pytest.raises(VerifyException, match="cannot live in 'hbm'"):
        RemoteType(T, Tier.HBM)


def test_use_after_detach_is_reported_at_the_use(ctx: Context) -> None:
    module = parse_mlir(
        ctx,
        """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
  hyperoffload.detach %x : tensor<4xf32>
  %y = arith.addf %x, %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}""",
        "use.mlir",
    )
    with pytest.raises(
        VerifyException, match=r"^use\.mlir:5:3: error: %x is used after"
    ):
        verify_module(module)


def test_detach_then_prefetch_of_the_stored_copy_verifies(ctx: Context) -> None:
    module = parse_mlir(
        ctx,
        """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = hyperoffload.store %x : tensor<4xf32> -> !hyperoffload.remote<tensor<4xf32>>
  hyperoffload.detach %x : tensor<4xf32>
  %xd = hyperoffload.prefetch %h : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
  %y = arith.addf %xd, %xd : tensor<4xf32>
  func.return %y : tensor<4xf32>
}""",
        "ok.mlir",
    )
    verify_module(module)
