"""
Schedules: what the interpreter executes. A schedule lists the buffers of a
program (device buffers in `hbm`, copies in other tiers) and the ordered
steps of its compute stream:

- `compute`: an op with its cost; allocates its outputs when it starts and
  frees the buffers whose last use it is when it ends; a step on the
  `interconnect` stream (a collective of a data-parallel group) is issued in
  order but runs beside the compute stream, and its readers wait for it;
- `transfer`: starts an asynchronous copy on a link (to or from the device);
  a copy to the device allocates its destination when issued; a compressed
  one moves its compressed bytes and runs its codec on the compute stream
  (quantise before a copy out, dequantise when a copy in is waited for);
- `wait`: blocks the compute stream until a transfer is complete;
- `free`: releases a device buffer (once the transfers reading it finish).

The JSON form is documented in `docs/schedule.md`. It is read strictly: an
unknown field is an error that names the nearest known one, and so are an
unknown compression scheme, a free of a pinned buffer and a buffer
allocated twice; each error says where (`schedule.json: error: steps[4]:
...`).

```python
schedule = Schedule.loads(Path("s.json").read_text(), source="s.json")
```
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, cast, get_args

from hyperoffload.ir.diagnostics import format_diagnostic
from hyperoffload.support.quantize import Compression
from hyperoffload.support.strict_json import strict_dumps
from hyperoffload.support.tiers import Tier

SCHEDULE_VERSION = 4
"""
Version 2 added the optional `compress` and `codec_s` of transfers, version 3
the optional `stream` of compute steps, version 4 the optional `updates`.
"""
READABLE_VERSIONS = (1, 2, 3, 4)

BufferKind = Literal["argument", "constant", "activation", "prefetched", "copy"]
Stream = Literal["compute", "interconnect"]
"""Where a compute step runs: the compute stream, or the device interconnect."""
STREAMS: tuple[Stream, ...] = get_args(Stream)


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
    stream: Stream = "compute"
    """`interconnect`: a collective, run beside the compute stream."""
    readers: dict[int, tuple[str, str]] = field(
        default_factory=dict[int, tuple[str, str]], compare=False, repr=False
    )
    """(name, loc) of the op that reads a buffer where it is not this step's
    op (one fused into its kernel), for diagnostics; not written to JSON."""


@dataclass
class Transfer:
    id: int
    source: int
    dest: int
    bytes: int
    """Bytes on the link (compressed, for a compressed transfer)."""
    link: Tier
    to_device: bool
    kind: Literal["transfer"] = "transfer"
    compress: str | None = None
    """The compression scheme (`int8`), if the copy is compressed."""
    codec_s: float = 0.0
    """
    Compute-stream time of its codec: quantising before a copy from the
    device, dequantising once a copy to the device is waited for.
    """
    loc: str = field(default="", compare=False, repr=False)
    """`file:line:col` of the op it comes from, for diagnostics; not written
    to JSON."""


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
    updates: dict[int, int] = field(default_factory=dict[int, int])
    """
    Argument buffer -> the buffer of the result holding its update (the
    argument names it, `tf.aliasing_output`): the next call reads that
    result as this argument, so a run that took the argument from its tier
    leaves the update there too (`hyperoffload.sim.simulator`).
    """

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
        data: dict[str, Any] = {
            "version": SCHEDULE_VERSION,
            "function": self.function,
            "forward_end": self.forward_end,
        }
        if self.updates:
            data["updates"] = [[a, r] for a, r in self.updates.items()]
        return data | {
            "buffers": [asdict(b) for b in self.buffers],
            "steps": [_step_json(s) for s in self.steps],
        }

    def dumps(self) -> str:
        """The JSON text (strict: a time that overflowed is an error, not `Infinity`)."""
        return strict_dumps(self.to_json(), indent=1)

    @staticmethod
    def from_json(data: Any) -> Schedule:
        """
        A schedule read from its JSON form, every field checked: its type,
        buffer ids in range (a buffer's `id` is its index), transfer ids
        unique, each `wait` after the transfer it names. Raises `ValueError`.
        """
        if not isinstance(data, dict):
            raise ValueError(f"expected an object, not {_json_type(data)}")
        data = cast(dict[str, Any], data)
        _check_keys(data, set(_TOP_KEYS), "schedule")
        version = data.get("version")
        if version not in READABLE_VERSIONS:
            raise ValueError(
                f"unsupported schedule version {version!r} "
                f"(expected one of {', '.join(map(str, READABLE_VERSIONS))})"
            )
        raw_buffers: list[Any] = _field(data, "buffers", list, "schedule")
        buffers = [_buffer(raw, index) for index, raw in enumerate(raw_buffers)]
        steps: list[Step] = []
        transfers: set[int] = set()
        allocated: dict[int, str] = {b.id: "at entry" for b in buffers if b.initial}
        raw_steps: list[Any] = _field(data, "steps", list, "schedule")
        for index, raw in enumerate(raw_steps):
            step = _step(raw, index, len(buffers))
            _check_memory(step, f"steps[{index}]", buffers, allocated)
            if isinstance(step, Transfer):
                if step.id in transfers:
                    raise ValueError(f"steps[{index}]: transfer id {step.id} repeats")
                transfers.add(step.id)
            elif isinstance(step, Wait) and step.transfer not in transfers:
                raise ValueError(
                    f"steps[{index}]: waits for transfer {step.transfer}, "
                    "which no earlier step starts"
                )
            steps.append(step)
        forward_end = data.get("forward_end")
        if forward_end is not None and not _is_count(forward_end):
            raise ValueError(
                f"forward_end: expected a step index or null, not {forward_end!r}"
            )
        return Schedule(
            function=_field(data, "function", str, "schedule"),
            buffers=buffers,
            steps=steps,
            forward_end=forward_end,
            updates=_updates(data.get("updates", []), buffers),
        )

    @staticmethod
    def loads(text: str, source: str | None = None) -> Schedule:
        """A schedule from JSON text; errors are located at `source` (a file name)."""
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as err:
            raise ScheduleError(f"malformed schedule: {err}", source) from None
        try:
            return Schedule.from_json(data)
        except ValueError as err:
            raise ScheduleError(f"malformed schedule: {err}", source) from None


class ScheduleError(ValueError):
    """A malformed schedule file (located at `where`, its file, when known)."""

    def __init__(self, message: str, where: str | None = None):
        located = (
            message if where is None else format_diagnostic(where, "error", message)
        )
        super().__init__(located)
        self.where = where


_TOP_KEYS = ("version", "function", "forward_end", "updates", "buffers", "steps")
_COMPRESSIONS = tuple(c.value for c in Compression)


def _check_memory(
    step: Step, where: str, buffers: list[Buffer], allocated: dict[int, str]
) -> None:
    """
    A free of a pinned buffer, or a buffer allocated a second time (by a
    compute step or as the device end of a transfer), is an error.
    """
    if isinstance(step, Free) and buffers[step.buffer].pinned:
        buffer = buffers[step.buffer]
        raise ValueError(
            f"{where}: frees buffer {buffer.id} ({buffer.name}), which is pinned "
            "(arguments, constants and results are never freed)"
        )
    new = (
        step.allocs
        if isinstance(step, Compute)
        else [step.dest]
        if isinstance(step, Transfer) and step.to_device
        else []
    )
    for buffer in new:
        if buffer in allocated:
            raise ValueError(
                f"{where}: allocates buffer {buffer} ({buffers[buffer].name}) again "
                f"(allocated {allocated[buffer]}); a buffer is allocated once"
            )
        allocated[buffer] = where


_BUFFER_KINDS: tuple[str, ...] = get_args(BufferKind)


def _step_json(step: Step) -> dict[str, Any]:
    """A step's JSON object; an uncompressed transfer leaves out `compress` and `codec_s`."""
    fields_ = asdict(step)
    fields_.pop("readers", None)
    if isinstance(step, Transfer):
        del fields_["loc"]
    if isinstance(step, Transfer) and step.compress is None:
        del fields_["compress"], fields_["codec_s"]
    if isinstance(step, Compute) and step.stream == "compute":
        del fields_["stream"]
    return fields_


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _field(raw: dict[str, Any], key: str, kind: type, where: str) -> Any:
    """`raw[key]`, which must be present and of `kind` (a boolean is no number)."""
    if key not in raw:
        raise ValueError(f"{where}: missing field '{key}'")
    value = raw[key]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise ValueError(
            f"{where}: '{key}' must be {_json_type(kind())}, not {_json_type(value)}"
        )
    return value


MAX_COUNT = 2**62
"""Counts (bytes, ids) above this do not fit the simulator's 64-bit arrays."""


def _is_count(value: object) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and 0 <= value < MAX_COUNT
    )


def _count(raw: dict[str, Any], key: str, where: str) -> int:
    value = raw.get(key)
    if not _is_count(value):
        raise ValueError(
            f"{where}: '{key}' must be a count (>= 0, below 2**62), not {value!r}"
        )
    return cast(int, value)


def _number(raw: dict[str, Any], key: str, where: str) -> float:
    value = raw.get(key)
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(
            f"{where}: '{key}' must be a finite number >= 0, not {value!r}"
        )
    return float(value)


def _tier(raw: dict[str, Any], key: str, where: str) -> Tier:
    value = raw.get(key)
    if not isinstance(value, str) or value not in {t.value for t in Tier}:
        tiers = ", ".join(Tier)
        raise ValueError(f"{where}: '{key}' must be one of {tiers}, not {value!r}")
    return Tier(value)


def _updates(raw: Any, buffers: list[Buffer]) -> dict[int, int]:
    """The `updates` field: `[argument, result]` pairs of buffer ids."""
    if not isinstance(raw, list):
        raise ValueError(f"updates: expected a list, not {_json_type(raw)}")
    updates: dict[int, int] = {}
    for index, pair in enumerate(cast(list[Any], raw)):
        ids = cast(list[Any], pair) if isinstance(pair, list) else []
        if len(ids) != 2 or not all(_is_count(b) and b < len(buffers) for b in ids):
            raise ValueError(
                f"updates[{index}]: expected [argument, result], two buffer ids "
                f"below {len(buffers)}, not {pair!r}"
            )
        updates[pair[0]] = pair[1]
    return updates


def _check_keys(raw: dict[str, Any], known: set[str], where: str) -> None:
    """An error naming the first unknown field of `raw` and the nearest known one."""
    for key in raw:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = (
                f"did you mean '{close[0]}'?"
                if close
                else f"known: {', '.join(sorted(known))}"
            )
            raise ValueError(f"{where}: unknown field '{key}' ({hint})")


def _object(raw: object, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: expected an object, not {_json_type(raw)}")
    return cast(dict[str, Any], raw)


def _buffer(raw: object, index: int) -> Buffer:
    """Buffer `index` read from JSON, every field checked."""
    where = f"buffers[{index}]"
    fields_ = _object(raw, where)
    _check_keys(fields_, {f.name for f in fields(Buffer)}, where)
    if _count(fields_, "id", where) != index:
        raise ValueError(
            f"{where}: 'id' is {fields_['id']}; a buffer's id is its index"
        )
    kind = _field(fields_, "kind", str, where)
    if kind not in _BUFFER_KINDS:
        kinds = ", ".join(_BUFFER_KINDS)
        raise ValueError(f"{where}: 'kind' must be one of {kinds}, not {kind!r}")
    pinned = _field(fields_, "pinned", bool, where) if "pinned" in fields_ else False
    initial = _field(fields_, "initial", bool, where) if "initial" in fields_ else False
    return Buffer(
        id=index,
        name=_field(fields_, "name", str, where),
        bytes=_count(fields_, "bytes", where),
        tier=_tier(fields_, "tier", where),
        kind=kind,
        home=_tier(fields_, "home", where) if "home" in fields_ else Tier.HBM,
        pinned=pinned,
        initial=initial,
    )


def _stream(raw: dict[str, Any], where: str) -> Stream:
    value = raw.get("stream", "compute")
    for stream in STREAMS:
        if value == stream:
            return stream
    streams = ", ".join(f'"{s}"' for s in STREAMS)
    raise ValueError(f"{where}: 'stream' must be {streams}, not {json.dumps(value)}")


def _buffer_id(value: object, buffers: int, where: str) -> int:
    if not _is_count(value) or cast(int, value) >= buffers:
        raise ValueError(
            f"{where}: {value!r} is not a buffer id (there are {buffers} buffers)"
        )
    return cast(int, value)


def _buffer_ids(raw: dict[str, Any], key: str, buffers: int, where: str) -> list[int]:
    values: list[Any] = _field(raw, key, list, where) if key in raw else []
    return [_buffer_id(v, buffers, f"{where}: '{key}'") for v in values]


def _step(raw: object, index: int, buffers: int) -> Step:
    """Step `index` read from JSON, every field checked."""
    where = f"steps[{index}]"
    fields_ = _object(raw, where)
    kind = fields_.get("kind")
    if not isinstance(kind, str) or kind not in _STEP_TYPES:
        raise ValueError(f"{where}: unknown step kind {kind!r}")
    known = {f.name for f in fields(_STEP_TYPES[kind])} - {"readers"}
    _check_keys(fields_, known, where)
    if kind == "compute":
        return Compute(
            name=_field(fields_, "name", str, where),
            loc=_field(fields_, "loc", str, where),
            time_s=_number(fields_, "time_s", where),
            flops=_number(fields_, "flops", where),
            bytes=_count(fields_, "bytes", where),
            reads=_buffer_ids(fields_, "reads", buffers, where),
            allocs=_buffer_ids(fields_, "allocs", buffers, where),
            frees=_buffer_ids(fields_, "frees", buffers, where),
            stream=_stream(fields_, where),
        )
    if kind == "transfer":
        compress = fields_.get("compress")
        if compress is not None and compress not in _COMPRESSIONS:
            schemes = ", ".join(f'"{c}"' for c in _COMPRESSIONS)
            raise ValueError(
                f"{where}: 'compress' must be {schemes} or null, not "
                f"{json.dumps(compress)}"
            )
        return Transfer(
            id=_count(fields_, "id", where),
            source=_buffer_id(fields_.get("source"), buffers, f"{where}: 'source'"),
            dest=_buffer_id(fields_.get("dest"), buffers, f"{where}: 'dest'"),
            bytes=_count(fields_, "bytes", where),
            link=_tier(fields_, "link", where),
            to_device=_field(fields_, "to_device", bool, where),
            compress=compress,
            codec_s=_number(fields_, "codec_s", where) if "codec_s" in fields_ else 0.0,
        )
    if kind == "wait":
        return Wait(transfer=_count(fields_, "transfer", where))
    return Free(buffer=_buffer_id(fields_.get("buffer"), buffers, f"{where}: 'buffer'"))
