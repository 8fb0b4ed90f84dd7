"""
`hyperoffload-gen`: export a model of the frontend's zoo to linalg-on-tensors
MLIR (torch-mlir, traced on fake tensors: no weights are allocated).

```
hyperoffload-gen llama3-8b --mode train --layers 32 --seq 2048 --dtype bf16 \\
    -o llama3_8b_train.mlir
hyperoffload-gen llama3-8b --mode train --layers 1 --seq 8192 --batch 2 \\
    --dtype bf16 --optimizer adamw --grad-accum 2 --loss chunked -o step.mlir
hyperoffload-gen tiny-moe --mode decode --kv-len 64 -o tiny_moe_decode.mlir
hyperoffload-gen deepseek-v3 --mode prefill --layers 1 --dense-layers 0 \\
    --seq 2048 --dtype bf16 -o deepseek_v3_moe_layer.mlir
hyperoffload-gen llama2-7b --mode decode --kv-len 123000 --dtype f16 \\
    --attention window --window 4096 --sinks 4 --kv-block 4096 -o l7_window.mlir
hyperoffload-gen tiny-llama --mode decode --kv-len 64 --attention topk \\
    --kv-block 16 --topk 1 --sinks 4 --recent 16 -o tiny_topk_decode.mlir
hyperoffload-gen mixtral-8x7b --mode decode --layers 1 --experts routed \\
    --dtype bf16 -o mixtral_routed_decode.mlir
hyperoffload-gen deepseek-v3 --layers 2 --dense-layers 0 \\
    --record-routing deepseek_v3_routing.json --record-tokens 64 --seed 0
```

`--optimizer sgd|adamw`, `--grad-accum N` and `--loss chunked` (train)
put the optimizer's update (AdamW: float32 master weights and moments as
arguments tagged for the pool), N micro-batches and a loss fused with the LM
head over chunks of tokens into the step (`hyperoffload.frontend.train_step`);
`--shard N` (adamw) makes it one device's step of an N-way data-parallel
group with sharded optimizer states (`hyperoffload.frontend.sharding`);
`--expert-shard N` (moe family) keeps E/N routed experts of each MoE layer,
one device's of an N-way expert-parallel group, with all-to-all exchanges;
`--attention blocked|window` (prefill and decode) splits the KV cache into
one tagged argument (decode) or result (prefill) per block of `--kv-block`
tokens; `--experts routed` (moe family; forward, prefill, decode) runs each
routed expert under an `scf.if` on whether any token chose it; see
docs/frontend.md.

`--module package.module:factory` exports your own `nn.Module` instead of
a model of the zoo (`hyperoffload-gen --module examples.own_model:cnn --mode
train --optimizer sgd --loss cross_entropy`; its options:
`hyperoffload-gen --module X --help`, `hyperoffload.tools.hyperoffload_gen_module`,
docs/own-model.md).

`--record-routing FILE` (moe family) exports nothing: it runs the model in
eager PyTorch on seeded random weights over a prompt of seeded random
tokens and writes the experts its router chooses as a routing trace
(`--routing trace:FILE`; `hyperoffload.frontend.record_routing`).

Needs the `torch` extra (`torch==2.13.0`, `torch-mlir`).
"""

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from hyperoffload.frontend.configs import (
    ATTENTION_KINDS,
    CONFIGS,
    DEFAULT_KV_BLOCK,
    EXPERTS_MODES,
    MODES,
    AttentionSpec,
    ModelConfig,
    get_config,
)
from hyperoffload.frontend.training import (
    LOSSES,
    OPTIMIZERS,
    LossSpec,
    OptimizerSpec,
    TrainSpec,
)
from hyperoffload.ir.diagnostics import Severity, emit
from hyperoffload.support.outputs import Outputs, write_output
from hyperoffload.support.tiers import OFFLOAD_TIERS, Tier
from hyperoffload.tools.command_line import run_reporting_errors

TOOL = "hyperoffload-gen"

DTYPE_NAMES = ("f32", "bf16", "f16")

EXPORT_ONLY = (
    "mode",
    "seq",
    "batch",
    "kv_len",
    "tier",
    "attention",
    "kv_block",
    "window",
    "sinks",
    "topk",
    "recent",
    "experts",
    "optimizer",
    "grad_accum",
    "loss",
    "loss_chunks",
    "shard",
    "expert_shard",
    "optimizer_in_backward",
    "output",
)
"""Options that shape the exported IR, which `--record-routing` does not write."""


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=TOOL,
        description=(
            "Export a model (forward pass, training step, prefill or one decode "
            "step) to linalg-on-tensors MLIR whose parameters and KV cache are "
            "function arguments tagged for the remote pool. Your own nn.Module: "
            "--module package.module:factory (its options: --module X --help)."
        ),
    )
    parser.add_argument("model", help=f"one of: {', '.join(CONFIGS)}")
    parser.add_argument("--mode", choices=MODES, default="forward")
    parser.add_argument(
        "--layers", type=int, help="decoder layers (default: the model's)"
    )
    parser.add_argument(
        "--dense-layers",
        type=int,
        help="leading dense (non-MoE) layers, moe family only (default: the model's)",
    )
    parser.add_argument("--seq", type=int, default=16, help="prompt length")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument(
        "--kv-len", type=int, default=16, help="cached positions (decode)"
    )
    parser.add_argument("--dtype", choices=DTYPE_NAMES, default="f32")
    parser.add_argument(
        "--tier",
        choices=[str(t) for t in OFFLOAD_TIERS],
        default=str(Tier.REMOTE),
        help="where parameters and KV cache live (default: %(default)s; GPU presets "
        "offer host)",
    )
    parser.add_argument(
        "--attention",
        choices=ATTENTION_KINDS,
        default="full",
        help="full (one cache tensor per layer), blocked (online softmax over "
        "KV blocks), window (sliding window plus sinks, in blocks) or topk "
        "(sinks, recent positions and the --topk blocks whose key summaries "
        "bound q.k highest, gathered from a pooled cache); prefill and decode "
        "only for blocked and window, decode only for topk "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--kv-block",
        type=int,
        help=f"tokens per KV block (blocked, window; default: {DEFAULT_KV_BLOCK})",
    )
    parser.add_argument(
        "--window", type=int, help="sliding window in tokens (--attention window)"
    )
    parser.add_argument(
        "--sinks",
        type=int,
        help="attention sinks: leading positions every query sees "
        "(--attention window or topk; default: 0)",
    )
    parser.add_argument(
        "--topk",
        type=int,
        help="blocks a decode step selects by their key summaries (--attention topk)",
    )
    parser.add_argument(
        "--recent",
        type=int,
        help="newest positions a decode step always sees (--attention topk; "
        "default: --kv-block)",
    )
    parser.add_argument(
        "--experts",
        choices=EXPERTS_MODES,
        default="dense",
        help="dense (every routed expert computed on its dispatched rows) or "
        "routed (each expert under an scf.if on whether any token chose it); "
        "moe family, forward, prefill and decode only for routed "
        "(default: %(default)s)",
    )
    training = parser.add_argument_group(
        "training step (--mode train)",
        "What the step does beyond the forward and backward passes; see "
        "docs/frontend.md for the signature of each.",
    )
    training.add_argument(
        "--optimizer",
        choices=OPTIMIZERS,
        default="none",
        help="none (return the gradients), sgd (plain SGD, lr 1e-3) or adamw "
        "(torch.optim.AdamW's defaults; float32 master weights beside weights of "
        "a lower precision, moments, all tagged for the pool; a step-count "
        "argument); the step returns the updated weights and states "
        "(default: %(default)s)",
    )
    training.add_argument(
        "--grad-accum",
        type=int,
        default=1,
        metavar="N",
        help="micro-batches per step: tokens and targets are (N, batch, seq), "
        "gradients summed before the update, the loss their mean "
        "(default: %(default)s)",
    )
    training.add_argument(
        "--loss",
        choices=LOSSES,
        default="full",
        help="full (logits of every token, then cross-entropy) or chunked (the "
        "LM head fused with the cross-entropy over chunks of tokens, gradients "
        "computed chunk by chunk; the embedding's backward chunked alike) "
        "(default: %(default)s)",
    )
    training.add_argument(
        "--loss-chunks",
        type=int,
        metavar="K",
        help="chunks of tokens of the chunked loss (default: Liger's choice, "
        "chunks whose logits are about as large as the hidden states)",
    )
    training.add_argument(
        "--shard",
        type=int,
        default=1,
        metavar="N",
        help="adamw: export the first device's program of an N-way data-parallel "
        "group with the optimizer states sharded (ZeRO-1/2): master weights and "
        "moments are 1/N of each parameter's rows, gradients reduce-scattered, "
        "updated weights all-gathered (hyperoffload collectives, priced on the "
        "hardware's [interconnect]) (default: %(default)s, not sharded)",
    )
    parser.add_argument(
        "--expert-shard",
        type=int,
        default=1,
        metavar="N",
        help="moe family: export the first device's program of an N-way "
        "expert-parallel group: each MoE layer keeps E/N of its routed experts, "
        "its tokens' rows reach them through an all-to-all dispatch and "
        "combine (hyperoffload.all_to_all, priced on the hardware's "
        "[interconnect]; two forward, two backward) (default: %(default)s)",
    )
    training.add_argument(
        "--optimizer-in-backward",
        action="store_true",
        help="sgd, adamw: update each parameter as soon as the backward pass "
        "completes its gradient (torchtune's optimizer_in_bwd, PyTorch's "
        "post-accumulate-grad hooks) instead of all after the backward pass: "
        "the same values, the updates interleaved with the rest of the "
        "backward pass; with --grad-accum N, in the last micro-batch's",
    )
    parser.add_argument(
        "-o", "--output", type=Path, help="output file (default: stdout)"
    )
    recording = parser.add_argument_group(
        "routing recording",
        "With --record-routing no IR is exported: the model (moe family) runs "
        "in eager PyTorch on the CPU, with seeded random weights (not a trained "
        "checkpoint), on a prompt of seeded random tokens, and the experts its "
        "router chooses are written as a routing trace (--routing trace:FILE). "
        "Of the options above only --layers, --dense-layers and --dtype apply.",
    )
    recording.add_argument(
        "--record-routing",
        type=Path,
        metavar="FILE",
        help="write the routing trace to FILE instead of exporting IR",
    )
    recording.add_argument(
        "--record-tokens",
        type=int,
        metavar="N",
        help="tokens of the prompt (default: 64)",
    )
    recording.add_argument(
        "--seed", type=int, help="seed of the weights and the tokens (default: 0)"
    )
    recording.add_argument(
        "--prompt-seed",
        type=int,
        metavar="S",
        help="seed of the tokens alone (default: --seed): the same model on other inputs",
    )
    return parser


def attention_spec(options: argparse.Namespace) -> AttentionSpec:
    """
    The attention variant the options ask for; `ValueError` for a flag its
    variant does not take (values are checked by the export).
    """
    kind: str = options.attention
    if kind != "topk" and (options.topk is not None or options.recent is not None):
        raise ValueError("--topk and --recent need --attention topk")
    if kind == "topk":
        if options.window is not None:
            raise ValueError("--window needs --attention window")
        if options.topk is None:
            raise ValueError("--attention topk needs --topk")
        block = DEFAULT_KV_BLOCK if options.kv_block is None else options.kv_block
        return AttentionSpec(
            "topk",
            block,
            sinks=options.sinks or 0,
            topk=options.topk,
            recent=block if options.recent is None else options.recent,
        )
    if kind != "window" and (options.window is not None or options.sinks is not None):
        raise ValueError("--window and --sinks need --attention window")
    if kind == "full" and options.kv_block is not None:
        raise ValueError(
            "--kv-block needs --attention blocked or window (or topk) "
            "(full attention reads one cache tensor per layer)"
        )
    if kind == "window" and options.window is None:
        raise ValueError("--attention window needs --window")
    return AttentionSpec(
        options.attention,
        DEFAULT_KV_BLOCK if options.kv_block is None else options.kv_block,
        options.window or 0,
        options.sinks or 0,
    )


def _run(argv: Sequence[str] | None) -> int:
    parser = _arguments()
    options = parser.parse_args(argv)
    # every output path is checked before the export (written at its end)
    Outputs({"-o": options.output, "--record-routing": options.record_routing})
    cfg = get_config(options.model)
    for name in ("layers", "seq", "batch", "kv_len", "record_tokens", "loss_chunks"):
        value = getattr(options, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be positive")
    if options.record_routing is not None:
        return _record(parser, options, cfg)
    if any(
        value is not None
        for value in (options.record_tokens, options.seed, options.prompt_seed)
    ):
        raise ValueError(
            "--record-tokens, --seed and --prompt-seed need --record-routing"
        )
    attention = attention_spec(options)
    train = train_spec(options)
    if options.expert_shard < 1:
        raise ValueError("--expert-shard must be positive")
    cfg = replace(cfg, expert_shard=options.expert_shard)
    try:
        from hyperoffload.frontend.torch_export import (
            DTYPES,
            Shapes,
            check_attention,
            check_experts,
            check_train,
            export,
            header,
        )
    except ImportError as err:
        raise ValueError(
            f"{err}; install the torch extra (torch==2.13.0, torch-mlir)"
        ) from err
    check_attention(attention, options.mode)
    check_experts(cfg, options.mode, options.experts)
    shapes = Shapes(options.batch, options.seq, options.kv_len)
    check_train(options.mode, train, shapes)
    layers = options.layers or cfg.n_layers
    emit(
        TOOL,
        Severity.REMARK,
        f"tracing {options.model} {options.mode} "
        f"({layers} layers, dtype {options.dtype})...",
    )
    exported = export(
        cfg,
        options.mode,
        shapes=shapes,
        n_layers=options.layers,
        n_dense_layers=options.dense_layers,
        dtype=DTYPES[options.dtype],
        tier=options.tier,
        attention=attention,
        experts=options.experts,
        train=train,
    )
    regen = "hyperoffload-gen " + " ".join(sys.argv[1:] if argv is None else list(argv))
    title = (
        f"{options.model} {options.mode} ({layers} layers, batch {shapes.batch}, "
        + (
            f"kv_len {shapes.kv_len}"
            if options.mode == "decode"
            else f"seq {shapes.seq}"
        )
        + f", {options.dtype}"
        + _attention_title(attention)
        + (", routed experts" if options.experts == "routed" else "")
        + (
            f", {cfg.n_experts // cfg.expert_shard} of {cfg.n_experts} routed "
            f"experts a layer (expert parallelism over {cfg.expert_shard} "
            "devices, rank 0)"
            if cfg.expert_shard > 1
            else ""
        )
        + _train_title(train, shapes.batch * shapes.seq, cfg)
        + ")"
    )
    text = header(title, regen, exported.signature, options.tier) + exported.text
    if options.output is None:
        sys.stdout.write(text)
    else:
        write_output(options.output, text)
    emit(
        TOOL,
        Severity.REMARK,
        f"{exported.signature.n_params} parameters, "
        f"{len(exported.signature.arg_names)} arguments, "
        f"{sum(' = ' in line for line in exported.text.splitlines())} ops, "
        f"{len(text)} bytes in {exported.seconds:.1f} s",
    )
    return 0


def _record(
    parser: argparse.ArgumentParser, options: argparse.Namespace, cfg: ModelConfig
) -> int:
    """`--record-routing`: record the router's choices and write the trace."""
    given = [
        "-o" if name == "output" else f"--{name.replace('_', '-')}"
        for name in EXPORT_ONLY
        if getattr(options, name) != parser.get_default(name)
    ]
    if given:
        raise ValueError(
            f"{', '.join(given)}: no IR is exported with --record-routing "
            "(it writes only the routing trace)"
        )
    try:
        from hyperoffload.frontend.record_routing import (
            moe_config,
            record_routing,
            trace_json,
        )
        from hyperoffload.frontend.torch_export import DTYPES
    except ImportError as err:
        raise ValueError(f"{err}; install the torch extra (torch==2.13.0)") from err
    cfg = moe_config(cfg, options.layers, options.dense_layers)
    tokens = 64 if options.record_tokens is None else options.record_tokens
    seed = 0 if options.seed is None else options.seed
    path: Path = options.record_routing
    moe = cfg.n_layers - cfg.n_dense_layers
    emit(
        TOOL,
        Severity.REMARK,
        f"recording {options.model}'s routing ({moe} MoE layers of {cfg.n_layers}, "
        f"{tokens} tokens, seed {seed}, {options.dtype})...",
    )
    start = time.perf_counter()
    trace = record_routing(
        cfg, tokens, seed, DTYPES[options.dtype], options.prompt_seed
    )
    write_output(path, trace_json(trace))
    distinct = [
        len({e for token in trace.tokens for e in token[layer]})
        for layer in range(trace.layers)
    ]
    emit(
        TOOL,
        Severity.REMARK,
        f"wrote {path}: {len(trace.tokens)} tokens, {trace.layers} MoE layers, "
        f"{trace.experts} experts, top_k {trace.top_k}; distinct experts chosen "
        f"per layer: {', '.join(map(str, distinct))} "
        f"({time.perf_counter() - start:.1f} s)",
    )
    return 0


def train_spec(options: argparse.Namespace) -> TrainSpec:
    """
    The training step the options ask for (checked against the mode by the
    export's `check_train`); `ValueError` for a flag its loss does not take.
    """
    if options.loss_chunks is not None and options.loss != "chunked":
        raise ValueError("--loss-chunks needs --loss chunked")
    return TrainSpec(
        OptimizerSpec(options.optimizer),
        options.grad_accum,
        LossSpec(options.loss, options.loss_chunks),
        shard=options.shard,
        in_backward=options.optimizer_in_backward,
        expert_shard=options.expert_shard if options.shard > 1 else 1,
    )


def _train_title(train: TrainSpec, tokens: int, cfg: ModelConfig) -> str:
    """`, adamw (...), 4 micro-batches, chunked loss (...)` (nothing by default)."""
    if train.is_default:
        return ""
    parts = [train.optimizer.describe()] if train.optimizer.kind != "none" else []
    if train.grad_accum > 1:
        parts.append(f"{train.grad_accum} micro-batches")
    if train.loss.kind != "full":
        parts.append(train.loss.describe(tokens, cfg.vocab_size, cfg.hidden))
    if train.shard > 1:
        parts.append(f"optimizer states sharded over {train.shard} devices (rank 0)")
    if train.in_backward:
        parts.append("optimizer step in the backward pass")
    return "".join(f", {part}" for part in parts)


def _attention_title(spec: AttentionSpec) -> str:
    """`, attention window 4096 + 4 sinks, blocks of 4096` (nothing for full)."""
    if not spec.in_blocks:
        return ""
    if spec.kind == "topk":
        return (
            f", attention top-{spec.topk} blocks + {spec.sinks} sinks + "
            f"{spec.recent} recent, blocks of {spec.block}"
        )
    window = f" {spec.window} + {spec.sinks} sinks" if spec.kind == "window" else ""
    return f", attention {spec.kind}{window}, blocks of {spec.block}"


def main(args: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if args is None else list(args)
    if any(a == "--module" or a.startswith("--module=") for a in argv):
        from hyperoffload.tools import hyperoffload_gen_module

        return run_reporting_errors(TOOL, lambda: hyperoffload_gen_module.run(argv))
    return run_reporting_errors(TOOL, lambda: _run(args))


if __name__ == "__main__":
    sys.exit(main())
