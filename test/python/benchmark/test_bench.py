"""
`hyperoffload-bench --suite quick`: the tiny versions of the default suite's
scenario kinds run end to end (exports in child processes, plans, every
policy), and the results hold together: each best setting is within its
limit, ours is among the settings tried, the longest-length answers agree
with the probes. Needs the `torch` extra.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from hyperoffload.benchmark.suite import run_suite
from hyperoffload.tools.hyperoffload_bench import main as bench_main


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("bench")
    return run_suite("quick", out, out / "work", jobs=2), out


def _scenario(results: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in results["scenarios"] if s["name"] == name)


def test_outputs_are_written(quick: tuple[dict[str, Any], Path]) -> None:
    results, out = quick
    assert json.loads((out / "results.json").read_text()) == results
    markdown = (out / "results.md").read_text()
    for scenario in results["scenarios"]:
        assert "error" not in scenario
        assert scenario["title"] in markdown
        for preset in scenario.get("presets", ()):
            for plot in preset["plots"]:
                assert (out / plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_routed_experts(quick: tuple[dict[str, Any], Path]) -> None:
    """Each policy at each budget; all-resident is the throughput to keep."""
    scenario = _scenario(quick[0], "tiny-moe-routed-decode")
    (preset,) = scenario["presets"]
    # grouped expert kernels: fewer launches and less time than one per
    # expert, never below the bytes a token reads nor its launches
    assert preset["launches"] < preset["per_expert_launches"]
    assert preset["token_s"] < preset["per_expert_token_s"]
    assert preset["token_s"] >= preset["bandwidth_floor_s"]
    assert preset["token_s"] >= preset["launch_floor_s"] * (1 - 1e-12)
    for routing in preset["routings"]:
        runs = routing["runs"]
        assert {r["policy"] for r in runs} == {
            "ours",
            "all-resident",
            "on-demand",
            "lru",
            "moe-infinity",
        }
        for run in runs:
            if run["policy"] == "all-resident":
                assert run["expert_hit_rate"] == 1.0
            else:
                assert run["peak_hbm_bytes"] <= run["budget_bytes"]
        full = [r for r in runs if r["budget"] == 1.0 and r["policy"] == "ours"]
        assert full[0]["expert_hit_rate"] == 1.0  # room for every expert: all hot
        assert routing["least_within"]["all-resident"] is not None


@pytest.mark.parametrize("name", ["tiny-llama-train", "tiny-llama-decode"])
def test_best_settings_are_within_the_limit(
    quick: tuple[dict[str, Any], Path], name: str
) -> None:
    scenario = _scenario(quick[0], name)
    preset = scenario["presets"][0]
    rows = {row["policy"]: row for row in preset["rows"]}
    none, ours = rows["none"], rows["hyperoffload"]
    # where ours places tagged arguments (decode), ours without that choice too
    in_tier: set[str] = (
        {"hyperoffload, arguments in tier"} if name.endswith("decode") else set()
    )
    # a training step: recomputation peers, and ours with one lever alone
    training: set[str] = (
        {
            "checkpoint-blocks",
            "megatron-selective",
            "memory-budget",
            "hyperoffload, offload only",
            "hyperoffload, recompute only",
        }
        if name.endswith("train")
        else set()
    )
    assert set(rows) == {
        "none",
        "reactive-lru",
        "runtime-prefetch",
        "distance",
        "activation-pass",
        "hyperoffload",
        *in_tier,
        *training,
    }
    for row in rows.values():
        if row["policy"] == "activation-pass" and name.endswith("decode"):
            assert "peak_hbm_bytes" not in row  # not a training step
            continue
        if "peak_hbm_bytes" not in row:  # a recomputation peer with nothing to do
            assert row["setting"].startswith("n/a")
            continue
        # every peer shows its best point, within the limit or not
        assert row["within"] == (
            row["slowdown"] <= scenario["limit"] + 1e-9 and not row["oom"]
        )
        # a program that recomputes is another program: once a value is not
        # kept for the backward its producer may fuse into its consumer
        recomputes = row["policy"] == "hyperoffload" or (
            row["policy"] in training - {"hyperoffload, offload only"}
        )
        floor = row["compute_s"] if recomputes else preset["bound_time_s"]
        assert row["makespan_s"] >= floor * (1 - 1e-9)
        tried = [p for p in preset["points"] if p["policy"] == row["policy"]]
        assert (
            row["policy"] == "none"
            or row["policy"].startswith("hyperoffload")
            or any(p["setting"] == row["setting"] for p in tried)
        )
    assert ours["peak_hbm_bytes"] < none["peak_hbm_bytes"]
    # the LP bound that counts the link: below every run within the limit
    lp = preset["lp_bound_bytes"]
    assert preset["lp_bound"]["status"] == "Optimal"
    for row in rows.values():
        if row["within"] and "peak_hbm_bytes" in row:
            assert lp <= row["peak_hbm_bytes"], row["policy"]
    tried = [
        p
        for p in preset["points"]
        if p["policy"] == "hyperoffload"
        and p["peak_hbm_bytes"] == ours["peak_hbm_bytes"]
    ]
    assert tried, "ours reports a setting it tried"
    assert ours["passes_s"] > 0
    assert ours["target_search_s"] > 0


def test_longest_length_agrees_with_the_probes(
    quick: tuple[dict[str, Any], Path],
) -> None:
    scenario = _scenario(quick[0], "tiny-llama-prefill")
    preset = scenario["presets"][0]
    capacity = preset["hbm_capacity_bytes"]
    assert "runtime-prefetch" in preset["longest"]
    for policy, entry in preset["longest"].items():
        probes = {t["length"]: t for t in preset["tried"] if t["policy"] == policy}
        longest = entry["length"]
        assert longest is None or probes[longest]["fits"]
        assert not any(
            p["fits"] for n, p in probes.items() if longest is None or n > longest
        )
        # a policy that fits nowhere still shows its run at the shortest length
        assert entry["at"] == (longest if longest is not None else min(probes))
        assert entry["fits"] == (longest is not None)
        if longest is not None:
            assert entry["peak_hbm_bytes"] <= capacity
    none = preset["longest"]["none"]["length"] or 0
    assert (preset["longest"]["hyperoffload"]["length"] or 0) > none


def test_unknown_scenario_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_main(["--suite", "quick", "--only", "nope", "--list"]) == 1
    assert "no scenario nope in suite 'quick'" in capsys.readouterr().err
    assert bench_main(["--suite", "huge", "--list"]) == 1
    assert "unknown suite 'huge'" in capsys.readouterr().err


def test_seed_training(quick: tuple[dict[str, Any], Path]) -> None:
    """
    Ours within each limit, at or above the LP bound; the optimizer states
    found; ours fits the fixed HBM.
    """
    scenario = _scenario(quick[0], "tiny-llama-seed-training")
    for entry in scenario["limits"]:
        assert entry["ours"]["slowdown"] <= entry["limit"]
        assert entry["lp_bound"]["status"] == "Optimal"
        assert 0 < entry["lp_bound_bytes"] <= entry["ours"]["peak_hbm_bytes"]
    assert 0 < scenario["none"]["state_bytes_at_peak"] <= scenario["state_bytes"]
    ours = scenario["fixed"]["hyperoffload"]
    assert ours["fits"]
    assert ours["peak_hbm_bytes"] <= scenario["capacity_bytes"]
    assert [p["gb_per_s"] for p in scenario["sweep"]] == [70.0]


def test_a_bound_added_after_the_run_is_the_runs_own(
    quick: tuple[dict[str, Any], Path],
) -> None:
    """
    `bench/results_summary.py --lp-bound NAME` on results from before the
    bound: computed again on the program the run cached, it is the run's;
    a program whose `none` peak is not the run's is refused.
    """
    import copy

    import results_summary

    results, out = quick
    ran = _scenario(results, "tiny-llama-train")["presets"][0]
    again = copy.deepcopy(results)
    preset = _scenario(again, "tiny-llama-train")["presets"][0]
    del preset["lp_bound_bytes"], preset["lp_bound"]
    preset["fraction_of_possible_saving"] = None
    results_summary.add_lp_bounds(again, "tiny-llama-train", out / "work")
    assert preset["lp_bound_bytes"] == ran["lp_bound_bytes"]
    assert preset["fraction_of_possible_saving"] == ran["fraction_of_possible_saving"]
    assert preset["lp_bound"]["added"]
    preset["rows"][0]["peak_hbm_bytes"] += 1  # `none`'s: another program
    with pytest.raises(results_summary.StaleProgram, match="tiny-llama-train"):
        results_summary.add_lp_bounds(again, "tiny-llama-train", out / "work")
