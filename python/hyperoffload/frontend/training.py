"""
What an exported training step does beyond the forward and backward passes,
as plain data (no torch needed): the optimizer and its hyperparameters, the
loss and its chunks of tokens, the micro-batches of one step. The step
itself is `hyperoffload.frontend.train_step`.

```python
spec = TrainSpec(OptimizerSpec("adamw"), grad_accum=4, loss=LossSpec("chunked"))
spec.state_names(["w"], master=True)  # ['master.w', 'exp_avg.w', 'exp_avg_sq.w']
```
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

OptimizerKind = Literal["none", "sgd", "adamw"]
OPTIMIZERS: tuple[OptimizerKind, ...] = ("none", "sgd", "adamw")
"""
What a training step does with its gradients: ``none`` returns them, ``sgd``
and ``adamw`` consume them in an update of the weights they return.
"""


@dataclass(frozen=True)
class OptimizerSpec:
    """
    The optimizer of a training step and its hyperparameters (PyTorch's
    defaults for `torch.optim.AdamW`; `sgd` reads only `lr`: plain SGD
    without momentum, dampening or weight decay). They are constants of the
    exported program; the step count is an argument (`adamw_update`).

    >>> OptimizerSpec("adamw").betas
    (0.9, 0.999)
    """

    kind: OptimizerKind = "none"
    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 1e-2

    def describe(self) -> str:
        """
        One line for a program's header.

        >>> OptimizerSpec("sgd", lr=0.5).describe()
        'sgd (lr 0.5)'
        """
        if self.kind == "sgd":
            return f"sgd (lr {self.lr:g})"
        if self.kind == "adamw":
            b1, b2 = self.betas
            return (
                f"adamw (lr {self.lr:g}, betas {b1:g} {b2:g}, eps {self.eps:g}, "
                f"weight decay {self.weight_decay:g})"
            )
        return "none"


LossKind = Literal["full", "chunked"]
LOSSES: tuple[LossKind, ...] = ("full", "chunked")
IGNORE_INDEX = -100
"""Targets that count for nothing (`F.cross_entropy`'s default ignore_index)."""


@dataclass(frozen=True)
class LossSpec:
    """
    How a training step computes its loss; `chunks` is the number of chunks
    of tokens of a ``chunked`` loss (None: `default_chunks`).

    >>> LossSpec("chunked", 8).describe(tokens=16, vocab=128, hidden=64)
    'chunked loss (8 chunks of 2 tokens)'
    """

    kind: LossKind = "full"
    chunks: int | None = None

    def chunk_count(self, tokens: int, vocab: int, hidden: int) -> int:
        """Chunks of a ``chunked`` loss over `tokens` tokens (1: ``full``)."""
        if self.kind == "full":
            return 1
        if self.chunks is not None:
            return self.chunks
        return default_chunks(tokens, vocab, hidden)

    def describe(self, tokens: int, vocab: int, hidden: int) -> str:
        """One line for a program's header."""
        if self.kind == "full":
            return "full loss"
        chunks = self.chunk_count(tokens, vocab, hidden)
        return f"chunked loss ({chunks} chunks of {math.ceil(tokens / chunks)} tokens)"


def default_chunks(tokens: int, vocab: int, hidden: int) -> int:
    """
    Liger's choice: chunks of the power of two at or above
    ``tokens / ceil(vocab / hidden)`` tokens, so a chunk's logits hold about
    as many elements as the hidden states of all tokens.

    >>> default_chunks(16384, 128256, 4096)  # LLaMA-3-8B, 2 x 8192 tokens
    32
    """
    factor = math.ceil(vocab / hidden)
    size = 1 << max(math.ceil(tokens / factor) - 1, 0).bit_length()
    return math.ceil(tokens / size)


def chunk_rows(tokens: int, chunks: int) -> list[range]:
    """
    The rows of each chunk: `chunks` runs of ``ceil(tokens / chunks)`` rows,
    the last one shorter (or fewer chunks if the rows run out).

    >>> chunk_rows(10, 4)
    [range(0, 3), range(3, 6), range(6, 9), range(9, 10)]
    """
    size = math.ceil(tokens / chunks)
    return [range(start, min(start + size, tokens)) for start in range(0, tokens, size)]


_ROUTED_EXPERT = re.compile(r"(^|\.)feed_forward\.experts\.\d+\.")
"""The name of a routed expert's parameter (`models.MoE.experts`)."""


@dataclass(frozen=True)
class TrainSpec:
    """
    What a training step does beyond the forward pass: the optimizer, the
    micro-batches of one step and the loss.

    >>> TrainSpec(OptimizerSpec("adamw")).state_names(["w"], master=True)
    ['master.w', 'exp_avg.w', 'exp_avg_sq.w']
    """

    optimizer: OptimizerSpec = field(default_factory=OptimizerSpec)
    grad_accum: int = 1
    loss: LossSpec = field(default_factory=LossSpec)
    shard: int = 1
    """
    Devices of the data-parallel group over which the optimizer states are
    sharded (ZeRO-1/2; ``adamw`` only): the step is one device's, updating
    1/`shard` of every master weight and moment (1: not sharded).
    """
    rank: int = 0
    """This device's place in the group (its shard: `shard_rows`)."""
    expert_shard: int = 1
    """
    The expert-parallel group within the data-parallel one (moe family,
    `hyperoffload-gen --expert-shard`): a routed expert lives on `shard` /
    `expert_shard` devices of the group, over which its states are sharded
    (`group_of`), as DeepSeek-V3's ZeRO-1 shards them.
    """
    in_backward: bool = False
    """
    The optimizer step in the backward pass (torchtune's
    ``optimizer_in_bwd``; `sgd` and `adamw` only): each parameter is updated
    as soon as its gradient is complete, in the order the backward pass
    completes them, instead of all after the backward pass. With N > 1
    micro-batches the updates run in the last one's backward pass. The
    program computes the same values; only the order of its ops differs.
    """

    @property
    def is_default(self) -> bool:
        """Today's step: no optimizer, one micro-batch, the full loss."""
        return self == TrainSpec()

    def group_of(self, name: str = "") -> int:
        """
        The devices that share the parameter `name`'s states: the group, or
        for a routed expert's parameter its replicas (`expert_shard`).

        >>> spec = TrainSpec(OptimizerSpec("adamw"), shard=8, expert_shard=4)
        >>> spec.group_of("layers.0.feed_forward.experts.1.w1.weight")
        2
        """
        if self.expert_shard > 1 and _ROUTED_EXPERT.search(name):
            return self.shard // self.expert_shard
        return self.shard

    def rank_of(self, name: str = "") -> int:
        """This device's place among the devices sharing `name` (`group_of`)."""
        return self.rank % self.group_of(name)

    def shard_shape(self, shape: Sequence[int], name: str = "") -> tuple[int, ...]:
        """
        The shape of this device's shard of a tensor of `shape` (its first
        dimension split over the group, `group_of(name)`).

        >>> TrainSpec(OptimizerSpec("adamw"), shard=8).shard_shape((1024, 4096))
        (128, 4096)
        """
        return (shape[0] // self.group_of(name), *shape[1:])

    def shard_rows(self, rows: int, name: str = "") -> range:
        """
        The rows of a tensor of `rows` rows this device owns.

        >>> TrainSpec(OptimizerSpec("adamw"), shard=4, rank=1).shard_rows(16)
        range(4, 8)
        """
        size = rows // self.group_of(name)
        rank = self.rank_of(name)
        return range(rank * size, (rank + 1) * size)

    def state_names(self, names: Sequence[str], master: bool) -> list[str]:
        """The optimizer-state arguments after the parameters `names`."""
        if self.optimizer.kind != "adamw":
            return []
        kinds = (
            ["master", "exp_avg", "exp_avg_sq"] if master else ["exp_avg", "exp_avg_sq"]
        )
        return [f"{kind}.{name}" for kind in kinds for name in names]
