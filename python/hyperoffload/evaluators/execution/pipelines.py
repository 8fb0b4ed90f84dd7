"""
The upstream pass pipelines a program goes through before it is JIT-compiled,
and the runtime library it links.

```python
PassManager.parse(loops_pipeline()).run(module.operation)   # tensors to loops
...                                                         # the rewrites
PassManager.parse(LLVM_PIPELINE).run(module.operation)      # loops to LLVM
```
"""

from pathlib import Path


def loops_pipeline(deallocate: bool = True) -> str:
    """
    Tensors to buffers and linalg to scf loops, run before the rewrites here.
    `buffer-deallocation-pipeline` frees the buffers bufferization allocates
    but rejects a program that already frees some (`memref.dealloc`).
    """
    return (
        "builtin.module("
        "func.func(convert-elementwise-to-linalg),"
        "one-shot-bufferize{bufferize-function-boundaries=1"
        " function-boundary-type-conversion=identity-layout-map},"
        "buffer-results-to-out-params{modify-public-functions=1},"
        + ("buffer-deallocation-pipeline," if deallocate else "")
        + "func.func(convert-linalg-to-loops))"
    )


LLVM_PIPELINE = (
    "builtin.module("
    "convert-scf-to-cf,"
    "expand-strided-metadata,"
    "lower-affine,"
    "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32},"
    "finalize-memref-to-llvm,"
    "convert-math-to-llvm,"
    "convert-math-to-libm,"
    "convert-arith-to-llvm,"
    "convert-cf-to-llvm,"
    "convert-func-to-llvm,"
    "reconcile-unrealized-casts)"
)
"""Loops and buffers to the LLVM dialect (run after the rewrites here)."""


def runner_utils_library() -> Path:
    """`libmlir_c_runner_utils.so` of the installed MLIR (`memrefCopy` and friends)."""
    from hyperoffload.ir.upstream import mlir_tools_dir

    return mlir_tools_dir().parent / "lib" / "libmlir_c_runner_utils.so"
