"""
Train the small causal LM of `hyperoffload.benchmark.tiny_lm` and write its
checkpoint (test/inputs/tiny_lm/tiny-lm-2k.npz, f16).

Deterministic on one machine (seeded weights and windows; a fixed number of
steps, not a time budget): AdamW (lr 3e-3, warm-up then cosine to a tenth,
weight decay 0.01, gradients clipped at 1), `--steps` windows of
`CONTEXT` + 1 bytes drawn from the training files, batch 1. The committed
checkpoint took 600 steps (17 minutes on this loaded 2-core machine;
one thread ran faster than two under that load).

    .venv/bin/python bench/train_tiny_lm.py [--steps 600] [--threads 1] [--out FILE]
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from hyperoffload.benchmark.tiny_lm import (
    CHECKPOINT,
    CONTEXT,
    TINY_LM,
    corpus,
    save_checkpoint,
    train_logits,
)
from hyperoffload.frontend.models import Llama


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[1])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=CHECKPOINT)
    options = parser.parse_args()
    torch.set_num_threads(options.threads)
    torch.manual_seed(options.seed)  # pyright: ignore[reportUnknownMemberType]
    rng = np.random.default_rng(options.seed)
    train, held = corpus()
    model = Llama(TINY_LM)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    warmup = max(1, options.steps // 12)

    def rate(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, options.steps - warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, rate)
    start = time.perf_counter()
    print(f"training bytes {len(train)}, held back {len(held)}")
    for step in range(options.steps):
        at = int(rng.integers(0, len(train) - CONTEXT - 1))
        window = torch.tensor(train[at : at + CONTEXT + 1].astype(np.int64))[None]
        logits = train_logits(model, window[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, TINY_LM.vocab_size), window[0, 1:])
        loss.backward()  # pyright: ignore[reportUnknownMemberType]
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()  # pyright: ignore[reportUnknownMemberType]
        optimizer.zero_grad()
        schedule.step()
        if step % 10 == 0 or step == options.steps - 1:
            elapsed = time.perf_counter() - start
            print(f"step {step}: loss {loss.item():.3f} nats/byte ({elapsed:.0f} s)")
    save_checkpoint(model, options.out)
    print(f"wrote {options.out} ({options.out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
