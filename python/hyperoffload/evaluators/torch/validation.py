"""
The simulator against measurement: for each run of a program (unplanned,
and planned at HBM targets), the `hyperoffload-sim` report beside the
`hyperoffload-run` one, as a markdown table or JSON.

```python
row = ValidationRow("plan", 0.6, 248_000, sim_report, run_report, outputs_match=True)
print(format_markdown([row], program="tiny.mlir", hardware="cpu.toml", device="cpu"))
```
```
| run | HBM target | makespan modelled | makespan measured | error | peak modelled | ...
| none | - | 1.2 ms | 31.4 ms | -96% | 413.19 KB | ...
```

`error` is modelled / measured - 1: negative where the model is optimistic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hyperoffload.support.units import format_bytes, format_seconds


@dataclass(frozen=True)
class ValidationRow:
    policy: str
    """`none` (the unplanned program) or `plan`."""
    fraction: float | None
    """The HBM target as a fraction of the modelled unplanned peak."""
    capacity_bytes: int | None
    modelled: dict[str, Any]
    """`hyperoffload-sim`'s report."""
    measured: dict[str, Any]
    """`hyperoffload-run`'s report."""
    outputs_match: bool


def relative_error(modelled: float, measured: float) -> float | None:
    """`modelled / measured - 1`; None where `measured` is 0."""
    if measured == 0:
        return 0.0 if modelled == 0 else None
    return modelled / measured - 1


def _percent(change: float | None) -> str:
    return "n/a" if change is None else f"{change:+.0%}"


def _label(row: ValidationRow) -> str:
    return "none" if row.fraction is None else f"plan at {row.fraction:.0%}"


def _cells(row: ValidationRow) -> list[str]:
    m, r = row.modelled, row.measured
    return [
        _label(row),
        "-" if row.capacity_bytes is None else format_bytes(row.capacity_bytes),
        format_seconds(m["makespan_s"]),
        format_seconds(r["makespan_s"]),
        _percent(relative_error(m["makespan_s"], r["makespan_s"])),
        format_bytes(m["peak_hbm_bytes"]),
        format_bytes(r["peak_hbm_bytes"]),
        _percent(relative_error(m["peak_hbm_bytes"], r["peak_hbm_bytes"])),
        format_seconds(m["exposed_transfer_s"]),
        format_seconds(r["exposed_transfer_s"]),
        "yes" if row.outputs_match else "no",
    ]


HEADER = [
    "run",
    "HBM target",
    "makespan modelled",
    "makespan measured",
    "error",
    "peak modelled",
    "peak measured",
    "error",
    "exposed modelled",
    "exposed measured",
    "outputs match",
]


def format_markdown(
    rows: list[ValidationRow], program: str, hardware: str, device: str
) -> str:
    """A heading line, then one table row per run."""
    lines = [
        f"{program}: modelled on {hardware}, measured on {device}",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "|".join(" --- " for _ in HEADER) + "|",
    ]
    lines += ["| " + " | ".join(_cells(row)) + " |" for row in rows]
    return "\n".join(lines)


def rows_json(rows: list[ValidationRow]) -> list[dict[str, Any]]:
    """Each row with both reports and the errors of makespan and peak."""
    return [
        {
            "policy": row.policy,
            "fraction": row.fraction,
            "hbm_capacity_bytes": row.capacity_bytes,
            "outputs_match_reference": row.outputs_match,
            "makespan_error": relative_error(
                row.modelled["makespan_s"], row.measured["makespan_s"]
            ),
            "peak_error": relative_error(
                row.modelled["peak_hbm_bytes"], row.measured["peak_hbm_bytes"]
            ),
            "modelled": row.modelled,
            "measured": row.measured,
        }
        for row in rows
    ]
