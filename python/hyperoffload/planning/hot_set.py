"""
The routed experts a budget keeps resident: greedily by expected hits per
byte across the layers (`choose_hot_set`), the hot set that the planner
writes into a routed program (`hyperoffload.planning.experts`) and that
the `ours` expert policy pins (`hyperoffload.policies.experts`).

```python
step = MoEStep.uniform(2, 3, 1, expert_bytes=10, expert_s=0.0)
choose_hot_set(step, [[0.5, 0.2, 0.3], [0.1, 0.6, 0.35]], 30)  # [[0], [1, 2]]
```
"""

from __future__ import annotations

from collections.abc import Sequence

from hyperoffload.model.moe import MoEStep


def choose_hot_set(
    step: MoEStep,
    frequencies: Sequence[Sequence[float]],
    budget_bytes: int,
) -> list[list[int]]:
    """
    The experts each layer keeps resident: greedily by expected hits per
    byte (`frequency / bytes`) across the layers, ties to the lower layer
    and expert, each that fits in `budget_bytes` (whole experts; an expert
    never chosen is never kept).

    >>> step = MoEStep.uniform(2, 3, 1, expert_bytes=10, expert_s=0.0)
    >>> choose_hot_set(step, [[0.5, 0.2, 0.3], [0.1, 0.6, 0.35]], 30)
    [[0], [1, 2]]
    """
    ranked = sorted(
        (
            (-p / spec.expert_bytes[e], layer, e)
            for layer, (spec, row) in enumerate(
                zip(step.layers, frequencies, strict=True)
            )
            for e, p in enumerate(row)
            if p > 0
        ),
    )
    hot: list[list[int]] = [[] for _ in step.layers]
    left = budget_bytes
    for _, layer, expert in ranked:
        nbytes = step.layers[layer].expert_bytes[expert]
        if nbytes <= left:
            hot[layer].append(expert)
            left -= nbytes
    return [sorted(experts) for experts in hot]
