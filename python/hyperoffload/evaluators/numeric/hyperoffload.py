"""
The offload ops move values between residencies: `prefetch` copies a remote
copy into HBM, `store` copies a device value out, `detach` drops the device
copy, so that a later read of it is an error.

```mlir
%v = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
hyperoffload.detach %v : tensor<4xf32>    // a read of %v after this fails
```

A compressed transfer is lossy (`hyperoffload.support.quantize`): a store
with `compress` keeps the tensor rounded through the quantiser as its remote
copy; a prefetch with `compress` of an argument (the caller's compressed
copy) rounds it there; a prefetch of a compressed store's copy reads it as
stored.

```mlir
%h = hyperoffload.store %k {compress = "int8"} : tensor<2x64xf32> -> !hyperoffload.remote<tensor<2x64xf32>>
%k2 = hyperoffload.prefetch %h {compress = "int8"} : ...   // %k, per-row INT8: |error| <= absmax / 254
```
"""

from hyperoffload.dialects.hyperoffload import DetachOp, PrefetchOp, StoreOp
from hyperoffload.dialects.residency import describe
from hyperoffload.evaluators.numeric.core import Value, coerce, error
from hyperoffload.evaluators.numeric.frame import Frame
from hyperoffload.support.quantize import Compression, round_trip

OffloadOp = PrefetchOp | StoreOp | DetachOp


def _compressed(op: PrefetchOp | StoreOp, value: Value) -> Value:
    """`value` as the compressed copy of `op` gives it back (itself, uncompressed)."""
    if op.compress is None:
        return value.copy()
    moved = op.result if isinstance(op, PrefetchOp) else op.handle
    return coerce(round_trip(value, Compression(op.compress.data)), moved.type)


def run_offload_op(frame: Frame, op: OffloadOp) -> None:
    """Move the value `op` names between `frame`'s device and remote copies."""
    if isinstance(op, PrefetchOp):
        if op.source not in frame.remote:
            raise error(
                op, f"prefetch of {describe(op.source)}, which holds no remote copy"
            )
        copy = frame.remote[op.source]
        if isinstance(op.source.owner, StoreOp):  # compressed (or not) when stored
            frame.device[op.result] = copy.copy()
        else:  # the caller's copy, compressed with the prefetch's scheme
            frame.device[op.result] = _compressed(op, copy)
    elif isinstance(op, StoreOp):
        frame.remote[op.handle] = _compressed(op, frame.read(op, op.value))
    else:
        if op.value not in frame.device:
            raise error(
                op, f"detach of {describe(op.value)}, which is not resident in HBM"
            )
        del frame.device[op.value]
