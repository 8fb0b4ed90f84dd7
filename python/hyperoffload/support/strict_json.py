"""
Strict JSON text: `Infinity` and `NaN` are not JSON, so a non-finite number
in a document is an error that names where it is, never written.

```python
strict_dumps({"makespan_s": 0.5}) == '{"makespan_s": 0.5}'
strict_dumps({"results": [{"makespan_s": math.inf}]})
# ValueError: results[0].makespan_s is inf, which JSON cannot hold
```
"""

from __future__ import annotations

import json
import math
from typing import Any, cast


class NonFiniteError(ValueError):
    """A document holding an infinite or NaN number."""


def strict_dumps(document: Any, indent: int | None = None) -> str:
    """`json.dumps(document)` with `allow_nan=False`; the error names the place."""
    try:
        return json.dumps(document, indent=indent, allow_nan=False)
    except ValueError:
        place = _non_finite(document, "")
        if place is None:
            raise
        where, value = place
        raise NonFiniteError(
            f"{where or 'the document'} is {value}, which JSON cannot hold"
        ) from None


def _non_finite(value: Any, where: str) -> tuple[str, float] | None:
    """The first non-finite number in `value` and its path (`a.b[2]`)."""
    if isinstance(value, float) and not math.isfinite(value):
        return where, value
    if isinstance(value, dict):
        for key, item in cast(dict[Any, Any], value).items():
            found = _non_finite(item, f"{where}.{key}" if where else str(key))
            if found is not None:
                return found
    if isinstance(value, list | tuple):
        for index, item in enumerate(cast(list[Any], value)):
            found = _non_finite(item, f"{where}[{index}]")
            if found is not None:
                return found
    return None
