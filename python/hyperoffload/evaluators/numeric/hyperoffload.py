"""
The offload ops move values between residencies: `prefetch` copies a remote
copy into HBM, `store` copies a device value out, `detach` drops the device
copy, so that a later read of it is an error.

```mlir
%v = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
hyperoffload.detach %v : tensor<4xf32>    // a read of %v after this fails
```
"""

from hyperoffload.dialects.hyperoffload import DetachOp, PrefetchOp, StoreOp
from hyperoffload.dialects.residency import describe
from hyperoffload.evaluators.numeric.core import error
from hyperoffload.evaluators.numeric.frame import Frame

OffloadOp = PrefetchOp | StoreOp | DetachOp


def run_offload_op(frame: Frame, op: OffloadOp) -> None:
    """Move the value `op` names between `frame`'s device and remote copies."""
    if isinstance(op, PrefetchOp):
        if op.source not in frame.remote:
            raise error(
                op, f"prefetch of {describe(op.source)}, which holds no remote copy"
            )
        frame.device[op.result] = frame.remote[op.source].copy()
    elif isinstance(op, StoreOp):
        frame.remote[op.handle] = frame.read(op, op.value).copy()
    else:
        if op.value not in frame.device:
            raise error(
                op, f"detach of {describe(op.value)}, which is not resident in HBM"
            )
        del frame.device[op.value]
