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
    .venv/bin/python bench/train_tiny_lm.py --moe --steps 250

With `--moe` it trains the same model with a routed MoE FFN (`TINY_MOE_LM`;
checkpoint tiny-moe-lm-2k.npz) and records the experts its routers choose
over the first 512 held-back bytes as a routing trace
(bench/routing/tiny-moe-lm.json, `--routing trace:FILE`): a trained
router's choices, where the recorded traces of the zoo's models come from
random weights.
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
    MOE_CHECKPOINT,
    TINY_LM,
    TINY_MOE_LM,
    corpus,
    save_checkpoint,
    train_logits,
)
from hyperoffload.frontend.models import Llama
from hyperoffload.frontend.record_routing import record, trace_json
from hyperoffload.model.routing import parse_trace
from hyperoffload.support.outputs import write_output

ROUTING = Path(__file__).resolve().parent / "routing" / "tiny-moe-lm.json"
"""The trained MoE model's routing on held-back text (`--moe`)."""
ROUTED_TOKENS = 512


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[1])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--moe",
        action="store_true",
        help="train TINY_MOE_LM and record its routing on held-back text",
    )
    options = parser.parse_args()
    torch.set_num_threads(options.threads)
    torch.manual_seed(options.seed)  # pyright: ignore[reportUnknownMemberType]
    rng = np.random.default_rng(options.seed)
    train, held = corpus()
    cfg = TINY_MOE_LM if options.moe else TINY_LM
    out: Path = options.out or (MOE_CHECKPOINT if options.moe else CHECKPOINT)
    model = Llama(cfg)
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
        loss = F.cross_entropy(logits.reshape(-1, cfg.vocab_size), window[0, 1:])
        loss.backward()  # pyright: ignore[reportUnknownMemberType]
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()  # pyright: ignore[reportUnknownMemberType]
        optimizer.zero_grad()
        schedule.step()
        if step % 10 == 0 or step == options.steps - 1:
            elapsed = time.perf_counter() - start
            print(f"step {step}: loss {loss.item():.3f} nats/byte ({elapsed:.0f} s)")
    save_checkpoint(model, out)
    print(f"wrote {out} ({out.stat().st_size} bytes)")
    if options.moe:
        model.eval()
        tokens = torch.tensor(held[:ROUTED_TOKENS].astype(np.int64))[None]
        chosen = record(model, tokens)
        data = {"experts": cfg.n_experts, "top_k": cfg.top_k, "tokens": chosen}
        trace = parse_trace(data, "<tiny MoE LM>")
        write_output(ROUTING, trace_json(trace))
        print(f"wrote {ROUTING} ({len(chosen)} tokens)")


if __name__ == "__main__":
    main()
