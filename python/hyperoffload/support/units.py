"""
Byte sizes and rates with units, as users write them.

```python
parse_size("64GB") == 64_000_000_000
parse_size("512MiB") == 536_870_912
parse_rate("33.6GB/s") == 33.6e9
```
"""

import re

_UNITS = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
}
_QUANTITY = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*")


def _quantity(text: str, what: str, example: str) -> float:
    match = _QUANTITY.fullmatch(text)
    unit = match[2].upper() if match else None
    if match is None or unit not in _UNITS:
        raise ValueError(
            f"invalid {what} '{text}': expected a number with an optional unit "
            f"(B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. {example}"
        )
    return float(match[1]) * _UNITS[unit]


def parse_size(text: str | int | float) -> int:
    """Bytes in `text`: a number with an optional unit (B, KB..TB, KiB..TiB)."""
    if isinstance(text, int | float):
        return int(text)
    return int(_quantity(text, "size", "64GB or 512MiB"))


def parse_rate(text: str | int | float) -> float:
    """Bytes per second in `text`, e.g. `33.6GB/s`."""
    if isinstance(text, int | float):
        return float(text)
    stripped = text.strip()
    if not stripped.endswith("/s"):
        raise ValueError(
            f"invalid rate '{text}': expected a size per second, e.g. 33.6GB/s"
        )
    return _quantity(stripped[:-2], "rate", "33.6GB/s")


def format_bytes(count: float) -> str:
    """`count` bytes in the largest decimal unit that keeps it >= 1, e.g. `1.50 GB`."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(count) >= scale:
            return f"{count / scale:.2f} {unit}"
    return f"{count:.0f} B"


def format_seconds(seconds: float) -> str:
    """`seconds` in s, ms or us, e.g. `12.5 ms`."""
    if abs(seconds) >= 1:
        return f"{seconds:.3f} s"
    if abs(seconds) >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} us"


_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_DURATION = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us|ns)?\s*")


def parse_duration(text: str | int | float) -> float:
    """Seconds in `text`, e.g. `10us`, `1.5ms`, `0.2` (seconds)."""
    if isinstance(text, int | float):
        return float(text)
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(
            f"invalid duration '{text}': expected e.g. 10us, 1.5ms or 0.2s"
        )
    return float(match[1]) * _TIME_UNITS[match[2] or "s"]
