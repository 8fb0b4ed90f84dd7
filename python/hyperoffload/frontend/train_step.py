"""
The training step an export traces (`hyperoffload.frontend.torch_export`,
mode ``train``): the loss of N micro-batches, their gradients accumulated,
and the optimizer's update, as trainers run them.

Arguments, in order (`TrainSpec.state_names` names the optimizer's):

* ``tokens``, ``targets``: ``(batch, seq)`` int64, or ``(N, batch, seq)``
  with ``grad_accum = N > 1`` (micro-batch i is ``tokens[i]``);
* ``step`` (``adamw`` only): 0-d int64, the count of this update, 1 for the
  first (AdamW's ``state["step"]`` after its increment); the bias
  corrections ``1 - β^step`` are computed from it in the program; the
  learning rate, betas, eps and weight decay are constants
  (`OptimizerSpec`);
* the parameters, in the model's order;
* ``adamw``: with weights of a lower precision than float32, the float32
  master weights (``master.NAME``); then ``exp_avg.NAME`` and
  ``exp_avg_sq.NAME`` (float32). Float32 weights are their own master
  weights: no copy.

Results: ``(loss, *grads)`` (``none``); ``(loss, *params')`` (``sgd``,
updated in the weights' dtype); ``(loss, *params', *master', *exp_avg',
*exp_avg_sq')`` (``adamw``: the float32 master weights are updated, the
weights are their rounding to the export dtype).

With ``shard = N > 1`` (``adamw``; ZeRO-1/2) the step is one device's of
an N-way data-parallel group: the master weights (or, in float32, no master
copy: the device's rows of the weights) and moments are this device's shard
(`TrainSpec.shard_shape`, the first dimension split), each gradient is
reduce-scattered, the shard updated, and the updated weights all-gathered
(`hyperoffload.frontend.sharding`; the step returns, after its results, the
markers that module takes off). Results: ``(loss, *params', *master_shard',
*exp_avg_shard', *exp_avg_sq_shard')``.

The loss is the mean cross-entropy of each micro-batch (`losses`); with N
micro-batches each micro-batch's loss is divided by N before its backward
pass, the gradients are summed (in float32 under ``adamw`` with
lower-precision weights, as master-weight trainers keep them; else in the
weights' dtype) and the loss returned is the sum of the scaled losses, their
mean.

```python
spec = TrainSpec(OptimizerSpec("adamw"), grad_accum=4, loss=LossSpec("chunked"))
step = TrainStepFn(model, spec)
loss, *updated = step(tokens, targets, count, *params, *exp_avg, *exp_avg_sq)
```
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils.hooks import RemovableHandle

from hyperoffload.frontend.losses import fused_linear_cross_entropy
from hyperoffload.frontend.models import head_weight
from hyperoffload.frontend.optimizers import adamw_update, sgd_update
from hyperoffload.frontend.training import TrainSpec

Ready = Callable[[int, Tensor], None]
"""Called with a parameter's index and its gradient once the backward pass completes it."""


class TrainStepFn:
    """The training step of `spec` over the parameters of `model` (held, not registered)."""

    def __init__(self, model: nn.Module, spec: TrainSpec | None = None) -> None:
        self.model = model
        self.spec = spec or TrainSpec()
        self.names = [n for n, _ in model.named_parameters()]
        self.head = self.names.index(head_weight(model))

    def _call(self, params: Sequence[Tensor], tokens: Tensor, head: bool) -> Tensor:
        params_dict = dict(zip(self.names, params, strict=True))
        out = torch.func.functional_call(
            self.model, params_dict, (tokens,), {"head": head}
        )
        return cast(tuple[Tensor, object], out)[0]

    def loss_and_grads(
        self,
        tokens: Tensor,
        targets: Tensor,
        params: Sequence[Tensor],
        parts: int,
        ready: Ready | None = None,
    ) -> tuple[Tensor, list[Tensor]]:
        """
        One micro-batch: its loss and the gradients of ``loss / parts``;
        each gradient also goes to `ready` the moment the backward pass
        completes it (the chunked loss's head gradient before the body's
        backward pass, the others through a hook on their parameter).
        """
        loss_spec = self.spec.loss
        if loss_spec.kind == "full":
            logits = self._call(params, tokens, head=True)
            loss = F.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
            )
            scaled = loss if parts == 1 else loss / parts
            with _hooks(params, range(len(params)), ready):
                return loss, list(torch.autograd.grad(scaled, params))
        h = self._call(params, tokens, head=False)
        flat = h.reshape(-1, h.shape[-1])
        w = params[self.head]
        chunks = loss_spec.chunk_count(flat.shape[0], w.shape[0], w.shape[1])
        loss, dh, dw = fused_linear_cross_entropy(
            flat, w, targets.reshape(-1), chunks, parts
        )
        if ready is not None:
            ready(self.head, dw)
        body = [i for i in range(len(params)) if i != self.head]
        with _hooks(params, body, ready):
            grads = list(
                torch.autograd.grad(h, [params[i] for i in body], dh.reshape(h.shape))
            )
        grads.insert(self.head, dw)
        return loss, grads

    def gradients(
        self,
        tokens: Tensor,
        targets: Tensor,
        params: Sequence[Tensor],
        wide: bool,
        ready: Ready | None = None,
    ) -> tuple[Tensor, list[Tensor]]:
        """
        The loss and the gradients over the micro-batches (summed in float32
        if `wide`). With `ready`, each summed gradient goes to `ready` as
        soon as the last micro-batch's backward pass completes it, and no
        gradient is returned.
        """
        n = self.spec.grad_accum
        total: Tensor | None = None
        summed: list[Tensor] = []
        for i in range(n):
            hook: Ready | None = None
            if ready is not None and i == n - 1:
                hook = _summing(ready, summed, wide)
            micro = (tokens, targets) if n == 1 else (tokens[i], targets[i])
            loss, grads = self.loss_and_grads(*micro, params, n, hook)
            if wide and hook is None:
                grads = [g.to(torch.float32) for g in grads]
            if n == 1:
                total = loss
            else:
                share = loss / n
                total = share if total is None else total + share
            if hook is not None:
                break
            summed = (
                grads
                if not summed
                else [a + g for a, g in zip(summed, grads, strict=True)]
            )
        assert total is not None
        return total, [] if ready is not None else summed

    def __call__(
        self, tokens: Tensor, targets: Tensor, *rest: Tensor
    ) -> tuple[Tensor, ...]:
        optimizer = self.spec.optimizer
        n = len(self.names)
        step = rest[0] if optimizer.kind == "adamw" else None
        args = rest[1:] if step is not None else rest
        params, states = args[:n], args[n:]
        master = optimizer.kind == "adamw" and len(states) == 3 * n
        if optimizer.kind == "none":
            loss, grads = self.gradients(tokens, targets, params, wide=master)
            return (loss, *grads)
        weights = states[:n] if master else params
        m, v = states[-2 * n : -n], states[-n:]
        if self.spec.in_backward:
            update = _Update(self.spec, self.names, params, weights, m, v, step, master)
            loss, _ = self.gradients(tokens, targets, params, master, update)
            return update.results(loss)
        loss, grads = self.gradients(tokens, targets, params, wide=master)
        with torch.no_grad():
            if optimizer.kind == "sgd":
                updated = [
                    sgd_update(p, g, optimizer)
                    for p, g in zip(params, grads, strict=True)
                ]
                return (loss, *updated)
            assert step is not None
            if self.spec.shard > 1:
                return self._sharded(loss, params, grads, weights, m, v, step, master)
            new = [
                adamw_update(w, g, m_i, v_i, step, optimizer)
                for w, g, m_i, v_i in zip(weights, grads, m, v, strict=True)
            ]
            new_weights = [w for w, _, _ in new]
            results = [loss]
            if master:
                results += [
                    w.to(p.dtype) for w, p in zip(new_weights, params, strict=True)
                ]
            results += new_weights
            results += [m_i for _, m_i, _ in new] + [v_i for _, _, v_i in new]
            return tuple(results)

    def _sharded(
        self,
        loss: Tensor,
        params: Sequence[Tensor],
        grads: Sequence[Tensor],
        weights: Sequence[Tensor],
        m: Sequence[Tensor],
        v: Sequence[Tensor],
        step: Tensor,
        master: bool,
    ) -> tuple[Tensor, ...]:
        """
        One device's AdamW step over its shard: each gradient's shard (the
        stand-in of a reduce-scatter), the shard of the master weights (or
        of the float32 weights) and moments updated, the new weights
        gathered (stand-in: the shard at its rows of zeros); then the
        markers of `hyperoffload.frontend.sharding`.
        """
        spec = self.spec
        names = self.names
        shards = [_own_rows(g, spec, n) for g, n in zip(grads, names, strict=True)]
        own = (
            weights
            if master
            else [_own_rows(w, spec, n) for w, n in zip(weights, names, strict=True)]
        )
        new = [
            adamw_update(w, g, m_i, v_i, step, spec.optimizer)
            for w, g, m_i, v_i in zip(own, shards, m, v, strict=True)
        ]
        new_weights = [w for w, _, _ in new]
        low = [w.to(p.dtype) for w, p in zip(new_weights, params, strict=True)]
        gathered = [_gathered(w, spec, n) for w, n in zip(low, names, strict=True)]
        results = [loss, *gathered]
        if master:
            results += new_weights
        results += [m_i for _, m_i, _ in new] + [v_i for _, _, v_i in new]
        markers = [t for pair in zip(grads, shards, strict=True) for t in pair]
        markers += [t for pair in zip(low, gathered, strict=True) for t in pair]
        return (*results, *markers)


@contextmanager
def _hooks(
    params: Sequence[Tensor], indices: Iterable[int], ready: Ready | None
) -> Generator[None]:
    """Within: `ready` gets each of `params[indices]`'s gradients (a hook on each)."""
    if ready is None:
        yield
        return
    tensors = cast(Sequence[Any], params)  # register_hook's hook is untyped
    handles: list[RemovableHandle] = [
        tensors[i].register_hook(partial(_deliver, ready, i)) for i in indices
    ]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def _deliver(ready: Ready, index: int, grad: Tensor) -> None:
    """A gradient hook: hands the gradient on and leaves it unchanged."""
    ready(index, grad)


def _summing(ready: Ready, summed: Sequence[Tensor], wide: bool) -> Ready:
    """
    `ready` of a last micro-batch: its gradient (in float32 if `wide`) added
    to the sum of the earlier ones (`summed`, in the same order as
    `TrainStepFn.gradients` sums them), then handed on.
    """

    def hook(index: int, grad: Tensor) -> None:
        if wide:
            grad = grad.to(torch.float32)
        ready(index, summed[index] + grad if summed else grad)

    return hook


class _Update:
    """
    The optimizer step of one parameter at a time (`TrainSpec.in_backward`):
    called with a parameter's index and its whole gradient, it updates that
    parameter (and its states) at once; `results` lays the updates out as
    `TrainStepFn` returns them.
    """

    def __init__(
        self,
        spec: TrainSpec,
        names: Sequence[str],
        params: Sequence[Tensor],
        weights: Sequence[Tensor],
        m: Sequence[Tensor],
        v: Sequence[Tensor],
        step: Tensor | None,
        master: bool,
    ) -> None:
        self.spec, self.params, self.weights = spec, params, weights
        self.m, self.v, self.step, self.master = m, v, step, master
        self.done: dict[int, tuple[Tensor, ...]] = {}
        self.names = names

    def __call__(self, i: int, grad: Tensor) -> None:
        spec, optimizer = self.spec, self.spec.optimizer
        with torch.no_grad():
            if optimizer.kind == "sgd":
                self.done[i] = (sgd_update(self.params[i], grad, optimizer),)
                return
            assert self.step is not None
            sharded = spec.shard > 1
            name = self.names[i]
            shard = _own_rows(grad, spec, name) if sharded else grad
            own = self.weights[i]
            if sharded and not self.master:
                own = _own_rows(own, spec, name)
            w, m, v = adamw_update(
                own, shard, self.m[i], self.v[i], self.step, optimizer
            )
            low = w.to(self.params[i].dtype) if self.master or sharded else w
            if not sharded:
                self.done[i] = (low, w, m, v)
                return
            self.done[i] = (_gathered(low, spec, name), w, m, v, grad, shard, low)

    def results(self, loss: Tensor) -> tuple[Tensor, ...]:
        """`TrainStepFn`'s results, from every parameter's update."""
        n = len(self.params)
        missing = [i for i in range(n) if i not in self.done]
        assert not missing, f"no gradient reached parameters {missing}"
        done = [self.done[i] for i in range(n)]
        if self.spec.optimizer.kind == "sgd":
            return (loss, *(d[0] for d in done))
        results = [loss, *(d[0] for d in done)]
        if self.master:
            results += [d[1] for d in done]
        results += [d[2] for d in done] + [d[3] for d in done]
        if self.spec.shard > 1:
            results += [t for d in done for t in (d[4], d[5])]
            results += [t for d in done for t in (d[6], d[0])]
        return tuple(results)


def _own_rows(tensor: Tensor, spec: TrainSpec, name: str) -> Tensor:
    """This device's rows of `tensor` (a reduce-scatter of identical replicas)."""
    rows = spec.shard_rows(tensor.shape[0], name)
    return tensor[rows.start : rows.stop]


def _gathered(shard: Tensor, spec: TrainSpec, name: str) -> Tensor:
    """`shard` at this device's rows of zeros (an all-gather's stand-in)."""
    whole = shard.shape[0] * spec.group_of(name)
    rows = spec.shard_rows(whole, name)
    return F.pad(shard, (0, 0) * (shard.dim() - 1) + (rows.start, whole - rows.stop))
