"""
Compressed transfers, priced: the bytes a compressed value moves over a link
and the device time of its codec, the one helper every planner transfer
time goes through (`transfer_time`).

The codec is an elementwise kernel at the HBM roofline: quantising reads the
tensor at its element type and writes the int8 values and the scales;
dequantising reads those and writes the tensor; either takes
`(tensor bytes + compressed bytes) / (HBM bandwidth * memory efficiency)`
plus the per-kernel overhead, on the compute stream.

```python
codec = compression((1, 8, 4096, 128), 2, Compression.INT8, hardware)
codec.bytes                                        # 4194304 + 32768 * 2: half of bf16, with scales
transfer_time(hardware.link("remote"), 8388608, True, codec)   # link time of codec.bytes + codec.codec_s
```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from hyperoffload.model.hardware import Hardware, Link
from hyperoffload.support.quantize import Compression, compressed_bytes


@dataclass(frozen=True)
class Compressed:
    """How one value crosses a link compressed."""

    scheme: Compression
    bytes: int
    """Bytes on the link and in the remote tier."""
    codec_s: float
    """Compute-stream time of its quantisation (or dequantisation), each way."""


def compression(
    shape: Sequence[int],
    element_bytes: int,
    scheme: Compression | str,
    hardware: Hardware,
) -> Compressed:
    """The compressed form of a tensor of `shape` and element size, priced on `hardware`."""
    scheme = Compression(scheme)
    wire = compressed_bytes(shape, scheme)
    moved = prod(shape) * element_bytes + wire
    codec_s = hardware.kernel_s(0.0, moved)  # memory-bound
    return Compressed(scheme, wire, codec_s)


def transfer_time(
    link: Link, nbytes: int, to_device: bool, compressed: Compressed | None = None
) -> float:
    """
    When a value of `nbytes` that leaves (or reaches) HBM over `link` is
    usable: the copy of its bytes, or, compressed, the copy of its
    compressed bytes plus its codec.
    """
    if compressed is None:
        return link.transfer_time(nbytes, to_device)
    return link.transfer_time(compressed.bytes, to_device) + compressed.codec_s
