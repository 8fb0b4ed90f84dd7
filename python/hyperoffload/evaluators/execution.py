"""
Running upstream MLIR programs natively: linalg on tensors is bufferized,
lowered to loops and LLVM, JIT-compiled by the MLIR ExecutionEngine and
called on numpy arrays.

```python
outputs = run_upstream(text, inputs)                  # one array per result
result = compare_upstream(original, lowered, inputs)  # bitwise the same outputs?
result.match, result.max_abs_diff
program = UpstreamProgram(text)                       # compile once, call often
outputs = program(inputs)
```

The text must use upstream dialects only (linalg, tensor, bufferization,
memref, arith, math, func, cf, scf, affine): a `hyperoffload` op is reported,
not run (lower it with `convert-hyperoffload-to-linalg` first); discardable
`hyperoffload.*` attributes (`hyperoffload.tier`) are dropped.

How it runs (rewrites done here with the bindings, between upstream passes):

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

Calling convention: a ranked tensor (or memref) argument takes an array of
its shape (cast to its element type, copied), a scalar argument a scalar;
every result comes back as an array (a scalar as a 0-d one) and must have a
static shape. `bf16` has no numpy dtype: a `bf16` argument takes floats,
rounded to the nearest `bf16` (ties to even), and a `bf16` result comes back
as `float32` holding the exact `bf16` value, as in `hyperoffload.evaluators.numeric`;
`bf16` arithmetic runs in `f32`, rounded after each op
(`arith-emulate-unsupported-floats`). `i1` is numpy `bool`, `index` `int64`.

Caveat: after a failed `cf.assert` the program runs on until it returns, so
an out-of-range index it guarded is still used (an out-of-bounds read).
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any, cast

import numpy as np
from xdsl.utils.exceptions import DiagnosticException


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

_ASSERT_HOOK = "__hyperoffload_assert_failed"

_UPSTREAM_LOC = re.compile(r'loc\("([^"]*)":(\d+):(\d+)\)')


class ExecutionError(DiagnosticException):
    """A program that cannot be lowered or run, or a failed `cf.assert`."""


@dataclass(frozen=True)
class Comparison:
    """Outputs of an original and a lowered program on the same inputs."""

    match: bool
    """Same number of outputs, same shapes and dtypes, bitwise equal values (NaN == NaN)."""
    max_abs_diff: float
    """Largest |original - lowered| over all outputs (inf on a shape or NaN mismatch)."""
    original: list[np.ndarray[Any, Any]]
    lowered: list[np.ndarray[Any, Any]]


def runner_utils_library() -> Path:
    """`libmlir_c_runner_utils.so` of the installed MLIR (`memrefCopy` and friends)."""
    from hyperoffload.ir.upstream import mlir_tools_dir

    return mlir_tools_dir().parent / "lib" / "libmlir_c_runner_utils.so"


# --- types -------------------------------------------------------------------


@dataclass(frozen=True)
class _Slot:
    """One argument or result: its shape (None for a scalar) and element type."""

    shape: tuple[int, ...] | None
    dtype: np.dtype[Any]
    """The dtype of the memory the program reads or writes."""
    bf16: bool
    text: str


def _slot(ir: Any, type_: Any, what: str) -> _Slot:
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
    return _Slot(shape, dtype, bf16, text)


def _to_bf16_bits(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Round to the nearest bf16 (ties to even); the bit patterns as uint16."""
    bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & 1)) >> 16
    quiet_nan = (bits >> 16) | np.uint32(0x0040)
    return np.where(np.isnan(array), quiet_nan, rounded).astype(np.uint16)


def _from_bf16_bits(bits: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    widened = bits.astype(np.uint32) << 16
    return widened.view(np.float32)


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


# --- rewrites on the bufferized program ---------------------------------------


def _all_ops(ir: Any, root: Any) -> list[Any]:
    ops: list[Any] = []

    def visit(op: Any) -> Any:
        ops.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return ops


_INTEGER_LITERAL = re.compile(r"true|false|-?\d+")


def _narrow_constant(
    attr: Any, width: int, shape: Sequence[int]
) -> np.ndarray[Any, Any]:
    """The bit patterns of a dense `i1`..`i7` constant, one byte each."""
    count = int(np.prod(shape))
    try:
        values = [int(attr[i]) for i in range(1 if attr.is_splat else count)]
    except TypeError:  # the bindings read i1, i8, i16, i32 and i64 only
        literal = str(attr).split(":")[0]
        values = [
            1 if t == "true" else 0 if t == "false" else int(t)
            for t in _INTEGER_LITERAL.findall(literal)
        ]
        if len(values) not in (1, count):
            raise ExecutionError(f"cannot read the constant {attr}") from None
    if len(values) == 1:
        values *= count
    mask = (1 << width) - 1
    return np.array([v & mask for v in values], np.uint8).reshape(shape)


def _normalize_memrefs(ir: Any, module: Any, widen: bool) -> None:
    """
    Put every memref in the default memory space (the host runs every tier)
    and, with `widen`, keep integers narrower than a byte (booleans) in
    memory as `i8`: memrefs of `i1`..`i7` become memrefs of `i8`, loads
    truncate, stores zero-extend, globals are re-encoded; a boolean is
    stored as 0 or 1. `memref.memory_space_cast` disappears.
    """
    arith: Any = import_module("mlir.dialects.arith")
    i8 = ir.IntegerType.get_signless(8)

    def narrow(type_: Any) -> bool:
        return widen and isinstance(type_, ir.IntegerType) and type_.width < 8

    def normalized(type_: Any) -> Any:
        if not isinstance(type_, ir.MemRefType):
            return None
        element = type_.element_type
        if type_.memory_space is None and not narrow(element):
            return None
        return ir.MemRefType.get(
            type_.shape, i8 if narrow(element) else element, type_.layout
        )

    def normalize_all(types: Sequence[Any]) -> list[Any]:
        return [normalized(t) or t for t in types]

    casts: list[Any] = []
    for op in _all_ops(ir, module.operation):
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    if (new := normalized(arg.type)) is not None:
                        arg.set_type(new)
        name = op.name
        if name == "memref.memory_space_cast":
            casts.append(op)
        elif name == "memref.load" and narrow(op.results[0].type):
            loaded = op.results[0]
            element = loaded.type
            loaded.set_type(i8)
            with ir.InsertionPoint.after(op), op.location:
                truncated = arith.TruncIOp(element, loaded)
            loaded.replace_all_uses_except(truncated.result, truncated.operation)
        elif name == "memref.store" and narrow(op.operands[0].type):
            with ir.InsertionPoint(op), op.location:
                extended = arith.ExtUIOp(i8, op.operands[0])
            op.operands[0] = extended.result
        elif name == "memref.global":
            old = op.attributes["type"].value
            if (new := normalized(old)) is None:
                continue
            op.attributes["type"] = ir.TypeAttr.get(new)
            initial = op.attributes["initial_value"]
            if narrow(old.element_type) and isinstance(
                initial, ir.DenseIntElementsAttr
            ):
                values = _narrow_constant(initial, old.element_type.width, new.shape)
                op.attributes["initial_value"] = ir.DenseElementsAttr.get(
                    values, type=i8
                )
        elif name == "func.func":
            function_type = op.attributes["function_type"].value
            op.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(
                    normalize_all(function_type.inputs),
                    normalize_all(function_type.results),
                )
            )
        for result in op.results:
            if (new := normalized(result.type)) is not None:
                result.set_type(new)
    for space_cast in casts:
        space_cast.results[0].replace_all_uses_with(space_cast.operands[0])
        space_cast.erase()


def _poison_allocations(ir: Any, module: Any) -> None:
    """
    Fill every `memref.alloc` of floats with NaN and of integers with ones
    (its contents are undefined until written), so that a read of a buffer
    before it is written shows in the outputs.
    """
    arith: Any = import_module("mlir.dialects.arith")
    linalg: Any = import_module("mlir.dialects.linalg")
    for op in _all_ops(ir, module.operation):
        if op.name != "memref.alloc":
            continue
        buffer = op.results[0]
        element = buffer.type.element_type
        if isinstance(element, ir.FloatType):
            poison = ir.FloatAttr.get(element, float("nan"))
        elif isinstance(element, ir.IntegerType | ir.IndexType):
            poison = ir.IntegerAttr.get(element, -1)
        else:
            continue
        with ir.InsertionPoint.after(op), op.location:
            value = arith.ConstantOp(element, poison)
            linalg.fill(value.result, outs=[buffer])


def _constant_int(ir: Any, value: Any) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attribute = owner.attributes["value"]
    return attribute.value if isinstance(attribute, ir.IntegerAttr) else None


def _dma_to_copies(ir: Any, module: Any, file_name: str) -> None:
    """
    Run each `memref.dma_start` of a whole buffer as a `memref.copy` where
    it is awaited (its `memref.dma_wait` on the same tag, in the same block;
    else where it starts), so that a read of the destination before the wait
    sees stale data.
    """
    memref: Any = import_module("mlir.dialects.memref")
    ops = _all_ops(ir, module.operation)
    waits = [op for op in ops if op.name == "memref.dma_wait"]
    for start in [op for op in ops if op.name == "memref.dma_start"]:
        operands: list[Any] = list(start.operands)
        source = operands[0]
        target = operands[1 + source.type.rank]
        rest = operands[2 + source.type.rank + target.type.rank :]
        indices = (
            operands[1 : 1 + source.type.rank]
            + operands[2 + source.type.rank : 2 + source.type.rank + target.type.rank]
        )
        shape: list[int] = source.type.shape
        count = int(np.prod(shape))
        whole = (
            source.type.has_static_shape
            and source.type.shape == target.type.shape
            and all(_constant_int(ir, i) == 0 for i in indices)
            and _constant_int(ir, rest[0]) == count
            and len(rest) == 2 + rest[1].type.rank
        )
        if not whole:
            where = _location(start.location, file_name)
            raise ExecutionError(
                f"{where}: error: only a 'memref.dma_start' of a whole "
                "statically shaped buffer, without stride, can be run"
            )
        tag = rest[1]
        matching = [
            w
            for w in waits
            if w.operands[0] == tag
            and w.block == start.block
            and start.is_before_in_block(w)
        ]
        at = matching[0] if len(matching) == 1 else start
        with ir.InsertionPoint(at), start.location:
            memref.CopyOp(source, target)
        start.erase()
    for wait in waits:
        wait.erase()


def _hook_asserts(ir: Any, module: Any, file_name: str) -> list[str]:
    """
    Replace every `cf.assert %ok, "message"` by a call of the runtime hook
    with the assertion's number when `%ok` is false; return the messages.
    """
    arith: Any = import_module("mlir.dialects.arith")
    func: Any = import_module("mlir.dialects.func")
    scf: Any = import_module("mlir.dialects.scf")
    asserts = [op for op in _all_ops(ir, module.operation) if op.name == "cf.assert"]
    if not asserts:
        return []
    i1 = ir.IntegerType.get_signless(1)
    i64 = ir.IntegerType.get_signless(64)
    with ir.InsertionPoint.at_block_begin(module.body), ir.Location.unknown():
        hook = func.FuncOp(_ASSERT_HOOK, ir.FunctionType.get([i64], []))
        hook.attributes["sym_visibility"] = ir.StringAttr.get("private")
    messages: list[str] = []
    for op in asserts:
        message = ir.StringAttr(op.attributes["msg"]).value
        where = _location(op.location, file_name)
        messages.append(f"{where}: error: assertion failed: {message}")
        with ir.InsertionPoint(op), op.location:
            true = arith.ConstantOp(i1, ir.IntegerAttr.get(i1, 1))
            failed = arith.XOrIOp(op.operands[0], true.result)
            branch = scf.IfOp(failed.result)
            with ir.InsertionPoint(branch.then_block):
                number = arith.ConstantOp(
                    i64, ir.IntegerAttr.get(i64, len(messages) - 1)
                )
                func.CallOp([], ir.FlatSymbolRefAttr.get(_ASSERT_HOOK), [number.result])
                scf.YieldOp([])
        op.erase()
    return messages


def _location(location: Any, file_name: str) -> str:
    """`file:line:col` of an upstream location; `-` (the parsed text) is `file_name`."""
    match = _UPSTREAM_LOC.search(str(location))
    if match is None:
        return file_name
    source = file_name if match[1] == "-" else match[1]
    return f"{source}:{match[2]}:{match[3]}"


# --- compiling ---------------------------------------------------------------


def _diagnostics(err: Any, file_name: str, what: str) -> ExecutionError:
    lines: list[str] = []
    for diagnostic in err.error_diagnostics:
        where = _location(diagnostic.location, file_name)
        lines.append(f"{where}: error: {what}: {diagnostic.message}")
        for note in diagnostic.notes:
            lines.append(f"{where}: note: {note.message}")
    return ExecutionError("\n".join(lines) or f"{file_name}: error: {what}: {err}")


def _find_function(ir: Any, module: Any, name: str | None, file_name: str) -> Any:
    for op in module.body.operations:
        if op.operation.name != "func.func":
            continue
        symbol = ir.StringAttr(op.attributes["sym_name"]).value
        visibility = (
            ir.StringAttr(op.attributes["sym_visibility"]).value
            if "sym_visibility" in op.attributes
            else "public"
        )
        has_body = len(op.regions[0].blocks) > 0
        if name is None and visibility == "public" and has_body:
            return op
        if symbol == name:
            if not has_body:
                raise ExecutionError(
                    f"{file_name}: error: function @{name} is a declaration"
                )
            return op
    what = f"function @{name}" if name is not None else "public function with a body"
    raise ExecutionError(f"{file_name}: error: no {what} to run")


def _check_upstream_only(ir: Any, ctx: Any, module: Any, file_name: str) -> None:
    for op in _all_ops(ir, module.operation):
        if not ctx.is_registered_operation(op.name):
            where = _location(op.location, file_name)
            hint = (
                "; convert it with convert-hyperoffload-to-linalg first"
                if op.name.startswith("hyperoffload.")
                else ""
            )
            raise ExecutionError(
                f"{where}: error: '{op.name}' is not an upstream MLIR op{hint}"
            )


def _strip_hyperoffload_attributes(ir: Any, module: Any) -> None:
    """Drop discardable `hyperoffload.*` attributes, argument attributes included."""

    def keep(name: str) -> bool:
        return not name.startswith("hyperoffload.")

    for op in _all_ops(ir, module.operation):
        attributes = op.attributes
        for name in list(attributes):
            if not keep(name):
                del attributes[name]
        for key in ("arg_attrs", "res_attrs"):
            if op.name != "func.func" or key not in attributes:
                continue
            dictionaries = [
                ir.DictAttr.get(
                    {a.name: a.attr for a in ir.DictAttr(d) if keep(a.name)}
                )
                for d in ir.ArrayAttr(attributes[key])
            ]
            attributes[key] = ir.ArrayAttr.get(dictionaries)


def _return_scalars_in_tensors(ir: Any, module: Any, target: Any, name: str) -> None:
    """
    Return each scalar result of `target` as a 0-d tensor, which
    bufferization turns into an out-parameter like the other results.
    """
    tensor: Any = import_module("mlir.dialects.tensor")
    function_type = target.attributes["function_type"].value
    results: list[Any] = list(function_type.results)
    if all(isinstance(t, ir.ShapedType) for t in results):
        return
    for op in _all_ops(ir, module.operation):
        if op.name == "func.call" and op.attributes["callee"].value == name:
            raise ExecutionError(
                f"@{name} returns scalars and is called: run a function nothing calls"
            )
    for block in target.regions[0].blocks:
        terminator = block.operations[len(block.operations) - 1]
        if terminator.name != "func.return":
            continue
        for index, type_ in enumerate(results):
            if isinstance(type_, ir.ShapedType):
                continue
            with ir.InsertionPoint(terminator), terminator.location:
                wrapped = tensor.FromElementsOp(
                    ir.RankedTensorType.get([], type_), [terminator.operands[index]]
                )
            terminator.operands[index] = wrapped.result
    tensors = [
        t if isinstance(t, ir.ShapedType) else ir.RankedTensorType.get([], t)
        for t in results
    ]
    target.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(function_type.inputs, tensors)
    )


class UpstreamProgram:
    """
    A function of an upstream MLIR program, lowered to LLVM and JIT-compiled;
    call it with one array (or scalar) per argument.
    """

    def __init__(
        self,
        text: str,
        function: str | None = None,
        file_name: str = "<input>",
        opt_level: int = 0,
    ):
        ir: Any = import_module("mlir.ir")
        passmanager: Any = import_module("mlir.passmanager")
        execution_engine: Any = import_module("mlir.execution_engine")
        self._context = ir.Context()
        with self._context as ctx, ir.Location.unknown():
            ctx.allow_unregistered_dialects = True
            try:
                module = ir.Module.parse(text)
            except ir.MLIRError as err:
                raise _diagnostics(err, file_name, "cannot parse") from None
            _check_upstream_only(ir, ctx, module, file_name)
            target = _find_function(ir, module, function, file_name)
            self.function: str = ir.StringAttr(target.attributes["sym_name"]).value
            signature = target.attributes["function_type"].value
            self.arguments = [
                _slot(ir, t, f"argument #{i} of @{self.function}")
                for i, t in enumerate(signature.inputs)
            ]
            self.results = [
                _slot(ir, t, f"result #{i} of @{self.function}")
                for i, t in enumerate(signature.results)
            ]
            self._check_results()
            _return_scalars_in_tensors(ir, module, target, self.function)
            _strip_hyperoffload_attributes(ir, module)
            target.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            try:
                _normalize_memrefs(ir, module, widen=False)
                _poison_allocations(ir, module)
                _dma_to_copies(ir, module, file_name)
                frees = any(
                    op.name in ("memref.dealloc", "memref.realloc")
                    for op in _all_ops(ir, module.operation)
                )
                pipeline = loops_pipeline(deallocate=not frees)
                passmanager.PassManager.parse(pipeline).run(module.operation)
                _normalize_memrefs(ir, module, widen=True)
                self._assert_messages = _hook_asserts(ir, module, file_name)
                module.operation.verify()
                passmanager.PassManager.parse(LLVM_PIPELINE).run(module.operation)
            except ir.MLIRError as err:
                raise _diagnostics(err, file_name, "cannot lower") from None
            self._module = module
            self._failed: list[int] = []
            self._hook = ctypes.CFUNCTYPE(None, ctypes.c_int64)(self._failed.append)
            try:
                self._engine = execution_engine.ExecutionEngine(
                    module,
                    opt_level=opt_level,
                    shared_libs=[str(runner_utils_library())],
                    enable_object_dump=False,
                )
            except RuntimeError as err:
                raise ExecutionError(f"{file_name}: error: cannot JIT: {err}") from None
            if self._assert_messages:
                self._engine.raw_register_runtime(
                    _ASSERT_HOOK, ctypes.cast(self._hook, ctypes.c_void_p)
                )

    def _check_results(self) -> None:
        for index, slot in enumerate(self.results):
            if slot.shape is not None and any(n < 0 for n in slot.shape):
                raise ExecutionError(
                    f"result #{index} of @{self.function} has a dynamic shape ({slot.text})"
                )

    def _argument(
        self, index: int, slot: _Slot, value: object, keep: list[object]
    ) -> Any:
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
            array = _to_bf16_bits(array)
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

    def __call__(self, inputs: Sequence[object]) -> list[np.ndarray[Any, Any]]:
        if len(inputs) != len(self.arguments):
            raise ExecutionError(
                f"@{self.function} takes {len(self.arguments)} argument(s), "
                f"got {len(inputs)}"
            )
        keep: list[object] = []
        pointers = [
            self._argument(i, slot, value, keep)
            for i, (slot, value) in enumerate(zip(self.arguments, inputs, strict=True))
        ]
        outputs: list[np.ndarray[Any, Any]] = []
        for slot in self.results:  # out-parameters, scalars as 0-d memrefs
            output = np.zeros(slot.shape or (), slot.dtype)
            outputs.append(output)
            descriptor = _descriptor(output)
            keep.append(descriptor)
            pointers.append(ctypes.pointer(ctypes.pointer(descriptor)))
        self._failed.clear()
        try:
            self._engine.invoke(self.function, *pointers)
        except RuntimeError:  # LLVM printed why: "Symbols not found: [ g ]"
            raise ExecutionError(
                f"cannot run @{self.function}: JIT compilation failed "
                "(does it call a function that is only declared?)"
            ) from None
        if self._failed:
            failed = sorted(set(self._failed))
            raise ExecutionError("\n".join(self._assert_messages[n] for n in failed))
        return [
            _from_bf16_bits(o) if slot.bf16 else o
            for slot, o in zip(self.results, outputs, strict=True)
        ]


def run_upstream(
    text: str,
    inputs: Sequence[object],
    function: str | None = None,
    file_name: str = "<input>",
) -> list[np.ndarray[Any, Any]]:
    """
    Lower `function` of the upstream MLIR program `text` (default: its first
    public function with a body) to LLVM, JIT-compile it and run it on
    `inputs`; return its results. Raises `ExecutionError`.
    """
    return UpstreamProgram(text, function, file_name)(inputs)


def max_abs_diff(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> float:
    """Largest |a - b| (0 where both are NaN or equal; inf on a shape or NaN mismatch)."""
    if a.shape != b.shape:
        return float("inf")
    if a.size == 0:
        return 0.0
    x = a.astype(np.float64)
    y = b.astype(np.float64)
    with np.errstate(invalid="ignore"):
        equal = (x == y) | (np.isnan(x) & np.isnan(y))
        diff = np.where(equal, 0.0, np.abs(x - y))
    return float(np.where(np.isnan(diff), np.inf, diff).max())


def same_output(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> bool:
    """Same dtype, shape and bits (any NaN equals any NaN)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def compare_outputs(
    original: list[np.ndarray[Any, Any]], lowered: list[np.ndarray[Any, Any]]
) -> Comparison:
    """Whether two runs returned the same outputs, and by how much they differ."""
    match = len(original) == len(lowered) and all(
        same_output(a, b) for a, b in zip(original, lowered, strict=True)
    )
    diffs = [max_abs_diff(a, b) for a, b in zip(original, lowered, strict=False)]
    worst = max(diffs, default=0.0) if len(original) == len(lowered) else float("inf")
    return Comparison(match, worst, original, lowered)


def compare_upstream(
    original_text: str,
    lowered_text: str,
    inputs: Sequence[object],
    function: str | None = None,
) -> Comparison:
    """
    Run `function` of both programs on the same `inputs`. They match when
    they return as many outputs, of the same shapes and dtypes, with
    bitwise-equal values (any NaN equals any NaN), with no tolerance: a
    lowering that only moves data between memories must not change a bit
    (compute is lowered identically, no fast-math, no reassociation).
    """
    original = run_upstream(original_text, inputs, function, "<original>")
    lowered = run_upstream(lowered_text, inputs, function, "<lowered>")
    return compare_outputs(original, lowered)
