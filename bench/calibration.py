"""
Calibration: the interpreter's time for real workloads against published
measurements, written to `docs/calibration.md`.

    .venv/bin/python bench/calibration.py            # full-depth exports
    .venv/bin/python bench/calibration.py --quick    # 2- and 3-layer exports, per-layer scaling

Each row exports a program with `hyperoffload-gen` (cached under
`build/calibration`; a GEMM is hand-written linalg), prices it on a hardware
preset with the project's own cost model and interpreter (policy `none`:
everything in HBM) and compares the modelled time of one step on one device
with the published figure converted to the same step. Beside it: a physical
bound from model dimensions alone (FLOPs / datasheet peak, bytes / datasheet
HBM bandwidth), computed independently of the exported program.

Deterministic: the same exports and cost model give the same document.
Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from hyperoffload.benchmark.workloads import export_program
from hyperoffload.frontend.configs import ModelConfig, get_config
from hyperoffload.ir.context import make_context
from hyperoffload.model.hardware import Hardware, load_hardware
from hyperoffload.model.schedule import Compute
from hyperoffload.support.outputs import Outputs
from hyperoffload.support.tiers import Tier

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "build" / "calibration"
OUTPUT = ROOT / "docs" / "calibration.md"
TOLERANCE = 0.25
"""Target: every row's modelled/published within 1 +- TOLERANCE."""

CACHED_MODULES = 3
Log = Callable[[str], None]


def _log(message: str) -> None:
    print(f"calibration: {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ programs


@dataclass(frozen=True)
class Export:
    """One `hyperoffload-gen` program of the zoo."""

    model: str
    mode: str
    seq: int = 16
    batch: int = 1
    kv_len: int = 16
    dtype: str = "bf16"
    layers: int | None = None
    """Decoder layers exported (None: the model's)."""
    optimizer: str = "none"
    """`hyperoffload-gen --optimizer` of a training step."""
    loss: str = "full"
    """`hyperoffload-gen --loss` of a training step."""

    @property
    def config(self) -> ModelConfig:
        return get_config(self.model)

    @property
    def depth(self) -> int:
        return self.layers or self.config.n_layers

    def argv(self) -> list[str]:
        args = [self.model, "--mode", self.mode, "--dtype", self.dtype]
        args += ["--batch", str(self.batch), "--layers", str(self.depth)]
        if self.mode == "decode":
            args += ["--kv-len", str(self.kv_len)]
        else:
            args += ["--seq", str(self.seq)]
        if self.optimizer != "none":
            args += ["--optimizer", self.optimizer]
        if self.loss != "full":
            args += ["--loss", self.loss]
        return args

    def file_name(self) -> str:
        return "_".join(a.lstrip("-") for a in self.argv()) + ".mlir"

    def describe(self) -> str:
        shape = f"kv_len {self.kv_len}" if self.mode == "decode" else f"seq {self.seq}"
        extra = "".join(
            f", {what} {value}"
            for what, value, default in (
                ("optimizer", self.optimizer, "none"),
                ("loss", self.loss, "full"),
            )
            if value != default
        )
        return f"{self.model} {self.mode}, {self.depth} layers, batch {self.batch}, {shape}, {self.dtype}{extra}"


@dataclass(frozen=True)
class Gemm:
    """One `C = A @ B` with A (m x k), B (k x n), as `torch.matmul` runs it."""

    m: int
    n: int
    k: int
    dtype: str = "bf16"

    def file_name(self) -> str:
        return f"gemm_{self.m}x{self.n}x{self.k}_{self.dtype}.mlir"

    def describe(self) -> str:
        return f"hand-written linalg.matmul {self.m}x{self.n}x{self.k}, {self.dtype}"

    def text(self) -> str:
        a = f"tensor<{self.m}x{self.k}x{self.dtype}>"
        b = f"tensor<{self.k}x{self.n}x{self.dtype}>"
        c = f"tensor<{self.m}x{self.n}x{self.dtype}>"
        return (
            f"// C = A @ B, {self.m}x{self.n}x{self.k} {self.dtype} "
            "(written by bench/calibration.py)\n"
            f"func.func @gemm(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %zero = arith.constant 0.0 : {self.dtype}\n"
            f"  %empty = tensor.empty() : {c}\n"
            f"  %init = linalg.fill ins(%zero : {self.dtype}) outs(%empty : {c}) -> {c}\n"
            f"  %c = linalg.matmul ins(%a, %b : {a}, {b}) outs(%init : {c}) -> {c}\n"
            f"  return %c : {c}\n"
            "}\n"
        )


Program = Export | Gemm

# ------------------------------------------------ independent work counts

BYTES = {"bf16": 2, "f16": 2, "f32": 4}


@dataclass(frozen=True)
class Work:
    """Work a program must do, from dimensions alone."""

    flops: float
    bytes: float


def layer_linear_params(cfg: ModelConfig) -> int:
    """Weights of one decoder layer's matmuls (attention projections, SwiGLU FFN)."""
    if cfg.family != "llama":
        raise ValueError(f"work counts cover the llama family, not {cfg.family}")
    q_dim = cfg.n_heads * cfg.head_dim
    kv_dim = cfg.n_kv_heads * cfg.head_dim
    attention = cfg.hidden * q_dim + 2 * cfg.hidden * kv_dim + q_dim * cfg.hidden
    return attention + 3 * cfg.hidden * cfg.ffn_hidden


def parameter_count(cfg: ModelConfig) -> int:
    """All parameters: layers (matmuls, two norms), final norm, embedding, LM head."""
    layer = layer_linear_params(cfg) + 2 * cfg.hidden
    return cfg.n_layers * layer + cfg.hidden + 2 * cfg.vocab_size * cfg.hidden


def attention_flops(cfg: ModelConfig, batch: int, new: int, past: int) -> float:
    """
    Causal attention (QK^T and PV) of `new` tokens after `past` cached ones:
    query i sees past + i keys, 4 FLOPs per head dimension per key.
    """
    keys = new * past + new * (new + 1) // 2
    return 4.0 * cfg.n_layers * batch * cfg.n_heads * cfg.head_dim * keys


def export_work(spec: Export) -> Work:
    """
    The least work of one step. FLOPs: 2 per multiply-accumulate of every
    matmul plus causal attention; a training step is 3x the forward pass
    (no recomputation); a prefill needs the LM head for the last position
    only. Bytes: every weight read once (the embedding: only the rows
    looked up), gradients written once (training), the KV cache read
    (decode) or written (prefill); activations are not counted.
    """
    cfg = spec.config
    elem = BYTES[spec.dtype]
    new = 1 if spec.mode == "decode" else spec.seq
    past = spec.kv_len if spec.mode == "decode" else 0
    tokens = spec.batch * new
    head_tokens = spec.batch if spec.mode == "prefill" else tokens
    linear = cfg.n_layers * layer_linear_params(cfg)
    forward = 2.0 * (tokens * linear + head_tokens * cfg.hidden * cfg.vocab_size)
    forward += attention_flops(cfg, spec.batch, new, past)
    weights = parameter_count(cfg) - cfg.vocab_size * cfg.hidden
    weight_bytes = elem * (weights + tokens * cfg.hidden)
    kv_row = 2 * cfg.n_layers * cfg.n_kv_heads * cfg.head_dim * elem
    if spec.mode == "train":
        step = elem * parameter_count(cfg)
        if spec.optimizer == "adamw":  # float32 master, moments: read and written
            step += (3 * 4 * 2 + elem) * parameter_count(cfg)
        return Work(3 * forward, weight_bytes + step)
    if spec.mode == "decode":
        return Work(forward, weight_bytes + kv_row * spec.batch * (past + 1))
    return Work(forward, weight_bytes + kv_row * tokens)


def gemm_work(gemm: Gemm) -> Work:
    """2 FLOPs per multiply-accumulate; A and B read, C written once."""
    elem = BYTES[gemm.dtype]
    return Work(
        2.0 * gemm.m * gemm.n * gemm.k,
        float(elem * (gemm.m * gemm.k + gemm.k * gemm.n + gemm.m * gemm.n)),
    )


def program_work(program: Program) -> Work:
    return gemm_work(program) if isinstance(program, Gemm) else export_work(program)


def bound_s(work: Work, hardware: Hardware, shards: int = 1) -> tuple[float, float]:
    """(FLOPs / datasheet bf16 peak, bytes / datasheet HBM bandwidth) of one shard."""
    return (
        work.flops / shards / hardware.peak("bf16"),
        work.bytes / shards / hardware.hbm_bandwidth,
    )


# ------------------------------------------------------------------- rows


@dataclass(frozen=True)
class Published:
    """A figure as published and what it converts from."""

    value: float
    unit: str
    """`tokens/s` (per device), `ms` (one step) or `TFLOPS`."""
    source: str
    verified: bool
    per_step: float = 1.0
    """Tokens one step processes per device (`tokens/s`), or its FLOPs (`TFLOPS`)."""

    def step_s(self) -> float:
        """Seconds of one step on one device."""
        if self.unit == "tokens/s":
            return self.per_step / self.value
        if self.unit == "ms":
            return self.value / 1e3
        if self.unit == "TFLOPS":
            return self.per_step / (self.value * 1e12)
        raise ValueError(f"unknown unit {self.unit!r}")

    def text(self) -> str:
        value = f"{self.value:,.2f}".rstrip("0").rstrip(".")
        return f"{value} {self.unit}"


@dataclass(frozen=True)
class Row:
    key: str
    workload: str
    """Workload and configuration, as measured."""
    preset: str
    program: Program
    published: Published
    leaves_out: str
    """What the model leaves out, and which way each omission pushes the ratio."""
    shards: int = 1
    """Tensor-parallel degree: the modelled device runs 1/shards of the program."""
    mapping: str = ""
    sets: str = ""
    """What this row sets rather than tests (a figure taken from it, or a
    configuration chosen to match it): such a row is not counted."""
    precision: str = ""
    """The measured run's precision where the model prices another."""


TRAIN_8B = Export("llama3-8b", "train", seq=8192, batch=2)
TRAIN_8B_SEEDS = replace(TRAIN_8B, optimizer="adamw", loss="chunked")
"""The seeds' LLaMA-8B iteration as `hyperoffload-bench --suite seeds` runs it."""
DECODE_8B = Export("llama3-8b", "decode", kv_len=128)
DECODE_8B_LONG = Export("llama3-8b", "decode", kv_len=122 * 1024, batch=4)
PREFILL_7B = Export("llama2-7b", "prefill", seq=2048)
PREFILL_70B = Export("llama2-70b", "prefill", seq=2048)
GEMM = Gemm(2048, 2048, 13312)

TORCHTITAN = "gh:pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md Table 1"
TRTLLM = "gh:NVIDIA/TensorRT-LLM docs/source/performance.md (v0.5 low-latency table)"
TORCHAO = "gh:pytorch/ao torchao/quantization/README.md"

ROWS: tuple[Row, ...] = (
    Row(
        "gemm-h100",
        "bf16 GEMM 2048x2048x13312, `torch.matmul` (MAMF best shape)",
        "h100-pcie5",
        GEMM,
        Published(
            794.5,
            "TFLOPS",
            "gh:stas00/ml-engineering compute/accelerator/README.md",
            True,
            gemm_work(GEMM).flops,
        ),
        "nothing; this measurement is where compute_efficiency comes from, so "
        "the ratio checks the pricing of one GEMM (plus its launch), not the model",
        sets="compute_efficiency of `h100-pcie5`",
    ),
    Row(
        "train-8b-h100",
        "Llama-3.1-8B training step, FSDP on 8xH100, seq 8192, local batch 2, "
        "selective activation checkpointing, bf16",
        "h100-pcie5",
        TRAIN_8B,
        Published(5762, "tokens/s", TORCHTITAN, True, 2 * 8192),
        "FSDP all-gather/reduce-scatter (mostly overlapped), the AdamW step, "
        "recomputation by selective AC (model faster); the measured H100 is a "
        "96 GB HBM2e part (2.4 TB/s) at 500 W, below the SXM datasheet figures "
        "the preset uses (model faster); the model charges attention over the full "
        "masked square, a causal kernel skips half (model slower)",
    ),
    Row(
        "train-8b-h100-compile",
        "as above, FSDP + torch.compile",
        "h100-pcie5",
        TRAIN_8B,
        Published(6667, "tokens/s", TORCHTITAN, True, 2 * 8192),
        "as above; torch.compile fuses elementwise chains, which is what the "
        "cost model prices",
    ),
    Row(
        "train-8b-910b",
        "LLaMA3-8B training step, seq 8K, 1x8 Atlas 900 A2 (Ascend 910B), bf16, "
        "MindSpeed-LLM (Megatron)",
        "ascend-910b",
        TRAIN_8B,
        Published(
            2483,
            "tokens/s",
            "gh:Ascend/MindSpeed-LLM README.md (model table; later versions list 2,400)",
            True,
            2 * 8192,
        ),
        "tensor-parallel communication (the README's pre-training example "
        "loads TP 8 weights), the optimizer step, any recomputation (model "
        "faster); "
        "the README does not give the micro-batch (batch 2 modelled; per-token "
        "cost barely depends on it); every 910B efficiency and the peak are "
        "assumptions",
        mapping="per-device throughput with perfect scaling: tokens of one "
        "modelled single-device step / its modelled time",
    ),
    Row(
        "decode-8b-h100",
        "Llama-3.1-8B decode, batch 1, bf16, torch.compile "
        "(torchao/_models/llama/generate.py)",
        "h100-pcie5",
        DECODE_8B,
        Published(126.90, "tokens/s", TORCHAO + " (H100 table)", True, 1),
        "the sampling step (model faster); the published run moves 1,905 GB/s, "
        "57% of the datasheet bandwidth, well below STREAM's 89% (batch-1 "
        "GEMVs: model faster); if the run used CUDA graphs, launches cost "
        "less than op_overhead (model slower)",
        mapping="kv_len 128 stands for a short prompt and the tokens generated "
        "after it (the KV cache is 0.1% of the bytes read)",
    ),
    Row(
        "decode-8b-a100",
        "Llama-3-8B decode, batch 1, bf16, torch.compile (generate.py)",
        "a100-pcie4",
        DECODE_8B,
        Published(95.64, "tokens/s", TORCHAO + " (A100-80GB table)", True, 1),
        "as for H100; the published run moves 1,436 GB/s, 70% of the "
        "datasheet bandwidth",
    ),
    Row(
        "prefill-7b-a100",
        "LLaMA-2-7B prefill (time to first token), 2048-token prompt, batch 1, "
        "FP16, A100, TensorRT-LLM v0.5",
        "a100-pcie4",
        PREFILL_7B,
        Published(133, "ms", TRTLLM, True),
        "nothing structural (FP16 and bf16 share the A100 peak); the export "
        "computes logits for all 2048 positions, TensorRT-LLM for the last "
        "only (model slower by ~2%)",
    ),
    Row(
        "prefill-70b-a100",
        "LLaMA-2-70B prefill, 2048-token prompt, batch 1, TP 4 on A100, FP16, "
        "TensorRT-LLM v0.5",
        "a100-pcie4",
        PREFILL_70B,
        Published(377, "ms", TRTLLM, True),
        "the two tensor-parallel all-reduces per layer (model faster)",
        shards=4,
        mapping="one of 4 tensor-parallel shards: the whole program's modelled "
        "time / 4 (every matmul split evenly, no communication)",
    ),
    Row(
        "prefill-70b-h100",
        "LLaMA-2-70B prefill, 2048-token prompt, batch 1, TP 4 on H100, FP8, "
        "TensorRT-LLM v0.5",
        "h100-pcie5",
        PREFILL_70B,
        Published(109, "ms", TRTLLM, True),
        "FP8 GEMMs (twice the bf16 peak; the model prices bf16: model slower); "
        "the tensor-parallel all-reduces (model faster)",
        shards=4,
        precision="FP8",
        mapping="one of 4 tensor-parallel shards: the whole program's modelled "
        "time / 4",
    ),
    Row(
        "decode-8b-122k-a100",
        "Llama-3.1-8B decode, full attention, 122K context, batch 4, bf16, A100",
        "a100-pcie4",
        DECODE_8B_LONG,
        Published(
            80.78,
            "tokens/s",
            "ShadowKV (arXiv 2410.21465) Table 3",
            False,
            4,
        ),
        "nothing structural: the step reads 64 GB of KV cache and 16 GB of weights",
        mapping="122K read as 122 x 1024 cached positions",
    ),
    Row(
        "train-8b-910c-seeds",
        "the seeds' LLaMA-8B training iteration (Ascend 910C); the seeds give "
        "no sequence, batch or parallelism: one device, seq 8192, batch 2, "
        "AdamW (float32 master weights and moments), chunked loss, chosen "
        "to land within 15% of it",
        "ascend-910c",
        TRAIN_8B_SEEDS,
        Published(
            5200,
            "ms",
            "seed document (DESIGN.md section 1, the training table)",
            False,
        ),
        "whatever the seeds' run did beyond one device's step "
        "(communication, recomputation: model faster); every 910C "
        "efficiency is an assumption",
        mapping="the configuration of `hyperoffload-bench --suite seeds` "
        "(llama3-8b-seed-training)",
        sets="the configuration of the seed training benchmark",
    ),
)

# --------------------------------------------------------- modelled times


@dataclass(frozen=True)
class Modelled:
    time_s: float
    flops: float
    """FLOPs the cost model counts in the program."""
    unknown: frozenset[str]


class Interpreter:
    """Exports (cached on disk), parses (cached in memory) and simulates programs."""

    def __init__(self, work: Path, log: Log) -> None:

        self.work = work
        self.log = log
        self.ctx = make_context()
        self._modules: dict[Path, object] = {}
        """The last few parsed modules (large ones take seconds to parse)."""

    def path(self, program: Program) -> Path:
        path = self.work / program.file_name()
        if isinstance(program, Gemm):
            self.work.mkdir(parents=True, exist_ok=True)
            path.write_text(program.text())
        else:
            export_program(program, self.work, self.log)
        return path

    def simulate(self, program: Program, hardware: Hardware) -> Modelled:
        from xdsl.dialects.builtin import ModuleOp

        from hyperoffload.analysis import program as analysed
        from hyperoffload.ir.parsing import parse_mlir

        path = self.path(program)
        module = self._modules.pop(path, None)
        if not isinstance(module, ModuleOp):
            start = time.perf_counter()
            module = parse_mlir(self.ctx, path.read_text(), str(path))
            self.log(f"  parsed {path.name} in {time.perf_counter() - start:.1f} s")
        self._modules[path] = module
        while len(self._modules) > CACHED_MODULES:
            del self._modules[next(iter(self._modules))]
        modelled = analysed.Program(module, hardware)
        result = modelled.simulate("none", record=False)
        stripped = modelled.reference
        flops = sum(s.flops for s in stripped.steps if isinstance(s, Compute))
        return Modelled(result.makespan_s, flops, frozenset(modelled.unknown_ops))


SCALING_DEPTHS = (2, 3)
"""Quick mode's exports. Not 1: a producer shared by every layer (RoPE
tables, the causal mask) has a single consumer in a 1-layer program and is
fused into it, and several from 2 layers on."""


def linear_in_layers(a: Modelled, b: Modelled, layers: int) -> Modelled:
    """
    The full depth from exports of SCALING_DEPTHS (d, d + 1) layers:
    time(L) = time(d) + (L - d) (time(d + 1) - time(d)). Exact when the
    layers are identical and the step time is a sum of kernel times (policy
    `none`: no transfers, no memory stalls).
    """
    depth = SCALING_DEPTHS[0]

    def scale(x: float, y: float) -> float:
        return x + (layers - depth) * (y - x)

    return Modelled(
        scale(a.time_s, b.time_s), scale(a.flops, b.flops), a.unknown | b.unknown
    )


def model(
    interpreter: Interpreter, program: Program, hardware: Hardware, quick: bool
) -> Modelled:
    if quick and isinstance(program, Export) and program.depth > SCALING_DEPTHS[1]:
        a, b = (
            interpreter.simulate(replace(program, layers=depth), hardware)
            for depth in SCALING_DEPTHS
        )
        return linear_in_layers(a, b, program.depth)
    return interpreter.simulate(program, hardware)


# ------------------------------------------------------------------ results


@dataclass(frozen=True)
class Result:
    row: Row
    hardware: Hardware
    modelled: Modelled
    bound: tuple[float, float]

    @property
    def modelled_s(self) -> float:
        return self.modelled.time_s / self.row.shards

    @property
    def ratio(self) -> float:
        return self.modelled_s / self.row.published.step_s()

    @property
    def within(self) -> bool:
        return abs(self.ratio - 1) <= TOLERANCE


def format_flops(flops: float) -> str:
    if flops >= 1e12:
        return f"{flops / 1e12:,.1f} TFLOP"
    return f"{flops / 1e9:,.1f} GFLOP"


def format_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


HEADER = (
    "| # | workload and configuration | preset | published (source) "
    "| published step | modelled step | modelled / published "
    "| bound: FLOPs/peak, bytes/BW | left out |"
)


def table_row(index: int, result: Result) -> str:
    row, pub = result.row, result.row.published
    flag = "" if pub.verified else " **(not verified)**"
    if row.precision:
        flag += f" **{row.precision}**"
    ratio = f"{result.ratio:.2f}" + ("" if result.within else " **outside**")
    if row.sets:
        ratio += " (sets, not counted)"
    compute, memory = result.bound
    cells = [
        str(index),
        row.workload,
        f"`{row.preset}`",
        f"{pub.text()} ({pub.source}){flag}",
        format_time(pub.step_s()),
        format_time(result.modelled_s),
        ratio,
        f"{format_time(compute)}, {format_time(memory)}",
        row.leaves_out,
    ]
    return "| " + " | ".join(cells) + " |"


def render_table(results: Sequence[Result]) -> str:
    separator = "|" + "---|" * 9
    lines = [HEADER, separator]
    lines += [table_row(i, r) for i, r in enumerate(results, 1)]
    return "\n".join(lines) + "\n"


def _preset_table(hardware: Sequence[Hardware]) -> str:
    lines = [
        "| preset | bf16 peak | HBM (datasheet) | compute eff. | attention eff. "
        "| memory eff. | op overhead | host link to / from device |",
        "|" + "---|" * 8,
    ]
    for hw in hardware:
        link = hw.links.get(Tier.HOST)
        host = (
            f"{link.bandwidth_to_device / 1e9:g} / {link.bandwidth_from_device / 1e9:g} GB/s"
            if link
            else "-"
        )
        lines.append(
            f"| `{hw.name}` | {hw.peak('bf16') / 1e12:g} TFLOPS "
            f"| {hw.hbm_bandwidth / 1e12:g} TB/s | {hw.compute_efficiency:g} "
            f"| {hw.attention_efficiency:g} | {hw.memory_efficiency:g} "
            f"| {hw.op_overhead_s * 1e6:g} us | {host} |"
        )
    return "\n".join(lines) + "\n"


def render_document(
    results: Sequence[Result],
    quick: bool,
    linearity: str,
    sensitivity: str,
) -> str:
    tests = [r for r in results if not r.row.sets]
    inside = sum(r.within for r in tests)
    setting = "; ".join(
        f"row {i} sets {r.row.sets}" for i, r in enumerate(results, 1) if r.row.sets
    )
    marked = "; ".join(
        f"row {i} is an {r.row.precision} run priced in bf16"
        for i, r in enumerate(results, 1)
        if r.row.precision
    )
    program_lines = [
        f"{i}. `{r.row.key}`: {r.row.program.describe()}"
        + (f"; {r.row.mapping}" if r.row.mapping else "")
        + f"; the cost model counts {format_flops(r.modelled.flops)} "
        f"(independent count: {format_flops(program_work(r.row.program).flops)})"
        + (
            f"; ops without a cost model: {', '.join(sorted(r.modelled.unknown))}"
            if r.modelled.unknown
            else ""
        )
        for i, r in enumerate(results, 1)
    ]
    outside = [
        f"- **{r.row.key}**: modelled/published {r.ratio:.2f}, the model is "
        f"{'slower' if r.ratio > 1 else 'faster'} than the measurement. "
        f"It leaves out: {r.row.leaves_out}."
        for r in tests
        if not r.within
    ]
    unverified = [
        f"- `{r.row.key}`: {r.row.published.source}"
        for r in results
        if not r.row.published.verified
    ]
    presets = list({r.hardware.name: r.hardware for r in results}.values())
    mode = (
        "**quick mode**: each model exported with 2 and 3 layers and scaled "
        "per layer, time(L) = time(2) + (L - 2)(time(3) - time(2))"
        if quick
        else "full-depth exports"
    )
    parts = [
        "# Calibration: modelled against measured\n",
        "Generated by `.venv/bin/python bench/calibration.py` "
        f"({mode}); do not edit by hand. Each row prices one step of a real "
        "workload with the project's own export (`hyperoffload-gen`, or a "
        "hand-written GEMM), cost model and interpreter (`--policy none`: "
        "everything in HBM), on one device, and compares it with a published "
        "measurement converted to the same step. **modelled / published** is "
        "a ratio of step times: above 1 the model is slower than the real "
        "run (it flatters offload results: more compute to hide transfers "
        "behind), below 1 faster. Target: every row within "
        f"1 +- {TOLERANCE:g}; **{inside} of the {len(tests)} rows that test "
        f"the model are** ({setting}, so neither is counted; {marked}). A full run "
        "takes about 2 minutes on 2 cores (exports cached under "
        "`build/calibration`: about 1.5), `--quick` about 30 s.\n",
        "The bound column is the physical floor from model dimensions alone "
        "(FLOPs / datasheet bf16 peak, bytes / datasheet HBM bandwidth), not "
        "from the exported program: no real run beats the larger of the two. "
        "FLOPs count 2 per multiply-accumulate plus causal attention, training "
        "is 3x forward (no recomputation), a prefill needs the LM head for "
        "its last position only; bytes count each weight read once, "
        "gradients written once and the KV cache read or written.\n",
        render_table(results),
        "## Rows outside the target\n",
        ("\n".join(outside) if outside else "None.") + "\n",
        "## Programs and mappings\n",
        "\n".join(program_lines) + "\n",
        "The cost model's FLOPs differ from the independent count by what "
        "the export and the execution model do beyond the least work: "
        "attention over the full masked square (twice the causal FLOPs) and, "
        "in training, FlashAttention's backward recomputation; logits for "
        "every position of a prefill; elementwise ops. "
        "Tensor-parallel rows model the whole program on one device and "
        "divide its time by the TP degree (every matmul split evenly, no "
        "communication). Throughput rows per device assume perfect scaling: "
        "tokens per modelled step / modelled step time.\n",
        *(f"{text}\n" for text in (linearity, sensitivity) if text),
        "## Presets used\n",
        "Every figure's source (a measurement, or `# assumption`) is on its "
        "line in `python/hyperoffload/model/presets/<preset>.toml`. Where a "
        "measurement exists the effective figure is the measured one "
        "(datasheet x efficiency; links: measured bandwidth).\n",
        _preset_table(presets),
        "## Sources not verified\n",
        ("\n".join(unverified) if unverified else "None.") + "\n",
    ]
    return "\n".join(parts)


# ------------------------------------------------------------------- driver


def _hardware(name: str, ascend_peak: float | None) -> Hardware:
    hw = load_hardware(name)
    if name == "ascend-910b" and ascend_peak is not None:
        peak = ascend_peak * 1e12
        hw = replace(hw, peak_flops={**hw.peak_flops, "bf16": peak, "f16": peak})
    return hw


def run(
    rows: Sequence[Row], work: Path, quick: bool, ascend_peak: float | None, log: Log
) -> tuple[list[Result], str, str]:
    """Every row (rows sharing a program run together: each is parsed once)."""
    interpreter = Interpreter(work, log)
    done: dict[str, Result] = {}
    sensitivity: list[str] = []
    for row in sorted(rows, key=lambda r: repr(r.program)):
        start = time.perf_counter()
        hw = _hardware(row.preset, ascend_peak)
        log(f"{row.key} on {hw.name}")
        modelled = model(interpreter, row.program, hw, quick)
        bound = bound_s(program_work(row.program), hw, row.shards)
        result = done[row.key] = Result(row, hw, modelled, bound)
        log(
            f"  {format_time(result.modelled_s)} in {time.perf_counter() - start:.1f} s"
        )
        if hw.name == "ascend-910b":
            sensitivity.append(_sensitivity(interpreter, result, quick, log))
    linearity = "" if quick else _linearity(interpreter, log)
    return [done[row.key] for row in rows], linearity, "\n".join(sensitivity)


def _sensitivity(
    interpreter: Interpreter, result: Result, quick: bool, log: Log
) -> str:
    """A 910B row at the other end of the vendor peak range."""
    used = result.hardware.peak("bf16") / 1e12
    other = 280.0 if used > 328 else 376.0
    peaks = {**result.hardware.peak_flops, "bf16": other * 1e12, "f16": other * 1e12}
    log(f"{result.row.key} at {other:g} TFLOPS")
    hw = replace(result.hardware, peak_flops=peaks)
    modelled = model(interpreter, result.row.program, hw, quick)
    ratio = modelled.time_s / result.row.shards / result.row.published.step_s()
    return (
        f"`{result.row.key}` uses a 910B peak of {used:g} TFLOPS (vendor figures "
        f"range 280-376; `--ascend-910b-peak` sets it); at {other:g} TFLOPS "
        f"modelled/published would be {ratio:.2f}."
    )


def _linearity(interpreter: Interpreter, log: Log) -> str:
    """How far per-layer scaling (quick mode) is from the full export, on one program."""
    hw = load_hardware("a100-pcie4")
    log(f"linearity check: {PREFILL_7B.describe()} from {SCALING_DEPTHS} layers")
    full = interpreter.simulate(PREFILL_7B, hw)
    scaled = model(interpreter, PREFILL_7B, hw, quick=True)
    error = scaled.time_s / full.time_s - 1
    return (
        "Per-layer scaling (what `--quick` does), checked on the 7B prefill on "
        f"`a100-pcie4`: {format_time(scaled.time_s)} from "
        f"{' and '.join(map(str, SCALING_DEPTHS))}-layer exports against "
        f"{format_time(full.time_s)} from the full export ({error:+.2%})."
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Regenerate docs/calibration.md: modelled against published times."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="export 2 and 3 layers and scale per layer (exact for identical layers)",
    )
    parser.add_argument("--work", type=Path, default=WORK, help="export cache")
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    parser.add_argument(
        "--ascend-910b-peak",
        type=float,
        help="910B bf16/fp16 peak in TFLOPS (default: the preset's)",
    )
    options = parser.parse_args(argv)
    options.output.parent.mkdir(parents=True, exist_ok=True)
    outputs = Outputs({"--output": options.output})  # checked before the run
    start = time.perf_counter()
    results, linearity, sensitivity = run(
        ROWS, options.work, options.quick, options.ascend_910b_peak, _log
    )
    document = render_document(results, options.quick, linearity, sensitivity)
    outputs.put(options.output, document)
    outputs.write()
    print(render_table(results))
    _log(f"wrote {options.output} in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
