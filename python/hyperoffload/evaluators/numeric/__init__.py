"""
A numpy evaluator for small linalg-on-tensors programs that honours the
residency semantics of the `hyperoffload` dialect: compute reads only values
resident in HBM, `store` copies a tensor out, `prefetch` copies it back and
`detach` drops the device copy.

```mlir
func.func @f(%x: tensor<4xf32>, %w: !hyperoffload.remote<tensor<4xf32>>) -> tensor<4xf32> {
  %v = hyperoffload.prefetch %w : !hyperoffload.remote<tensor<4xf32>> -> tensor<4xf32>
  %r = arith.addf %x, %v : tensor<4xf32>
  hyperoffload.detach %v : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
```
```python
evaluate(module).outputs          # [x + w] on random inputs (seed 0)
outputs_match_reference(module)   # True: stripping the offload ops changes nothing
```

Laid out as xDSL's interpreters: `core` (values, element types, errors),
`frame` (residency and the op registry), `backend` (the numpy primitives
the shared op semantics of `hyperoffload.evaluators.semantics` run on),
`constants`, one module per dialect with regions or calls (`scf`, `linalg`,
`func`, `hyperoffload`), the driver in `interpreter`, then `inputs` and
`reference`. Regions (`linalg` bodies,
the branches of `scf.if`) run in the frame of their op, so values from above
are read with the same residency checks.

Approximations: `bf16` has no numpy dtype; it is computed in `float32` and
every `bf16` result is rounded back to `bf16` (as `arith-emulate-unsupported-
floats` does). Transcendental `math` ops use numpy's (or Python's `math.erf`)
implementations, `math.fma` rounds twice for `f64`, and `rsqrt` is `1/sqrt`.
"""

from hyperoffload.evaluators.numeric.core import NumericError, Value
from hyperoffload.evaluators.numeric.inputs import random_inputs
from hyperoffload.evaluators.numeric.interpreter import NumericResult, evaluate
from hyperoffload.evaluators.numeric.reference import outputs_match_reference

__all__ = [
    "NumericError",
    "NumericResult",
    "Value",
    "evaluate",
    "outputs_match_reference",
    "random_inputs",
]
