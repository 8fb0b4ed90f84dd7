"""
The arguments a function is evaluated on: random ones by default, or the
caller's, checked against the argument types and cast to their dtypes.

```python
random_inputs(func_op, seed=0)     # one array per argument
```
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

from hyperoffload.evaluators.numeric.core import (
    Fail,
    Value,
    coerce,
    dtype_of,
    error,
)
from hyperoffload.evaluators.semantics.types import shape_of


def _random_array(rng: np.random.Generator, type_: Attribute) -> Value:
    shape = shape_of(type_)
    dtype = dtype_of(type_)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype.kind in "iu":
        return rng.integers(0, 8, shape).astype(dtype)
    return coerce(rng.standard_normal(shape) * 0.5, type_)


def random_inputs(func: FuncOp, seed: int = 0) -> list[np.ndarray[Any, Any]]:
    """
    One array per argument of `func` (a remote argument gets its tensor's):
    floats ~ N(0, 0.5^2), integers in 0..7 (valid indices of a tiny
    embedding), `i1` random booleans.
    """
    rng = np.random.default_rng(seed)
    inputs: list[Value] = []
    for index, type_ in enumerate(func.function_type.inputs.data):
        if any(s < 0 for s in shape_of(type_)):
            raise error(
                func, f"argument #{index} has a dynamic shape; pass inputs explicitly"
            )
        try:
            inputs.append(_random_array(rng, type_))
        except Fail as err:
            raise error(func, f"argument #{index}: {err}") from None
    return inputs


def prepare_inputs(function: FuncOp, inputs: Sequence[Value]) -> list[Value]:
    """Check the shapes of `inputs` and cast them to the argument dtypes."""
    prepared: list[Value] = []
    for index, (arg, value) in enumerate(zip(function.args, inputs, strict=False)):
        array = np.asarray(value)
        shape = shape_of(arg.type)
        if len(shape) != array.ndim or any(
            s >= 0 and s != n for s, n in zip(shape, array.shape, strict=True)
        ):
            raise error(
                function,
                f"input #{index} has shape {array.shape}, expected {arg.type}",
            )
        try:
            prepared.append(coerce(array, arg.type).copy())
        except Fail as err:
            raise error(function, f"input #{index}: {err}") from None
    prepared.extend(np.asarray(v) for v in inputs[len(prepared) :])
    return prepared
