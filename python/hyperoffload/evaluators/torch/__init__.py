"""
A PyTorch executor for planned programs: each compute op runs as torch
operations on a device (CUDA or the CPU), `prefetch` and `store` as
asynchronous copies on a copy stream per link direction, the compute stream
waiting for a copy before its first consumer, `detach` freeing device memory
once the copies that use it are done. It measures what the simulator models:
makespan, peak device memory, exposed transfer time, bytes moved.

```python
from hyperoffload.evaluators.torch import make_device, run_program

report = run_program(module, make_device("cpu"), seed=0)
report["makespan_s"], report["peak_hbm_bytes"], report["outputs_match_reference"]
```

Laid out as the numeric evaluator: `values` (dtypes, conversions, errors),
`registry`, `backend` (the array primitives the shared op semantics of
`hyperoffload.evaluators.semantics` run on) and `ops` (those semantics
registered, with constants), `tensor` (lazy and viewed tensors), `linalg`
(structured ops over their domain), the streams in `devices` (and the
modelled `clocked` one),
`memory` and `liveness` (when device memory is freed), the driver in
`executor`, then `run` (reports), `calibrate` (hardware presets from
microbenchmarks) and `validation` (modelled against measured). Importing
this package imports torch (the `torch` extra).
"""

from hyperoffload.evaluators.torch.devices import Device, DeviceError, make_device
from hyperoffload.evaluators.torch.executor import Execution, Measurement, execute
from hyperoffload.evaluators.torch.run import run_program, tensor_inputs
from hyperoffload.evaluators.torch.values import RunError

__all__ = [
    "Device",
    "DeviceError",
    "Execution",
    "Measurement",
    "RunError",
    "execute",
    "make_device",
    "run_program",
    "tensor_inputs",
]
