"""
The calling convention between numpy and a JIT-compiled function with
`llvm.emit_c_interface`: each argument and result is a pointer to a ranked
memref descriptor (a scalar argument, a pointer to its value), every result
an out-parameter.

```python
arg = slot_of(ir, tensor_type, "argument #0 of @f")  # shape, memory dtype
keep: list[object] = []                              # what the pointers point into
pointer = pack_argument(0, arg, x, keep)
output, out_pointer = result_buffer(result_slot, keep)
engine.invoke("f", pointer, out_pointer)
unpack_result(result_slot, output)                   # bf16 bits back to float32
```

`bf16` has no numpy dtype: a `bf16` argument takes floats, rounded to the
nearest `bf16` (ties to even), and a `bf16` result comes back as `float32`
holding the exact `bf16` value. `f16` is numpy `float16` (`uint16` to ctypes), `i1`
is numpy `bool`, `index` `int64`.
"""

import ctypes
from dataclasses import dataclass
from importlib import import_module
from typing import Any, cast

import numpy as np

from hyperoffload.evaluators.execution.diagnostics import ExecutionError
from hyperoffload.support.arrays import from_bf16_bits, to_bf16_bits


@dataclass(frozen=True)
class Slot:
    """One argument or result: its shape (None for a scalar) and element type."""

    shape: tuple[int, ...] | None
    dtype: np.dtype[Any]
    """The dtype of the memory the program reads or writes."""
    bf16: bool
    text: str


def slot_of(ir: Any, type_: Any, what: str) -> Slot:
    """The slot of an upstream type (`ir` is `mlir.ir`); `what` names it in errors."""
    text = str(type_)
    shape: tuple[int, ...] | None = None
    element = type_
    if isinstance(type_, ir.ShapedType):
        if not type_.has_rank:
            raise ExecutionError(f"{what} has unranked type {text}")
        shape = tuple(
            -1 if type_.is_dynamic_dim(i) else type_.get_dim_size(i)
            for i in range(type_.rank)
        )
        element = type_.element_type
    bf16 = isinstance(element, ir.BF16Type)
    if bf16 or isinstance(element, ir.F16Type):
        dtype = np.dtype(np.uint16 if bf16 else np.float16)
    elif isinstance(element, ir.F32Type):
        dtype = np.dtype(np.float32)
    elif isinstance(element, ir.F64Type):
        dtype = np.dtype(np.float64)
    elif isinstance(element, ir.IndexType):
        dtype = np.dtype(np.int64)
    elif isinstance(element, ir.IntegerType) and element.width == 1:
        dtype = np.dtype(np.bool_)
    elif isinstance(element, ir.IntegerType) and element.width in (8, 16, 32, 64):
        kind = "u" if element.is_unsigned else "i"
        dtype = np.dtype(f"{kind}{element.width // 8}")
    else:
        raise ExecutionError(f"{what} has type {text}, which has no numpy dtype")
    return Slot(shape, dtype, bf16, text)


def _ctype(dtype: np.dtype[Any]) -> Any:
    if dtype == np.float16:
        return ctypes.c_uint16
    return np.ctypeslib.as_ctypes_type(dtype)


def _descriptor(array: np.ndarray[Any, Any]) -> Any:
    """A ranked memref descriptor of a C-contiguous `array` (which must outlive it)."""
    runtime: Any = import_module("mlir.runtime")
    element = _ctype(array.dtype)
    if array.ndim == 0:
        descriptor = runtime.make_zero_d_memref_descriptor(element)()
    else:
        descriptor = runtime.make_nd_memref_descriptor(array.ndim, element)()
        descriptor.shape = (ctypes.c_longlong * array.ndim)(*array.shape)
        descriptor.strides = (ctypes.c_longlong * array.ndim)(
            *(s // array.itemsize for s in array.strides)
        )
    descriptor.allocated = array.ctypes.data
    pointer_type: Any = cast(Any, ctypes.POINTER)(element)
    descriptor.aligned = array.ctypes.data_as(pointer_type)
    descriptor.offset = 0
    return descriptor


def pack_argument(index: int, slot: Slot, value: object, keep: list[object]) -> Any:
    """
    The pointer passed for argument #`index`: a copy of `value` in the
    slot's memory dtype, appended to `keep` with its descriptor.
    """
    array = np.asarray(value)
    if slot.shape is not None:
        if array.ndim != len(slot.shape) or any(
            s >= 0 and s != n for s, n in zip(slot.shape, array.shape, strict=True)
        ):
            raise ExecutionError(
                f"input #{index} has shape {array.shape}, expected {slot.text}"
            )
    elif array.ndim != 0:
        raise ExecutionError(
            f"input #{index} has shape {array.shape}, expected a scalar {slot.text}"
        )
    if slot.bf16:
        array = np.ascontiguousarray(to_bf16_bits(array))
    else:
        array = np.array(array, dtype=slot.dtype, order="C", copy=True)
    keep.append(array)
    if slot.shape is None:
        scalar = _ctype(slot.dtype).from_buffer(array.reshape(1))
        keep.append(scalar)
        return ctypes.pointer(scalar)
    descriptor = _descriptor(array)
    keep.append(descriptor)
    return ctypes.pointer(ctypes.pointer(descriptor))


def result_buffer(slot: Slot, keep: list[object]) -> tuple[np.ndarray[Any, Any], Any]:
    """A zeroed out-parameter for a result (a scalar as a 0-d memref) and its pointer."""
    output = np.zeros(slot.shape or (), slot.dtype)
    descriptor = _descriptor(output)
    keep.append(descriptor)
    return output, ctypes.pointer(ctypes.pointer(descriptor))


def unpack_result(slot: Slot, output: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """A result as the caller sees it: `bf16` bits as `float32` values."""
    return from_bf16_bits(output) if slot.bf16 else output
