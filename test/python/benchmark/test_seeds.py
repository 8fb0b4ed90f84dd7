"""
The pure parts of the seed training scenarios (`benchmark.seeds`,
`benchmark.seeds_markdown`): the optimizer states found by name, the bytes of
some buffers at a run's peak, the link's bandwidth changed, the bounds and
the section written from a result. The runs themselves are in the quick
suite (`test_bench.py`).
"""

from typing import Any

import pytest

from hyperoffload.benchmark.seeds import (
    bytes_at_peak,
    returned_after_last_matmul,
    state_arguments,
    with_remote_bandwidth,
)
from hyperoffload.benchmark.seeds_markdown import (
    compute_bound_s,
    fitting_baseline,
    fixed_bound_s,
    peak_bound,
    seed_section,
)
from hyperoffload.benchmark.suites import SEEDS, SUITES
from hyperoffload.benchmark.workloads import Export
from hyperoffload.model.hardware import load_hardware
from hyperoffload.model.layout import Allocation
from hyperoffload.sim.simulator import SimResult
from hyperoffload.support.tiers import Tier

HEADER = """\
// arguments:
//   %arg0: tokens
//   %arg3: tok_embeddings.weight
//   %arg4: master.tok_embeddings.weight
//   %arg5: exp_avg.tok_embeddings.weight
//   %arg6: exp_avg_sq.tok_embeddings.weight
func.func @train_step(%arg0: tensor<2xi64>) {
"""


def test_states_are_named_in_the_export() -> None:
    assert state_arguments(HEADER) == {4, 5, 6}
    assert state_arguments("func.func @f() {}") == frozenset()


def test_bytes_at_the_peak() -> None:
    result = SimResult(None)
    # buffer 0 alone (100), then 0 and 1 (150: the peak), then 2 alone (120)
    result.allocations = [
        Allocation(0, 100, 0, 2),
        Allocation(1, 50, 1, 3),
        Allocation(2, 120, 3, 4),
    ]
    assert bytes_at_peak(result, frozenset({1})) == 50
    assert bytes_at_peak(result, frozenset({2})) == 0
    assert bytes_at_peak(result, frozenset({0, 1, 2})) == 150


def test_remote_bandwidth_is_replaced_both_ways() -> None:
    hardware = with_remote_bandwidth(load_hardware("ascend-910c"), 70)
    link = hardware.links[Tier.REMOTE]
    assert link.bandwidth_to_device == link.bandwidth_from_device == 70e9
    assert hardware.links[Tier.HOST] == load_hardware("ascend-910c").links[Tier.HOST]


def test_export_carries_the_training_options() -> None:
    spec = Export(
        "llama3-8b", "train", seq=8192, batch=2, optimizer="adamw", loss="chunked"
    )
    assert spec.command == (
        "hyperoffload-gen llama3-8b --mode train --dtype bf16 --optimizer adamw "
        "--loss chunked --seq 8192 --batch 2"
    )
    assert spec.tokens == 2 * 8192
    assert Export("llama3-8b", "train", shard=8).argv()[-2:] == ["--shard", "8"]
    assert Export("llama3-8b", "decode", kv_len=16).tokens == 1


def test_the_seeds_suite_is_in_default() -> None:
    assert set(SEEDS) <= set(SUITES["default"])
    assert SUITES["seeds"] == SEEDS


def _result() -> dict[str, Any]:
    none = {
        "peak_hbm_bytes": 200e9,
        "makespan_s": 5.0,
        "compute_s": 5.0,
        "state_bytes_at_peak": 90e9,
    }
    ours = {
        "peak_hbm_bytes": 100e9,
        "peak_reduction": 0.5,
        "slowdown": 0.01,
        "bytes_to_device": 50e9,
        "bytes_to_remote": 40e9,
        "state_bytes_at_peak": 5e9,
    }
    fixed = {
        "peak_hbm_bytes": 60e9,
        "makespan_s": 6.0,
        "slowdown": 0.2,
        "exposed_transfer_s": 1.0,
        "fits": True,
    }
    return {
        "choice": "the seeds' setting",
        "none": none,
        "flops": 376e12,
        "peak_flops": 376e12,
        "tokens": 16384,
        "state_bytes": 96e9,
        "remote_gb_per_s": 10.0,
        "capacity_bytes": 64e9,
        "limits": [{"limit": 0.02, "ours": ours, "peer": None}],
        "fixed": {
            "runtime-prefetch": fixed | {"makespan_s": 9.0, "arena_bytes": 70e9},
            "memory-budget": {"fits": False, "setting": "least peak"},
            "hyperoffload": fixed,
        },
        "sweep": [
            {"gb_per_s": 10.0, "peak": ours, "fixed": fixed},
            {"gb_per_s": 20.0, "peak": ours, "fixed": fixed | {"makespan_s": 5.0}},
        ],
    }


def test_bounds() -> None:
    result = _result()
    assert compute_bound_s(result) == 1.0
    # the link carries 10 GB/s x 5 s x 1.02 = 51 GB within 2%
    assert peak_bound(result, 0.02) == pytest.approx(149e9)
    # 136 GB above 64 GB must come back over 10 GB/s: 13.6 s, above the compute
    assert fixed_bound_s(result) == pytest.approx(13.6)
    assert fixed_bound_s(result, 100.0) == 5.0  # compute


def test_fitting_baseline_is_the_fastest_peer_that_fits() -> None:
    found = fitting_baseline(_result())
    assert found is not None
    assert found[0] == "runtime-prefetch"


def test_section() -> None:
    text = "\n".join(seed_section(_result()))
    assert "100.00 GB (-50.0%) at +1.00%" in text
    assert "5.00 GB (5.0%)" in text  # states at ours' peak
    assert "| 20 |" in text
    assert "+20.0%" in text
    # `none` updating after the backward pass peaks lower (an SSA step holds
    # both states): ours is read against it too
    twin = _result() | {
        "none_updates_after": {"peak_hbm_bytes": 160e9, "makespan_s": 5}
    }
    text = "\n".join(seed_section(twin))
    assert "updating after the backward pass (one optimizer step): 5.000 s" in text
    assert "100.00 GB (-50.0%; -37.5% against `none` updating after)" in text


def test_claims_table() -> None:
    from seed_claims import BEGIN, END, claims_table, replace_between

    result: dict[str, Any] = {
        **_result(),
        "name": "llama3-8b-seed-training",
        "hardware": "x",
    }
    ours = result["fixed"]["hyperoffload"]
    result["sweep"] = [
        {"gb_per_s": 33.6, "peak": {}, "fixed": ours},
        {"gb_per_s": 70.0, "peak": {}, "fixed": {"makespan_s": 5.0, "fits": True}},
    ]
    table = claims_table({"llama3-8b-seed-training": result})
    lines = table.splitlines()
    assert len(lines) == 2 + 5 + 2  # header, five LLaMA rows, two not run
    assert "not run at this limit" in lines[2]  # +1.3% was not run here
    assert "-50.0% at +1.00%" in lines[3]
    assert "149.00 GB" in lines[3]  # the link's bound on the peak
    assert "+20.0%" in lines[5]  # 6 s -> 5 s from 33.6 to 70 GB/s
    assert "1.50x" in lines[6]  # the runtime's 9 s against ours' 6 s
    assert all("not run" in line for line in lines[7:])
    document = f"a\n{BEGIN}\nold\n{END}\nb\n"
    assert replace_between(document, "new\n") == f"a\n{BEGIN}\nnew\n{END}\nb\n"
    with pytest.raises(ValueError, match="needs one"):
        replace_between("no markers", "new\n")


def test_returned_after_the_last_matmul() -> None:
    """Only the results defined after the last matmul count (not the loss)."""
    text = (
        "%a = linalg.matmul\n%b = arith.addf\n%c = linalg.batch_matmul\n"
        "%d = arith.mulf\n"
        "return %l, %a, %b, %d : tensor<f32>, tensor<2xf32>, tensor<4xbf16>, "
        "tensor<3x2xf32>\n"
    )
    assert returned_after_last_matmul(text) == 3 * 2 * 4
    assert returned_after_last_matmul("func.func @f() {}") == 0


def test_claims_table_with_the_optimizer_in_backward() -> None:
    """
    With the optimizer step in the backward pass, the peak row is labelled,
    judged against the lower `none` (updating after the backward pass) and
    blocked by what the step still returns after its last matmul.
    """
    from seed_claims import claims_table

    result: dict[str, Any] = {
        **_result(),
        "name": "llama3-8b-seed-training",
        "hardware": "x",
        "command": "hyperoffload-gen llama3-8b --optimizer-in-backward",
        "none_updates_after": {"peak_hbm_bytes": 160e9, "makespan_s": 5.0},
        "returned_after_backward_bytes": 5e9,
        "remote_gb_per_s": 100.0,
    }
    row = claims_table({"llama3-8b-seed-training": result}).splitlines()[3]
    assert "optimizer step in the backward pass" in row
    # ours' 100 GB against the lower none, 160 GB: -37.5%, not -50%
    assert "-37.5% at +1.00%" in row
    assert "160.00 GB, `none` updating after the backward pass" in row
    # 5 GB after the last matmul at 100 GB/s: 50 ms, 1% of the 5 s step
    assert "(5.00 GB) take 50" in row
    assert "1% of the step" in row


def test_order_table() -> None:
    """One row per order: the tail it returns, ours at each capacity, bounds."""
    from seed_claims import order_table

    def row(in_backward: bool, tail: float, makespan: float) -> dict[str, Any]:
        ours = {
            "makespan_s": makespan,
            "slowdown": makespan / 1.0 - 1,
            "peak_hbm_bytes": 30e9,
            "exposed_transfer_s": makespan - 1.0,
            "fits": makespan < 1.5,
            "capacity_bytes": 20e9,
        }
        return {
            "in_backward": in_backward,
            "none": {"makespan_s": 1.0, "peak_hbm_bytes": 50e9},
            "flops": 100e12,
            "peak_flops": 400e12,
            "remote_gb_per_s": 10.0,
            "returned_after_backward_bytes": tail,
            "ours": {"20GB": ours},
        }

    lines = order_table([row(False, 8e9, 2.0), row(True, 2e9, 1.25)]).splitlines()
    assert len(lines) == 4
    assert "ours in 20.00 GB" in lines[0]
    assert lines[2].startswith("| after the backward pass |")
    assert "8.00 GB: 800" in lines[2]  # 8 GB over 10 GB/s
    assert "80% of the step" in lines[2]
    assert "misses by 10.00 GB" in lines[2]
    assert "(+25.0%)" in lines[3]
    assert "misses" not in lines[3]
    # 250 ms of FLOPs; 30 GB above 20 GB over 10 GB/s: 3 s
    assert "compute 250" in lines[3]
    assert "20.00 GB: 3" in lines[3]


def test_order_table_in_the_docs_is_its_results() -> None:
    """docs/frontend.md's table is `order_table` of the committed results."""
    import json

    from seed_claims import (
        ORDER_BEGIN,
        ORDER_DOCUMENT,
        ORDER_END,
        ORDER_RESULTS,
        order_table,
    )

    rows = json.loads(ORDER_RESULTS.read_text())["rows"]
    document = ORDER_DOCUMENT.read_text()
    written = document.split(ORDER_BEGIN)[1].split(ORDER_END)[0]
    assert written == "\n" + order_table(rows)


def test_deepseek_rows() -> None:
    """The states' share and the iteration at a fixed HBM, each with its bound."""
    from seed_claims import claims_table, deepseek_note

    result: dict[str, Any] = {
        **_result(),
        "name": "deepseek-v3-seed-training",
        "hardware": "x",
        "command": "hyperoffload-gen deepseek-v3 --mode train",
    }
    lines = claims_table({"deepseek-v3-seed-training": result}).splitlines()
    assert len(lines) == 2 + 1 + 2 + 1  # header, LLaMA not run, two rows, GPT-3
    states, iteration = lines[3], lines[4]
    assert "90.00 GB of 200.00 GB (45.0%)" in states  # `none`'s states at its peak
    assert "**5.00 GB** of 100.00 GB (5.0%; **-94%**" in states
    assert "9.600 s" in states  # 96 GB stored over 10 GB/s
    assert states.endswith("| reached |")
    assert "2,500 -> 2,190 ms (-12.4%)" in iteration
    assert "-33.3% against `runtime-prefetch`" in iteration  # 6 s against 9 s
    assert iteration.endswith("| reached |")
    note = deepseek_note(result)
    assert "5.000 s (+100.0% against the seeds' 2,500 ms)" in note
    assert "not run" in deepseek_note(None)


def test_claims_in_the_docs_are_their_results() -> None:
    """docs/benchmarks.md's claims table and DeepSeek note are its results'."""
    import json

    from seed_claims import (
        BEGIN,
        DOCUMENT,
        END,
        LLAMA_BEGIN,
        LLAMA_END,
        NOTE_BEGIN,
        NOTE_END,
        RESULTS,
        claims_table,
        deepseek_note,
        llama_note,
    )

    results = json.loads(RESULTS.read_text())
    scenarios = {s["name"]: s for s in results["scenarios"] if "error" not in s}
    document = DOCUMENT.read_text()
    assert document.split(BEGIN)[1].split(END)[0] == "\n" + claims_table(scenarios)
    note = deepseek_note(scenarios.get("deepseek-v3-seed-training"))
    assert document.split(NOTE_BEGIN)[1].split(NOTE_END)[0] == "\n" + note
    note = llama_note(scenarios.get("llama3-8b-seed-training"))
    assert document.split(LLAMA_BEGIN)[1].split(LLAMA_END)[0] == "\n" + note


def test_a_step_run_in_parts_says_what_ran() -> None:
    """
    Merged from parts without the peers' searches: the peer column says so
    (not "-"), and the note names each part.
    """
    from seed_claims import claims_table, llama_note

    result: dict[str, Any] = {
        **_result(),
        "name": "llama3-8b-seed-training",
        "hardware": "x",
        "command": "hyperoffload-gen llama3-8b",
        "ops": 16166,
        "parse_s": 600.0,
        "peers_searched": False,
        "ran": [{"part": "fixed-ours", "wall_s": 120.0}],
    }
    row = claims_table({"llama3-8b-seed-training": result}).splitlines()[3]
    assert "| not searched on this step |" in row
    note = llama_note(result)
    assert "`fixed-ours` 2 min" in note
    assert "-3.8% against the seeds' 5,200 ms" in note  # 5 s
    assert "not run on this step" in note
    assert "in parts" not in llama_note(
        _result() | {"ops": 1, "parse_s": 1.0, "hardware": "x", "command": "c"}
    )
    section = "\n".join(seed_section(result))
    assert "not searched on this step" in section
    alone = result | {"fixed": {"hyperoffload": result["fixed"]["hyperoffload"]}}
    row = claims_table({"llama3-8b-seed-training": alone}).splitlines()[4]
    assert "**6.000 s** (exposed 1.000 s)" in row
    assert row.endswith("| not compared: no peer was run in it on this step |")


def test_parts_combine_into_one_result() -> None:
    """Each part's figures kept, limits in order; parts of another program refused."""
    from seed_parts import combine

    base: dict[str, Any] = {
        **_result(),
        "command": "c",
        "parse_s": 60.0,
        "fixed": {},
        "limits": [],
    }
    peak: dict[str, Any] = base | {
        "limits": [{"limit": 0.02, "ours": {}, "peer": None}],
        "ran": [{"part": "peak:0.02", "wall_s": 10.0}],
    }
    fixed: dict[str, Any] = base | {
        "fixed": {"hyperoffload": {"fits": True}},
        "limits": [{"limit": 0.013, "ours": {}, "peer": None}],
        "sweep": [],
        "none_updates_after": {"peak_hbm_bytes": 1},
        "ran": [{"part": "fixed-ours", "wall_s": 20.0}],
    }
    whole = combine([peak, fixed])
    assert [e["limit"] for e in whole["limits"]] == [0.013, 0.02]
    assert whole["fixed"] == {"hyperoffload": {"fits": True}}
    assert whole["none_updates_after"] == {"peak_hbm_bytes": 1}
    assert whole["wall_s"] == 90.0
    with pytest.raises(SystemExit, match="different programs"):
        combine([peak, fixed | {"command": "other"}])


def test_the_peers_part_fills_each_limit_s_best_peer() -> None:
    """Merged with a `peers` part: each limit's best peer is its, and the peers were searched."""
    from seed_parts import combine

    base: dict[str, Any] = {**_result(), "command": "c", "parse_s": 0.0, "sweep": []}
    peer = {"policy": "activation-pass", "peak_hbm_bytes": 5}
    peak: dict[str, Any] = base | {
        "fixed": {},
        "limits": [{"limit": 0.013, "ours": {}, "peer": None}],
        "peers_searched": False,
        "ran": [{"part": "peak:0.013", "wall_s": 1.0}],
    }
    assert combine([peak])["peers_searched"] is False
    peers: dict[str, Any] = base | {
        "fixed": {"memory-budget": {"fits": False}},
        "limits": [],
        "peers": [{"limit": 0.013, "peer": peer}, {"limit": 0.02, "peer": None}],
        "peers_searched": True,
        "ran": [{"part": "peers", "wall_s": 1.0}],
    }
    whole = combine([peak, peers])
    assert whole["peers_searched"] is True
    assert whole["limits"] == [{"limit": 0.013, "ours": {}, "peer": peer}]
    assert whole["fixed"] == {"memory-budget": {"fits": False}}
    assert "peers" not in whole


def test_a_bound_part_replaces_the_peak_part_s_bound() -> None:
    """The LP bound measured again by a `bound` part: its fields, ours' plan kept."""
    from seed_parts import combine

    base: dict[str, Any] = {**_result(), "command": "c", "parse_s": 0.0, "sweep": []}
    peak: dict[str, Any] = base | {
        "fixed": {},
        "limits": [
            {"limit": 0.013, "lp_bound_bytes": 9, "ours": {"p": 1}, "peer": None}
        ],
        "ran": [{"part": "peak:0.013", "wall_s": 1.0}],
    }
    bound: dict[str, Any] = base | {
        "fixed": {},
        "limits": [],
        "bounds": [{"limit": 0.013, "lp_bound_bytes": 7}],
        "ran": [{"part": "bound:0.013", "wall_s": 1.0}],
    }
    (entry,) = combine([peak, bound])["limits"]
    assert entry == {
        "limit": 0.013,
        "lp_bound_bytes": 7,
        "ours": {"p": 1},
        "peer": None,
    }
    # a bound at a limit no peak part ran adds no row
    assert combine([bound])["limits"] == []


def test_the_sweep_point_at_the_preset_is_fixed_ours_where_not_run() -> None:
    """A sweep run in parts: the preset's own bandwidth is ours in the fixed HBM, marked so."""
    from seed_parts import combine

    base: dict[str, Any] = {**_result(), "command": "c", "parse_s": 0.0, "limits": []}
    preset = base["remote_gb_per_s"]
    ours = {"fits": True, "makespan_s": 6.0}
    fixed: dict[str, Any] = base | {
        "fixed": {"hyperoffload": ours},
        "sweep": [],
        "ran": [{"part": "fixed-ours", "wall_s": 1.0}],
    }
    faster: dict[str, Any] = base | {
        "fixed": {},
        "sweep": [{"gb_per_s": 70.0, "fixed": {"fits": True}, "peak": {}}],
        "ran": [{"part": "sweep-fixed:70", "wall_s": 1.0}],
    }
    points = {p["gb_per_s"]: p for p in combine([fixed, faster])["sweep"]}
    assert sorted(points) == sorted([preset, 70.0])
    assert points[preset]["fixed"] is ours
    assert points[preset]["from"] == "fixed-ours"
    # run as a part of its own, the point is that part's
    ran: dict[str, Any] = faster | {
        "sweep": [{"gb_per_s": preset, "fixed": {}, "peak": {}}]
    }
    assert "from" not in combine([fixed, ran])["sweep"][0]
    # no sweep run at all: none made up
    assert combine([fixed])["sweep"] == []
    # a point run by two parts: one point
    twice = combine([fixed, faster, faster])["sweep"]
    assert [p["gb_per_s"] for p in twice] == sorted([preset, 70.0])


def test_a_part_measured_again_is_the_first_file_s() -> None:
    """The fixed HBM measured again, its file first: its figures and wall time alone."""
    from seed_parts import combine

    base: dict[str, Any] = {**_result(), "command": "c", "parse_s": 0.0}
    before: dict[str, Any] = base | {
        "fixed": {"hyperoffload": {"makespan_s": 9.0}, "runtime-prefetch": {}},
        "limits": [{"limit": 0.013, "ours": {"peak_hbm_bytes": 2}, "peer": None}],
        "sweep": [],
        "ran": [
            {"part": "fixed-ours", "wall_s": 5.0},
            {"part": "runtimes", "wall_s": 1.0},
            {"part": "peak:0.013", "wall_s": 2.0},
        ],
    }
    again: dict[str, Any] = base | {
        "fixed": {"hyperoffload": {"makespan_s": 6.0}},
        "limits": [],
        "sweep": [],
        "ran": [{"part": "fixed-ours", "wall_s": 3.0}],
    }
    whole = combine([again, before])
    assert whole["fixed"] == {
        "hyperoffload": {"makespan_s": 6.0},
        "runtime-prefetch": {},
    }
    assert [e["limit"] for e in whole["limits"]] == [0.013]
    assert whole["wall_s"] == 6.0
