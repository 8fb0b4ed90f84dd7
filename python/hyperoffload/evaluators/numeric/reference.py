"""
The check that offloading changes no value: a program against its
reference, the clone with every `hyperoffload` op stripped.

```python
outputs_match_reference(module)   # True: stripping the offload ops changes nothing
```
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from hyperoffload.evaluators.numeric.inputs import random_inputs
from hyperoffload.evaluators.numeric.interpreter import evaluate, find_function
from hyperoffload.ir.strip import strip_offload_ops
from hyperoffload.support.arrays import same_array


def outputs_match_reference(
    module: ModuleOp,
    inputs: Sequence[np.ndarray[Any, Any]] | None = None,
    function: str | None = None,
    seed: int = 0,
) -> bool:
    """
    Whether `module` computes the same outputs as its reference, the clone
    with every hyperoffload op stripped, on the same inputs: same dtypes,
    shapes and values (`same_array`: a NaN equals any NaN).
    """
    func_op = find_function(module, function)
    if inputs is None:
        inputs = random_inputs(func_op, seed)
    reference = module.clone()
    strip_offload_ops(reference)
    name = func_op.sym_name.data
    got = evaluate(module, inputs, name).outputs
    expected = evaluate(reference, inputs, name).outputs
    return len(got) == len(expected) and all(
        same_array(a, b) for a, b in zip(got, expected, strict=True)
    )
