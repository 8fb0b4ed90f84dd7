"""
Device memory as the executor holds it: the live storages of device tensors
(a view shares its source's storage, as bufferization makes it), each
referenced by program values and kept alive until the copies that read or
write it are done, whatever the program says (a `detach` of a tensor a
store still reads frees it once the store completes).

```python
memory = DeviceMemory(now=device.now)
memory.hold(value, tensor)           # `value` names `tensor` (its storage counts once)
memory.keep_until(tensor, event)     # a copy stream uses `tensor` until `event`
memory.release(value, device.done)   # `value` is dead: free its storage when unused
memory.peak_bytes                    # the most bytes live at once
```
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from xdsl.ir import SSAValue

from hyperoffload.evaluators.torch.devices import Event


@dataclass(frozen=True)
class MemoryEvent:
    """A storage allocated (`bytes` > 0) or freed (`bytes` < 0) at device time `time_s`."""

    time_s: float
    name: str
    bytes: int
    live_bytes: int


@dataclass
class _Storage:
    tensor: torch.Tensor
    """Holds the storage alive while the program or a copy needs it."""
    nbytes: int
    name: str
    holders: int = 0
    keeps: list[Event] = field(default_factory=list[Event])


def _name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "(unnamed)"


class DeviceMemory:
    """The live device storages and their high-water mark."""

    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now
        self._storages: dict[int, _Storage] = {}
        self._held: dict[SSAValue, int] = {}
        self._deferred: set[int] = set()
        self.live_bytes = 0
        self.peak_bytes = 0
        self.events: list[MemoryEvent] = []

    def _key(self, tensor: torch.Tensor) -> int | None:
        if tensor.is_meta:
            return None
        storage = tensor.untyped_storage()
        if storage.nbytes() == 0:
            return None
        return storage.data_ptr()

    def _storage(self, tensor: torch.Tensor, name: str) -> int | None:
        key = self._key(tensor)
        if key is None:
            return None
        if key not in self._storages:
            nbytes = tensor.untyped_storage().nbytes()
            self._storages[key] = _Storage(tensor, nbytes, name)
            self.live_bytes += nbytes
            self.peak_bytes = max(self.peak_bytes, self.live_bytes)
            self.events.append(MemoryEvent(self._now(), name, nbytes, self.live_bytes))
        return key

    def hold(self, value: SSAValue, tensor: torch.Tensor) -> None:
        """`value` now names `tensor` (counted once per storage)."""
        if value in self._held:
            self.release(value, lambda _: True)
        key = self._storage(tensor, _name(value))
        if key is not None:
            self._storages[key].holders += 1
            self._held[value] = key

    def keep_until(self, tensor: torch.Tensor, event: Event) -> None:
        """A copy stream reads or writes `tensor` until `event`."""
        key = self._storage(tensor, "copy")
        if key is not None:
            self._storages[key].keeps.append(event)
            if self._storages[key].holders == 0:
                self._deferred.add(key)

    def release(self, value: SSAValue, done: Callable[[Event], bool]) -> None:
        """`value` is dead; its storage is freed once nothing holds or keeps it."""
        key = self._held.pop(value, None)
        if key is None:
            return
        self._storages[key].holders -= 1
        self._settle(key, done)

    def poll(self, done: Callable[[Event], bool]) -> None:
        """Free the storages whose last copy has completed."""
        for key in list(self._deferred):
            self._settle(key, done)

    def _settle(self, key: int, done: Callable[[Event], bool]) -> None:
        storage = self._storages[key]
        storage.keeps = [e for e in storage.keeps if not done(e)]
        if storage.holders > 0:
            return
        if storage.keeps:
            self._deferred.add(key)
            return
        self._deferred.discard(key)
        del self._storages[key]
        self.live_bytes -= storage.nbytes
        self.events.append(
            MemoryEvent(self._now(), storage.name, -storage.nbytes, self.live_bytes)
        )

    def clear(self) -> None:
        """Forget every storage (the run is over)."""
        self._storages.clear()
        self._held.clear()
        self._deferred.clear()
