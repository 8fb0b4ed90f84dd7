"""
The pricing rules of the execution model on programs worked out by hand.

Hardware (inputs/fused.toml): HBM 1 GB/s; bf16 tensor cores 8 GFLOP/s and
vector units 1 GFLOP/s (the `f32` peak); GEMMs at half of peak, fused
attention at a quarter; 1 us per kernel launch.
"""

from pathlib import Path

import pytest
from xdsl.context import Context

from hyperoffload.analysis.program import Program
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import Hardware, load_hardware
from hyperoffload.model.schedule import Compute
from hyperoffload.sim.simulator import SimResult, simulate

US = 1e-6

MATMUL_MAPS = """indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
    affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
    iterator_types = ["parallel", "parallel", "reduction"]"""

BF16_MATMUL = f"""
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x16xf32>) -> tensor<64x16xf32>
  %r = linalg.generic {{{MATMUL_MAPS}}}
      ins(%a, %b : tensor<64x32xbf16>, tensor<32x16xbf16>) outs(%c : tensor<64x16xf32>) {{
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }} -> tensor<64x16xf32>
  func.return %r : tensor<64x16xf32>
"""


@pytest.fixture(scope="module")
def hardware() -> Hardware:
    return load_hardware(str(Path(__file__).parents[2] / "inputs" / "fused.toml"))


def run(ctx: Context, hardware: Hardware, text: str) -> tuple[SimResult, list[Compute]]:
    program = Program(parse_mlir(ctx, text, "t.mlir"), hardware)
    assert not program.unknown_ops
    steps = [s for s in program.planned.steps if isinstance(s, Compute)]
    return simulate(program.planned, hardware), steps


def test_bf16_matmul_with_f32_accumulator_runs_on_bf16_tensor_cores(
    ctx: Context, hardware: Hardware
):
    # 64x16x32 multiply-accumulates, 2 FLOPs each (the extf casts are free),
    # at 8 GFLOP/s x 0.5: 16.384 us; it reads a (4096 B) and b (1024 B) and
    # writes r (4096 B), not the zero accumulator: 9.216 us; plus 1 us.
    text = f"""func.func @f(%a: tensor<64x32xbf16>, %b: tensor<32x16xbf16>)
        -> tensor<64x16xf32> {{{BF16_MATMUL}}}"""
    result, steps = run(ctx, hardware, text)
    assert [s.flops for s in steps] == [2 * 64 * 16 * 32]
    assert steps[0].bytes == 4096 + 1024 + 4096
    assert result.makespan_s == pytest.approx(17.384 * US)
    assert result.peak_hbm_bytes == 4096 + 1024 + 4096


def test_transpose_feeding_a_matmul_is_absorbed(ctx: Context, hardware: Hardware):
    # The transposed copy of w is neither a launch nor a buffer: one kernel
    # reading a and w, priced exactly as the plain matmul above.
    text = f"""func.func @f(%a: tensor<64x32xbf16>, %w: tensor<16x32xbf16>)
        -> tensor<64x16xf32> {{
      %t0 = tensor.empty() : tensor<32x16xbf16>
      %b = linalg.transpose ins(%w : tensor<16x32xbf16>)
          outs(%t0 : tensor<32x16xbf16>) permutation = [1, 0]
      {BF16_MATMUL}}}"""
    result, steps = run(ctx, hardware, text)
    assert len(steps) == 1
    assert result.makespan_s == pytest.approx(17.384 * US)
    assert result.peak_hbm_bytes == 4096 + 1024 + 4096


T = "tensor<256xf32>"
ADD = "^bb0(%p: f32, %q: f32, %o: f32):\n %v = arith.addf %p, %q : f32\n linalg.yield %v : f32"
SQUARE = (
    "^bb0(%p: f32, %o: f32):\n %v = arith.mulf %p, %p : f32\n linalg.yield %v : f32"
)
EXP = "^bb0(%p: f32, %o: f32):\n %v = math.exp %p : f32\n linalg.yield %v : f32"


def _elementwise(ins: list[str], out: str, body: str) -> str:
    """A 1-D elementwise `linalg.generic` on tensor<256xf32>."""
    maps = ", ".join(["affine_map<(i) -> (i)>"] * (len(ins) + 1))
    types = ", ".join([T] * len(ins))
    return (
        f'linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel"]}} '
        f"ins({', '.join(ins)} : {types}) outs({out} : {T}) {{\n{body}\n}} -> {T}"
    )


def test_elementwise_chain_is_one_kernel(ctx: Context, hardware: Hardware):
    # exp((x + y)^2): 3 x 256 FLOPs at 1 GFLOP/s x 0.5 = 1.536 us; reads x
    # and y, writes r: 3072 B = 3.072 us; one launch. The intermediates
    # never occupy HBM.
    text = f"""func.func @f(%x: {T}, %y: {T}) -> {T} {{
      %e = tensor.empty() : {T}
      %s = {_elementwise(["%x", "%y"], "%e", ADD)}
      %m = {_elementwise(["%s"], "%e", SQUARE)}
      %r = {_elementwise(["%m"], "%e", EXP)}
      func.return %r : {T}
    }}"""
    result, steps = run(ctx, hardware, text)
    assert len(steps) == 1
    assert steps[0].flops == 3 * 256
    assert result.makespan_s == pytest.approx(4.072 * US)
    assert result.peak_hbm_bytes == 3 * 1024


def test_a_chain_does_not_fuse_over_a_detach_of_what_it_reads(
    ctx: Context, hardware: Hardware
):
    # %s (absorbed into %m) reads %a, detached before %r: were %m absorbed
    # into %r too, that kernel would read %a after its release (fuzz
    # program 671 of seed 1). So %s and %m are one kernel, %r another.
    text = f"""func.func @f(%x: {T}, %y: {T}) -> ({T}, {T}) {{
      %e = tensor.empty() : {T}
      %a = {_elementwise(["%x"], "%e", EXP)}
      %t = {_elementwise(["%a"], "%e", SQUARE)}
      %s = {_elementwise(["%a", "%y"], "%e", ADD)}
      %m = {_elementwise(["%s"], "%e", SQUARE)}
      hyperoffload.detach %a : {T}
      %r = {_elementwise(["%m"], "%e", EXP)}
      func.return %t, %r : {T}, {T}
    }}"""
    result, steps = run(ctx, hardware, text)
    assert [s.flops for s in steps] == [256, 256, 2 * 256, 256]
    assert result.peak_hbm_bytes == 5 * 1024  # x, y, t, and a beside m


def test_outs_the_body_does_not_read_are_not_read(ctx: Context, hardware: Hardware):
    # x + y written into z's shape: reads 2048 B, writes 1024 B (z unread).
    text = f"""func.func @f(%x: {T}, %y: {T}, %z: {T}) -> {T} {{
      %r = {_elementwise(["%x", "%y"], "%z", ADD)}
      func.return %r : {T}
    }}"""
    _, steps = run(ctx, hardware, text)
    assert steps[0].bytes == 3 * 1024


def _attention() -> str:
    q = "tensor<2x64x8xf32>"
    s = "tensor<2x64x64xf32>"
    row = "tensor<2x64xf32>"
    d3 = "affine_map<(b, i, j) -> (b, i, j)>"
    r3 = "affine_map<(b, i, j) -> (b, i)>"
    return f"""func.func @attention(%q: {q}, %k: {q}, %v: {q}) -> {q} {{
      %zero = arith.constant 0.0 : f32
      %ninf = arith.constant -1.0e30 : f32
      %se = tensor.empty() : {s}
      %s0 = linalg.fill ins(%zero : f32) outs(%se : {s}) -> {s}
      %scores = linalg.generic {{indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>,
          affine_map<(b, i, j, d) -> (b, j, d)>, affine_map<(b, i, j, d) -> (b, i, j)>],
          iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
          ins(%q, %k : {q}, {q}) outs(%s0 : {s}) {{
      ^bb0(%x: f32, %y: f32, %acc: f32):
        %p = arith.mulf %x, %y : f32
        %a = arith.addf %acc, %p : f32
        linalg.yield %a : f32
      }} -> {s}
      %re = tensor.empty() : {row}
      %m0 = linalg.fill ins(%ninf : f32) outs(%re : {row}) -> {row}
      %max = linalg.generic {{indexing_maps = [{d3}, {r3}],
          iterator_types = ["parallel", "parallel", "reduction"]}}
          ins(%scores : {s}) outs(%m0 : {row}) {{
      ^bb0(%x: f32, %acc: f32):
        %a = arith.maximumf %x, %acc : f32
        linalg.yield %a : f32
      }} -> {row}
      %exp = linalg.generic {{indexing_maps = [{d3}, {r3}, {d3}],
          iterator_types = ["parallel", "parallel", "parallel"]}}
          ins(%scores, %max : {s}, {row}) outs(%se : {s}) {{
      ^bb0(%x: f32, %m: f32, %o: f32):
        %d = arith.subf %x, %m : f32
        %e = math.exp %d : f32
        linalg.yield %e : f32
      }} -> {s}
      %z0 = linalg.fill ins(%zero : f32) outs(%re : {row}) -> {row}
      %sum = linalg.generic {{indexing_maps = [{d3}, {r3}],
          iterator_types = ["parallel", "parallel", "reduction"]}}
          ins(%exp : {s}) outs(%z0 : {row}) {{
      ^bb0(%x: f32, %acc: f32):
        %a = arith.addf %x, %acc : f32
        linalg.yield %a : f32
      }} -> {row}
      %p = linalg.generic {{indexing_maps = [{d3}, {r3}, {d3}],
          iterator_types = ["parallel", "parallel", "parallel"]}}
          ins(%exp, %sum : {s}, {row}) outs(%se : {s}) {{
      ^bb0(%x: f32, %t: f32, %o: f32):
        %d = arith.divf %x, %t : f32
        linalg.yield %d : f32
      }} -> {s}
      %oe = tensor.empty() : {q}
      %o0 = linalg.fill ins(%zero : f32) outs(%oe : {q}) -> {q}
      %out = linalg.generic {{indexing_maps = [affine_map<(b, i, d, j) -> (b, i, j)>,
          affine_map<(b, i, d, j) -> (b, j, d)>, affine_map<(b, i, d, j) -> (b, i, d)>],
          iterator_types = ["parallel", "parallel", "parallel", "reduction"]}}
          ins(%p, %v : {s}, {q}) outs(%o0 : {q}) {{
      ^bb0(%x: f32, %y: f32, %acc: f32):
        %m = arith.mulf %x, %y : f32
        %a = arith.addf %acc, %m : f32
        linalg.yield %a : f32
      }} -> {q}
      func.return %out : {q}
    }}"""


def test_attention_is_one_fused_kernel(ctx: Context, hardware: Hardware):
    # QK^T and PV: 2 x (2 x 2x64x64x8) = 262144 FLOPs at 1 GFLOP/s x 0.25
    # (attention) = 1048.576 us; the softmax: max, sub, exp, sum, div = 5
    # scalar ops per score = 40960 FLOPs at 1 GFLOP/s x 0.5 = 81.92 us. Reads q, k, v and writes out (4 x 4096 B,
    # 16.384 us): compute-bound, one launch. The 32 KiB of scores never
    # occupy HBM.
    result, steps = run(ctx, hardware, _attention())
    assert len(steps) == 1
    assert steps[0].flops == 262144 + 5 * 8192
    assert result.makespan_s == pytest.approx((1048.576 + 81.92 + 1) * US)
    assert result.peak_hbm_bytes == 4 * 4096


def test_a_mask_computed_from_indices_is_never_materialised(
    ctx: Context, hardware: Hardware
):
    # m[i] = (i < 128): computed in the consumer's registers, as a causal
    # mask is; x * m is one kernel reading x and writing r (2048 B).
    text = f"""func.func @f(%x: {T}) -> {T} {{
      %e = tensor.empty() : {T}
      %c = arith.constant 128 : index
      %m = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>],
          iterator_types = ["parallel"]}} outs(%e : {T}) {{
      ^bb0(%o: f32):
        %i = linalg.index 0 : index
        %b = arith.cmpi ult, %i, %c : index
        %f = arith.uitofp %b : i1 to f32
        linalg.yield %f : f32
      }} -> {T}
      %r = {_elementwise(["%x", "%m"], "%e", ADD)}
      func.return %r : {T}
    }}"""
    result, steps = run(ctx, hardware, text)
    assert len(steps) == 1
    assert steps[0].bytes == 2 * 1024
    assert result.peak_hbm_bytes == 2 * 1024


def test_no_fusion_across_another_kernel(ctx: Context, hardware: Hardware):
    # exp(x) runs between x + y and its consumer: fusing the add into the
    # square would hold x and y in HBM until then, so it stays a kernel.
    text = f"""func.func @f(%x: {T}, %y: {T}) -> ({T}, {T}) {{
      %e = tensor.empty() : {T}
      %s = {_elementwise(["%x", "%y"], "%e", ADD)}
      %b = {_elementwise(["%x"], "%e", EXP)}
      %m = {_elementwise(["%s"], "%e", SQUARE)}
      func.return %b, %m : {T}, {T}
    }}"""
    _, steps = run(ctx, hardware, text)
    assert len(steps) == 3


CONV = """
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x16x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x16x16xf32>)
      -> tensor<1x8x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>,
      strides = dense<1> : vector<2xi64>}
      ins(%xp, %w : tensor<1x8x18x18xf32>, tensor<8x8x3x3xf32>)
      outs(%c : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  func.return %r : tensor<1x8x16x16xf32>
"""


def test_a_convolutions_padding_is_absorbed(ctx: Context, hardware: Hardware):
    # The zero border of a 3x3 convolution's input is neither a launch nor
    # a buffer: one kernel reading x (8 KiB) and w (2304 B) and writing r
    # (8 KiB), priced as the convolution of an input padded beforehand less
    # the 2 KiB more that input would read.
    padded = f"""func.func @f(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>)
        -> tensor<1x8x16x16xf32> {{
      %pad = arith.constant 0.0 : f32
      %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {{
      ^bb0(%i: index, %j: index, %k: index, %l: index):
        tensor.yield %pad : f32
      }} : tensor<1x8x16x16xf32> to tensor<1x8x18x18xf32>
      {CONV}}}"""
    given = f"""func.func @f(%xp: tensor<1x8x18x18xf32>, %w: tensor<8x8x3x3xf32>)
        -> tensor<1x8x16x16xf32> {{{CONV}}}"""
    result, steps = run(ctx, hardware, padded)
    reference, reference_steps = run(ctx, hardware, given)
    assert len(steps) == 1
    assert steps[0].flops == reference_steps[0].flops == 2 * 8 * 16 * 16 * 8 * 9
    assert steps[0].bytes == 8192 + 2304 + 8192
    assert reference_steps[0].bytes == 8 * 18 * 18 * 4 + 2304 + 8192
    assert result.peak_hbm_bytes == 8192 + 2304 + 8192
    assert result.makespan_s <= reference.makespan_s
