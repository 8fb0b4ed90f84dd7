"""
Native execution (`hyperoffload.evaluators.execution`, MLIR ExecutionEngine) and
`hyperoffload-check`: the tiny LLaMA exports against eager PyTorch, and
programs lowered by `convert-hyperoffload-to-linalg` against the originals.
"""

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.passes import PassPipeline
from xdsl.printer import Printer

from hyperoffload.evaluators.execution import (
    ExecutionError,
    UpstreamProgram,
    compare_outputs,
    compare_upstream,
    program,
    run_upstream,
)
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
"""HBM targets below each example's unconstrained peak: parameters and
activations move through the remote pool."""


class _Example:
    """An example run natively once on its reference inputs."""

    def __init__(self, name: str):
        self.name = name
        self.text = (EXAMPLES / f"{name}.mlir").read_text()
        reference = np.load(EXAMPLES / f"{name}.reference.npz")
        count = sum(1 for key in reference.files if key.startswith("arg"))
        self.inputs: list[Array] = [reference[f"arg{i}"] for i in range(count)]
        self.expected: list[Array] = [
            reference[f"out{i}"] for i in range(len(reference.files) - count)
        ]
        self.outputs = UpstreamProgram(self.text, file_name=name)(self.inputs)


@pytest.fixture(scope="module", params=sorted(PIPELINES))
def example(request: pytest.FixtureRequest) -> _Example:
    return _Example(request.param)


def _generic(text: str, name: str, pipeline: str) -> str:
    ctx = make_context()
    module = parse_mlir(ctx, text, name)
    PassPipeline.parse_spec(all_passes(), pipeline).apply(ctx, module)
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(module)
    return stream.getvalue()


def test_example_matches_eager_pytorch(example: _Example) -> None:
    assert len(example.outputs) == len(example.expected)
    for got, want in zip(example.outputs, example.expected, strict=True):
        assert got.shape == want.shape
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def test_lowered_example_computes_the_same_bits(example: _Example) -> None:
    pipeline = PIPELINES[example.name] + ",convert-hyperoffload-to-linalg"
    lowered = _generic(example.text, example.name, pipeline)
    # the conversion moved data through the remote pool (asynchronous copies)
    assert lowered.count('"memref.dma_start"') > 10
    assert "memref<128x64xf32, 1 : i64>" in lowered  # a remote parameter
    comparison = compare_outputs(example.outputs, run_upstream(lowered, example.inputs))
    assert comparison.match, comparison.max_abs_diff
    assert comparison.max_abs_diff == 0


# --- small programs ------------------------------------------------------------

MASKS = """
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @masks(%a: tensor<2x3xi1>, %x: tensor<2x3xf32>)
    -> (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xi1>) {
  %c = arith.constant dense<[[true, false, true], [false, false, true]]> : tensor<2x3xi1>
  %all = arith.constant dense<true> : tensor<2x3xi1>
  %e = tensor.empty() : tensor<2x3xi1>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %c : tensor<2x3xi1>, tensor<2x3xi1>) outs(%e : tensor<2x3xi1>) {
  ^bb0(%p: i1, %q: i1, %o: i1):
    %r = arith.xori %p, %q : i1
    linalg.yield %r : i1
  } -> tensor<2x3xi1>
  %zero = arith.constant dense<0.0> : tensor<2x3xf32>
  %s = arith.select %m, %x, %zero : tensor<2x3xi1>, tensor<2x3xf32>
  return %m, %s, %all : tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xi1>
}
"""


def test_boolean_masks_are_stored_as_bytes() -> None:
    a = np.array([[True, True, False], [False, True, False]])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    mask, selected, everywhere = run_upstream(MASKS, [a, x])
    want = a ^ np.array([[True, False, True], [False, False, True]])
    assert mask.dtype == np.bool_
    np.testing.assert_array_equal(mask, want)
    np.testing.assert_array_equal(selected, np.where(want, x, 0))
    np.testing.assert_array_equal(everywhere, np.ones((2, 3), np.bool_))


def test_scalars_dynamic_inputs_and_zero_d_results() -> None:
    program = UpstreamProgram("""
    func.func @f(%a: f32, %t: tensor<?xf32>) -> (index, tensor<f32>, f32) {
      %c0 = arith.constant 0 : index
      %n = tensor.dim %t, %c0 : tensor<?xf32>
      %v = tensor.extract %t[%c0] : tensor<?xf32>
      %s = arith.addf %a, %v : f32
      %r = tensor.from_elements %s : tensor<f32>
      return %n, %r, %s : index, tensor<f32>, f32
    }
    """)
    assert program.function == "f"
    for length in (3, 7):
        n, r, s = program([np.float32(2.5), np.ones(length)])
        assert (n.dtype, n.shape, int(n)) == (np.int64, (), length)
        assert (r.dtype, r.shape, float(r)) == (np.float32, (), 3.5)
        assert float(s) == 3.5


def test_bf16_rounds_to_nearest_even_and_f16_is_native() -> None:
    add = """
    func.func @add(%a: tensor<3xT>, %b: tensor<3xT>) -> tensor<3xT> {
      %r = arith.addf %a, %b : tensor<3xT>
      return %r : tensor<3xT>
    }
    """
    a = np.array([1.0, 1 / 3, 100.5])
    b = np.array([1e-3, 1 / 3, 0.25])
    (bf16,) = run_upstream(add.replace("T", "bf16"), [a, b])
    assert bf16.dtype == np.float32
    np.testing.assert_array_equal(bf16, [1.0, 0.66796875, 101.0])
    (f16,) = run_upstream(add.replace("T", "f16"), [a, b])
    assert f16.dtype == np.float16
    np.testing.assert_array_equal(f16, a.astype(np.float16) + b.astype(np.float16))


GATHER = """
func.func @gather(%i: index, %t: tensor<4xf32>) -> f32 {
  %c4 = arith.constant 4 : index
  %ok = arith.cmpi slt, %i, %c4 : index
  cf.assert %ok, "index must be smaller than dim size"
  %v = tensor.extract %t[%i] : tensor<4xf32>
  return %v : f32
}
"""


def test_failed_assertion_is_a_located_error() -> None:
    program = UpstreamProgram(GATHER, file_name="gather.mlir")
    table = np.arange(4, dtype=np.float32)
    assert float(program([np.int64(2), table])[0]) == 2.0
    with pytest.raises(ExecutionError, match=r"^gather.mlir:5:3: error: assertion"):
        program([np.int64(4), table])
    assert float(program([np.int64(3), table])[0]) == 3.0  # reset between calls


@pytest.mark.parametrize(
    ("text", "inputs", "message"),
    [
        (
            'func.func @f(%a: f32) -> f32 {\n  %b = "hyperoffload.detach"(%a) : (f32) -> f32\n'
            "  return %b : f32\n}",
            [1.0],
            r"^t.mlir:2:8: error: 'hyperoffload.detach' is not an upstream MLIR op; "
            "convert it with convert-hyperoffload-to-linalg first",
        ),
        (
            "func.func @f(%a: f32) -> f32 {\n  %b = arith.addf %a, %a : f64\n  return %b : f32\n}",
            [1.0],
            r"^t.mlir:2:19: error: cannot parse: use of value '%a' expects different type",
        ),
        (GATHER, [1], r"@gather takes 2 argument\(s\), got 1"),
        (GATHER, [1, np.ones(5)], r"input #1 has shape \(5,\), expected tensor<4xf32>"),
        (
            GATHER,
            [np.ones(2), np.ones(4)],
            r"input #0 has shape \(2,\), expected a scalar",
        ),
        (
            "func.func @f(%a: tensor<2xf32>) -> tensor<?xf32> {\n"
            "  %c = tensor.cast %a : tensor<2xf32> to tensor<?xf32>\n"
            "  return %c : tensor<?xf32>\n}",
            [np.ones(2)],
            r"result #0 of @f has a dynamic shape",
        ),
        ("func.func private @f(f32) -> f32", [1.0], "no public function with a body"),
        (
            "func.func private @g(f32) -> f32\n"
            "func.func @f(%a: f32) -> f32 {\n"
            "  %b = func.call @g(%a) : (f32) -> f32\n  return %b : f32\n}",
            [1.0],
            r"cannot run @f: JIT compilation failed",
        ),
    ],
)
def test_bad_programs_and_inputs_are_diagnostics(
    text: str, inputs: Sequence[object], message: str
) -> None:
    with pytest.raises(ExecutionError, match=message):
        run_upstream(text, inputs, file_name="t.mlir")


def _prefetch_add(source: str, copy: str) -> str:
    """`x + w` for a remote `w`, prefetched with `copy` (from `source`)."""
    return f"""
    func.func @f(%x: tensor<4xf32>, %w: memref<4xf32, 1>) -> tensor<4xf32> {{
      %buf = memref.alloc() : memref<4xf32>
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %tag = memref.alloca() : memref<1xi32>
      {copy.format(source=source)}
      %d = bufferization.to_tensor %buf restrict : memref<4xf32> to tensor<4xf32>
      %r = arith.addf %x, %d : tensor<4xf32>
      memref.dealloc %buf : memref<4xf32>
      return %r : tensor<4xf32>
    }}
    """


DMA = (
    "memref.dma_start {source}[%c0], %buf[%c0], %c4, %tag[%c0]"
    " : memref<4xf32, 1>, memref<4xf32>, memref<1xi32>\n"
    "      memref.dma_wait %tag[%c0], %c4 : memref<1xi32>"
)
COPY = "memref.copy {source}, %buf : memref<4xf32, 1> to memref<4xf32>"
ORIGINAL = """
func.func @f(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %x, %w : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


@pytest.mark.parametrize("copy", [DMA, COPY])
def test_compare_upstream_runs_every_tier_on_the_host(copy: str) -> None:
    x, w = np.arange(4.0), np.full(4, 0.5)
    same = compare_upstream(ORIGINAL, _prefetch_add("%w", copy), [x, w])
    assert same.match
    assert same.max_abs_diff == 0
    np.testing.assert_array_equal(same.lowered[0], x + w)


def test_compare_upstream_reports_the_largest_difference() -> None:
    wrong = _prefetch_add("%w", COPY).replace("arith.addf", "arith.subf")
    x, w = np.arange(4.0), np.full(4, 0.5)
    different = compare_upstream(ORIGINAL, wrong, [x, w])
    assert not different.match
    assert different.max_abs_diff == 1.0


def test_partial_dma_is_rejected() -> None:
    partial = _prefetch_add("%w", DMA).replace("%c4, %tag", "%c2, %tag")
    partial = partial.replace("%c4 = arith.constant 4", "%c2 = arith.constant 2")
    partial = partial.replace("dma_wait %tag[%c0], %c4", "dma_wait %tag[%c0], %c2")
    with pytest.raises(ExecutionError, match=r"only a 'memref\.dma_start' of a whole"):
        run_upstream(partial, [np.ones(4), np.ones(4)])


# --- hyperoffload-check ------------------------------------------------------------


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = check_main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize(
    "conversion",
    ["", "convert-hyperoffload-to-linalg{dma=false dealloc=false}"],
)
def test_check_prints_both_programs_and_the_verdict(
    conversion: str, capsys: pytest.CaptureFixture[str]
) -> None:
    mlp = str(EXAMPLES / "offload_mlp.mlir")
    status, out, err = _check(capsys, mlp, "--pipeline", conversion, "--seed", "3")
    assert status == 0, err
    original, lowered = out.split("// lowered: ")
    assert original.startswith("// original: ")
    assert '"func.func"() <{sym_name = "mlp"' in original
    assert "memref<16x32xf32, 1 : i64>" in lowered
    copy = '"memref.copy"' if conversion else '"memref.dma_start"'
    assert copy in lowered
    assert out.endswith("outputs match: yes (max |diff| = 0)\n")
    assert "ran @mlp (original and lowered)" in err


def test_check_reports_differing_outputs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run = program.run_upstream

    def off_by_one(
        text: str, inputs: Sequence[object], function: str | None, file_name: str
    ) -> list[Array]:
        outputs = run(text, inputs, function, file_name)
        if file_name == "<lowered>":
            outputs[0][0, :2] += 1
        return outputs

    monkeypatch.setattr(program, "run_upstream", off_by_one)
    mlp = str(EXAMPLES / "offload_mlp.mlir")
    status, out, _ = _check(capsys, mlp, "--quiet")
    assert status == 1
    assert out.splitlines() == [
        "outputs match: no (max |diff| = 1)",
        "  output #0: 2 of 128 element(s) differ, max |diff| = 1",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.mlir"], "hyperoffload-check: error: [Errno 2]"),
        (["--function", "nope"], "offload_mlp.mlir: error: no function @nope to check"),
        (["--pipeline", "hyperoffload-pipeline{"], "error: invalid --pipeline"),
        (
            ["--pipeline", "no-such-pass"],
            "error: Unrecognized passes: ['no-such-pass']",
        ),
        (
            ["--pipeline", "hyperoffload-insert{hbm-capacity=1000}"],
            "error: no plan meets the HBM target of 1000 B",
        ),
    ],
)
def test_check_errors_are_diagnostics(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if args[0].startswith("--"):
        args = [str(EXAMPLES / "offload_mlp.mlir"), *args]
    status, out, err = _check(capsys, *args, "--quiet")
    assert status == 1
    assert out == ""
    assert message in err
    assert "Traceback" not in err


def test_a_read_before_the_copy_lands_is_caught() -> None:
    early = _prefetch_add("%w", DMA)
    wait = "      memref.dma_wait %tag[%c0], %c4 : memref<1xi32>\n"
    early = early.replace(wait, "").replace(
        "      memref.dealloc", wait + "      memref.dealloc"
    )
    x, w = np.arange(4.0), np.full(4, 0.5)
    premature = compare_upstream(ORIGINAL, early, [x, w])
    assert not premature.match
    assert np.isnan(premature.lowered[0]).all()
