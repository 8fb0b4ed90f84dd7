"""
The keys a hardware file may hold, table by table: any other key is an error
that names the nearest known one and the line it is on.

```python
check_keys(tomllib.loads(text), text)
# ValueError: unknown key 'device.peak_flop' (did you mean 'peak_flops'?); err.line == ":7"
```
"""

from __future__ import annotations

import difflib
import re
from typing import Any, cast

from hyperoffload.support.tiers import OFFLOAD_TIERS

TOP_KEYS = ("description", "base", "device", "tiers", "interconnect")
DEVICE_KEYS = (
    "hbm_capacity",
    "hbm_bandwidth",
    "peak_flops",
    "compute_efficiency",
    "attention_efficiency",
    "memory_efficiency",
    "op_overhead",
)
TIER_KEYS = (
    "capacity",
    "bandwidth_to_device",
    "bandwidth_from_device",
    "latency",
    "duplex_efficiency",
    "staged_through",
)
INTERCONNECT_KEYS = ("bandwidth", "latency")
COMMON_DTYPES = ("f32", "bf16", "f16", "f64", "f8E4M3FN", "f8E5M2", "i8", "i32")
_DTYPE = re.compile(r"bf16|tf32|f\d+(E\d+M\d+\w*)?|[su]?i\d+")
"""An MLIR element type name, as the cost model asks for a peak (`f32`, `bf16`, `i8`)."""


class UnknownKeyError(ValueError):
    """An unknown key; `line` is `:N` where the file has it, else ''."""

    def __init__(self, message: str, line: str):
        super().__init__(message)
        self.line = line


def check_keys(data: dict[str, Any], text: str) -> None:
    """Raise `UnknownKeyError` for the first key of `data` no table knows."""
    _check(data, (), TOP_KEYS, text)
    device = data.get("device")
    if isinstance(device, dict):
        device = cast(dict[str, Any], device)
        _check(device, ("device",), DEVICE_KEYS, text)
        peak = device.get("peak_flops")
        if isinstance(peak, dict):
            for dtype in cast(dict[str, Any], peak):
                if not _DTYPE.fullmatch(dtype):
                    _unknown(("device", "peak_flops", dtype), COMMON_DTYPES, text)
    interconnect = data.get("interconnect")
    if isinstance(interconnect, dict):
        _check(
            cast(dict[str, Any], interconnect),
            ("interconnect",),
            INTERCONNECT_KEYS,
            text,
        )
    tiers = data.get("tiers")
    if isinstance(tiers, dict):
        tiers = cast(dict[str, Any], tiers)
        _check(tiers, ("tiers",), OFFLOAD_TIERS, text)
        for tier, spec in tiers.items():
            if isinstance(spec, dict):
                _check(cast(dict[str, Any], spec), ("tiers", tier), TIER_KEYS, text)


def _check(
    table: dict[str, Any], path: tuple[str, ...], known: tuple[str, ...], text: str
) -> None:
    for key in table:
        if key not in known:
            _unknown((*path, key), known, text)


def _unknown(path: tuple[str, ...], known: tuple[str, ...], text: str) -> None:
    key = path[-1]
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"did you mean '{close[0]}'?" if close else f"known: {', '.join(known)}"
    line = line_of(text, path)
    raise UnknownKeyError(
        f"unknown key '{'.'.join(path)}' ({hint})", "" if line is None else f":{line}"
    )


_HEADER = re.compile(r"\[\[?\s*([^\]]+?)\s*\]\]?")
_KEY = re.compile(r"(\"[^\"]*\"|'[^']*'|[A-Za-z0-9_-]+)\s*[=.]")


def line_of(text: str, path: tuple[str, ...]) -> int | None:
    """
    The line where the TOML `text` gives the key at `path` (its table header,
    or its `key =` line in its table); None where it says it otherwise.
    """
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.split("#", 1)[0].strip()
        header = _HEADER.fullmatch(stripped)
        if header:
            table = tuple(p.strip().strip("\"'") for p in header[1].split("."))
            if table[: len(path)] == path:
                return number
            continue
        key = _KEY.match(stripped)
        if key and table == path[:-1] and key[1].strip("\"'") == path[-1]:
            return number
    return None
