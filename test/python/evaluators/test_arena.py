"""
`convert-hyperoffload-to-linalg{arena=true}` run natively (MLIR
ExecutionEngine): the tiny LLaMA exports planned, laid out by
`hyperoffload-assign-offsets` and lowered onto one arena compute the same
bits as the unplanned programs, and really compute in the arena.
"""

import io
from importlib import import_module
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.passes import PassPipeline
from xdsl.printer import Printer

from hyperoffload.evaluators.execution import (
    UpstreamProgram,
    compare_outputs,
    compare_upstream,
    run_upstream,
)
from hyperoffload.ir.arena import OFFSETS_ATTR
from hyperoffload.ir.context import make_context
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.passes import all_passes
from hyperoffload.tools.hyperoffload_check import main as check_main

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

Array = np.ndarray[Any, Any]

PIPELINES = {
    "tiny_llama_forward": "hyperoffload-pipeline{hbm-capacity=400000}",
    "tiny_llama_train": "hyperoffload-pipeline{hbm-capacity=700000}",
}
"""HBM targets below each example's unconstrained peak (as in test_execution):
parameters move through the remote pool."""

LAYOUT = "hyperoffload-assign-offsets"
ARENA = "convert-hyperoffload-to-linalg{arena=true}"
BUFFERIZE = (
    "builtin.module(func.func(convert-elementwise-to-linalg),"
    "one-shot-bufferize{bufferize-function-boundaries=1"
    " function-boundary-type-conversion=identity-layout-map})"
)


def _module(text: str, name: str, pipeline: str) -> ModuleOp:
    ctx = make_context()
    module = parse_mlir(ctx, text, name)
    PassPipeline.parse_spec(all_passes(), pipeline).apply(ctx, module)
    return module


def _generic(module: ModuleOp, pipeline: str = "") -> str:
    if pipeline:
        PassPipeline.parse_spec(all_passes(), pipeline).apply(make_context(), module)
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(module)
    return stream.getvalue()


def _placed_linalg_results(module: ModuleOp) -> int:
    """Linalg results the layout gives a buffer of their own."""
    count = 0
    for op in module.walk():
        offsets = op.attributes.get(OFFSETS_ATTR)
        if isinstance(op, LinalgStructuredOperation) and offsets is not None:
            assert isinstance(offsets, DenseArrayBase)
            count += sum(1 for o in offsets.get_values() if o >= 0)
    return count


def _linalg_outputs(text: str) -> dict[str, int]:
    """After one-shot bufferization: how many linalg `outs` buffers each op
    (`memref.view`, `memref.alloc`, ...) defines."""
    ir: Any = import_module("mlir.ir")
    passmanager: Any = import_module("mlir.passmanager")
    owners: dict[str, int] = {}
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(text)
        passmanager.PassManager.parse(BUFFERIZE).run(module.operation)

        def visit(op: Any) -> Any:
            if op.name.startswith("linalg.") and op.name not in (
                "linalg.yield",
                "linalg.index",
            ):
                inputs, outputs = ir.DenseI32ArrayAttr(
                    op.attributes["operandSegmentSizes"]
                )
                for value in list(op.operands)[inputs : inputs + outputs]:
                    owner = value.owner
                    name = "argument" if isinstance(owner, ir.Block) else owner.name
                    owners[name] = owners.get(name, 0) + 1
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
    return owners


class _Example:
    """An example, its unplanned outputs and its program lowered onto an arena."""

    def __init__(self, name: str):
        self.name = name
        text = (EXAMPLES / f"{name}.mlir").read_text()
        reference = np.load(EXAMPLES / f"{name}.reference.npz")
        count = sum(1 for key in reference.files if key.startswith("arg"))
        self.inputs: list[Array] = [reference[f"arg{i}"] for i in range(count)]
        self.outputs = UpstreamProgram(text, file_name=name)(self.inputs)
        planned = _module(text, name, f"{PIPELINES[name]},{LAYOUT}")
        self.placed = _placed_linalg_results(planned)
        self.prefetches = _generic(planned).count('"hyperoffload.prefetch"')
        self.lowered = _generic(planned, ARENA)


@pytest.fixture(scope="module", params=sorted(PIPELINES))
def example(request: pytest.FixtureRequest) -> _Example:
    return _Example(request.param)


def test_arena_lowering_computes_the_same_bits(example: _Example) -> None:
    comparison = compare_outputs(
        example.outputs, run_upstream(example.lowered, example.inputs)
    )
    assert comparison.match, comparison.max_abs_diff
    assert comparison.max_abs_diff == 0


def test_buffers_are_views_of_one_arena(example: _Example) -> None:
    lowered = example.lowered
    # one allocation on the device: the arena (the others are the remote pool's)
    arena = '"memref.alloc"() <{alignment = 64 : i64, operandSegmentSizes'
    assert lowered.count(arena) == 1
    assert '"memref.dealloc"' not in lowered  # the detaches free nothing
    assert example.prefetches > 20
    assert example.placed > 40
    assert lowered.count('"memref.view"') >= example.prefetches + example.placed
    # bufferized, every linalg result with an offset (and each fill cloned
    # for it) writes into its view; ops the cost model fuses into a later
    # kernel have no buffer in the layout and write into buffers of their own
    outputs = _linalg_outputs(lowered)
    assert outputs["memref.view"] >= example.placed


def test_check_arena_runs_the_layout(capsys: pytest.CaptureFixture[str]) -> None:
    mlp = str(EXAMPLES / "offload_mlp.mlir")
    status = check_main([mlp, "--pipeline", "", "--arena", "--seed", "2"])
    out, err = capsys.readouterr()
    assert status == 0, err
    original, lowered = out.split("// lowered: ")
    assert '"memref.view"' not in original
    assert lowered.startswith(
        f"{mlp} after hyperoffload-assign-offsets,convert-hyperoffload-to-linalg"
        "{arena=true} (generic form)"
    )
    assert '"memref.view"' in lowered
    assert out.endswith("outputs match: yes (max |diff| = 0)\n")


PARK = """
#v = affine_map<(d0) -> (d0)>
func.func @park(%x: tensor<32xf32>) -> (!hyperoffload.remote<tensor<32xf32>>, tensor<32xf32>)
    attributes {hyperoffload.arena_bytes = 256 : i64} {
  %e = tensor.empty() : tensor<32xf32>
  %a = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<32xf32>) outs(%e : tensor<32xf32>)
      attrs = {hyperoffload.offsets = array<i64: 0>} {
  ^bb0(%p: f32, %o: f32):
    %r = arith.mulf %p, %p : f32
    linalg.yield %r : f32
  } -> tensor<32xf32>
  %h = hyperoffload.store %a : tensor<32xf32> -> !hyperoffload.remote<tensor<32xf32>>
  %c = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%x : tensor<32xf32>) outs(%e : tensor<32xf32>)
      attrs = {hyperoffload.offsets = array<i64: 0>} {
  ^bb0(%p: f32, %o: f32):
    %r = arith.subf %p, %p : f32
    linalg.yield %r : f32
  } -> tensor<32xf32>
  func.return %h, %c : !hyperoffload.remote<tensor<32xf32>>, tensor<32xf32>
}
"""


def test_a_store_completes_before_its_range_is_reused() -> None:
    """`%c` takes the range of `%a` while `%a` is being stored: the store's
    wait (where the copy runs natively) comes before `%c`, not at the return."""
    lowered = _generic(_module(PARK, "park", ARENA))
    x = np.arange(32, dtype=np.float32)
    stored, zeros = run_upstream(lowered, [x])
    np.testing.assert_array_equal(stored, x * x)
    np.testing.assert_array_equal(zeros, np.zeros(32, np.float32))


def test_a_layout_sharing_live_bytes_is_caught() -> None:
    """Every buffer at offset 0: the comparison sees the overwritten values."""
    text = (EXAMPLES / "offload_mlp.mlir").read_text()
    planned = _module(text, "offload_mlp", LAYOUT)
    for op in planned.walk():
        offsets = op.attributes.get(OFFSETS_ATTR)
        if isinstance(offsets, DenseArrayBase):
            values = [min(o, 0) for o in offsets.get_values()]
            op.attributes[OFFSETS_ATTR] = DenseArrayBase.from_list(i64, values)
    original = _generic(_module(text, "offload_mlp", "hyperoffload-strip"))
    rng = np.random.default_rng(0)
    inputs = [
        rng.standard_normal(s).astype(np.float32) for s in [(8, 16), (16, 32), (32, 16)]
    ]
    comparison = compare_upstream(original, _generic(planned, ARENA), inputs)
    assert not comparison.match
