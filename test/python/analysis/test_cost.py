"""
The cost model op by op (`CostModel.work`, `cost`, `kernel`), without
fusion: element and tensor sizes, the FLOPs and bytes of single ops, the
dtype whose peak prices a contraction, ops that take no time, and the
efficiency factors. (Fused kernels, priced through the simulator, are in
test_cost_model.py.)

Hardware: HBM 1 GB/s; bf16 8 GFLOP/s, f32 1 GFLOP/s; GEMMs and other ops at
half of peak, fused attention at a quarter; 1 us per kernel launch.
"""

from dataclasses import replace

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ComplexType,
    IndexType,
    IntegerType,
    bf16,
    f16,
    f32,
    f64,
)
from xdsl.ir import Attribute, Operation

from hyperoffload.analysis.cost import (
    NO_COST,
    CostModel,
    CostModelError,
    element_bytes,
    is_contraction,
    is_init,
    is_reduction,
    producer,
    tensor_bytes,
)
from hyperoffload.analysis.extract import main_function
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import Hardware, Link
from hyperoffload.support.tiers import Tier

US = 1e-6

HARDWARE = Hardware(
    name="fused",
    description="round figures for the pricing rules",
    hbm_capacity=10**6,
    hbm_bandwidth=1e9,
    peak_flops={"bf16": 8e9, "f32": 1e9},
    compute_efficiency=0.5,
    memory_efficiency=1.0,
    attention_efficiency=0.25,
    op_overhead_s=1e-6,
    links={Tier.REMOTE: Link(Tier.REMOTE, 10**9, 1e8, 1e8, 0.0)},
)


def ops(ctx: Context, text: str) -> dict[str, Operation]:
    """The top-level ops of the first function, by the name of their first result."""
    function = main_function(parse_mlir(ctx, text, "t.mlir"))
    return {
        op.results[0].name_hint or "": op
        for op in function.body.block.ops
        if op.results
    }


def contraction(lhs: str, rhs: str, out: str, body: str, init: str = "%c0") -> str:
    """`%r = a(m, k) . b(k, n)` into `init` as a linalg.generic."""
    return f"""%r = linalg.generic {{indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
        affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
        iterator_types = ["parallel", "parallel", "reduction"]}}
        ins(%a, %b : {lhs}, {rhs}) outs({init} : {out}) {{
      {body}
      }} -> {out}"""


F32_BODY = """^bb0(%x: f32, %y: f32, %acc: f32):
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32"""


def matmul(init_is_argument: bool) -> str:
    # a: 16x4 (256 B), b: 4x8 (128 B), r: 16x8 (512 B)
    lhs, rhs, out = "tensor<16x4xf32>", "tensor<4x8xf32>", "tensor<16x8xf32>"
    init = "%acc0" if init_is_argument else "%c0"
    return f"""func.func @f(%a: {lhs}, %b: {rhs}, %acc0: {out}) -> {out} {{
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : {out}
      %c0 = linalg.fill ins(%zero : f32) outs(%e : {out}) -> {out}
      {contraction(lhs, rhs, out, F32_BODY, init)}
      func.return %r : {out}
    }}"""


@pytest.mark.parametrize(
    ("element", "size"),
    [
        (f64, 8),
        (f32, 4),
        (f16, 2),
        (bf16, 2),
        (IntegerType(64), 8),
        (IntegerType(32), 4),
        (IntegerType(8), 1),
        # sub-byte types take a byte
        (IntegerType(1), 1),
        (IndexType(), 8),
    ],
)
def test_element_bytes(element: Attribute, size: int):
    assert element_bytes(element) == size


def test_an_element_type_without_a_size_is_an_error():
    with pytest.raises(
        CostModelError, match=r"the element type complex<f32> has no size"
    ):
        element_bytes(ComplexType(f32))


def test_tensor_bytes(ctx: Context):
    # 2x3 bf16: 12 B; the remote copy counts as the tensor it holds (16 B); a
    # scalar is no tensor.
    text = """func.func @f(%t: tensor<2x3xbf16>,
        %r: !hyperoffload.remote<tensor<4xf32>>, %s: f32) {
      func.return
    }"""
    function = main_function(parse_mlir(ctx, text, "t.mlir"))
    t, r, s = function.args
    assert tensor_bytes(t, function) == 12
    assert tensor_bytes(r, function) == 16
    assert tensor_bytes(s, function) == 0


def test_an_unsized_element_type_is_a_located_error(ctx: Context):
    text = """func.func @f(%t: tensor<2xcomplex<f32>>) {
      func.return
    }"""
    function = main_function(parse_mlir(ctx, text, "t.mlir"))
    with pytest.raises(
        CostModelError,
        match=r"t\.mlir:1:\d+: error: cannot size tensor<2xcomplex<f32>> "
        r"of 'func\.func': the element type .* \(not supported\)",
    ):
        tensor_bytes(function.args[0], function)


def test_a_matmul_costs_two_flops_per_multiply_accumulate(ctx: Context):
    # 16x8x4 = 512 multiply-accumulates, 2 FLOPs each, on the f32 peak at
    # half efficiency: 1024 / 0.5e9 = 2.048 us. It moves a, b and r: 896 B,
    # 0.896 us at 1 GB/s. Compute-bound, plus 1 us of launch: 3.048 us. The
    # zero-filled accumulator is a fresh init: not read.
    costs = CostModel(HARDWARE)
    r = ops(ctx, matmul(init_is_argument=False))["r"]
    assert is_reduction(r)
    assert is_contraction(r)
    cost = costs.cost(r)
    assert cost.flops == 2 * 16 * 8 * 4
    assert cost.bytes == 256 + 128 + 512
    assert cost.time_s == pytest.approx(3.048 * US)
    assert cost.known


def test_an_accumulator_the_body_reads_is_read_unless_fresh(ctx: Context):
    # The same matmul accumulating into an argument reads it: 512 B more.
    costs = CostModel(HARDWARE)
    r = ops(ctx, matmul(init_is_argument=True))["r"]
    work = costs.work(r)
    assert work is not None
    assert [v.name_hint for v in work.reads] == ["a", "b", "acc0"]
    assert costs.cost(r).bytes == 256 + 128 + 512 + 512


def test_a_contraction_runs_at_the_peak_of_its_widest_input(ctx: Context):
    # bf16 inputs with an f32 accumulator: bf16 (the extf casts are free, 2
    # FLOPs per iteration); a bf16 by f32 product: f32.
    out = "tensor<16x8xf32>"
    mixed_body = """^bb0(%x: {x}, %y: {y}, %acc: f32):
        {casts}
        %p = arith.mulf %xf, %yf : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32"""
    bf16_body = mixed_body.format(
        x="bf16",
        y="bf16",
        casts="%xf = arith.extf %x : bf16 to f32\n        "
        "%yf = arith.extf %y : bf16 to f32",
    )
    mixed = mixed_body.format(
        x="bf16",
        y="f32",
        casts="%xf = arith.extf %x : bf16 to f32\n        %yf = arith.addf %y, %y : f32",
    )
    costs = CostModel(HARDWARE)
    for lhs, rhs, body, dtype, per_iteration in [
        ("tensor<16x4xbf16>", "tensor<4x8xbf16>", bf16_body, "bf16", 2),
        ("tensor<16x4xbf16>", "tensor<4x8xf32>", mixed, "f32", 3),
    ]:
        text = f"""func.func @f(%a: {lhs}, %b: {rhs}) -> {out} {{
          %zero = arith.constant 0.0 : f32
          %e = tensor.empty() : {out}
          %c0 = linalg.fill ins(%zero : f32) outs(%e : {out}) -> {out}
          {contraction(lhs, rhs, out, body)}
          func.return %r : {out}
        }}"""
        work = costs.work(ops(ctx, text)["r"])
        assert work is not None
        assert (work.dtype, work.contraction) == (dtype, True)
        assert work.flops == 16 * 8 * 4 * per_iteration


def test_a_reduction_without_a_product_runs_on_the_vector_units(ctx: Context):
    # Row sums of 4x8: 32 iterations (loop extents from the operands), one
    # add each, at the f32 peak: not a contraction.
    text = """func.func @f(%x: tensor<4x8xf32>) -> tensor<4xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<4xf32>
      %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
          affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
          ins(%x : tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
      ^bb0(%v: f32, %acc: f32):
        %a = arith.addf %v, %acc : f32
        linalg.yield %a : f32
      } -> tensor<4xf32>
      func.return %s : tensor<4xf32>
    }"""
    found = ops(ctx, text)
    work = CostModel(HARDWARE).work(found["s"])
    assert work is not None
    assert (work.flops, work.dtype, work.contraction) == (32.0, "f32", False)
    assert is_reduction(found["s"])
    assert not is_contraction(found["s"])
    # a fill broadcasts scalars: an init, as tensor.empty is
    assert is_init(found["z"].results[0])
    assert is_init(found["e"].results[0])
    assert not is_init(found["s"].results[0])


def test_an_elementwise_arith_op_on_tensors(ctx: Context):
    # x * x on 256 f32: 256 FLOPs at 0.5 GFLOP/s = 0.512 us; it reads x once
    # and writes y: 2048 B = 2.048 us. Memory-bound, plus 1 us.
    text = """func.func @f(%x: tensor<256xf32>) -> tensor<256xf32> {
      %y = arith.mulf %x, %x : tensor<256xf32>
      func.return %y : tensor<256xf32>
    }"""
    costs = CostModel(HARDWARE)
    y = ops(ctx, text)["y"]
    work = costs.work(y)
    assert work is not None
    assert [v.name_hint for v in work.reads] == ["x"]
    cost = costs.cost(y)
    assert (cost.flops, cost.bytes) == (256.0, 2048)
    assert cost.time_s == pytest.approx(3.048 * US)
    # HBM at half its bandwidth doubles the memory time
    slow = CostModel(replace(HARDWARE, memory_efficiency=0.5))
    assert slow.cost(y).time_s == pytest.approx((4.096 + 1) * US)


def test_views_inits_and_constants_take_no_time(ctx: Context):
    text = """func.func @f(%x: tensor<4x8xf32>) -> tensor<32xf32> {
      %k = arith.constant dense<1.0> : tensor<4xf32>
      %e = tensor.empty() : tensor<32xf32>
      %v = tensor.collapse_shape %x [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
      func.return %v : tensor<32xf32>
    }"""
    costs = CostModel(HARDWARE)
    found = ops(ctx, text)
    for name in ("k", "e", "v"):
        assert costs.work(found[name]) is None
        assert costs.cost(found[name]) == NO_COST
    assert costs.is_view(found["v"])
    assert not costs.is_view(found["e"])
    # a view's producer is its source's: here an argument (no op)
    assert producer(found["v"].results[0]) is None


INSERT_SLICE = """func.func @f(%s: tensor<4x8xf32>, %d: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %r = tensor.insert_slice %s into %d[0, 0] [4, 8] [1, 1]
      : tensor<4x8xf32> into tensor<16x8xf32>
  func.return %r : tensor<16x8xf32>
}"""


def test_an_insert_slice_reads_and_writes_only_its_slice(ctx: Context):
    # Writing 4x8 f32 (128 B) into a 16x8 tensor (512 B) reads the slice and
    # writes it in place: 256 B, 0.256 us, plus 1 us; no FLOPs, and the
    # destination is neither read nor written whole.
    costs = CostModel(HARDWARE)
    r = ops(ctx, INSERT_SLICE)["r"]
    work = costs.work(r)
    assert work is not None
    assert [v.name_hint for v in work.reads] == ["s"]
    cost = costs.cost(r)
    assert (cost.flops, cost.bytes) == (0.0, 256)
    assert cost.time_s == pytest.approx((0.256 + 1) * US)


def test_a_contraction_with_a_one_hot_matrix_is_a_gather(ctx: Context):
    # An embedding lookup written as one-hot(ids) . table moves rows: no
    # FLOPs, not a contraction; it still reads the one-hot matrix and the
    # table.
    lhs, rhs, out = "tensor<4x16xf32>", "tensor<16x8xf32>", "tensor<4x8xf32>"
    text = f"""func.func @f(%ids: tensor<4xi64>, %b: {rhs}) -> {out} {{
      %zero = arith.constant 0.0 : f32
      %eh = tensor.empty() : {lhs}
      %a = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i)>,
          affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}}
          ins(%ids : tensor<4xi64>) outs(%eh : {lhs}) {{
      ^bb0(%id: i64, %o: f32):
        %j = linalg.index 1 : index
        %jj = arith.index_cast %j : index to i64
        %eq = arith.cmpi eq, %id, %jj : i64
        %f = arith.uitofp %eq : i1 to f32
        linalg.yield %f : f32
      }} -> {lhs}
      %e = tensor.empty() : {out}
      %c0 = linalg.fill ins(%zero : f32) outs(%e : {out}) -> {out}
      {contraction(lhs, rhs, out, F32_BODY)}
      func.return %r : {out}
    }}"""
    work = CostModel(HARDWARE).work(ops(ctx, text)["r"])
    assert work is not None
    assert (work.flops, work.contraction) == (0.0, False)
    assert [v.name_hint for v in work.reads] == ["a", "b"]


def test_a_kernel_prices_contractions_at_attention_efficiency(ctx: Context):
    # The matmul above (1024 FLOPs, 896 B) as part of an attention kernel:
    # 1024 / (1e9 x 0.25) = 4.096 us, plus 1 us.
    costs = CostModel(HARDWARE)
    r = ops(ctx, matmul(init_is_argument=False))["r"]
    work = costs.work(r)
    assert work is not None
    attention = costs.kernel(r, [work], attention=True)
    assert attention.time_s == pytest.approx((4.096 + 1) * US)
    assert costs.kernel(r, [work], attention=False).time_s == pytest.approx(
        (2.048 + 1) * US
    )


CHAIN = """func.func @f(%x: tensor<256xf32>, %y: tensor<256xf32>) -> tensor<256xf32> {
  %a = arith.mulf %x, %x : tensor<256xf32>
  %b = arith.addf %a, %y : tensor<256xf32>
  func.return %b : tensor<256xf32>
}"""


def test_a_model_keeping_some_ops_measures_the_others_again(ctx: Context):
    function = main_function(parse_mlir(ctx, CHAIN, "t.mlir"))
    costs = CostModel(HARDWARE)
    a, b = list(function.body.block.ops)[:2]
    for op in (a, b):
        costs.work(op)
    known = costs.keeping([a])
    assert known._work == {a: costs.work(a)}  # pyright: ignore[reportPrivateUsage]
    b.operands[1] = b.operands[0]  # rewired: %b now reads %a twice
    rewired = known.work(b)  # measured again, on what it reads now
    assert rewired is not None
    assert rewired.reads == (a.results[0],)
