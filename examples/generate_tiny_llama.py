"""Export a tiny LLaMA-family decoder to linalg-on-tensors MLIR with torch-mlir.

Writes, next to this script:

* ``tiny_llama_forward.mlir``: ``@forward(tokens, *params) -> logits``
* ``tiny_llama_train.mlir``: ``@train_step(tokens, targets, *params) -> (loss, *grads)``
* ``tiny_llama_{forward,train}.reference.npz``: inputs (``arg0``, ``arg1``, ...) and
  eager PyTorch outputs (``out0``, ``out1``, ...) for seed 0.

Every parameter is a function argument tagged
``{hyperoffload.tier = #hyperoffload.tier<remote>}``. The model and the exporter
are ``hyperoffload.frontend`` (``tiny-llama``); this script only fixes the
shapes, the seed and the file names.

Needs the ``torch`` extra (``torch==2.13.0`` and ``torch-mlir``); run::

    python examples/generate_tiny_llama.py
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from torch import Tensor

from hyperoffload.frontend import get_config
from hyperoffload.frontend.models import build_model
from hyperoffload.frontend.torch_export import Shapes, export, header, program

EXAMPLES_DIR = Path(__file__).resolve().parent
REGEN_COMMAND = (
    "python examples/generate_tiny_llama.py  # with torch==2.13.0 and torch-mlir"
)
SEED = 0
SHAPES = Shapes(batch=2, seq=16)
TITLES = {
    "forward": "Tiny LLaMA forward pass: (tokens, *params) -> logits",
    "train": "Tiny LLaMA training step: (tokens, targets, *params) -> (loss, *grads)",
}


def write_reference(path: Path, args: Sequence[Tensor], outs: Sequence[Tensor]) -> None:
    arrays = {f"arg{i}": a.detach().numpy() for i, a in enumerate(args)}
    arrays |= {f"out{i}": o.detach().numpy() for i, o in enumerate(outs)}
    savez: Any = np.savez_compressed
    savez(path, **arrays)


def main() -> None:
    cfg = get_config("tiny-llama")
    cast(Any, torch).manual_seed(SEED)
    model = build_model(cfg)
    params = [p.detach().clone() for p in model.parameters()]
    shape = (SHAPES.batch, SHAPES.seq)
    tokens = torch.randint(0, cfg.vocab_size, shape, dtype=torch.int64)
    targets = torch.randint(0, cfg.vocab_size, shape, dtype=torch.int64)
    inputs = {
        "forward": [tokens, *params],
        "train": [
            tokens,
            targets,
            *(p.clone().requires_grad_() for p in params),
        ],
    }
    for mode in ("forward", "train"):
        exported = export(cfg, mode, shapes=SHAPES)
        sig = exported.signature
        mlir_path = EXAMPLES_DIR / f"tiny_llama_{mode}.mlir"
        mlir_path.write_text(header(TITLES[mode], REGEN_COMMAND, sig) + exported.text)
        fn: Callable[..., Any] = program(model, cfg, mode, SHAPES, torch.float32)[0]
        result: Any = fn(*inputs[mode])
        outs = cast(
            "tuple[Tensor, ...]", result if isinstance(result, tuple) else (result,)
        )
        write_reference(
            EXAMPLES_DIR / f"tiny_llama_{mode}.reference.npz", inputs[mode], outs
        )
        print(f"wrote {mlir_path.name} ({mlir_path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
