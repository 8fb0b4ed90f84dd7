"""
The peak tables of results.md and docs/benchmarks.md: the LP bound that
counts the link beside `M_LB`, and each row's share of the saving it allows
(rows within the limit only); results from before the bound keep the `M_LB`
reading in results.md and say so in docs/benchmarks.md.
"""

import json
from typing import Any

import results_summary

from hyperoffload.analysis.link_bound import LinkBound
from hyperoffload.benchmark.bound_words import lp_bound_words
from hyperoffload.benchmark.markdown import (
    _peak_section,  # pyright: ignore[reportPrivateUsage]
)
from hyperoffload.benchmark.scenarios import lp_bound_fields
from hyperoffload.support.units import format_bytes


def _row(policy: str, peak: int, within: bool = True) -> dict[str, Any]:
    return {
        "policy": policy,
        "setting": "s",
        "within": within,
        "peak_hbm_bytes": peak,
        "peak_reduction": 1 - peak / 1000,
        "arena_bytes": peak,
        "fragmentation": 0.0,
        "dynamic_arena_bytes": peak,
        "makespan_s": 1.0,
        "slowdown": 0.0 if within else 0.5,
        "exposed_transfer_s": 0.0,
        "bytes_moved": 0,
        "tokens_per_s": 1.0,
        "oom": False,
    }


def _scenario(**preset: Any) -> dict[str, Any]:
    rows = [_row("none", 1000), _row("peer", 900), _row("slow", 100, within=False)]
    return {
        "limit": 0.02,
        "presets": [
            {
                "hardware": "hw",
                "hbm_capacity_bytes": 2000,
                "rows": [*rows, _row("hyperoffload", 700)],
                "bound_peak_bytes": 500,
                "bound_time_s": 1.0,
                "fraction_of_possible_saving": 0.6,
                "plots": [],
                **preset,
            }
        ],
    }


def test_rows_read_against_the_lp_bound():
    info = {"status": "Optimal", "windows": 64, "columns": 10, "rows": 20, "seconds": 1}
    lines = _peak_section(_scenario(lp_bound_bytes=500, lp_bound=info))
    share = {line.split(" | ")[0]: line.split(" | ")[-1] for line in lines}
    assert share["| peer"] == "20.0% |"  # (1000 - 900) / (1000 - 500)
    assert share["| hyperoffload"] == "60.0% |"  # 300 of 500
    assert share["| none"] == share["| slow"] == "- |"  # over the limit: not read
    text = "\n".join(lines)
    assert "peak >= 500 B within 2% (the LP bound that counts the link" in text
    assert "ours achieves 60.0% of the possible saving" in text


def test_a_bound_that_allows_no_saving_says_so():
    info = {"status": "Optimal", "windows": 64, "columns": 10, "rows": 20, "seconds": 1}
    scenario = _scenario(
        lp_bound_bytes=1000, lp_bound=info, fraction_of_possible_saving=None
    )
    text = "\n".join(_peak_section(scenario))
    assert "- (the bound allows none)" in text
    assert "ours achieves n/a (the bound allows no saving)" in text


def test_results_from_before_the_bound_read_against_m_lb():
    text = "\n".join(_peak_section(_scenario()))
    assert "ours achieves 60.0% of the possible saving (against M_LB)" in text
    assert "LP bound" not in text


def test_the_words_beside_a_peak_row():
    optimal = {"status": "Optimal", "seconds": 2.0}
    assert (
        lp_bound_words(500, optimal, 1000, 0.02, 700)
        == "LP bound 500 B within 2% (-50.0%), ours 60.0% of the saving it allows"
    )
    # ours outside the limit: the bound is not read against it
    assert (
        lp_bound_words(500, optimal, 1000, 0.02) == "LP bound 500 B within 2% (-50.0%)"
    )
    assert lp_bound_words(1000, optimal, 1000, 0.02, 1000).endswith(
        ", which allows no saving"
    )
    stopped = lp_bound_words(
        300, {"status": "Time limit reached", "seconds": 900.4}, 1000, 0.01
    )
    assert stopped == (
        "LP bound 300 B within 1% (-70.0%; the LP stopped at 'Time limit reached' "
        "after 900 s: this is the largest single-op working set)"
    )
    # a limit of a tenth of a point keeps its digit
    assert lp_bound_words(500, optimal, 1000, 0.013).startswith(
        "LP bound 500 B within 1.3% ("
    )
    assert lp_bound_words(None, None, 1000, 0.02, 700) == (
        "LP bound: not in these results (run before it)"
    )


def test_every_peak_row_of_the_summary_gives_the_lp_bound():
    """docs/benchmarks.md's rows of peak-at-slowdown scenarios, from results.json."""
    results = json.loads(results_summary.RESULTS.read_text())
    peaks = [s for s in results["scenarios"] if s.get("kind") == "peak-at-slowdown"]
    table = results_summary.summary(results).splitlines()
    rows = {
        "llama3-8b-train": "LLaMA-3-8B training step",
        "long-context-decode": "decode at a 123K-token cache",
        "gpt3-175b-layer-train": "GPT-3 175B training step",
        "deepseek-v3-moe-layer": "DeepSeek-V3 prefill, one MoE layer",
    }
    assert {s["name"] for s in peaks} == set(rows)
    for scenario in peaks:
        row = next(
            line for line in table if line.startswith(f"| {rows[scenario['name']]}")
        )
        for preset in scenario["presets"]:
            if "lp_bound_bytes" in preset:
                assert (
                    f"LP bound {format_bytes(preset['lp_bound_bytes'])} within" in row
                )
            else:
                assert "LP bound: not in these results" in row
    recomputation = results_summary.sections(results)["recomputation"]
    assert "LP bound" in recomputation.splitlines()[1]


def test_a_solved_bound_as_the_tables_read_it():
    solved = LinkBound(600, 600, "Time limit reached", 64, 10, 20, 900.0)
    fields = lp_bound_fields(solved)
    assert lp_bound_words(
        fields["lp_bound_bytes"], fields["lp_bound"], 1000, 0.02, 800
    ) == (
        "LP bound 600 B within 2% (-40.0%; the LP stopped at 'Time limit reached' "
        "after 900 s: this is the largest single-op working set), ours 50.0% of "
        "the saving it allows"
    )
