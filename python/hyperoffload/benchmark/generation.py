"""
The generation scenario: a decode step whose KV cache is in blocks, called
for `tokens` consecutive tokens (`hyperoffload.policies.generation`), and for
each policy the least HBM, and the KV memory it holds there, at which the
generation keeps `1 - limit` of the throughput of `none`.

```python
scenario = DecodeGeneration("window", "window decode", Export("tiny-llama", "decode",
                            kv_len=64, dtype="f32", attention="window", kv_block=16,
                            window=32, sinks=4), ("ascend-910c",), tokens=32,
                            limit=0.01, paper="-")
result = scenario.run(Context(work=Path("build/bench"), out=Path("out"), log=print))
```

The HBM of each runtime is found by bisection on the capacity (each probe a
whole generation); ours by bisection on the blocks it keeps resident (its
HBM is the peak of that plan). `flexgen` does not depend on the capacity:
it streams every block; its row is its one run.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from hyperoffload.analysis.kv_cache import decode_step
from hyperoffload.benchmark.plots import write_kv_throughput_plot
from hyperoffload.benchmark.scenarios import Context
from hyperoffload.benchmark.workloads import Export, load_workload, preset_workloads
from hyperoffload.model.hardware import Hardware, load_hardware
from hyperoffload.model.kv_step import StepBlocks
from hyperoffload.policies.generation import GenerationResult, simulate_generation
from hyperoffload.sim.plot import peak_per_token_image
from hyperoffload.support.outputs import write_output
from hyperoffload.support.quantize import Compression

PEERS = ("flexgen", "reactive-lru", "runtime-prefetch")
BISECTION_STEPS = 12
"""Capacity probes per policy."""


@dataclass(frozen=True)
class DecodeGeneration:
    name: str
    title: str
    export: Export
    presets: tuple[str, ...]
    tokens: int
    limit: float
    paper: str
    compress: str | None = None
    """`int8`: our plan (and FlexGen's schedule) move blocks compressed."""
    hbm_capacity: str | None = None
    warmup: int = 1
    """Calls run before the measured ones (the cache starts in the pool)."""

    def run(self, ctx: Context) -> dict[str, Any]:
        ctx.out.mkdir(parents=True, exist_ok=True)
        presets: list[dict[str, Any]] = []
        workload = None
        for hardware, workload in preset_workloads(
            self.export, self.presets, self.hbm_capacity, ctx.work, ctx.log
        ):
            step = decode_step(workload.module, hardware)
            presets.append(self._preset(step, hardware, ctx))
        assert workload is not None
        return {
            "name": self.name,
            "kind": "generation",
            "title": self.title,
            "paper": self.paper,
            "limit": self.limit,
            "tokens": self.tokens,
            "compress": self.compress,
            "command": workload.spec.command,
            "ops": workload.ops,
            "export_s": workload.export_s,
            "parse_s": workload.parse_s,
            "presets": presets,
        }

    def generate(
        self,
        step: StepBlocks,
        policy: str,
        hardware: Hardware,
        capacity: int | None,
        resident: int | None = None,
    ) -> GenerationResult:
        compress = None if self.compress is None else Compression(self.compress)
        return simulate_generation(
            step,
            self.tokens,
            policy,
            hardware,
            capacity,
            compress=compress,
            warmup=self.warmup,
            resident=resident,
        )

    def _preset(
        self, step: StepBlocks, hardware: Hardware, ctx: Context
    ) -> dict[str, Any]:
        none = self.generate(step, "none", hardware, None)
        ctx.log(
            f"{hardware.name}: none {none.tokens_per_s:.2f} tokens/s, "
            f"KV {none.kv_peak_bytes / 1e9:.2f} GB of {none.run.peak_hbm_bytes / 1e9:.2f} GB"
        )
        floor = none.tokens_per_s * (1 - self.limit)
        rows = [_row(none, none, True)]
        points: dict[str, list[tuple[int, float]]] = {
            "none": [(none.kv_peak_bytes, none.tokens_per_s)]
        }
        best: dict[str, GenerationResult] = {"none": none}
        for policy in ("plan", *PEERS):
            tried: list[GenerationResult] = []
            if policy == "flexgen":
                tried.append(self.generate(step, policy, hardware, None))
            elif policy == "plan":  # ours: the fewest resident blocks within
                roomy = self.generate(step, policy, hardware, None)
                low, high = -1, roomy.resident_blocks or 0
                tried.append(roomy)
                while high - low > 1:
                    middle = (low + high) // 2
                    result = self.generate(step, policy, hardware, None, middle)
                    tried.append(result)
                    if result.tokens_per_s >= floor:
                        high = middle
                    else:
                        low = middle
            else:
                low = none.run.peak_hbm_bytes - none.kv_peak_bytes
                high = none.run.peak_hbm_bytes
                for _ in range(BISECTION_STEPS):
                    if high - low <= max(1, none.run.peak_hbm_bytes // 1000):
                        break
                    middle = (low + high) // 2
                    result = self.generate(step, policy, hardware, middle)
                    tried.append(result)
                    if result.run.oom is None and result.tokens_per_s >= floor:
                        high = middle
                    else:
                        low = middle
            ok = [r for r in tried if r.run.oom is None and r.tokens_per_s >= floor]
            chosen = (
                min(ok, key=lambda r: r.run.peak_hbm_bytes)
                if ok
                else max(tried, key=lambda r: r.tokens_per_s)
            )
            best[policy] = chosen
            rows.append(_row(chosen, none, bool(ok)))
            points[policy] = [
                (r.kv_peak_bytes, r.tokens_per_s) for r in tried if r.run.oom is None
            ]
            ctx.log(
                f"{hardware.name}: {policy} KV {chosen.kv_peak_bytes / 1e9:.2f} GB at "
                f"{chosen.tokens_per_s:.2f} tokens/s ({len(tried)} runs)"
            )
        stem = f"{self.name}-{hardware.name}"
        plots = [f"{stem}-kv-throughput.png", f"{stem}-peak-per-token.png"]
        write_kv_throughput_plot(
            points, ctx.out / plots[0], f"{self.title} on {hardware.name}"
        )
        image = peak_per_token_image(
            [(p, r.peak_per_token) for p, r in best.items()],
            ctx.out / plots[1],
            f"{self.title} on {hardware.name}: each policy at its HBM",
            None,
        )
        write_output(ctx.out / plots[1], image)
        return {"hardware": hardware.name, "rows": rows, "plots": plots}


def _row(
    result: GenerationResult, none: GenerationResult, within: bool
) -> dict[str, Any]:
    return result.report() | {
        "within": within,
        "capacity_bytes": result.run.hbm_capacity_bytes,
        "throughput_vs_none": result.tokens_per_s / none.tokens_per_s,
        "kv_vs_none": result.kv_peak_bytes / none.kv_peak_bytes
        if none.kv_peak_bytes
        else None,
        "peak_per_token": None,
    }


@dataclass(frozen=True)
class LongestGeneration:
    """
    The longest cache (`kv_len`) at which each policy's generation fits a
    fixed HBM and keeps `1 - limit` of `none`'s throughput (`none` itself:
    within the HBM), found by bisection over `lengths` (each probe an
    export of the step at that length).
    """

    name: str
    title: str
    export: Export
    lengths: tuple[int, ...]
    presets: tuple[str, ...]
    hbm_capacity: str
    tokens: int
    limit: float
    paper: str
    compress: str | None = None
    warmup: int = 1

    def run(self, ctx: Context) -> dict[str, Any]:
        ctx.out.mkdir(parents=True, exist_ok=True)
        presets = [self._preset(name, ctx) for name in self.presets]
        return {
            "name": self.name,
            "kind": "longest-generation",
            "title": self.title,
            "paper": self.paper,
            "limit": self.limit,
            "tokens": self.tokens,
            "compress": self.compress,
            "command": replace(self.export, kv_len=0).command.replace(
                "--kv-len 0", "--kv-len N"
            ),
            "presets": presets,
        }

    def _preset(self, name: str, ctx: Context) -> dict[str, Any]:
        hardware = load_hardware(name, self.hbm_capacity)
        capacity = hardware.hbm_capacity
        generation = DecodeGeneration(
            self.name,
            self.title,
            self.export,
            (name,),
            self.tokens,
            self.limit,
            self.paper,
            self.compress,
            self.hbm_capacity,
            self.warmup,
        )
        probes: dict[int, dict[str, dict[str, Any]]] = {}

        def probe(length: int) -> dict[str, dict[str, Any]]:
            if length not in probes:
                spec = replace(self.export, kv_len=length).on(hardware)
                step = decode_step(
                    load_workload(spec, ctx.work, ctx.log).module, hardware
                )
                none = generation.generate(step, "none", hardware, None)
                floor = none.tokens_per_s * (1 - self.limit)
                rows: dict[str, dict[str, Any]] = {}
                for policy in ("none", "plan", *PEERS):
                    result = (
                        none
                        if policy == "none"
                        else generation.generate(step, policy, hardware, capacity)
                    )
                    fits = (
                        result.peak_hbm_bytes <= capacity
                        if policy == "none"
                        else result.run.oom is None and result.tokens_per_s >= floor
                    )
                    rows[policy] = _row(result, none, fits) | {"length": length}
                probes[length] = rows
                ctx.log(
                    f"{name} at {length:,}: "
                    + ", ".join(
                        f"{p} {'fits' if r['within'] else 'no'}"
                        for p, r in rows.items()
                    )
                )
            return probes[length]

        longest: dict[str, dict[str, Any] | None] = {}
        for policy in ("none", "plan", *PEERS):
            low, high = (
                -1,
                len(self.lengths),
            )  # lengths[low] fits, lengths[high] does not
            while high - low > 1:
                middle = (low + high) // 2
                if probe(self.lengths[middle])[policy]["within"]:
                    low = middle
                else:
                    high = middle
            longest[policy] = probe(self.lengths[low])[policy] if low >= 0 else None
        return {
            "hardware": name,
            "hbm_capacity_bytes": capacity,
            "longest": longest,
            "probes": [row for rows in probes.values() for row in rows.values()],
            "plots": [],
        }
