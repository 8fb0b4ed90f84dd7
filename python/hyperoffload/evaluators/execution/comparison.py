"""
Comparing the outputs of two runs, an original program and its lowered form,
with no tolerance: a lowering that only moves data between memories must not
change a value.

```python
result = compare_outputs(original_outputs, lowered_outputs)
result.match, result.max_abs_diff      # (True, 0.0)
```
"""

from dataclasses import dataclass
from typing import Any

import numpy as np

from hyperoffload.support.arrays import max_abs_diff, same_array


@dataclass(frozen=True)
class Comparison:
    """Outputs of an original and a lowered program on the same inputs."""

    match: bool
    """Same number of outputs, same shapes and dtypes, equal values (NaN == NaN)."""
    max_abs_diff: float
    """Largest |original - lowered| over all outputs (inf on a shape or NaN mismatch)."""
    original: list[np.ndarray[Any, Any]]
    lowered: list[np.ndarray[Any, Any]]


def compare_outputs(
    original: list[np.ndarray[Any, Any]], lowered: list[np.ndarray[Any, Any]]
) -> Comparison:
    """Whether two runs returned the same outputs, and by how much they differ."""
    match = len(original) == len(lowered) and all(
        same_array(a, b) for a, b in zip(original, lowered, strict=True)
    )
    diffs = [max_abs_diff(a, b) for a, b in zip(original, lowered, strict=False)]
    worst = max(diffs, default=0.0) if len(original) == len(lowered) else float("inf")
    return Comparison(match, worst, original, lowered)
