"""
The scenarios of each suite. `default` holds the seeds' scenarios at real
sizes (DESIGN.md §1); `quick` the same kinds on tiny models, for tests.
"""

from __future__ import annotations

from hyperoffload.benchmark.scenarios import LongestSequence, PeakAtSlowdown
from hyperoffload.benchmark.workloads import Export

Scenario = PeakAtSlowdown | LongestSequence

_KV_LENGTHS = tuple(range(64 * 1024, 128 * 1024 + 1, 4 * 1024))

SUITES: dict[str, tuple[Scenario, ...]] = {
    # in the order workers take them: the longest first
    "default": (
        PeakAtSlowdown(
            "llama3-8b-train",
            "LLaMA-3-8B training step (32 layers, seq 2048, bf16)",
            Export("llama3-8b", "train", layers=32, seq=2048),
            ("ascend-910c",),
            limit=0.02,
            paper="peak -42% at +1.3% iteration time",
            # fetching the weights (15 GB) over the 33.6 GB/s link takes as
            # long as the whole step computes: each policy may keep them in HBM
            place_arguments=True,
        ),
        LongestSequence(
            "llama-65b-inference",
            "LLaMA-65B prefill (80 layers, fp16), longest prompt in HBM",
            Export("llama-65b", "prefill", seq=1024, dtype="f16"),
            "seq",
            (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072),
            4096,
            ("ascend-910c", "h200-pcie5"),
            paper="longest sequence 1024 (HBM only) / 4096 (runtime offload) / 8192 (HyperOffload)",
        ),
        PeakAtSlowdown(
            "deepseek-v3-moe-layer",
            "DeepSeek-V3 prefill, one MoE layer (256 experts top-8 + 1 shared, seq 2048, bf16)",
            Export("deepseek-v3", "prefill", layers=1, seq=2048, dense_layers=0),
            ("ascend-910c",),
            limit=0.02,
            paper="(no published figure)",
            place_arguments=True,
        ),
        PeakAtSlowdown(
            "long-context-decode",
            "Decode at a 123K-token KV cache (LLaMA-2-7B shape: 32 layers, 32 heads of 128, fp16), HBM not limiting",
            Export("llama2-7b", "decode", kv_len=123_000, dtype="f16"),
            ("ascend-910c", "gh200-c2c"),
            limit=0.01,
            paper="61.2 GB -> 45.0 GB at 99% throughput",
            place_arguments=True,
            hbm_capacity="1TB",
        ),
        LongestSequence(
            "long-context-max",
            "Decode (LLaMA-2-7B shape, fp16), longest KV cache within 1% of none's throughput",
            Export("llama2-7b", "decode", kv_len=65536, dtype="f16"),
            "kv_len",
            _KV_LENGTHS,
            96 * 1024,
            ("ascend-910c",),
            paper="longest context at fixed HBM 71K -> 123K tokens",
            limit=0.01,
            place_arguments=True,
        ),
        PeakAtSlowdown(
            "gpt3-175b-layer-train",
            "GPT-3 175B training step, one layer (seq 2048, bf16)",
            Export("gpt3-175b", "train", layers=1, seq=2048),
            ("ascend-910c",),
            limit=0.02,
            paper="(no published figure)",
            # one layer computes too little to hide fetching its weights
            place_arguments=True,
        ),
    ),
    "quick": (
        PeakAtSlowdown(
            "tiny-llama-train",
            "tiny LLaMA training step",
            Export("tiny-llama", "train", seq=16, dtype="f32"),
            ("ascend-910c",),
            limit=0.02,
            paper="-",
        ),
        LongestSequence(
            "tiny-llama-prefill",
            "tiny LLaMA prefill, longest prompt in 400 KB",
            Export("tiny-llama", "prefill", seq=16, dtype="f32"),
            "seq",
            (16, 32, 64, 128),
            32,
            ("ascend-910c",),
            paper="-",
            hbm_capacity="400KB",
        ),
        PeakAtSlowdown(
            "tiny-llama-decode",
            "tiny LLaMA decode step (KV cache of 64)",
            Export("tiny-llama", "decode", kv_len=64, dtype="f32"),
            ("ascend-910c",),
            limit=0.01,
            paper="-",
            place_arguments=True,
        ),
    ),
}
