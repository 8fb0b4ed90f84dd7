"""
`hyperoffload-gen`: export a model of the frontend's zoo to linalg-on-tensors
MLIR (torch-mlir, traced on fake tensors: no weights are allocated).

```
hyperoffload-gen llama3-8b --mode train --layers 32 --seq 2048 --dtype bf16 \\
    -o llama3_8b_train.mlir
hyperoffload-gen tiny-moe --mode decode --kv-len 64 -o tiny_moe_decode.mlir
hyperoffload-gen deepseek-v3 --mode prefill --layers 1 --dense-layers 0 \\
    --seq 2048 --dtype bf16 -o deepseek_v3_moe_layer.mlir
```

Needs the `torch` extra (`torch==2.13.0`, `torch-mlir`).
"""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from hyperoffload.frontend.configs import CONFIGS, MODES, get_config
from hyperoffload.ir.diagnostics import Severity, emit
from hyperoffload.support.outputs import write_atomically
from hyperoffload.support.tiers import OFFLOAD_TIERS, Tier
from hyperoffload.tools.command_line import run_reporting_errors

TOOL = "hyperoffload-gen"

DTYPE_NAMES = ("f32", "bf16", "f16")


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=TOOL,
        description=(
            "Export a model (forward pass, training step, prefill or one decode "
            "step) to linalg-on-tensors MLIR whose parameters and KV cache are "
            "function arguments tagged for the remote pool."
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
        "-o", "--output", type=Path, help="output file (default: stdout)"
    )
    return parser


def _run(argv: Sequence[str] | None) -> int:
    options = _arguments().parse_args(argv)
    cfg = get_config(options.model)
    for name in ("layers", "seq", "batch", "kv_len"):
        value = getattr(options, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be positive")
    try:
        from hyperoffload.frontend.torch_export import (
            DTYPES,
            Shapes,
            export,
            header,
        )
    except ImportError as err:
        raise ValueError(
            f"{err}; install the torch extra (torch==2.13.0, torch-mlir)"
        ) from err
    layers = options.layers or cfg.n_layers
    emit(
        TOOL,
        Severity.REMARK,
        f"tracing {options.model} {options.mode} "
        f"({layers} layers, dtype {options.dtype})...",
    )
    shapes = Shapes(options.batch, options.seq, options.kv_len)
    exported = export(
        cfg,
        options.mode,
        shapes=shapes,
        n_layers=options.layers,
        n_dense_layers=options.dense_layers,
        dtype=DTYPES[options.dtype],
        tier=options.tier,
    )
    regen = "hyperoffload-gen " + " ".join(sys.argv[1:] if argv is None else list(argv))
    title = (
        f"{options.model} {options.mode} ({layers} layers, batch {shapes.batch}, "
        + (
            f"kv_len {shapes.kv_len}"
            if options.mode == "decode"
            else f"seq {shapes.seq}"
        )
        + f", {options.dtype})"
    )
    text = header(title, regen, exported.signature, options.tier) + exported.text
    if options.output is None:
        sys.stdout.write(text)
    else:
        write_atomically(options.output, text)
    emit(
        TOOL,
        Severity.REMARK,
        f"{exported.signature.n_params} parameters, "
        f"{len(exported.signature.arg_names)} arguments, "
        f"{sum(' = ' in line for line in exported.text.splitlines())} ops, "
        f"{len(text)} bytes in {exported.seconds:.1f} s",
    )
    return 0


def main(args: Sequence[str] | None = None) -> int:
    return run_reporting_errors(TOOL, lambda: _run(args))


if __name__ == "__main__":
    sys.exit(main())
