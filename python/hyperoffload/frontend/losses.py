"""
The loss of an exported training step: ``full`` (the LM head's logits for
every token, then `F.cross_entropy`, differentiated by autograd) or
``chunked``, the LM head fused with the cross-entropy over chunks of tokens
(Liger's fused linear cross-entropy, torchtune's chunked loss), whose
gradients are computed chunk by chunk in the forward: for each chunk of rows
of the final hidden states ``h`` (tokens, hidden) and the head ``W`` (vocab,
hidden), the chunk's float32 logits, their log-sum-exp and loss, then
``dlogits = (softmax - onehot) / valid tokens``, ``dh = dlogits W`` and
``dW += dlogitsᵀ h``; the chunk's logits die before the next chunk starts, so
no tensor of tokens by vocabulary exists, forward or backward.

```python
loss, dh, dw = fused_linear_cross_entropy(h, w, targets, chunks=4)
```
"""

from __future__ import annotations

import torch
from torch import Tensor

from hyperoffload.frontend.models import one_hot
from hyperoffload.frontend.training import IGNORE_INDEX, chunk_rows


def fused_linear_cross_entropy(
    h: Tensor, w: Tensor, targets: Tensor, chunks: int, parts: int = 1
) -> tuple[Tensor, Tensor, Tensor]:
    """
    The mean cross-entropy of the logits ``h Wᵀ`` against `targets` (float32
    logits; targets `IGNORE_INDEX` skipped), with the gradients of
    ``loss / parts`` (one of `parts` micro-batches) with respect to `h` (tokens, hidden) and `w` (vocab,
    hidden), computed over `chunks` chunks of tokens. Returns ``(loss, dh,
    dw)``; `dh` and `dw` have the dtypes of `h` and `w`, and `dw` is summed
    over the chunks in `w`'s dtype, as Liger's ``addmm`` into the weight's
    gradient does (a float32 sum would move twice the bytes per chunk).
    """
    vocab = w.shape[0]
    valid = (targets != IGNORE_INDEX).to(torch.float32)
    count = valid.sum()
    coefficient = count.new_full((), 1.0) / (count * parts if parts > 1 else count)
    loss_sum: Tensor | None = None
    dh: list[Tensor] = []
    dw: Tensor | None = None
    for rows in chunk_rows(h.shape[0], chunks):
        h_c = h[rows.start : rows.stop]
        logits = (h_c @ w.transpose(0, 1)).to(torch.float32)
        top = logits.amax(-1, keepdim=True)
        shifted = logits - top
        logp = shifted - torch.log(torch.exp(shifted).sum(-1, keepdim=True))
        keep = valid[rows.start : rows.stop].unsqueeze(-1)
        hot = one_hot(targets[rows.start : rows.stop], vocab, torch.float32) * keep
        chunk_loss = -(logp * hot).sum(-1).sum()
        loss_sum = chunk_loss if loss_sum is None else loss_sum + chunk_loss
        dlogits = (torch.exp(logp) * keep - hot) * coefficient
        dlogits = dlogits.to(h.dtype)
        dh.append(dlogits @ w)
        dw_c = dlogits.transpose(0, 1) @ h_c
        dw = dw_c if dw is None else dw + dw_c
    assert loss_sum is not None, "at least one token"
    assert dw is not None
    return loss_sum / count, torch.cat(dh), dw
