"""
The interpreter on small programs whose peak and makespan are worked out by
hand. Hardware (inputs/round.toml): HBM 1 GB/s, 1 GFLOP/s, efficiencies 1,
no per-op overhead, a remote link of 100 MB/s each way with no latency.
A tensor<256xf32> is 1024 B: an elementwise op on two distinct 1024 B
inputs moves 3072 B (3.072 us); on one input, 2048 B (2.048 us). Moving
1024 B over the link takes 10.24 us.
"""

from dataclasses import replace
from pathlib import Path

import pytest
from xdsl.context import Context

from hyperoffload.analysis.cost import CostModelError
from hyperoffload.analysis.program import Program
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import Hardware, HardwareError, load_hardware
from hyperoffload.model.schedule import Schedule
from hyperoffload.policies.peers import (
    PolicyOptions,
    activation_moves,
    distance_moves,
    prefetch_in_order,
    run_policy,
)
from hyperoffload.sim.simulator import SimResult, SimulationError, simulate
from hyperoffload.support.tiers import Tier

US = 1e-6
T = "tensor<256xf32>"
R = f"!hyperoffload.remote<{T}>"


@pytest.fixture(scope="module")
def hardware() -> Hardware:
    return load_hardware(str(Path(__file__).parents[2] / "inputs" / "round.toml"))


def schedules(ctx: Context, hardware: Hardware, text: str) -> tuple[Schedule, Schedule]:
    program = Program(parse_mlir(ctx, text, "t.mlir"), hardware)
    assert not program.unknown_ops
    return program.planned, program.reference


def run(
    ctx: Context,
    hardware: Hardware,
    text: str,
    policy: str,
    capacity: int | None = None,
    options: PolicyOptions | None = None,
) -> SimResult:
    planned, stripped = schedules(ctx, hardware, text)
    return run_policy(
        policy, planned, stripped, hardware, capacity, options or PolicyOptions()
    )


PREFETCH = f"""
func.func @f(%x: {T}, %w: {R}) -> {T} {{
  %wd = hyperoffload.prefetch %w : {R} -> {T}
  %a = arith.addf %x, %x : {T}
  %b = arith.mulf %a, %wd : {T}
  func.return %b : {T}
}}"""


def test_prefetch_overlaps_compute_then_stalls(
    ctx: Context, hardware: Hardware
) -> None:
    # t=0: x resident (1024), the prefetch allocates wd (2048) and takes 10.24 us.
    # addf allocates a (3072) and runs 0 -> 2.048 us. mulf waits for wd until
    # 10.24 us, allocates b (4096: x, wd, a, b), runs 3.072 us -> 13.312 us.
    result = run(ctx, hardware, PREFETCH, "plan")
    assert result.peak_hbm_bytes == 4096
    assert result.makespan_s == pytest.approx(13.312 * US)
    assert result.compute_s == pytest.approx(5.12 * US)
    assert result.exposed_transfer_s == pytest.approx(8.192 * US)
    assert result.bytes_to_device == 1024
    # bounds: the link moves 1024 B (10.24 us) > compute 5.12 us; mulf reads a, wd, writes b
    assert result.bound_time_s == pytest.approx(10.24 * US)
    assert result.bound_peak_bytes == 3072


def test_none_ignores_offload_ops(ctx: Context, hardware: Hardware) -> None:
    # Stripped: x and w (tagged remote, but 'none' keeps all in HBM) + a + b.
    result = run(ctx, hardware, PREFETCH, "none")
    assert result.peak_hbm_bytes == 4096
    assert result.makespan_s == pytest.approx(5.12 * US)
    assert result.transfers == 0


SWAP = f"""
func.func @g(%x: {T}) -> {T} {{
  %a = arith.addf %x, %x : {T}
  %b = arith.mulf %a, %a : {T}
  %c = arith.mulf %b, %a : {T}
  %d = arith.addf %c, %x : {T}
  func.return %d : {T}
}}"""


def test_none_reference(ctx: Context, hardware: Hardware) -> None:
    # x | +a 2048 (0-2.048) | +b 3072 (-4.096) | +c 4096 (-7.168), frees a, b |
    # +d 3072 (-10.24)
    result = run(ctx, hardware, SWAP, "none")
    assert result.peak_hbm_bytes == 4096
    assert result.makespan_s == pytest.approx(10.24 * US)


def test_reactive_lru_swaps_out_and_stalls(ctx: Context, hardware: Hardware) -> None:
    # Capacity 3072. Allocating c (step 2) evicts the least recently used
    # buffer the step does not need: x, still read by step 3, so it is stored
    # first (10.24 us, compute stalls): c runs 14.336 -> 17.408 us. Step 3 misses
    # x and fetches it (10.24 us) -> 27.648, then runs 3.072 us -> 30.72 us.
    none = run(ctx, hardware, SWAP, "none")
    result = run(ctx, hardware, SWAP, "reactive-lru", capacity=3072)
    assert result.peak_hbm_bytes == 3072
    assert result.oom is None
    assert result.makespan_s == pytest.approx(30.72 * US)
    assert result.exposed_transfer_s == pytest.approx(20.48 * US)
    assert (result.bytes_to_remote, result.bytes_to_device) == (1024, 1024)
    assert result.makespan_s / none.makespan_s == pytest.approx(3.0)


def test_out_of_memory_is_a_result(ctx: Context, hardware: Hardware) -> None:
    result = run(ctx, hardware, SWAP, "plan", capacity=3072)
    assert result.oom is not None
    # the third op (line 5 of the text) needs c while x, a, b are live
    assert result.oom.loc == "t.mlir:5:3"
    assert result.oom.needed_bytes == 1024
    assert sorted(name for name, _ in result.oom.live) == ["%a", "%b", "%x"]
    assert result.peak_hbm_bytes == 4096  # the run goes on to report its peak


def test_read_of_a_detached_value_is_an_error(ctx: Context, hardware: Hardware) -> None:
    text = f"""
func.func @h(%x: {T}) -> {T} {{
  %a = arith.addf %x, %x : {T}
  hyperoffload.detach %a : {T}
  %b = arith.mulf %a, %a : {T}
  func.return %b : {T}
}}"""
    planned, _ = schedules(ctx, hardware, text)  # parsed, deliberately not verified
    with pytest.raises(SimulationError, match="reads %a, which is not resident"):
        simulate(planned, hardware)


LONG_GAP = (
    f"""
func.func @k(%x: {T}) -> {T} {{
  %a0 = arith.addf %x, %x : {T}
"""
    + "".join(
        f"  %a{i} = arith.mulf %a{i - 1}, %a{i - 1} : {T}\n" for i in range(1, 10)
    )
    + f"""  %b = arith.addf %a9, %a0 : {T}
  %r = arith.addf %b, %x : {T}
  func.return %r : {T}
}}"""
)


def test_distance_offloads_idle_tensors(ctx: Context, hardware: Hardware) -> None:
    # x is idle from step 0 to step 11, a0 from step 1 (read by a1) to step 10:
    # both are stored and released after the use that opens their gap and
    # fetched right before the next (prefetch distance 0). The chain in between
    # then holds only a(i-1) and a(i): 2048 B instead of 4096 B with x and a0;
    # steps 10 and 11 hold 3072 B. The link is made fast here (1 GB/s: 1.024 us
    # per transfer, less than a 2.048 us step).
    fast_link = replace(hardware.links[Tier.REMOTE], bandwidth_from_device=1e9)
    hardware = replace(
        hardware, links={Tier.REMOTE: replace(fast_link, bandwidth_to_device=1e9)}
    )
    _, stripped = schedules(ctx, hardware, LONG_GAP)
    options = PolicyOptions(select_distance=5, prefetch_distance=0)
    moves = distance_moves(stripped, options).moves
    x, a0 = (next(b.id for b in stripped.buffers if b.name == n) for n in ("%x", "%a0"))
    assert [(m.buffer, m.store_after, m.release, m.fetch, m.use) for m in moves] == [
        (x, 0, 0, 11, 11),
        (a0, 1, 1, 10, 10),
    ]
    none = run(ctx, hardware, LONG_GAP, "none")
    result = run(ctx, hardware, LONG_GAP, "distance", None, options)
    assert none.peak_hbm_bytes == 4096
    assert result.peak_hbm_bytes == 3072
    assert (result.bytes_to_remote, result.bytes_to_device) == (2048, 2048)
    # The compute stream waits for each store before its release (1.024 us
    # after steps 0 and 1) and for each fetch issued right before its use
    # (steps 10 and 11): 4 x 1.024 us exposed. Released one step later, each
    # store is done by then: only the fetches stall.
    assert result.exposed_transfer_s == pytest.approx(4.096 * US)
    later = run(
        ctx, hardware, LONG_GAP, "distance", None, replace(options, release_distance=1)
    )
    assert later.peak_hbm_bytes == 3072
    assert later.exposed_transfer_s == pytest.approx(2.048 * US)
    # select_num 1 offloads only the largest (a tie: the first buffer, x)
    capped = distance_moves(stripped, replace(options, select_num=1)).moves
    assert [m.buffer for m in capped] == [x]


TRAIN = (
    f"""
func.func @step(%x: {T}) -> (tensor<f32>, {T}) {{
  %h = arith.mulf %x, %x : {T}
"""
    + "".join(
        f"  %f{i} = arith.addf {'%h' if i == 0 else f'%f{i - 1}'}, %x : {T}\n"
        for i in range(6)
    )
    + f"""  %e = tensor.empty() : tensor<f32>
  %loss = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}} ins(%f5 : {T}) outs(%e : tensor<f32>) {{
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }} -> tensor<f32>
"""
    + "".join(
        f"  %g{i} = arith.mulf {'%f5' if i == 0 else f'%g{i - 1}'}, %x : {T}\n"
        for i in range(6)
    )
    + f"""  %grad = arith.mulf %g5, %h : {T}
  func.return %loss, %grad : tensor<f32>, {T}
}}"""
)


def test_activation_pass_moves_saved_activations(
    ctx: Context, hardware: Hardware
) -> None:
    # The loss (first result) is compute step 7: the forward pass ends there.
    # %h is saved for the backward step 14; it is stored after its last forward
    # use (step 1) and reloaded early enough to hide 10.24 us: the steps before
    # 14 each take 3.072 us, so the reload goes 4 steps back, before step 10.
    # %f5, read by the loss (7) and by step 8, has no op in its gap: kept.
    _, stripped = schedules(ctx, hardware, TRAIN)
    assert stripped.forward_end == 7
    h = next(b.id for b in stripped.buffers if b.name == "%h")
    moves = activation_moves(stripped, hardware, PolicyOptions()).moves
    assert [(m.buffer, m.store_after, m.fetch, m.use, m.wait_store) for m in moves] == [
        (h, 1, 10, 14, 7)
    ]
    result = run(ctx, hardware, TRAIN, "activation-pass")
    assert result.exposed_transfer_s == pytest.approx(0.0, abs=1e-12)
    assert result.bytes_to_remote == 1024
    # %h is produced at step 0 of 8 forward steps: keeping the last 90% of the
    # forward pass still tags it, a threshold above its 1024 B does not
    kept = PolicyOptions(skip_last=0.9)
    assert activation_moves(stripped, hardware, kept).moves
    small = PolicyOptions(min_bytes=2048)
    assert not activation_moves(stripped, hardware, small).moves


def test_reloads_are_hoisted_first_in_first_out() -> None:
    # Steps of 1 s; reloads for step 7 (2.5 s) and step 6 (1 s). Walking back,
    # the first queued (for 7) collects steps 6, 5, 4 and is issued before 4;
    # only then does the one for 6 collect step 3: issued before 3, not 5.
    times = [1.0] * 8
    assert prefetch_in_order([(7, 2.5), (6, 1.0)], times, floor=2) == [4, 3]
    # never before the floor (the start of the backward pass)
    assert prefetch_in_order([(7, 2.5), (6, 1.0)], times, floor=4) == [4, 4]


def test_dynamic_shapes_are_a_located_error(ctx: Context, hardware: Hardware) -> None:
    text = """
func.func @d(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = arith.addf %x, %x : tensor<?xf32>
  func.return %y : tensor<?xf32>
}"""
    with pytest.raises(
        CostModelError, match=r"t\.mlir:\d+:\d+: error: cannot size tensor<\?xf32>"
    ):
        schedules(ctx, hardware, text)


def test_unknown_ops_are_estimated_and_listed(ctx: Context, hardware: Hardware) -> None:
    text = f"""
func.func @u(%x: {T}) -> {T} {{
  %y = func.call @opaque(%x) : ({T}) -> {T}
  func.return %y : {T}
}}
func.func private @opaque({T}) -> {T}"""
    program = Program(parse_mlir(ctx, text, "u.mlir"), hardware)
    assert program.unknown_ops == {"func.call"}
    # costed by its bytes (x and y, 2048 B) at HBM bandwidth
    assert simulate(program.planned, hardware).compute_s == pytest.approx(2.048 * US)


def test_malformed_hardware_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        '[device]\nhbm_capacity = "64GB"\n[tiers.remote]\ncapacity = "1GB"\n'
    )
    with pytest.raises(
        HardwareError, match=r"bad\.toml: error: malformed hardware file: missing key"
    ):
        load_hardware(str(bad))
    bad.write_text("[device\n")
    with pytest.raises(HardwareError, match=r"bad\.toml"):
        load_hardware(str(bad))


def test_a_schedule_survives_json(ctx: Context, hardware: Hardware) -> None:
    planned, _ = schedules(ctx, hardware, PREFETCH)
    again = Schedule.loads(planned.dumps())
    assert again == planned
    assert simulate(again, hardware).makespan_s == pytest.approx(13.312 * US)
    with pytest.raises(ValueError, match="unsupported schedule version"):
        Schedule.loads('{"version": 7}')


STAGED = """
func.func @f(%x: tensor<256xf32>,
             %s: !hyperoffload.remote<tensor<256xf32>, ssd> {hyperoffload.tier = #hyperoffload.tier<ssd>},
             %h: !hyperoffload.remote<tensor<256xf32>, host> {hyperoffload.tier = #hyperoffload.tier<host>}) -> tensor<256xf32> {
  %sd = hyperoffload.prefetch %s : !hyperoffload.remote<tensor<256xf32>, ssd> -> tensor<256xf32>
  %hd = hyperoffload.prefetch %h : !hyperoffload.remote<tensor<256xf32>, host> -> tensor<256xf32>
  %a = arith.addf %x, %hd : tensor<256xf32>
  %b = arith.addf %a, %sd : tensor<256xf32>
  func.return %b : tensor<256xf32>
}"""


def test_an_ssd_transfer_also_occupies_the_host_link(ctx: Context) -> None:
    # inputs/round-tiers.toml: host 500 MB/s, ssd 100 MB/s staged through it.
    # The ssd fetch of 1024 B runs 0 -> 10.24 us; its host leg takes the host
    # link's stream 0 -> 2.048 us, so the host fetch queued behind it runs
    # 2.048 -> 4.096 us (not 0 -> 2.048). %a waits for it and runs 3.072 us
    # (-> 7.168 us); %b waits for the ssd fetch (10.24 us), ends at 13.312 us.
    # Bound: the host link carries both fetches (2048 B: 4.096 us), the drive
    # one (10.24 us); compute 6.144 us.
    tiers = load_hardware(
        str(Path(__file__).parents[2] / "inputs" / "round-tiers.toml")
    )
    result = run(ctx, tiers, STAGED, "plan")
    assert result.makespan_s == pytest.approx(13.312 * US)
    assert result.bound_time_s == pytest.approx(10.24 * US)
    host = [i for i in result.intervals if i.track == "host to device"]
    assert [(i.start / US, i.end / US) for i in host] == [
        pytest.approx((0.0, 2.048)),
        pytest.approx((2.048, 4.096)),
    ]
    assert result.transfers == 2
    assert result.bytes_to_device == 2048


UPDATE = f"""
func.func @step(%x: {T}, %w: {T} {{hyperoffload.tier = #hyperoffload.tier<remote>, tf.aliasing_output = 1 : i32}}) -> ({T}, {T}) {{
  %y = arith.mulf %x, %w : {T}
  %u = arith.subf %w, %y : {T}
  func.return %y, %u : {T}, {T}
}}"""


@pytest.mark.parametrize("policy", ["reactive-lru", "runtime-prefetch", "distance"])
def test_an_update_ends_where_its_argument_came_from(
    ctx: Context, hardware: Hardware, policy: str
) -> None:
    # w enters in the pool and names u as its update: the next call reads u
    # there. w is fetched (10.24 us), mulf and subf run 3.072 us each (to
    # 16.384 us), then u is written back (1024 B, 10.24 us): 26.624 us.
    _, stripped = schedules(ctx, hardware, UPDATE)
    assert len(stripped.updates) == 1
    result = run(ctx, hardware, UPDATE, policy)
    assert result.bytes_to_device == 1024
    assert result.bytes_to_remote == 1024
    assert result.makespan_s == pytest.approx(26.624 * US)
    # with the arguments resident, the update is returned in HBM
    resident = run(
        ctx, hardware, UPDATE, policy, None, PolicyOptions(resident_arguments=True)
    )
    assert resident.transfers == 0
    assert resident.makespan_s == pytest.approx(6.144 * US)


WRITTEN_BACK = f"""
func.func @step(%x: {T}, %w: {R} {{tf.aliasing_output = 1 : i32}}) -> ({T}, {R}) {{
  %wd = hyperoffload.prefetch %w : {R} -> {T}
  %y = arith.mulf %x, %wd : {T}
  %u = arith.subf %wd, %y : {T}
  %h = hyperoffload.store %u : {T} -> {R}
  hyperoffload.detach %u : {T}
  func.return %y, %h : {T}, {R}
}}"""


def test_a_plan_that_writes_the_update_back_is_not_written_back_again(
    ctx: Context, hardware: Hardware
) -> None:
    # as the planner writes it: the caller receives the stored copy
    result = run(ctx, hardware, WRITTEN_BACK, "plan")
    assert result.bytes_to_remote == 1024
    assert result.makespan_s == pytest.approx(26.624 * US)


def test_updates_survive_json(ctx: Context, hardware: Hardware) -> None:
    _, stripped = schedules(ctx, hardware, UPDATE)
    assert Schedule.loads(stripped.dumps()).updates == stripped.updates
    text = stripped.dumps().replace('"updates": [', '"updates": [[0, 99], ')
    with pytest.raises(
        ValueError, match=r"updates\[0\]: expected \[argument, result\]"
    ):
        Schedule.loads(text)
