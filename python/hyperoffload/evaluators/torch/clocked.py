"""
A device whose time is a modelled clock: values are computed on the CPU, a
compute op takes the time `op_time` gives it, a copy `latency + bytes /
bandwidth` on its link's stream, which starts it once the compute stream
has reached the copy and the events it follows are complete. The executor's
stream logic (waits before first consumers, frees deferred behind copies)
runs unchanged on it, so tests can check it without a GPU and without
reading a wall clock.

```python
device = ClockedDevice(op_time=lambda op: 1e-3, bandwidth=1e6)
execute(module, device, inputs).measurement.exposed_transfer_s   # exact, in modelled seconds
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from xdsl.ir import Operation

from hyperoffload.evaluators.torch.devices import Device, Event, Link, R, Timing


@dataclass(eq=False)
class ClockEvent(Event):
    time_s: float = 0.0


class ClockedDevice(Device):
    """Compute and copy streams on a modelled clock; values computed on the CPU."""

    kind = "clocked"

    def __init__(
        self,
        op_time: Callable[[Operation], float],
        bandwidth: float,
        latency: float = 0.0,
    ) -> None:
        self.torch_device = torch.device("cpu")
        self.name = "modelled clock"
        self.op_time = op_time
        self.bandwidth = bandwidth
        self.latency = latency
        self.clock = 0.0
        """The compute stream's time: where the host stands too."""
        self.exposed_s = 0.0
        self._free_at: dict[Link, float] = {}

    def start(self) -> None:
        self.clock = 0.0
        self.exposed_s = 0.0
        self._free_at = {}

    def compute(self, op: Operation, run: Callable[[], R]) -> R:
        result = run()
        self.clock += self.op_time(op)
        return result

    def copy(
        self,
        link: Link,
        dst: torch.Tensor,
        src: torch.Tensor,
        after: Sequence[Event],
    ) -> Event:
        dst.copy_(src)
        ready = [e.time_s for e in after if isinstance(e, ClockEvent)]
        begin = max([self.clock, self._free_at.get(link, 0.0), *ready])
        nbytes = src.numel() * src.element_size()
        end = begin + self.latency + nbytes / self.bandwidth
        self._free_at[link] = end
        return ClockEvent(time_s=end)

    def wait(self, event: Event) -> None:
        assert isinstance(event, ClockEvent)
        if not event.waited and event.time_s > self.clock:
            self.exposed_s += event.time_s - self.clock
            self.clock = event.time_s
        event.waited = True

    def done(self, event: Event) -> bool:
        assert isinstance(event, ClockEvent)
        return event.time_s <= self.clock

    def now(self) -> float:
        return self.clock

    def finish(self, pending: Sequence[Event]) -> Timing:
        for event in pending:
            self.wait(event)
        return Timing(self.clock, self.exposed_s)
