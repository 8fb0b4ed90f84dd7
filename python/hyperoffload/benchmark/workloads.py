"""
Benchmark workloads: zoo programs exported by `hyperoffload-gen` (in a child
process: torch-mlir and the MLIR bindings cannot share one), cached on disk,
parsed once and measured against the `none` reference on each preset.

```python
spec = Export("llama3-8b", "train", layers=32, seq=2048)
workload = load_workload(spec, Path("build/bench"), log)
baseline = workload.baseline(load_hardware("ascend-910c"))
```
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.program import Program
from hyperoffload.ir.context import make_context
from hyperoffload.ir.engines import parse_with_engine
from hyperoffload.model.hardware import Hardware, load_hardware
from hyperoffload.model.schedule import Schedule
from hyperoffload.sim.simulator import SimResult
from hyperoffload.support.tiers import Tier

Log = Callable[[str], None]

PACKAGE = Path(__file__).resolve().parents[1]
"""`hyperoffload`'s sources: those of the exporter are hashed into its stamp."""


class Exportable(Protocol):
    """What `hyperoffload-gen` is asked for, and the file it goes to."""

    def argv(self) -> list[str]: ...

    def file_name(self) -> str: ...


class BenchError(ValueError):
    """A workload that could not be exported or read."""


@dataclass(frozen=True)
class Export:
    """One `hyperoffload-gen` invocation."""

    model: str
    mode: str
    layers: int | None = None
    seq: int | None = None
    kv_len: int | None = None
    dtype: str = "bf16"
    dense_layers: int | None = None
    tier: str = Tier.REMOTE
    """Where parameters and KV cache live (a tier the hardware offers)."""
    attention: str = "full"
    """`full`, `blocked` or `window` (`hyperoffload-gen --attention`)."""
    kv_block: int | None = None
    window: int | None = None
    sinks: int | None = None
    experts: str = "dense"
    """`dense` or `routed` (`hyperoffload-gen --experts`)."""
    batch: int | None = None
    optimizer: str = "none"
    """`none`, `sgd` or `adamw` (`hyperoffload-gen --optimizer`, training)."""
    loss: str = "full"
    """`full` or `chunked` (`hyperoffload-gen --loss`, training)."""
    grad_accum: int | None = None
    """Micro-batches per training step (`hyperoffload-gen --grad-accum`)."""
    shard: int | None = None
    """One device's step of an N-way data-parallel group (`hyperoffload-gen --shard`)."""
    optimizer_in_backward: bool = False
    """Each update as soon as its gradient is complete (`hyperoffload-gen
    --optimizer-in-backward`, training)."""
    expert_shard: int | None = None
    """One device's experts of an N-way expert-parallel group
    (`hyperoffload-gen --expert-shard`, moe family)."""

    def argv(self) -> list[str]:
        args = [self.model, "--mode", self.mode, "--dtype", self.dtype]
        if self.tier != Tier.REMOTE:
            args += ["--tier", self.tier]
        if self.attention != "full":
            args += ["--attention", self.attention]
        if self.experts != "dense":
            args += ["--experts", self.experts]
        if self.optimizer != "none":
            args += ["--optimizer", self.optimizer]
        if self.loss != "full":
            args += ["--loss", self.loss]
        if self.optimizer_in_backward:
            args.append("--optimizer-in-backward")
        for flag, value in (
            ("--layers", self.layers),
            ("--seq", self.seq),
            ("--batch", self.batch),
            ("--grad-accum", self.grad_accum),
            ("--shard", self.shard),
            ("--expert-shard", self.expert_shard),
            ("--kv-len", self.kv_len),
            ("--dense-layers", self.dense_layers),
            ("--kv-block", self.kv_block),
            ("--window", self.window),
            ("--sinks", self.sinks),
        ):
            if value is not None:
                args += [flag, str(value)]
        return args

    @property
    def command(self) -> str:
        return "hyperoffload-gen " + " ".join(self.argv())

    @property
    def tokens(self) -> int:
        """Tokens one call processes: the prompt (or one decoded token) per sequence."""
        per_sequence = 1 if self.mode == "decode" else self.seq or 16
        return per_sequence * (self.batch or 1) * (self.grad_accum or 1)

    def on(self, hardware: Hardware) -> Export:
        """This export with its arguments in a tier `hardware` has."""
        return replace(self, tier=hardware.offload_tier)

    def file_name(self) -> str:
        return "_".join(a.lstrip("-") for a in self.argv()) + ".mlir"


@dataclass
class Baseline:
    """A workload on one preset: its program and the `none` run."""

    program: Program
    none: SimResult

    @property
    def hardware(self) -> Hardware:
        return self.program.hardware

    @property
    def stripped(self) -> Schedule:
        """The unplanned schedule (the reference program's)."""
        return self.program.reference


@dataclass
class Workload:
    spec: Export
    ctx: Context
    module: ModuleOp
    ops: int
    export_s: float
    """Seconds `hyperoffload-gen` took (0 when the export was cached)."""
    parse_s: float
    baselines: dict[str, Baseline] = field(default_factory=dict[str, Baseline])

    def baseline(self, hardware: Hardware) -> Baseline:
        if hardware.name not in self.baselines:
            program = Program(self.module, hardware)
            self.baselines[hardware.name] = Baseline(program, program.simulate("none"))
        return self.baselines[hardware.name]


def exporter_stamp() -> str:
    """
    A digest of the exporter's sources (`hyperoffload-gen` and the frontend
    it drives): an export cached under another stamp was made by other code
    (e.g. before training steps tagged their updates) and is made again.
    """
    sources = sorted((PACKAGE / "frontend").rglob("*.py"))
    sources += sorted((PACKAGE / "tools").glob("hyperoffload_gen*.py"))
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.relative_to(PACKAGE).as_posix().encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


def stamp_path(path: Path) -> Path:
    """Where the stamp of the exporter that made `path` is kept."""
    return path.with_name(path.name + ".exporter")


def export_program(spec: Exportable, directory: Path, log: Log) -> tuple[Path, float]:
    """
    The exported file (reused when the exporter that made it is this one,
    `exporter_stamp`) and the seconds the export took.
    """
    path = directory / spec.file_name()
    stamp, stamped = exporter_stamp(), stamp_path(path)
    if path.exists():
        if stamped.exists() and stamped.read_text() == stamp:
            log(f"reusing {path}")
            return path, 0.0
        log(f"exporting again: {path} was made by other exporter sources")
    directory.mkdir(parents=True, exist_ok=True)
    command = " ".join(["hyperoffload-gen", *spec.argv()])
    log(f"exporting: {command}")
    partial = path.with_suffix(f".{os.getpid()}.partial")
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hyperoffload.tools.hyperoffload_gen",
            *spec.argv(),
            "-o",
            str(partial),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        reason = done.stderr.strip().splitlines()[-1:] or ["no output"]
        raise BenchError(f"{command} failed: {reason[0]}")
    partial.replace(path)
    stamped.write_text(stamp)
    return path, seconds


def load_workload(spec: Export, directory: Path, log: Log) -> Workload:
    """Export (or reuse) and parse one program."""
    path, export_s = export_program(spec, directory, log)
    ctx = make_context()
    start = time.perf_counter()
    module = parse_with_engine(ctx, path.read_text(), str(path))
    parse_s = time.perf_counter() - start
    ops = sum(1 for _ in main_function(module).body.block.ops)
    log(f"{spec.file_name()}: {ops} ops, parsed in {parse_s:.1f} s")
    return Workload(spec, ctx, module, ops, export_s, parse_s)


def preset_workloads(
    export: Export,
    presets: Sequence[str],
    hbm_capacity: str | None,
    directory: Path,
    log: Log,
) -> Iterator[tuple[Hardware, Workload]]:
    """
    Each preset's hardware and `export` on it, loaded once for presets in a
    row that put its arguments in the same tier (one program held at a time).
    """
    workload: Workload | None = None
    for name in presets:
        hardware = load_hardware(name, hbm_capacity)
        spec = export.on(hardware)
        if workload is None or workload.spec != spec:
            workload = load_workload(spec, directory, log)
        yield hardware, workload
