"""
`bench/routed_moe.py` rendered from small results: the rows of
`routed-moe.json` (ours, the best peer, all-resident, within 5% or not)
come from the suite's runs at half the experts' weights with zipf:1.0, the
seeds' inference table reads them, and the docs' table and row are written
where the markers are. The runs themselves are long (docs/benchmarks.md).
"""

from typing import Any

import pytest
from routed_moe import (
    BEGIN,
    END,
    ROW,
    SCENARIOS,
    replace_marked,
    results_row,
    section,
    seeds_json,
)

from hyperoffload.benchmark.seeds_inference_markdown import claims_table


def _routing(spec: str, ours: float, lru: float, infinity: float) -> dict[str, Any]:
    runs: list[dict[str, Any]] = []
    for budget, scale in ((0.5, 1.0), (1.0, 1.25)):
        for policy, tokens in (
            ("ours", ours),
            ("all-resident", 40.0 / scale),
            ("on-demand", 10.0),
            ("lru", lru),
            ("moe-infinity", infinity),
        ):
            runs.append(
                {
                    "policy": policy,
                    "budget": budget,
                    "tokens_per_s": tokens * scale,
                    "bytes_moved_per_token": 0.0 if scale > 1 else 0.336e9,
                }
            )
    return {"routing": spec, "runs": runs}


def _scenario(name: str, title: str, ours: float) -> dict[str, Any]:
    return {
        "name": name,
        "kind": "experts",
        "title": f"{title} decode, 2 MoE layers",
        "limit": 0.05,
        "presets": [
            {
                "hardware": "ascend-910c",
                "expert_weight_bytes": 45 * 10**9,
                "token_s": 0.025,
                "launches": 146,
                "per_expert_token_s": 0.027,
                "per_expert_launches": 2240,
                "read_bytes": 5 * 10**9,
                "bandwidth_floor_s": 0.003125,
                "launch_floor_s": 0.00146,
                "routings": [
                    _routing("uniform", 20.0, 21.0, 19.0),
                    _routing("zipf:1.0", ours, 30.0, 33.0),
                ],
            }
        ],
    }


RESULTS = {
    "scenarios": [
        _scenario(SCENARIOS[0], "DeepSeek-V3", 39.0),
        _scenario(SCENARIOS[1], "Mixtral-8x7B", 35.0),
    ]
}


def test_seed_rows() -> None:
    seeds = seeds_json(RESULTS)
    deepseek, mixtral = seeds["rows"]
    assert (deepseek["model"], deepseek["ours"], deepseek["all_resident"]) == (
        "DeepSeek-V3",
        39.0,
        40.0,
    )
    assert (deepseek["peer"], deepseek["peer_tokens_per_s"]) == ("moe-infinity", 33.0)
    assert deepseek["within_5pct"]  # 39 >= 0.95 x 40
    assert not mixtral["within_5pct"]  # 35 < 38
    table = claims_table(None, None, seeds, {})
    assert "**39.00** tokens/s" in table
    assert "`moe-infinity` 33.00" in table


def test_docs_text() -> None:
    text = section(RESULTS)
    assert (
        "| DeepSeek-V3, zipf:1.0 | 40.0 | **39.00** / **48.75** | 30.00 / 37.50 |"
        in text
    )
    assert "(45.00 GB of routed experts' weights)" in text
    assert "146 launches" in text
    # zipf:1.0 at 50%: ours 39 against moe-infinity 33
    assert "from +18.2% (`moe-infinity`, 50%) to +18.2%" in text
    # 0.336 GB at 33.6 GB/s: 10 ms of link; ours at 39 tokens/s takes 25.6 ms
    assert "(10.0 ms of link at 33.6 GB/s) and takes 25.6 ms" in text
    assert "no faster than either bound." in text
    assert "2,240 launches" in text
    assert "Within 5% of all-resident at 50%, zipf:1.0: DeepSeek-V3 (-2.5%)." in text
    document = f"a\n{BEGIN}\nold\n{END}\nb\n"
    assert replace_marked(document, text) == f"a\n{BEGIN}\n{text}{END}\nb\n"
    assert results_row(RESULTS).startswith(ROW)
    with pytest.raises(SystemExit, match="not in the results"):
        seeds_json({"scenarios": RESULTS["scenarios"][:1]})
