"""
Schedules: what the interpreter executes. A schedule lists the buffers of a
program (device buffers in `hbm`, copies in other tiers) and the ordered
steps of its compute stream:

- `compute`: an op with its cost; allocates its outputs when it starts and
  frees the buffers whose last use it is when it ends;
- `transfer`: starts an asynchronous copy on a link (to or from the device);
  a copy to the device allocates its destination when issued;
- `wait`: blocks the compute stream until a transfer is complete;
- `free`: releases a device buffer (once the transfers reading it finish).

The JSON form is documented in `docs/schedule.md`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from hyperoffload.support.tiers import Tier

SCHEDULE_VERSION = 1

BufferKind = Literal["argument", "constant", "activation", "prefetched", "copy"]


@dataclass
class Buffer:
    id: int
    name: str
    bytes: int
    tier: Tier
    """`hbm` for device buffers, else the tier a copy lives in."""
    kind: BufferKind
    home: Tier = Tier.HBM
    """Where the data lives at function entry for an argument (its `hyperoffload.tier`)."""
    pinned: bool = False
    """Never freed implicitly: arguments (the caller's), constants, results."""
    initial: bool = False
    """Present in its tier at function entry (arguments, constants)."""


@dataclass
class Compute:
    name: str
    loc: str
    time_s: float
    flops: float
    bytes: int
    reads: list[int] = field(default_factory=list[int])
    allocs: list[int] = field(default_factory=list[int])
    frees: list[int] = field(default_factory=list[int])
    kind: Literal["compute"] = "compute"


@dataclass
class Transfer:
    id: int
    source: int
    dest: int
    bytes: int
    link: Tier
    to_device: bool
    kind: Literal["transfer"] = "transfer"


@dataclass
class Wait:
    transfer: int
    kind: Literal["wait"] = "wait"


@dataclass
class Free:
    buffer: int
    kind: Literal["free"] = "free"


Step = Compute | Transfer | Wait | Free

_STEP_TYPES: dict[str, type[Step]] = {
    "compute": Compute,
    "transfer": Transfer,
    "wait": Wait,
    "free": Free,
}


@dataclass
class Schedule:
    function: str
    buffers: list[Buffer]
    steps: list[Step]
    forward_end: int | None = None
    """Index of the step that ends the forward pass (for training steps), if known."""

    def working_sets(self) -> Iterator[tuple[Compute, int]]:
        """Each compute step with the bytes it needs in HBM (its inputs and outputs)."""
        sizes = [b.bytes for b in self.buffers]
        for step in self.steps:
            if isinstance(step, Compute):
                yield step, sum(sizes[b] for b in {*step.reads, *step.allocs})

    def largest_working_set(self) -> int:
        """The least peak any plan can reach: the largest single-op working set."""
        return max((needed for _, needed in self.working_sets()), default=0)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": SCHEDULE_VERSION,
            "function": self.function,
            "forward_end": self.forward_end,
            "buffers": [asdict(b) for b in self.buffers],
            "steps": [asdict(s) for s in self.steps],
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1)

    @staticmethod
    def from_json(data: dict[str, Any]) -> Schedule:
        if data.get("version") != SCHEDULE_VERSION:
            raise ValueError(
                f"unsupported schedule version {data.get('version')!r} "
                f"(expected {SCHEDULE_VERSION})"
            )
        steps: list[Step] = []
        for raw in data["steps"]:
            kind = raw.get("kind")
            if kind not in _STEP_TYPES:
                raise ValueError(f"unknown step kind {kind!r}")
            step = _STEP_TYPES[kind](**raw)
            if isinstance(step, Transfer):
                step.link = Tier(step.link)
            steps.append(step)
        return Schedule(
            function=data["function"],
            buffers=[_buffer(b) for b in data["buffers"]],
            steps=steps,
            forward_end=data.get("forward_end"),
        )

    @staticmethod
    def loads(text: str) -> Schedule:
        try:
            return Schedule.from_json(json.loads(text))
        except (json.JSONDecodeError, KeyError, TypeError) as err:
            raise ValueError(f"malformed schedule: {err}") from None


def _buffer(raw: dict[str, Any]) -> Buffer:
    """A buffer read from JSON, its tiers checked."""
    buffer = Buffer(**raw)
    buffer.tier, buffer.home = Tier(buffer.tier), Tier(buffer.home)
    return buffer
