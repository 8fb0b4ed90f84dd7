"""
Values of the torch executor: MLIR element types as torch dtypes, and arrays
moved between numpy (the numeric evaluator's inputs and outputs, `bf16` held
in `float32`) and torch (`bf16` held as `torch.bfloat16`).

```python
torch_dtype(TensorType(BFloat16Type(), [2]))         # torch.bfloat16
to_numpy(torch.ones(2, dtype=torch.bfloat16))         # float32 [1., 1.], as numpy holds bf16
from_numpy(np.ones(2, np.float32), bf16_tensor_type)  # a torch.bfloat16 tensor
```

A `tensor.empty` whose contents nothing reads is held as a *lazy* tensor: a
tensor on the `meta` device, which has a shape and a dtype but no storage
(`is_lazy`); an op that reads it gets zeros, as the numeric evaluator gives.
"""

from typing import Any

import numpy as np
import torch
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import DiagnosticException

from hyperoffload.evaluators.op_registry import Fail
from hyperoffload.evaluators.semantics.types import dtype_name, element_type, shape_of
from hyperoffload.ir.diagnostics import location_of

__all__ = [
    "Fail",
    "RunError",
    "error",
    "from_numpy",
    "is_lazy",
    "lazy",
    "shape_of",
    "to_numpy",
    "torch_dtype",
]


class RunError(DiagnosticException):
    """A program the executor cannot run; the message starts with `file:line:col: error: `."""


def error(op: Operation, message: str) -> RunError:
    """A `RunError` located at `op`."""
    return RunError(f"{location_of(op)}: error: {message}")


def torch_dtype(type_: Attribute) -> torch.dtype:
    """The torch dtype of a (remote) tensor type's elements, or of a scalar type."""
    name = dtype_name(type_)
    if name is None:
        raise Fail(f"no torch dtype for {element_type(type_)}")
    return getattr(torch, name)


def from_numpy(array: np.ndarray[Any, Any], type_: Attribute) -> torch.Tensor:
    """`array` (as the numeric evaluator holds values of `type_`) as a CPU tensor."""
    tensor = torch.as_tensor(np.require(array, requirements=["C", "W"]))
    return tensor.to(torch_dtype(type_))


def to_numpy(tensor: torch.Tensor) -> np.ndarray[Any, Any]:
    """A host copy of `tensor` as numpy holds it: `bf16` widened to `float32` (exactly)."""
    host = tensor.detach().to("cpu")
    if host.dtype == torch.bfloat16:
        host = host.to(torch.float32)
    return np.array(host.numpy(), copy=True)


def lazy(shape: list[int], dtype: torch.dtype) -> torch.Tensor:
    """An uninitialised tensor that holds no memory until something reads it."""
    return torch.empty(shape, dtype=dtype, device="meta")


def is_lazy(tensor: torch.Tensor) -> bool:
    return tensor.is_meta
