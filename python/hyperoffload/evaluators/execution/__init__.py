"""
Running upstream MLIR programs natively: linalg on tensors is bufferized,
lowered to loops and LLVM, JIT-compiled by the MLIR ExecutionEngine and
called on numpy arrays.

```python
outputs = run_upstream(text, inputs)                  # one array per result
result = compare_upstream(original, lowered, inputs)  # the same outputs?
result.match, result.max_abs_diff
program = UpstreamProgram(text)                       # compile once, call often
outputs = program(inputs)
```

The text must use upstream dialects only (linalg, tensor, bufferization,
memref, arith, math, func, cf, scf, affine): a `hyperoffload` op is reported,
not run (lower it with `convert-hyperoffload-to-linalg` first); discardable
`hyperoffload.*` attributes (`hyperoffload.tier`) are dropped.

How it runs (`program`; the `rewrites` are done with the bindings, between
the upstream passes of `pipelines`):

1. Every memref moves to the default memory space (the host plays every
   tier); `memref.memory_space_cast` disappears.
2. Every `memref.alloc` is filled with NaN (floats) or all-ones bits
   (integers), so a read before the buffer is written shows in the outputs.
3. A `memref.dma_start` of a whole buffer becomes a `memref.copy` placed at
   its `memref.dma_wait` (same tag, same block): a read of the destination
   before the wait sees the poison of step 2. Partial or strided DMA is
   rejected.
4. Scalar results of the function become 0-d tensors.
5. `loops_pipeline()`: one-shot bufferization across function boundaries,
   results to out-parameters, `buffer-deallocation-pipeline` (left out when
   the program frees buffers itself: it rejects `memref.dealloc`), linalg to
   loops.
6. Memrefs of integers narrower than a byte (`i1` masks) become memrefs of
   `i8` (LLVM 22's `finalize-memref-to-llvm` aborts the process on a store to
   a memref of `i1`): loads truncate, stores zero-extend.
7. Each `cf.assert` (torch-mlir's index checks) becomes a call of a Python
   hook when it fails, so that the call raises `ExecutionError` instead of
   aborting the process.
8. `LLVM_PIPELINE`, then the ExecutionEngine at `opt_level` 0 (O2 compiles
   the tiny LLaMA training step in ~30 s instead of ~3 s; no fast-math, so
   floating-point results do not depend on it).

Calling convention (`abi`): a ranked tensor (or memref) argument takes an array of
its shape (cast to its element type, copied), a scalar argument a scalar;
every result comes back as an array (a scalar as a 0-d one) and must have a
static shape. `bf16` has no numpy dtype: a `bf16` argument takes floats,
rounded to the nearest `bf16` (ties to even), and a `bf16` result comes back
as `float32` holding the exact `bf16` value, as in `hyperoffload.evaluators.numeric`;
`bf16` arithmetic runs in `f32`, rounded after each op
(`arith-emulate-unsupported-floats`). `i1` is numpy `bool`, `index` `int64`.

Outputs are compared (`comparison`) with no tolerance, a NaN equal to any
NaN (`hyperoffload.support.arrays`).

Caveat: after a failed `cf.assert` the program runs on until it returns, so
an out-of-range index it guarded is still used (an out-of-bounds read).
"""

from hyperoffload.evaluators.execution.comparison import Comparison, compare_outputs
from hyperoffload.evaluators.execution.diagnostics import ExecutionError
from hyperoffload.evaluators.execution.pipelines import (
    LLVM_PIPELINE,
    loops_pipeline,
    runner_utils_library,
)
from hyperoffload.evaluators.execution.program import (
    UpstreamProgram,
    compare_upstream,
    run_upstream,
)
from hyperoffload.support.arrays import max_abs_diff
from hyperoffload.support.arrays import same_array as same_output

__all__ = [
    "LLVM_PIPELINE",
    "Comparison",
    "ExecutionError",
    "UpstreamProgram",
    "compare_outputs",
    "compare_upstream",
    "loops_pipeline",
    "max_abs_diff",
    "run_upstream",
    "runner_utils_library",
    "same_output",
]
