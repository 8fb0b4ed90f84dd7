"""
The tier chooser (`hyperoffload.planning.tiers`) on small functions worked
out by hand, and the planner and `write_plan` around it.

Hardware: HBM 1 GB/s, 1 GFLOP/s, no launch overhead; a remote pool at
10 GB/s, host memory at 500 MB/s and an NVMe drive at 100 MB/s staged
through host memory, each way, no latency (`test/inputs/round-tiers.toml`,
capacities set per test). Each tensor<256xf32> is 1 KiB; an op on two
distinct inputs moves 3 KiB (3.072 us). A 1 KiB round trip (store, then
fetch) takes 0.2048 us to remote, 4.096 us to host, 20.48 us to ssd.
"""

from dataclasses import replace

import pytest
from small_graphs import graph_of as small_graph
from small_graphs import round_hardware
from xdsl.context import Context
from xdsl.dialects.func import FuncOp

from hyperoffload.analysis.lifetimes import Gap, ProgramGraph, ValueInfo
from hyperoffload.ir.diagnostics import verify_module
from hyperoffload.model.hardware import Hardware, Link
from hyperoffload.planning.planner import PlanError, PlanOptions, plan_offload
from hyperoffload.planning.tiers import choose_tiers
from hyperoffload.planning.value_plan import ValuePlan
from hyperoffload.planning.write_plan import write_plan
from hyperoffload.support.tiers import Tier

US = 1e-6
KIB = 1024
T = "tensor<256xf32>"
GB = 10**9


def hardware(remote: int = GB, host: int = GB, ssd: int = GB) -> Hardware:
    """The three-tier device (remote 10 GB/s, host 500 MB/s, ssd 100 MB/s), with these capacities (bytes)."""
    return round_hardware(
        GB,
        links={
            Tier.REMOTE: Link(Tier.REMOTE, remote, 10e9, 10e9, 0.0),
            Tier.HOST: Link(Tier.HOST, host, 500e6, 500e6, 0.0),
            Tier.SSD: Link(Tier.SSD, ssd, 100e6, 100e6, 0.0, staged_through=Tier.HOST),
        },
    )


def graph_of(ctx: Context, text: str) -> tuple[FuncOp, ProgramGraph]:
    graph = small_graph(ctx, text, hardware())
    return graph.function, graph


def value(graph: ProgramGraph, name: str) -> ValueInfo:
    (info,) = [v for v in graph.values if v.name == name]
    return info


def stored(graph: ProgramGraph, name: str) -> ValuePlan:
    """`name` stored after its producer and fetched back over each idle gap."""
    info = value(graph, name)
    return ValuePlan(info, [g for g in info.gaps() if g.ops > 0], stored=True)


def tiers_of(plans: list[ValuePlan]) -> dict[str, Tier | None]:
    return {p.info.name: p.tier for p in plans}


def chain(first: str, length: int) -> list[str]:
    """`length` ops, each reading the one before it and %x."""
    names = [first] + [f"%q{i}" for i in range(1, length + 1)]
    return [
        f"  {names[i]} = arith.mulf {names[i - 1]}, %x : {T}"
        for i in range(1, length + 1)
    ]


# %a is idle from op 1 to op 16 (14 ops: 43.008 us), %b from op 6 to op 10
# (3 ops: 9.216 us): test/passes/insert-three-tiers.mlir.
TWO_GAPS = f"""func.func @f(%x: {T}) -> {T} {{
  %a = arith.mulf %x, %x : {T}
  %p = arith.addf %a, %x : {T}
  %q = arith.mulf %p, %x : {T}
  %s = arith.mulf %q, %x : {T}
  %t = arith.mulf %s, %x : {T}
  %b = arith.mulf %t, %x : {T}
  %c = arith.mulf %b, %x : {T}
  %d = arith.addf %c, %x : {T}
  %e = arith.addf %c, %d : {T}
  %f = arith.mulf %e, %x : {T}
  %g = arith.addf %f, %b : {T}
  %h1 = arith.mulf %g, %x : {T}
  %h2 = arith.mulf %h1, %x : {T}
  %h3 = arith.mulf %h2, %x : {T}
  %h4 = arith.mulf %h3, %x : {T}
  %h5 = arith.mulf %h4, %x : {T}
  %r = arith.addf %h5, %a : {T}
  func.return %r : {T}
}}"""


def test_a_long_gap_goes_to_ssd_and_a_short_one_to_host(ctx: Context):
    # %a: every round trip hides in 43.008 us, the slowest tier is ssd. %b:
    # 9.216 us hides the host round trip (4.096 us), not ssd's (20.48 us).
    _, graph = graph_of(ctx, TWO_GAPS)
    assert [g.time_s for g in stored(graph, "%a").gaps] == [pytest.approx(43.008 * US)]
    assert [g.time_s for g in stored(graph, "%b").gaps] == [pytest.approx(9.216 * US)]
    plans = [stored(graph, "%a"), stored(graph, "%b")]
    chosen = choose_tiers(plans, graph, hardware())
    assert tiers_of(chosen) == {"%a": Tier.SSD, "%b": Tier.HOST}


def test_a_link_whose_directions_share_it_is_priced_at_its_shared_bandwidth(
    ctx: Context,
):
    # A drive keeping 40% of each direction while the other is busy: %a's
    # ssd round trip is priced at 20.48 / 0.4 = 51.2 us, more than its
    # 43.008 us gap (a plan's stores and fetches overlap), so %a goes to
    # host, the slowest tier left that hides it.
    _, graph = graph_of(ctx, TWO_GAPS)
    device = hardware()
    ssd = replace(device.links[Tier.SSD], duplex_efficiency=0.4)
    shared = replace(device, links={**device.links, Tier.SSD: ssd})
    chosen = choose_tiers([stored(graph, "%a"), stored(graph, "%b")], graph, shared)
    assert tiers_of(chosen) == {"%a": Tier.HOST, "%b": Tier.HOST}


def test_the_allowed_tiers_restrict_the_choice(ctx: Context):
    _, graph = graph_of(ctx, TWO_GAPS)
    plans = [stored(graph, "%a"), stored(graph, "%b")]
    no_ssd = choose_tiers(plans, graph, hardware(), (Tier.REMOTE, Tier.HOST))
    assert tiers_of(no_ssd) == {"%a": Tier.HOST, "%b": Tier.HOST}
    # only ssd: %b's round trip does not hide there, but ssd is all it may use
    only_ssd = choose_tiers(plans, graph, hardware(), (Tier.SSD,))
    assert tiers_of(only_ssd) == {"%a": Tier.SSD, "%b": Tier.SSD}


@pytest.mark.parametrize(
    ("capacities", "expected"),
    [
        # %a's 1 KiB fits a 1 KiB drive exactly
        ({"ssd": KIB}, {"%a": Tier.SSD, "%b": Tier.HOST}),
        # a drive 1 byte too small: the slowest tier left whose trip hides
        ({"ssd": KIB - 1}, {"%a": Tier.HOST, "%b": Tier.HOST}),
        # host full too: remote, whose round trip hides for both
        ({"ssd": 0, "host": 0}, {"%a": Tier.REMOTE, "%b": Tier.REMOTE}),
        # room for one of them (the coldest first): the other stays in HBM
        ({"ssd": 0, "host": 0, "remote": KIB}, {"%a": Tier.REMOTE}),
    ],
)
def test_a_full_tier_sends_values_to_the_next_with_room(
    ctx: Context, capacities: dict[str, int], expected: dict[str, Tier]
):
    _, graph = graph_of(ctx, TWO_GAPS)
    plans = [stored(graph, "%b"), stored(graph, "%a")]
    chosen = choose_tiers(plans, graph, hardware(**capacities))
    assert tiers_of(chosen) == expected


# %a (op 0) and %a2 (op 1) are both idle over nine ops (27.648 us): their
# copies would be held in the tier over ops 0-10 and 1-11, together. %u,
# made at op 13, is idle over eight ops (24.576 us) once both are back.
OVERLAPPING = "\n".join(
    [
        f"func.func @f(%x: {T}) -> {T} {{",
        f"  %a = arith.mulf %x, %x : {T}",
        f"  %a2 = arith.addf %a, %x : {T}",
        f"  %p = arith.mulf %a2, %x : {T}",
        *chain("%p", 8),
        f"  %r = arith.addf %q8, %a : {T}",
        f"  %r2 = arith.addf %r, %a2 : {T}",
        f"  %u = arith.mulf %r2, %x : {T}",
        f"  %v = arith.mulf %u, %x : {T}",
        *[line.replace("%q", "%w") for line in chain("%v", 8)],
        f"  %z = arith.addf %w8, %u : {T}",
        f"  func.return %z : {T}",
        "}",
    ]
)


def test_capacity_counts_the_bytes_resident_at_once(ctx: Context):
    # A 1 KiB drive holds %a (ops 0-10) or %a2 (ops 1-11), not both; %u's
    # copy (ops 13-22) comes after both have left it.
    _, graph = graph_of(ctx, OVERLAPPING)
    gaps = {n: [g.time_s for g in stored(graph, n).gaps] for n in ("%a", "%a2", "%u")}
    assert gaps == {
        "%a": [pytest.approx(27.648 * US)],
        "%a2": [pytest.approx(27.648 * US)],
        "%u": [pytest.approx(24.576 * US)],
    }
    plans = [stored(graph, n) for n in ("%a", "%a2", "%u")]
    unlimited = choose_tiers(plans, graph, hardware())
    assert tiers_of(unlimited) == {"%a": Tier.SSD, "%a2": Tier.SSD, "%u": Tier.SSD}
    one = choose_tiers(plans, graph, hardware(ssd=KIB))
    assert tiers_of(one) == {"%a": Tier.SSD, "%a2": Tier.HOST, "%u": Tier.SSD}


def test_link_time_taken_by_colder_values_sends_the_rest_faster(ctx: Context):
    # Three copies over the same nine ops (27.648 us): each ssd fetch takes
    # 10.24 us of the drive's link, so two fit before the use and a third
    # does not (30.72 us); it goes to host, whose round trip hides too.
    _, graph = graph_of(ctx, OVERLAPPING)
    gap = stored(graph, "%a2").gaps[0]
    same = [
        ValuePlan(
            value(graph, n), [Gap(gap.after, gap.before, gap.ops, gap.time_s)], True
        )
        for n in ("%a", "%a2", "%p")
    ]
    chosen = choose_tiers(same, graph, hardware())
    assert [p.tier for p in chosen] == [Tier.SSD, Tier.SSD, Tier.HOST]


def test_recomputations_pass_through(ctx: Context):
    _, graph = graph_of(ctx, TWO_GAPS)
    recomputed = replace(stored(graph, "%b"), stored=False, recompute=True)
    chosen = choose_tiers([recomputed, stored(graph, "%a")], graph, hardware())
    assert [(p.info.name, p.tier) for p in chosen] == [("%b", None), ("%a", Tier.SSD)]


# A KV block living in host memory, read at op 1 and at op 17.
HOST = "{hyperoffload.tier = #hyperoffload.tier<host>}"
TAGGED = "\n".join(
    [
        f"func.func @f(%x: {T}, %k: {T} {HOST}, %k2: {T} {HOST}) -> {T} {{",
        f"  %a = arith.mulf %x, %x : {T}",
        f"  %b = arith.mulf %a, %k : {T}",
        *[line.replace("%q", "%c") for line in chain("%b", 14)],
        f"  %r = arith.addf %c14, %k2 : {T}",
        f"  func.return %r : {T}",
        "}",
    ]
)


def test_the_callers_data_keeps_its_tier_while_it_has_room(ctx: Context):
    function, graph = graph_of(ctx, TAGGED)
    plan = plan_offload(graph, hardware(), PlanOptions(target=GB))
    assert tiers_of(plan.values) == {"%k": Tier.HOST, "%k2": Tier.HOST}
    write_plan(function, graph.ops, plan, 1, Tier.REMOTE)
    assert f"%k2: !hyperoffload.remote<{T}, host> {HOST}" in str(function)


def test_the_callers_data_spills_to_a_slower_tier_when_its_own_is_full(ctx: Context):
    # Host holds 1 KiB: %k (read first) keeps it; %k2 goes to the drive, and
    # the function's signature says so.
    function, graph = graph_of(ctx, TAGGED)
    small_host = hardware(host=KIB)
    plan = plan_offload(graph, small_host, PlanOptions(target=GB))
    assert tiers_of(plan.values) == {"%k": Tier.HOST, "%k2": Tier.SSD}
    write_plan(function, graph.ops, plan, 1, Tier.REMOTE)
    module = function.parent_op()
    assert module is not None
    verify_module(module)  # type: ignore[arg-type]
    ssd = "{hyperoffload.tier = #hyperoffload.tier<ssd>}"
    assert f"%k2: !hyperoffload.remote<{T}, ssd> {ssd}" in str(function)
    assert f"%k: !hyperoffload.remote<{T}, host> {HOST}" in str(function)


def test_the_planner_writes_the_chosen_tier_into_the_plan(ctx: Context):
    # Unplanned, the peak is 6 KiB at %e; 4 KiB needs %a and %b out.
    _, graph = graph_of(ctx, TWO_GAPS)
    plan = plan_offload(graph, hardware(), PlanOptions(target=4 * KIB))
    assert plan.met
    assert plan.peak_after == 4 * KIB
    assert tiers_of(plan.values) == {"%a": Tier.SSD, "%b": Tier.HOST}
    restricted = PlanOptions(target=4 * KIB, tiers=(Tier.REMOTE,))
    plan = plan_offload(graph, hardware(), restricted)
    assert tiers_of(plan.values) == {"%a": Tier.REMOTE, "%b": Tier.REMOTE}


def test_no_allowed_tier_on_the_hardware_is_an_error(ctx: Context):
    _, graph = graph_of(ctx, TWO_GAPS)
    one_tier = replace(hardware(), links={Tier.REMOTE: hardware().link("remote")})
    with pytest.raises(PlanError, match="offers none of the tiers ssd"):
        plan_offload(graph, one_tier, PlanOptions(target=4 * KIB, tiers=(Tier.SSD,)))


def test_a_written_back_result_spills_too(ctx: Context):
    # %k is the caller's, tagged host; with no room in host it is written
    # back to the drive and returned from there.
    text = f"""func.func @f(%x: {T}) -> ({T}, {T} {HOST}) {{
      %k = arith.mulf %x, %x : {T}
      %a = arith.addf %x, %x : {T}
      %b = arith.addf %a, %a : {T}
      func.return %b, %k : {T}, {T}
    }}"""
    function, graph = graph_of(ctx, text)
    plan = plan_offload(graph, hardware(host=0), PlanOptions(target=GB))
    assert [(p.info.name, p.write_back, p.tier) for p in plan.values] == [
        ("%k", Tier.HOST, Tier.SSD)
    ]
    write_plan(function, graph.ops, plan, 1, Tier.REMOTE)
    module = function.parent_op()
    assert module is not None
    verify_module(module)  # type: ignore[arg-type]
    ssd = f"!hyperoffload.remote<{T}, ssd>"
    assert str(function.function_type) == f"({T}) -> ({T}, {ssd})"
    assert "#hyperoffload.tier<ssd>" in str(function.res_attrs)


def test_a_latency_bound_copy_stays_off_the_slower_tiers(ctx: Context):
    # A drive at 200 MB/s with 6 us of latency: %a's ssd round trip (2 x
    # 11.12 us) hides in its 43.008 us gap, but each fetch is mostly
    # latency (5.12 us of bytes), so %a goes to host (4.096 us round trip,
    # no latency), the slowest tier left whose fetch moves bytes.
    _, graph = graph_of(ctx, TWO_GAPS)
    device = hardware()
    ssd = Link(Tier.SSD, GB, 200e6, 200e6, 6 * US, staged_through=Tier.HOST)
    slow_start = replace(device, links={**device.links, Tier.SSD: ssd})
    chosen = choose_tiers([stored(graph, "%a")], graph, slow_start)
    assert tiers_of(chosen) == {"%a": Tier.HOST}
    # without the latency the same drive takes it
    fast = replace(ssd, latency_s=0.0)
    chosen = choose_tiers(
        [stored(graph, "%a")],
        graph,
        replace(device, links={**device.links, Tier.SSD: fast}),
    )
    assert tiers_of(chosen) == {"%a": Tier.SSD}
