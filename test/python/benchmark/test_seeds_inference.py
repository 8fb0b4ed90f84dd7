"""
The seeds' inference claims table (`benchmark.seeds_inference_markdown`,
`bench/seed_inference.py`) rendered from small results: each row's figures
come from its JSON, a missing input is a `not run` row, and the suite holds
the LLaMA-65B scenarios. The runs themselves are long (docs/benchmarks.md).
"""

from pathlib import Path
from typing import Any

import pytest

from hyperoffload.benchmark.seeds_inference import (
    SEEDS_INFERENCE,
    TopkExport,
    longest_fitting,
)
from hyperoffload.benchmark.seeds_inference_markdown import (
    ACCURACY_BEGIN,
    ACCURACY_END,
    BEGIN,
    END,
    ResultsError,
    claims_table,
    read_accuracy,
    replace_between,
)
from hyperoffload.benchmark.suites import SUITES

GB = 10**9
BLOCK = 64 * 2**20


def _run(kv: float, of_none: float, hot: int = 0, fits: bool = True) -> dict[str, Any]:
    return {
        "hot_blocks": hot,
        "hit_rate": 0.99,
        "tokens_per_s": 16.0 * of_none,
        "kv_hbm_bytes": int(kv * GB),
        "hbm_bytes": int((kv + 13) * GB),
        "bytes_per_token": 2e9,
        "of_none": of_none,
        "kv_saved": 1 - kv / 60,
        "fits": fits,
    }


def _topk() -> dict[str, Any]:
    at = {
        "none": _run(60, 1.0, 28),
        "ours": _run(30, 0.995, 12),
        "ours-int8": _run(40, 0.992, 17),
        "on-demand": _run(60, 0.90, 28),
    }
    longest = [
        {
            "length": 65_536,
            "none": _run(33, 1.0),
            "ours": _run(20, 0.995, 8),
            "on-demand": _run(33, 0.9, fits=False),
        },
        {
            "length": 123_000,
            "none": _run(60, 1.0, fits=False),
            "ours": _run(45, 0.995, 20),
            "on-demand": _run(60, 0.9, fits=False),
        },
    ]
    return {
        "kv_len": 123_000,
        "topk": 4,
        "block": 4096,
        "limit": 0.01,
        "capacity_bytes": 64 * GB,
        "presets": [
            {
                "hardware": "ascend-910c",
                "remote_gb_per_s": 33.6,
                "step": {
                    "compute_s": 0.06,
                    "layers": 32,
                    "block_bytes": BLOCK,
                    "blocks": 31,
                    "fixed": 3,
                    "topk": 4,
                    "other_hbm_bytes": 13 * GB,
                },
                "at_length": at,
                "longest": longest,
            }
        ],
    }


def _entry(
    length: int | None, peak: float, seconds: float, at: int = 0
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "length": length,
        "at": length or at,
        "fits": length is not None,
        "peak_hbm_bytes": int(peak * GB),
        "makespan_s": seconds,
    }
    entry["tokens_per_s"] = (length or at) / seconds
    return entry


def _tried(
    policy: str, length: int, peak: float, seconds: float, fits: bool
) -> dict[str, Any]:
    return {
        "policy": policy,
        "length": length,
        "fits": fits,
        "peak_hbm_bytes": int(peak * GB),
        "makespan_s": seconds,
    }


def _suite() -> dict[str, Any]:
    longest = {
        "name": "llama-65b-seed-inference",
        "presets": [
            {
                "hardware": "h200-pcie5",
                "hbm_capacity_bytes": 141 * GB,
                "longest": {
                    "none": _entry(2048, 136, 1.0),
                    "reactive-lru": _entry(131_072, 140, 200.0),
                    "runtime-prefetch": _entry(131_072, 140, 180.0),
                    "hyperoffload": _entry(131_072, 22.5, 175.0),
                },
                "tried": [
                    _tried("none", 1024, 133, 0.5, True),
                    _tried("none", 2048, 136, 1.0, True),
                    _tried("none", 131_072, 450, 174.0, False),
                ],
            }
        ],
    }
    prefill = {
        "name": "llama-65b-seed-prefill-cost",
        "presets": [
            {
                "hardware": "ascend-910c",
                "hbm_capacity_bytes": 64 * GB,
                "tried": [
                    _tried("none", 86_016, 300, 120.0, False),
                    _tried("reactive-lru", 86_016, 64, 130.0, True),
                    _tried("runtime-prefetch", 86_016, 64, 125.0, True),
                    _tried("hyperoffload", 86_016, 22, 121.0, True),
                ],
            }
        ],
    }
    decode = {
        "name": "llama-65b-seed-decode-cost",
        "presets": [
            {
                "hardware": "ascend-910c",
                "hbm_capacity_bytes": 64 * GB,
                "tried": [
                    _tried("none", 1024, 131.6, 0.12, False),
                    _tried("hyperoffload", 1024, 64, 2.5, True),
                ],
            }
        ],
    }
    return {"scenarios": [longest, prefill, decode]}


ACCURACY = f"""{ACCURACY_BEGIN}
| variant | positions read | a | b | c | d | e |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
| full attention | 2047 | 100.0% | 100.0% | 1.00000 / 1.00000 | 0.000 | 12.500 |
| top-4 | 324 | 97.8% | 94.1% | 0.99964 / 0.99411 | 1.666 | 12.625 |
{ACCURACY_END}
"""


def test_accuracy_is_read_from_its_table() -> None:
    rows = read_accuracy(f"text\n{ACCURACY}")
    assert set(rows) == {"full attention", "top-4"}
    assert rows["top-4"]["agree_text"] == pytest.approx(0.941)
    assert rows["top-4"]["ppl"] == pytest.approx(12.625)
    assert read_accuracy("no table") == {}


def test_the_rows_come_from_the_results() -> None:
    moe = {
        "rows": [
            {
                "model": "DeepSeek-V3",
                "ours": 36.0,
                "peer": "moe-infinity",
                "peer_tokens_per_s": 31.0,
                "all_resident": 37.0,
                "bandwidth_floor_s": 0.004,
            }
        ]
    }
    table = claims_table(_suite(), _topk(), moe, read_accuracy(ACCURACY))
    lines = table.splitlines()
    assert len(lines) == 2 + 2 + 1 + 1 + 1 + 1  # header; top-k; 65B; costs; MoE
    kv, longest, llama, prefill, decode, routed = lines[2:]
    assert "ours **30.0 GB (-50%)** at 99.5%" in kv
    assert "K = 4" in kv
    assert "94.1% top-1 agreement" in kv
    assert "+1.0%" in kv
    assert "on-demand LRU never within 1% (every block: 90.0%)" in kv
    assert "| reached |" in kv  # -50% is past the seeds' -26%
    # the blocks one call reads: (3 + 4) x 32 x 64 MiB
    assert f"{7 * 32 * BLOCK / GB:.1f} GB" in kv
    assert "`none` 65,536; ours **123,000** (1.88x)" in longest
    assert "| reached |" in longest
    assert "HBM only: 2,048" in llama
    assert "`runtime-prefetch`: 131,072" in llama
    assert "**ours: 131,072, 749 tokens/s, 95% saved**" in llama  # 1 - 22.5/450
    assert "+2.9% tokens/s against `runtime-prefetch`" in llama  # 180 s / 175 s
    assert "(753 tokens/s, unlimited HBM)" in llama  # `none` at 131,072: 174 s
    assert "`runtime-prefetch` 125.000 s" in prefill  # the faster runtime
    assert "(-3.2%" in prefill  # 121 s against 125 s
    assert "not reached" in prefill
    assert "+1983%" in decode  # 2.5 s against 0.12 s
    assert "67.60 GB above HBM" in decode
    assert "**36.00** tokens/s (-2.7% against all-resident)" in routed
    assert "within 5% of all-resident" in routed
    assert "(250 tokens/s)" in routed  # the bytes of a resident token at HBM speed


def test_missing_inputs_are_rows_not_run() -> None:
    table = claims_table(None, None, None, {})
    rows = table.splitlines()[2:]
    assert len(rows) == 6  # two top-k rows, LLaMA-65B, two costs, MoE
    assert all("not run" in row for row in rows)
    assert "routed-moe.json is absent" in rows[-1]


def test_routed_rows_from_a_suite_result() -> None:
    runs = [
        {"policy": p, "budget": b, "tokens_per_s": t}
        for p, b, t in (
            ("ours", 0.5, 20.0),
            ("lru", 0.5, 18.0),
            ("moe-infinity", 0.5, 19.0),
            ("all-resident", 0.5, 30.0),
            ("ours", 0.25, 10.0),
        )
    ]
    suite: dict[str, Any] = {
        "scenarios": [
            {
                "kind": "experts",
                "title": "Mixtral-8x7B decode, 4 layers",
                "presets": [
                    {
                        "routings": [
                            {"routing": "uniform", "runs": []},
                            {"routing": "zipf:1.0", "runs": runs},
                        ]
                    }
                ],
            }
        ]
    }
    (row,) = claims_table(None, None, suite, {}).splitlines()[-1:]
    assert "Mixtral-8x7B decode" in row
    assert "**20.00**" in row
    assert "`moe-infinity` 19.00" in row
    assert "not within 5%" in row


def test_the_document_is_written_between_its_markers() -> None:
    document = f"a\n{BEGIN}\nold\n{END}\nb\n"
    assert replace_between(document, "new\n") == f"a\n{BEGIN}\nnew\n{END}\nb\n"
    with pytest.raises(ValueError, match="needs one"):
        replace_between("no markers", "new\n")
    docs = Path(__file__).resolve().parents[3] / "docs" / "benchmarks.md"
    assert docs.read_text().count(BEGIN) == 1


def test_the_suite_and_the_export() -> None:
    names = [s.name for s in SUITES["seeds-inference"]]
    assert names == [s.name for s in SEEDS_INFERENCE]
    assert "llama-65b-seed-decode-cost" in names
    export = TopkExport(kv_len=4096)
    assert export.argv()[:5] == ["llama2-7b", "--mode", "decode", "--kv-len", "4096"]
    assert export.file_name().endswith("recent_4096.mlir")
    entries = [
        {"length": 1, "ours": {"fits": True}},
        {"length": 2, "ours": {"fits": False}},
    ]
    assert longest_fitting(entries, "ours") == 1


def test_a_routed_row_without_its_figures_is_an_error() -> None:
    bad = {"rows": [{"model": "Mixtral-8x7B", "ours": 20.0, "peer": "lru"}]}
    with pytest.raises(ResultsError, match=r"rows\[0\]: 'peer_tokens_per_s'"):
        claims_table(None, None, bad, {})


def test_the_script_reports_a_bad_results_file(tmp_path: Path) -> None:
    from seed_inference import main

    (tmp_path / "topk-decode.json").write_text("{not json")
    document = tmp_path / "benchmarks.md"
    document.write_text(f"{BEGIN}\n{END}\n")
    assert main(["--results", str(tmp_path), "-o", str(document)], log=print) == 1
    assert main(["--results", str(tmp_path / "none"), "-o", str(document)]) == 0


def test_the_topk_rows_replay_a_small_step() -> None:
    from hyperoffload.benchmark.seeds_inference import TopkDecode, rankings
    from hyperoffload.model.topk_step import TopkStep
    from hyperoffload.support.topk_blocks import topk_layout

    prompt, calls = 100, 6
    steps = [
        [list(reversed(topk_layout(16, 4, 16, prompt + i).candidates))] * 2
        for i in range(calls)
    ]
    recorded = {"block": 16, "sinks": 4, "recent": 16, "prompt": prompt, "topk": 2}
    recorded |= {"layers": 2, "steps": steps}
    step = TopkStep(
        compute_s=0.01,
        layers=2,
        block_bytes=1 << 20,
        blocks=12,
        fixed=2,
        topk=2,
        entry_bytes=1024,
        block=4096,
        other_hbm_bytes=10**9,
        sinks=4,
        recent=4096,
        kv_len=12 * 4096 - 100,
    )
    ranks = rankings(step, recorded)
    candidates = set(step.candidate_blocks())
    assert len(ranks) == calls
    assert all(set(layer) <= candidates for call in ranks for layer in call)
    scenario = TopkDecode(
        kv_len=step.kv_len,
        presets=("ascend-910c",),
        lengths=(8 * 4096,),
        capacity="1GB",
        tokens=8,
        warmup=2,
        topk=2,
    )
    at = scenario._at(step, recorded, "ascend-910c")  # pyright: ignore[reportPrivateUsage]
    assert set(at) == {"none", "ours", "ours-int8", "on-demand"}
    assert at["none"]["kv_saved"] == 0
    assert at["ours"]["kv_hbm_bytes"] <= at["none"]["kv_hbm_bytes"]
    longest = scenario._longest(step, recorded, "ascend-910c", print)  # pyright: ignore[reportPrivateUsage]
    assert [e["length"] for e in longest] == [8 * 4096, step.kv_len]
    for entry in longest:
        none = entry["none"]
        assert none["fits"] == (none["hbm_bytes"] <= 10**9)


def test_the_document_holds_what_the_results_give(tmp_path: Path) -> None:
    """docs/benchmarks.md's table is the one the committed results render."""
    from seed_inference import DOCUMENT, main

    copy = tmp_path / "benchmarks.md"
    copy.write_text(DOCUMENT.read_text())
    assert main(["-o", str(copy), "--write-docs"], log=lambda _: None) == 0
    assert copy.read_text() == DOCUMENT.read_text(), (
        "docs/benchmarks.md is stale: run .venv/bin/python bench/seed_inference.py "
        "--write-docs"
    )
