"""
The peak tables of results.md: the LP bound that counts the link beside
`M_LB`, and each row's share of the saving it allows (rows within the
limit only); results from before the bound keep the `M_LB` reading.
"""

from typing import Any

from hyperoffload.benchmark.markdown import _peak_section  # pyright: ignore[reportPrivateUsage]


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
