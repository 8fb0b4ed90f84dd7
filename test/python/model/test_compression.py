"""
Compressed transfers priced and simulated, worked out by hand on
inputs/round.toml (HBM 1 GB/s, a 100 MB/s link, no latency, no overhead).

A tensor<64x256xbf16> is 32768 B; compressed it is 16384 B of int8 and 64
f16 scales, 16512 B (half, plus the scales): 165.12 us on the link instead of
327.68 us. Its codec reads 32768 B and writes 16512 B (or the reverse):
49.28 us on the compute stream.
"""

from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.func import FuncOp

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import extract_schedule
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.compression import compression, transfer_time
from hyperoffload.model.hardware import Hardware, load_hardware
from hyperoffload.model.moves import Move, apply_moves
from hyperoffload.model.schedule import Schedule, Transfer
from hyperoffload.planning.planner import PlanOptions, plan_offload
from hyperoffload.sim.simulator import simulate
from hyperoffload.support.quantize import Compression

US = 1e-6
T = "tensor<64x256xbf16>"
R = f"!hyperoffload.remote<{T}>"
FULL = 32768
WIRE = 16384 + 64 * 2
CODEC_S = (FULL + WIRE) / 1e9


@pytest.fixture(scope="module")
def hardware() -> Hardware:
    return load_hardware(str(Path(__file__).parents[2] / "inputs" / "round.toml"))


def _park(attr: str) -> str:
    return f"""
func.func @park(%x: {T}) -> {T} {{
  %a = arith.mulf %x, %x : {T}
  %h = hyperoffload.store %a {attr}: {T} -> {R}
  hyperoffload.detach %a : {T}
  %b = arith.addf %x, %x : {T}
  %ad = hyperoffload.prefetch %h {attr}: {R} -> {T}
  %r = arith.addf %b, %ad : {T}
  func.return %r : {T}
}}
"""


def _schedule(ctx: Context, hardware: Hardware, text: str) -> Schedule:
    module = parse_mlir(ctx, text, "park.mlir")
    function = next(op for op in module.walk() if isinstance(op, FuncOp))
    return extract_schedule(function, CostModel(hardware))


def test_the_codec_is_an_elementwise_kernel_at_the_hbm_roofline(
    hardware: Hardware,
) -> None:
    codec = compression((64, 256), 2, Compression.INT8, hardware)
    assert codec.bytes == WIRE
    assert codec.codec_s == pytest.approx(CODEC_S)
    link = hardware.link("remote")
    assert transfer_time(link, FULL, True) == pytest.approx(327.68 * US)
    assert transfer_time(link, FULL, True, codec) == pytest.approx(
        165.12 * US + CODEC_S
    )


def test_compression_halves_the_bytes_moved(ctx: Context, hardware: Hardware) -> None:
    plain = simulate(_schedule(ctx, hardware, _park("")), hardware)
    compressed_schedule = _schedule(ctx, hardware, _park('{compress = "int8"} '))
    compressed = simulate(compressed_schedule, hardware)
    assert (plain.bytes_to_device, plain.bytes_to_remote) == (FULL, FULL)
    assert (compressed.bytes_to_device, compressed.bytes_to_remote) == (WIRE, WIRE)
    assert compressed.bytes_to_device == FULL // 2 + 64 * 2  # half, plus the scales
    transfers = [s for s in compressed_schedule.steps if isinstance(s, Transfer)]
    assert [t.compress for t in transfers] == ["int8", "int8"]
    # the quantisation and the dequantisation run on the compute stream
    assert compressed.compute_s == pytest.approx(plain.compute_s + 2 * CODEC_S)


def test_the_codec_runs_before_a_store_and_after_the_wait_for_a_prefetch(
    ctx: Context, hardware: Hardware
) -> None:
    result = simulate(_schedule(ctx, hardware, _park('{compress = "int8"} ')), hardware)
    compute = [i for i in result.intervals if i.track == "compute"]
    names = [i.name.split(" ")[0] for i in compute]
    assert names == [
        "arith.mulf",
        "quantize",
        "arith.addf",
        "dequantize",
        "arith.addf",
    ]
    # %a: 65.536 us; quantise 49.28 us; the store is queued after it
    store = next(i for i in result.intervals if i.track == "remote from device")
    assert store.start == pytest.approx(65.536 * US + CODEC_S)
    assert store.end - store.start == pytest.approx(165.12 * US)
    # the fetch follows the store, and the dequantisation its wait
    fetch = next(i for i in result.intervals if i.track == "remote to device")
    assert fetch.start == pytest.approx(store.end)
    assert compute[3].start == pytest.approx(fetch.end)


def test_a_compressed_schedule_survives_json(ctx: Context, hardware: Hardware) -> None:
    schedule = _schedule(ctx, hardware, _park('{compress = "int8"} '))
    data = schedule.to_json()
    assert data["version"] >= 2  # compression came in version 2
    again = Schedule.from_json(data)
    assert again == schedule
    plain = _schedule(ctx, hardware, _park("")).to_json()
    transfer = next(s for s in plain["steps"] if s["kind"] == "transfer")
    assert "compress" not in transfer  # a plain transfer reads as version 1 wrote it
    assert Schedule.from_json({**plain, "version": 1}).to_json() == plain


def test_moves_carry_their_compression(ctx: Context, hardware: Hardware) -> None:
    text = f"""
func.func @f(%x: {T}) -> {T} {{
  %a = arith.mulf %x, %x : {T}
  %b = arith.addf %x, %x : {T}
  %r = arith.addf %b, %a : {T}
  func.return %r : {T}
}}
"""
    base = _schedule(ctx, hardware, text)
    codec = compression((64, 256), 2, Compression.INT8, hardware)
    moved = apply_moves(base, [Move(1, 0, 0, 2, 2, compressed=codec)], hardware)
    transfers = [s for s in moved.steps if isinstance(s, Transfer)]
    assert [(t.bytes, t.compress, t.to_device) for t in transfers] == [
        (WIRE, "int8", False),
        (WIRE, "int8", True),
    ]
    assert all(t.codec_s == pytest.approx(CODEC_S) for t in transfers)


DECODE = f"""
func.func @decode(%w: {T} {{hyperoffload.tier = #hyperoffload.tier<remote>}},
                  %k: {T} {{hyperoffload.tier = #hyperoffload.tier<remote>, hyperoffload.category = "kv"}},
                  %x: {T}) -> {T} {{
  %a = arith.mulf %x, %w : {T}
  %b = arith.mulf %a, %a : {T}
  %r = arith.mulf %b, %k : {T}
  func.return %r : {T}
}}
"""


@pytest.mark.parametrize("scheme", [None, "int8"])
def test_compress_kv_compresses_kv_moves_only(
    ctx: Context, hardware: Hardware, scheme: str | None
) -> None:
    module = parse_mlir(ctx, DECODE, "decode.mlir")
    function = next(op for op in module.walk() if isinstance(op, FuncOp))
    graph = ProgramGraph.build(function, CostModel(hardware))
    plan = plan_offload(graph, hardware, PlanOptions(10**9, compress_kv=scheme))
    compress = {p.info.name: p.compress for p in plan.values}
    assert compress == {"%w": None, "%k": scheme}
