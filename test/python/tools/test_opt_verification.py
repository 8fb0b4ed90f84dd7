"""
`hyperoffload-opt` verifies the module before the first pass, between two
passes and after the last one, with our located verifier (`verify_module`):
a pass that breaks the module is reported at the op it broke, and the next
pass does not run on it.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, IntegerType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from hyperoffload.tools.hyperoffload_opt import HyperoffloadOptMain

PROGRAM = (
    "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %b = arith.addf %a, %a : tensor<4xf32>\n"
    "  return %b : tensor<4xf32>\n"
    "}\n"
)


@dataclass(frozen=True)
class _BreakSignature(ModulePass):
    """Gives every function an `i64` argument its entry block does not take."""

    name = "test-break-signature"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.walk():
            if isinstance(func, FuncOp):
                outputs = func.function_type.outputs.data
                func.function_type = FunctionType.from_lists([IntegerType(64)], outputs)


@dataclass(frozen=True)
class _Record(ModulePass):
    """Notes that it ran."""

    name = "test-record"
    ran: ClassVar[list[str]] = []

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _Record.ran.append(self.name)


class _Driver(HyperoffloadOptMain):
    def register_all_passes(self):
        super().register_all_passes()
        self.register_pass(_BreakSignature.name, lambda: _BreakSignature)
        self.register_pass(_Record.name, lambda: _Record)


@pytest.mark.parametrize(
    ("pipeline", "ran"),
    [
        ("test-break-signature,test-record", []),
        ("test-record,test-break-signature", ["test-record"]),
    ],
)
def test_a_pass_that_breaks_the_module_is_reported_at_the_op(
    tmp_path: Path, pipeline: str, ran: list[str]
) -> None:
    path = tmp_path / "ok.mlir"
    path.write_text(PROGRAM)
    _Record.ran.clear()
    for engine in ("upstream", "xdsl"):
        driver = _Driver(args=[str(path), "--engine", engine, "-p", pipeline])
        with pytest.raises(VerifyException, match=r"^.*ok\.mlir:1:1: error: "):
            driver.run()
    assert _Record.ran == ran * 2
