"""
Byte sizes and rates with units, as users write them.

```python
parse_size("64GB") == 64_000_000_000
parse_size("512MiB") == 536_870_912
parse_rate("33.6GB/s") == 33.6e9
```
"""

import math
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


def _number(text: object, what: str, example: str) -> float | None:
    """
    `text` if it is a number (finite and not negative); None if it is a
    string, to be read with its unit. Raises `ValueError` for anything else.
    """
    if isinstance(text, str):
        return None
    if isinstance(text, bool) or not isinstance(text, int | float):
        raise ValueError(f"invalid {what} {text!r}: expected e.g. {example}")
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"invalid {what} {text!r}: expected a finite number >= 0")
    return value


def _finite(value: float, text: str, what: str) -> float:
    if not math.isfinite(value):
        raise ValueError(f"invalid {what} '{text}': it is not finite")
    return value


def parse_size(text: str | int | float) -> int:
    """Bytes in `text`: a number with an optional unit (B, KB..TB, KiB..TiB)."""
    example = "64GB or 512MiB"
    value = _number(text, "size", example)
    if isinstance(text, int) and value is not None:
        return text  # exact, however large
    if value is None:
        value = _finite(_quantity(str(text), "size", example), str(text), "size")
    return int(value)


def parse_rate(text: str | int | float) -> float:
    """Bytes per second in `text`, e.g. `33.6GB/s`; positive and finite."""
    value = _number(text, "rate", "33.6GB/s")
    if value is None:
        value = _finite(_rate(str(text)), str(text), "rate")
    if value <= 0:
        raise ValueError(f"invalid rate {text!r}: it must be positive")
    return value


def _rate(text: str) -> float:
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
    """Seconds in `text`, e.g. `10us`, `1.5ms`, `0.2` (seconds); finite, >= 0."""
    value = _number(text, "duration", "10us, 1.5ms or 0.2s")
    if value is not None:
        return value
    match = _DURATION.fullmatch(str(text))
    if match is None:
        raise ValueError(
            f"invalid duration '{text}': expected e.g. 10us, 1.5ms or 0.2s"
        )
    return _finite(
        float(match[1]) * _TIME_UNITS[match[2] or "s"], str(text), "duration"
    )
