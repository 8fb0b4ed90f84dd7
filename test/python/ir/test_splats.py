"""
A splat constant stays one element: a 1G-element `dense<...>` parses,
prints, verifies (ours and upstream's), is priced and is evaluated in
constant memory (what Python allocates for it stays under 16 MB, measured
with `tracemalloc`, not a clock); and through the tools, a 90M-element
splat (the issue's `tensor<100x64x220x220xi32>`, 38 s and 7.3 GB when it was
expanded) is read, printed and simulated in under 100 MB.
"""

import tracemalloc
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.printer import Printer

from hyperoffload.analysis.cost import tensor_bytes
from hyperoffload.evaluators.numeric import evaluate
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.tools.hyperoffload_opt import main as opt_main
from hyperoffload.tools.hyperoffload_sim import main as sim_main

ELEMENTS = 1 << 30
PROGRAM = f"""\
func.func @big(%i: index) -> f32 {{
  %c = arith.constant dense<1.5> : tensor<{ELEMENTS}xf32>
  %e = tensor.extract %c[%i] : tensor<{ELEMENTS}xf32>
  return %e : f32
}}
"""
MEGABYTE = 1 << 20


def test_a_gigaelement_splat_in_constant_memory(ctx: Context) -> None:
    tracemalloc.start()
    try:
        module = parse_mlir(ctx, PROGRAM, "big.mlir")
        verify_module(module)
        constant = next(op for op in module.walk() if isinstance(op, ConstantOp))
        assert isinstance(constant.value, DenseIntOrFPElementsAttr)
        assert len(constant.value) == 1
        assert constant.value.is_splat()
        printed = StringIO()
        Printer(stream=printed).print_op(module)
        assert f"dense<1.500000e+00> : tensor<{ELEMENTS}xf32>" in printed.getvalue()
        assert tensor_bytes(constant.result, constant) == 4 * ELEMENTS
        result = evaluate(module, [np.asarray(12345, dtype=np.int64)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert float(result.outputs[0]) == 1.5
    assert peak < MEGABYTE * 16, f"{peak / MEGABYTE:.1f} MB traced"


def test_a_splat_reads_back_as_the_same_splat(ctx: Context) -> None:
    text = "func.func @s() -> tensor<8x8xbf16> {\n  %c = arith.constant dense<-2.0> : tensor<8x8xbf16>\n  return %c : tensor<8x8xbf16>\n}\n"
    first = parse_mlir(ctx, text, "s.mlir")
    printed = StringIO()
    Printer(stream=printed).print_op(first)
    again = parse_mlir(ctx, printed.getvalue(), "s2.mlir")
    values = [
        op.value
        for m in (first, again)
        for op in m.walk()
        if isinstance(op, ConstantOp)
    ]
    assert values[0] == values[1]
    assert np.array_equal(evaluate(first, []).outputs[0], np.full((8, 8), -2.0))


SPLAT_TYPE = "tensor<100x64x220x220xi32>"
SMALL_INPUT = f"""\
func.func @big(%x: tensor<64xf32>) -> {SPLAT_TYPE} {{
  %c = arith.constant dense<0> : {SPLAT_TYPE}
  return %c : {SPLAT_TYPE}
}}
"""


def test_the_tools_read_and_simulate_a_splat_in_constant_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "big.mlir"
    path.write_text(SMALL_INPUT)
    assert len(SMALL_INPUT) < 1024
    tracemalloc.start()
    try:
        assert opt_main([str(path)]) == 0
        assert sim_main([str(path), "--json"]) == 0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    out = capsys.readouterr().out
    assert f"arith.constant dense<0> : {SPLAT_TYPE}" in out
    assert peak < 100 * MEGABYTE, f"{peak / MEGABYTE:.1f} MB traced"
