"""
Offload annotations written in the model, as the seeds' developers write
them (``Parameter(..., device=remote)``, ``jit.prefetch(distance=2)``), read
by `hyperoffload.frontend.export_module.export` and carried into the IR as
argument attributes the planner honours:

```python
from hyperoffload.frontend import annotations as ho

ho.remote(model.head)                    # every parameter of the module
ho.remote(model.embed.weight)            # one parameter
ho.prefetch(model.blocks[0].fc.weight, distance=2)
```

* `remote` tags the parameter (or every parameter and buffer of a module)
  ``hyperoffload.tier = #hyperoffload.tier<remote>`` whatever the export's
  ``remote`` selection says;
* `prefetch` also tags it ``hyperoffload.prefetch_distance = N : i64``: its
  fetch is issued at least N ops before its first use.
"""

from __future__ import annotations

from torch import Tensor, nn

REMOTE_MARK = "_hyperoffload_remote"
DISTANCE_MARK = "_hyperoffload_prefetch_distance"
PREFETCH_DISTANCE_ATTR = "hyperoffload.prefetch_distance"
"""Argument attribute: the fetch of this argument is issued at least N ops before its use."""


def _tensors(target: nn.Module | Tensor) -> list[Tensor]:
    if isinstance(target, nn.Module):
        return [*target.parameters(), *target.buffers()]
    return [target]


def remote(target: nn.Module | Tensor) -> nn.Module | Tensor:
    """Mark a parameter, or every parameter and buffer of a module, as living in the pool."""
    for tensor in _tensors(target):
        setattr(tensor, REMOTE_MARK, True)
    return target


def prefetch(target: nn.Module | Tensor, distance: int) -> nn.Module | Tensor:
    """
    Mark a parameter (or those of a module) as remote, fetched at least
    `distance` ops before its first use.
    """
    if distance < 1:
        raise ValueError(f"a prefetch distance is at least 1 op, not {distance}")
    for tensor in _tensors(target):
        setattr(tensor, REMOTE_MARK, True)
        setattr(tensor, DISTANCE_MARK, distance)
    return target


def marked_remote(model: nn.Module) -> dict[str, list[str]]:
    """
    The parameters and buffers of `model` marked by `remote` or `prefetch`,
    by name, with the attributes beyond the tier that their marks add.
    """
    marks: dict[str, list[str]] = {}
    named = [*model.named_parameters(), *model.named_buffers()]
    for name, tensor in named:
        if not getattr(tensor, REMOTE_MARK, False):
            continue
        attrs: list[str] = []
        distance = getattr(tensor, DISTANCE_MARK, None)
        if distance is not None:
            attrs.append(f"{PREFETCH_DISTANCE_ATTR} = {int(distance)} : i64")
        marks[name] = attrs
    return marks
