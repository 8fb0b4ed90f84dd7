"""
Byte sizes and rates with units, as users write them.

```python
parse_size("64GB") == 64_000_000_000
parse_size("512MiB") == 536_870_912
parse_rate("33.6GB/s") == 33.6e9
parse_size("1000", bare_bytes=True) == 1000  # where the option is documented in bytes
parse_rate(10)  # ValueError: invalid rate 10: 10 what? write 10GB/s or 10B/s (...)
```
"""

import math
import re

_UNITS = {
    "": 1,  # no unit: an error unless the field is documented in bytes
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


def _quantity(text: str, what: str, example: str) -> tuple[float, str]:
    """The number in `text` times its unit, and the unit as written ('' for none)."""
    match = _QUANTITY.fullmatch(text)
    unit = match[2].upper() if match else None
    if match is None or unit not in _UNITS:
        raise ValueError(
            f"invalid {what} '{text}': expected a number with a unit "
            f"(B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. {example}"
        )
    return float(match[1]) * _UNITS[unit], match[2]


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


def _bare(text: object, what: str, unit: str) -> ValueError:
    """The error for a number written without its unit."""
    number = str(text).strip()
    per = unit.removeprefix("GB")
    return ValueError(
        f"invalid {what} {number}: {number} what? write {number}{unit} "
        f"or {number}B{per} (a {what} needs a unit)"
    )


def parse_size(text: str | int | float, *, bare_bytes: bool = False) -> int:
    """
    Bytes in `text`: a number with its unit (B, KB..TB, KiB..TiB). A bare
    number is an error (`10` what?), unless `bare_bytes`: then a whole number
    is a count of bytes (for options whose documentation says bytes).
    """
    example = "64GB or 512MiB"
    value = _number(text, "size", example)
    if value is None:
        value, unit = _quantity(str(text), "size", example)
        value = _finite(value, str(text), "size")
        if unit:
            return int(value)
    if not bare_bytes or value != int(value):
        raise _bare(text, "size", "GB")
    return text if isinstance(text, int) else int(value)  # an int: exact, however large


def parse_rate(text: str | int | float) -> float:
    """Bytes per second in `text`, e.g. `33.6GB/s`: positive, finite, with its unit."""
    value = _number(text, "rate", "33.6GB/s")
    if value is not None:
        if value <= 0:
            raise ValueError(f"invalid rate {text!r}: it must be positive")
        raise _bare(text, "rate", "GB/s")
    value = _finite(_rate(str(text)), str(text), "rate")
    if value <= 0:
        raise ValueError(f"invalid rate {text!r}: it must be positive")
    return value


def _rate(text: str) -> float:
    stripped = text.strip()
    if not stripped.endswith("/s"):
        match = _QUANTITY.fullmatch(stripped)
        if match is not None and not match[2]:
            raise _bare(stripped, "rate", "GB/s")
        raise ValueError(
            f"invalid rate '{text}': expected a size per second, e.g. 33.6GB/s"
        )
    value, unit = _quantity(stripped[:-2], "rate", "33.6GB/s")
    if not unit:
        raise _bare(stripped[:-2], "rate", "GB/s")
    return value


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
