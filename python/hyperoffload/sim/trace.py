"""
Chrome / Perfetto trace-event JSON of a simulation: the compute stream and
each copy stream as tracks, HBM occupancy as a counter. Open it in
https://ui.perfetto.dev or chrome://tracing.

```python
write_output(Path("trace.json"), trace_json(simulate(schedule, hardware)))
```
"""

from __future__ import annotations

from typing import Any

from hyperoffload.sim.simulator import SimResult
from hyperoffload.support.strict_json import strict_dumps

_US = 1e6


def trace_events(result: SimResult, name: str = "hyperoffload") -> list[dict[str, Any]]:
    tracks = sorted(
        {i.track for i in result.intervals}, key=lambda t: (t != "compute", t)
    )
    tid = {track: index for index, track in enumerate(tracks)}
    events: list[dict[str, Any]] = [
        {"ph": "M", "pid": 0, "name": "process_name", "args": {"name": name}},
        *(
            {
                "ph": "M",
                "pid": 0,
                "tid": tid[t],
                "name": "thread_name",
                "args": {"name": t},
            }
            for t in tracks
        ),
    ]
    for interval in result.intervals:
        event: dict[str, Any] = {
            "ph": "X",
            "pid": 0,
            "tid": tid[interval.track],
            "name": interval.name,
            "ts": interval.start * _US,
            "dur": (interval.end - interval.start) * _US,
        }
        if interval.bytes:
            event["args"] = {"bytes": interval.bytes}
        events.append(event)
    for time, occupancy in sorted(result.memory):
        events.append(
            {
                "ph": "C",
                "pid": 0,
                "name": "HBM bytes",
                "ts": time * _US,
                "args": {"bytes": occupancy},
            }
        )
    return events


def trace_json(result: SimResult, name: str = "hyperoffload") -> str:
    """The trace-event document of `result` (strict JSON: a time that overflowed is an error)."""
    events = {"traceEvents": trace_events(result, name), "displayTimeUnit": "ms"}
    return strict_dumps(events)
