"""Embedding: compile() on every module kind, an upstream PassManager, xdsl-opt."""

import json
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
ATTENTION = (ROOT / "test" / "inputs" / "torch_attention.mlir").read_text()


def _generic(module: Any) -> str:
    """Generic form with `dense_resource` keys as declared (a re-parse renames them)."""
    text: str = module.operation.get_asm(print_generic_op_form=True)
    return re.sub(r"(dense_resource<[^>]*?)(_\d+)+>", r"\1>", text)


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


@pytest.mark.parametrize(
    ("text", "opaque"),
    [(FORWARD, False), (FORWARD, True), (ATTENTION, False)],
    ids=["forward", "opaque-tiers", "dense-resource"],
)
def test_upstream_compile_gives_what_the_text_path_gives(
    text: str, opaque: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Read and written back through the bindings: tiers parsed as opaque
    # attributes before the dialect was loaded come back as the text path
    # gives them. A `dense_resource` blob keeps the reader off: text, then.
    written = "dense_resource" not in text
    xdsl_module = parse_mlir(make_context(), text, "in.mlir")
    planned, report = hyperoffload.compile(xdsl_module, hbm_capacity=TARGET)
    with ir.Context() as context:
        context.allow_unregistered_dialects = opaque

        def upstream() -> Any:
            if opaque:
                return ir.Module.parse(text)
            return hyperoffload.to_upstream(text, context)

        module, in_place = upstream(), upstream()
        before = _generic(module)
        expected = _generic(hyperoffload.to_upstream(planned, context))
        pass_manager = PassManager.parse("builtin.module(canonicalize)")
        hyperoffload.add_to_pass_manager(pass_manager, hbm_capacity=TARGET)
        if written:  # no text printed for upstream
            monkeypatch.setattr(hyperoffload.api, "_print", None)
        compiled: tuple[Any, Any] = hyperoffload.compile(module, hbm_capacity=TARGET)
        assert _generic(module) == before  # the input is left unchanged
        assert compiled[1] == report
        assert _generic(compiled[0]) == expected
        pass_manager.run(in_place.operation)
        assert _generic(in_place) == expected


# torch-mlir's copy of the MLIR libraries is loaded first, as in a process
# that exported a model; the `mlir` bindings must stay out of it.
_TORCH_MLIR_SCRIPT = """
import json, sys
import torch
from torch_mlir import fx, ir
import hyperoffload

class Step(torch.nn.Module):
    def forward(self, x, w1, w2):
        return torch.tanh(torch.relu(x @ w1) @ w2) @ w1

args = (torch.randn(8, 64), torch.randn(64, 64), torch.randn(64, 64))
module = fx.export_and_import(
    Step(), *args, output_type="linalg-on-tensors", func_name="step"
)
hyperoffload.load_dialect(module.context)
with module.context:
    remote = '{hyperoffload.tier = #hyperoffload.tier<"remote">}'
    module.body.operations[0].attributes["arg_attrs"] = ir.Attribute.parse(
        f"[{{}}, {remote}, {remote}]"
    )
exported = str(module)
planned, report = hyperoffload.compile(module, hbm_capacity=40_000)
planned.operation.verify()
print(json.dumps({
    "kind": type(planned).__module__ + "." + type(planned).__name__,
    "same_context": planned.context == module.context,
    "input_unchanged": str(module) == exported,
    "planned": planned.operation.get_asm(print_generic_op_form=True),
    "peak_before": report.peak_before_bytes,
    "mlir_loaded": sorted(m for m in sys.modules if m.split(".")[0] == "mlir"),
}))
"""


def test_compile_a_torch_mlir_module_in_the_exporting_process() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _TORCH_MLIR_SCRIPT],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["kind"] == "torch_mlir._mlir_libs._mlir.ir.Module"
    assert result["same_context"]
    assert result["input_unchanged"]
    assert result["planned"].count('"hyperoffload.prefetch"') == 2
    assert result["peak_before"] > 0
    assert result["mlir_loaded"] == []


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
    with pytest.raises(DiagnosticException, match=r"<compile>:\d+:\d+: .*cut short"):
        hyperoffload.compile(ATTENTION[:8000])
