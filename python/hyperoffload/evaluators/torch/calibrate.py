"""
Microbenchmarks that make a hardware preset of the form
`hyperoffload.model.hardware.load_hardware` reads, every figure measured on
this device and marked so on its line:

| preset key | measured as |
| --- | --- |
| `peak_flops.<dtype>` | the best `torch.matmul` rate over a few GEMM shapes, per dtype (f32, bf16, f16 where they run) |
| `compute_efficiency` | the median rate over those shapes / the best, for the main dtype (bf16 on CUDA, f32 on the CPU) |
| `attention_efficiency` | a batched GEMM with a 128-wide reduction (attention scores) / the best rate of its dtype |
| `hbm_bandwidth` | a device-to-device copy: bytes read + written / time |
| `memory_efficiency` | an elementwise add (2 reads, 1 write, into a fresh tensor) of the largest size / the copy bandwidth |
| `op_overhead` | a one-element add, many in a row: time per op |
| `tiers.*` bandwidths | pinned host to device and back, each alone; on the CPU a copy of a host tensor into fresh memory (page faults included, as a prefetch pays them) |
| `tiers.*` `duplex_efficiency` | both directions at once (two streams; on the CPU two threads) / each alone |
| `tiers.*` `latency` | a 4-byte copy to the device |

```python
calibration = calibrate("cpu", quick=True)
write_output(Path("cpu.toml"), preset_toml(calibration))  # hyperoffload-sim --hardware cpu.toml
```

Each figure is the best of repeated runs after a warm-up; `quick` shrinks
sizes and repetitions about tenfold (for tests: a few seconds on a CPU).
The CPU has no HBM and no host link: its "device memory" and "host link"
are the same DRAM, measured by the same kind of copy.
"""

from __future__ import annotations

import datetime
import functools
import os
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from hyperoffload.evaluators.torch.devices import Device, cuda_memory, make_device

_MAX_REPS = 50

_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


@dataclass(frozen=True)
class Sizes:
    """What to measure, and the time each measurement may take."""

    gemm: list[tuple[int, int, int]]
    attention: tuple[int, int, int]
    """(batch x heads, sequence, head dim)."""
    copy_bytes: int
    elementwise_bytes: list[int]
    launch_ops: int
    budget_s: float
    """Per measurement, repetitions included."""


SIZES = {
    ("cpu", False): Sizes(
        gemm=[(256, 256, 256), (512, 512, 512), (1024, 1024, 1024)],
        attention=(8, 256, 128),
        copy_bytes=64 << 20,
        elementwise_bytes=[64 << 10, 1 << 20, 16 << 20, 64 << 20],
        launch_ops=2000,
        budget_s=0.6,
    ),
    ("cpu", True): Sizes(
        gemm=[(128, 128, 128), (256, 256, 256)],
        attention=(4, 128, 64),
        copy_bytes=4 << 20,
        elementwise_bytes=[64 << 10, 4 << 20],
        launch_ops=200,
        budget_s=0.05,
    ),
    ("cuda", False): Sizes(
        gemm=[(4096, 4096, 4096), (2048, 4096, 14336), (8192, 8192, 8192)],
        attention=(64, 2048, 128),
        copy_bytes=1 << 30,
        elementwise_bytes=[1 << 20, 16 << 20, 256 << 20, 1 << 30],
        launch_ops=5000,
        budget_s=1.0,
    ),
    ("cuda", True): Sizes(
        gemm=[(1024, 1024, 1024), (2048, 2048, 2048)],
        attention=(16, 1024, 128),
        copy_bytes=64 << 20,
        elementwise_bytes=[1 << 20, 64 << 20],
        launch_ops=500,
        budget_s=0.1,
    ),
}


@dataclass
class Calibration:
    """The measured figures of one device."""

    kind: str
    name: str
    date: str
    memory_bytes: int
    host_memory_bytes: int
    gemm: dict[str, list[tuple[tuple[int, int, int], float]]] = field(
        default_factory=dict[str, list[tuple[tuple[int, int, int], float]]]
    )
    """FLOP/s per dtype and (m, n, k)."""
    attention: tuple[str, tuple[int, int, int], float] = ("f32", (0, 0, 0), 0.0)
    copy_bandwidth: float = 0.0
    to_device: float = 0.0
    from_device: float = 0.0
    duplex: tuple[float, float] = (0.0, 0.0)
    """Each direction's rate while the other runs too."""
    latency_s: float = 0.0
    launch_s: float = 0.0
    elementwise: list[tuple[int, float]] = field(
        default_factory=list[tuple[int, float]]
    )
    """(bytes moved, seconds) of an elementwise add."""

    @property
    def main_dtype(self) -> str:
        preferred = "bf16" if self.kind == "cuda" else "f32"
        return preferred if preferred in self.gemm else next(iter(self.gemm))

    def peak(self, dtype: str) -> float:
        return max(rate for _, rate in self.gemm[dtype])

    @property
    def compute_efficiency(self) -> float:
        rates = [rate for _, rate in self.gemm[self.main_dtype]]
        return statistics.median(rates) / max(rates)

    @property
    def attention_efficiency(self) -> float:
        dtype, _, rate = self.attention
        return min(1.0, rate / self.peak(dtype))

    @property
    def memory_efficiency(self) -> float:
        nbytes, seconds = self.elementwise[-1]
        return min(1.0, nbytes / seconds / self.copy_bandwidth)

    @property
    def duplex_efficiency(self) -> float:
        alone = (self.to_device, self.from_device)
        fractions = [both / one for both, one in zip(self.duplex, alone, strict=True)]
        return max(0.01, min(1.0, sum(fractions) / 2))


class _Bench:
    """Timing on one device: CUDA events there, `perf_counter` on the CPU."""

    def __init__(self, device: Device, budget_s: float) -> None:
        self.device = device
        self.budget_s = budget_s
        self.cuda = device.kind == "cuda"

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize(self.device.torch_device)

    def seconds(self, fn: Callable[[], object]) -> float:
        if self.cuda:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3
        begin = time.perf_counter()
        fn()
        return time.perf_counter() - begin

    def best(self, fn: Callable[[], object]) -> float:
        """The fastest of repeated runs of `fn` after one (which sets how many fit the budget)."""
        first = self.seconds(fn)
        reps = max(3, min(_MAX_REPS, int(self.budget_s / max(first, 1e-9))))
        return min(self.seconds(fn) for _ in range(reps))

    def tensor(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        return torch.randn(shape, dtype=dtype, device=self.device.torch_device)


def _runs(bench: _Bench, dtype: torch.dtype) -> bool:
    """Whether the device multiplies matrices of `dtype` at all."""
    try:
        a = bench.tensor((8, 8), dtype)
        torch.matmul(a, a)
        bench.sync()
    except (RuntimeError, TypeError):
        return False
    return True


def _gemm(
    bench: _Bench, sizes: Sizes
) -> dict[str, list[tuple[tuple[int, int, int], float]]]:
    rates: dict[str, list[tuple[tuple[int, int, int], float]]] = {}
    for name, dtype in _DTYPES.items():
        if not _runs(bench, dtype):
            continue
        measured: list[tuple[tuple[int, int, int], float]] = []
        for m, n, k in sizes.gemm:
            flops = 2.0 * m * n * k
            if measured and flops / max(r for _, r in measured) > 2 * bench.budget_s:
                break  # too slow here (bf16 on a CPU without bf16 units)
            a, b = bench.tensor((m, k), dtype), bench.tensor((k, n), dtype)
            seconds = bench.best(functools.partial(torch.matmul, a, b))
            measured.append(((m, n, k), flops / seconds))
        rates[name] = measured
    return rates


def _attention(
    bench: _Bench, sizes: Sizes, dtype_name: str
) -> tuple[str, tuple[int, int, int], float]:
    batch, seq, head = sizes.attention
    dtype = _DTYPES[dtype_name]
    q, k = (
        bench.tensor((batch, seq, head), dtype),
        bench.tensor((batch, head, seq), dtype),
    )
    seconds = bench.best(lambda: torch.bmm(q, k))
    return dtype_name, sizes.attention, 2.0 * batch * seq * seq * head / seconds


def _host_copies(
    bench: _Bench, nbytes: int
) -> tuple[float, float, tuple[float, float], float]:
    """(to device, from device, (both at once, each direction), latency)."""
    count = nbytes // 4
    device = bench.device
    host_in = device.host(torch.randn(count))
    host_out = device.host_empty([count], torch.float32)
    on_device = bench.tensor((count,), torch.float32)
    on_device_2 = bench.tensor((count,), torch.float32)
    if bench.cuda:
        return _cuda_host_copies(bench, host_in, host_out, on_device, on_device_2)
    # into fresh memory, as each prefetch and store of the executor copies:
    # on the CPU that pays the first touch of every page
    to_device = nbytes / bench.best(lambda: torch.empty_like(host_in).copy_(host_in))
    from_device = nbytes / bench.best(
        lambda: torch.empty_like(on_device).copy_(on_device)
    )
    times: list[float] = [0.0, 0.0]

    def timed(index: int, dst: torch.Tensor, src: torch.Tensor) -> None:
        begin = time.perf_counter()
        torch.empty_like(dst).copy_(src)
        times[index] = time.perf_counter() - begin

    best = [float("inf"), float("inf")]
    for _ in range(3):
        threads = [
            threading.Thread(target=timed, args=(0, on_device_2, host_in)),
            threading.Thread(target=timed, args=(1, host_out, on_device)),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        best = [min(b, t) for b, t in zip(best, times, strict=True)]
    tiny_in, tiny = torch.ones(1), torch.empty(1)
    latency = bench.best(lambda: tiny.copy_(tiny_in))
    return to_device, from_device, (nbytes / best[0], nbytes / best[1]), latency


def _cuda_host_copies(
    bench: _Bench,
    host_in: torch.Tensor,
    host_out: torch.Tensor,
    on_device: torch.Tensor,
    on_device_2: torch.Tensor,
) -> tuple[float, float, tuple[float, float], float]:
    nbytes = host_in.numel() * host_in.element_size()
    up, down = torch.cuda.Stream(), torch.cuda.Stream()

    def on(stream: torch.cuda.Stream, dst: torch.Tensor, src: torch.Tensor) -> float:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record(stream)
        with torch.cuda.stream(stream):
            dst.copy_(src, non_blocking=True)
        end.record(stream)
        end.synchronize()
        return start.elapsed_time(end) / 1e3

    to_device = nbytes / min(on(up, on_device, host_in) for _ in range(5))
    from_device = nbytes / min(on(down, host_out, on_device) for _ in range(5))
    best = [float("inf"), float("inf")]
    for _ in range(5):
        torch.cuda.synchronize()
        gate = torch.cuda.Event()
        gate.record()
        events: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []
        for stream, dst, src in (
            (up, on_device_2, host_in),
            (down, host_out, on_device),
        ):
            stream.wait_event(gate)
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record(stream)
            with torch.cuda.stream(stream):
                dst.copy_(src, non_blocking=True)
            end.record(stream)
            events.append((start, end))
        torch.cuda.synchronize()
        best = [
            min(b, s.elapsed_time(e) / 1e3)
            for b, (s, e) in zip(best, events, strict=True)
        ]
    tiny_in = torch.ones(1).pin_memory()
    tiny = torch.empty(1, device=bench.device.torch_device)
    latency = min(on(up, tiny, tiny_in) for _ in range(20))
    return to_device, from_device, (nbytes / best[0], nbytes / best[1]), latency


def _host_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def calibrate(
    kind: str, quick: bool = False, threads: int | None = None
) -> Calibration:
    """Measure the device `kind` (`cpu` or `cuda`); `quick`: small sizes, few repetitions."""
    device = make_device(kind, threads)
    sizes = SIZES[(device.kind, quick)]
    bench = _Bench(device, sizes.budget_s)
    host = _host_memory()
    memory = cuda_memory(device.torch_device) if bench.cuda else host
    saved_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        calibration = Calibration(
            kind=device.kind,
            name=device.name,
            date=datetime.date.today().isoformat(),
            memory_bytes=memory,
            host_memory_bytes=host,
        )
        calibration.gemm = _gemm(bench, sizes)
        calibration.attention = _attention(bench, sizes, calibration.main_dtype)
        count = sizes.copy_bytes // 4
        src, dst = (
            bench.tensor((count,), torch.float32),
            bench.tensor((count,), torch.float32),
        )
        calibration.copy_bandwidth = (
            2 * sizes.copy_bytes / bench.best(lambda: dst.copy_(src))
        )
        to_device, from_device, duplex, latency = _host_copies(bench, sizes.copy_bytes)
        calibration.to_device, calibration.from_device = to_device, from_device
        calibration.duplex, calibration.latency_s = duplex, latency
        one = bench.tensor((1,), torch.float32)

        def launches() -> None:
            for _ in range(sizes.launch_ops):
                one.add_(1.0)

        calibration.launch_s = bench.best(launches) / sizes.launch_ops
        for nbytes in sizes.elementwise_bytes:
            n = nbytes // 4
            a, b = (bench.tensor((n,), torch.float32) for _ in range(2))
            # a fresh result, as every op of the executor makes
            seconds = bench.best(functools.partial(torch.add, a, b))
            calibration.elementwise.append((3 * n * 4, seconds))
    finally:
        torch.set_num_threads(saved_threads)
    return calibration


def _rate(value: float) -> str:
    return f'"{value / 1e9:.4g}GB/s"'


def _size(value: int) -> str:
    return f'"{value / 1e9:.4g}GB"'


def _duration(value: float) -> str:
    return f'"{value * 1e6:.4g}us"'


def _shape(shape: tuple[int, ...]) -> str:
    return "x".join(str(s) for s in shape)


def preset_toml(c: Calibration) -> str:
    """The calibration as a hardware preset: every figure with its "measured on" comment."""
    on = f"measured on {c.name}, {c.date}"
    main = c.main_dtype
    shapes = ", ".join(f"{_shape(s)} {r / 1e9:.4g}" for s, r in c.gemm[main])
    to_copy, from_copy = (
        ("pinned host memory to the device", "the device to pinned host memory")
        if c.kind == "cuda"
        else (
            "a host tensor copied into fresh memory, first touch included (no host link on a CPU)",
            "the same, the other way",
        )
    )
    lines: list[tuple[str, str]] = [
        (
            "",
            f"# Hardware preset written by hyperoffload-calibrate --device {c.kind}, {on}.",
        ),
        (
            "",
            "# Every figure below is a measurement on that device (see docs/execution.md).",
        ),
        (
            "",
            "# Elementwise add, bytes moved -> time: "
            + ", ".join(f"{b / 1e6:.3g} MB {s * 1e6:.4g} us" for b, s in c.elementwise),
        ),
        (
            f'description = "{c.name} ({c.kind}), measured by hyperoffload-calibrate on {c.date}"',
            "",
        ),
        ("", ""),
        ("[device]", ""),
        (
            f"hbm_capacity = {_size(c.memory_bytes)}",
            f"{on}: the memory the device reports",
        ),
        (
            f"hbm_bandwidth = {_rate(c.copy_bandwidth)}",
            f"{on}: device-to-device copy, bytes read + written / time",
        ),
        (
            f"compute_efficiency = {c.compute_efficiency:.3f}",
            f"{on}: median / best {main} GEMM rate (GFLOP/s: {shapes})",
        ),
        (
            f"attention_efficiency = {c.attention_efficiency:.3f}",
            f"{on}: {c.attention[0]} batched GEMM {_shape(c.attention[1])} (reduction {c.attention[1][2]}) "
            f"at {c.attention[2] / 1e9:.4g} GFLOP/s / the best {c.attention[0]} GEMM",
        ),
        (
            f"memory_efficiency = {c.memory_efficiency:.3f}",
            f"{on}: elementwise add of {c.elementwise[-1][0] / 1e6:.4g} MB moved / the copy bandwidth",
        ),
        (
            f"op_overhead = {_duration(c.launch_s)}",
            f"{on}: a one-element add, time per op over many",
        ),
        ("", ""),
        ("[device.peak_flops]", ""),
    ]
    for dtype, rates in c.gemm.items():
        shape, _ = max(rates, key=lambda r: r[1])
        lines.append(
            (
                f"{dtype} = {c.peak(dtype):.4g}",
                f"{on}: best torch.matmul, {_shape(shape)}",
            )
        )
    for tier in ("remote", "host"):
        lines += [
            ("", ""),
            (f"[tiers.{tier}]", ""),
            (f"capacity = {_size(c.host_memory_bytes)}", f"{on}: host memory"),
            (
                f"bandwidth_to_device = {_rate(c.to_device)}",
                f"{on}: {to_copy}",
            ),
            (
                f"bandwidth_from_device = {_rate(c.from_device)}",
                f"{on}: {from_copy}",
            ),
            (f"latency = {_duration(c.latency_s)}", f"{on}: a 4-byte copy"),
            (
                f"duplex_efficiency = {c.duplex_efficiency:.3f}",
                f"{on}: each direction with both running / alone "
                f"({c.duplex[0] / 1e9:.4g}, {c.duplex[1] / 1e9:.4g} GB/s)",
            ),
        ]
    width = max(len(code) for code, comment in lines if code and comment)
    text = [
        code.ljust(width) + f"  # {comment}" if code and comment else code or comment
        for code, comment in lines
    ]
    return "\n".join(text) + "\n"
