"""Embedding: compile() on every module kind, an upstream PassManager, xdsl-opt."""

import re
import subprocess
import sys
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

import hyperoffload
from hyperoffload.ir.context import make_context
from hyperoffload.ir.parsing import parse_mlir

# The bindings' stubs are incomplete; use them untyped.
ir: Any = import_module("mlir.ir")
PassManager: Any = import_module("mlir.passmanager").PassManager

ROOT = Path(__file__).resolve().parents[2]
FORWARD = (ROOT / "examples" / "tiny_llama_forward.mlir").read_text()
TARGET = 400_000


def test_compile_text_xdsl_and_upstream_modules() -> None:
    text, report = hyperoffload.compile(FORWARD, hbm_capacity=TARGET)
    assert isinstance(text, str)
    assert "hyperoffload.prefetch" in text
    assert report.peak_after_bytes <= TARGET < report.peak_before_bytes

    module = parse_mlir(make_context(), FORWARD, "forward.mlir")
    planned, _ = hyperoffload.compile(module, hbm_capacity=TARGET)
    assert isinstance(planned, ModuleOp)
    assert "hyperoffload.prefetch" in str(planned)
    assert "hyperoffload.prefetch" not in str(module)

    with ir.Context() as context:
        upstream: Any = hyperoffload.to_upstream(FORWARD, context)
        compiled: tuple[Any, Any] = hyperoffload.compile(upstream, hbm_capacity=TARGET)
        result = compiled[0]
        assert isinstance(result, ir.Module)
        result.operation.verify()
        generic: str = result.operation.get_asm(print_generic_op_form=True)
        assert '"hyperoffload.prefetch"' in generic


def test_upstream_pass_manager_runs_the_pipeline_in_place() -> None:
    with ir.Context() as context:
        module = hyperoffload.to_upstream(FORWARD, context)
        pass_manager = PassManager.parse("builtin.module(canonicalize)")
        hyperoffload.add_to_pass_manager(pass_manager, hbm_capacity=TARGET)
        pass_manager.add("cse")
        pass_manager.run(module.operation)
        module.operation.verify()
        assert str(module).count("hyperoffload.prefetch") > 0


def test_pass_manager_failure_carries_the_diagnostic() -> None:
    with ir.Context() as context:
        module = hyperoffload.to_upstream(FORWARD, context)
        pass_manager = PassManager.parse("builtin.module(canonicalize)")
        hyperoffload.add_to_pass_manager(pass_manager, hbm_capacity=1000)
        with pytest.raises(
            ir.MLIRError, match="no plan meets the HBM target of 1000 B"
        ):
            pass_manager.run(module.operation)


def test_xdsl_opt_sees_the_dialect_and_passes() -> None:
    xdsl_opt = Path(sys.executable).parent / "xdsl-opt"
    result = subprocess.run(
        [
            str(xdsl_opt),
            str(ROOT / "test" / "passes" / "insert.mlir"),
            "--split-input-file",
            "-p",
            "hyperoffload-insert",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "%w_1 = hyperoffload.prefetch %w" in result.stdout


def test_embedding_example_runs() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "embed_upstream.py")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert re.search(r"upstream pipeline: [1-9]\d* prefetches", result.stdout)
    found = re.search(
        r"compile\(max_slowdown=0.02\): peak (\d+) B -> (\d+) B", result.stdout
    )
    assert found is not None, result.stdout
    assert int(found[2]) < int(found[1])


def test_compile_survives_text_that_aborts_the_upstream_parser():
    # a torch-mlir file cut short trips an assertion in the upstream parser;
    # it runs in a child process, so the embedding application lives on
    text = (Path(__file__).parents[1] / "inputs" / "torch_attention.mlir").read_text()
    with pytest.raises(DiagnosticException, match=r"<compile>:\d+:\d+: .*cut short"):
        hyperoffload.compile(text[:8000])
