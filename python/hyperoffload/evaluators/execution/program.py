"""
An upstream MLIR program lowered to LLVM and JIT-compiled by the MLIR
ExecutionEngine: the pipelines of `pipelines` with the `rewrites` between
them, called through the `abi`.

```python
program = UpstreamProgram(text)                       # compile once, call often
outputs = program(inputs)
outputs = run_upstream(text, inputs)                  # compile and call once
result = compare_upstream(original, lowered, inputs)  # the same outputs?
```
"""

import ctypes
from collections.abc import Sequence
from importlib import import_module
from typing import Any

import numpy as np

from hyperoffload.evaluators.execution.abi import (
    pack_argument,
    result_buffer,
    slot_of,
    unpack_result,
)
from hyperoffload.evaluators.execution.comparison import Comparison, compare_outputs
from hyperoffload.evaluators.execution.diagnostics import (
    ExecutionError,
    from_mlir_error,
    location,
)
from hyperoffload.evaluators.execution.pipelines import (
    LLVM_PIPELINE,
    loops_pipeline,
    runner_utils_library,
)
from hyperoffload.evaluators.execution.rewrites import (
    ASSERT_HOOK,
    all_ops,
    dma_to_copies,
    hook_asserts,
    normalize_memrefs,
    poison_allocations,
    return_scalars_in_tensors,
    strip_hyperoffload_attributes,
)


def find_function(ir: Any, module: Any, name: str | None, file_name: str) -> Any:
    """The function `name`, or the first public function with a body."""
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


def check_upstream_only(ir: Any, ctx: Any, module: Any, file_name: str) -> None:
    """Reject an op upstream MLIR does not know (a `hyperoffload` op, say)."""
    for op in all_ops(ir, module.operation):
        if not ctx.is_registered_operation(op.name):
            where = location(op.location, file_name)
            hint = (
                "; convert it with convert-hyperoffload-to-linalg first"
                if op.name.startswith("hyperoffload.")
                else ""
            )
            raise ExecutionError(
                f"{where}: error: '{op.name}' is not an upstream MLIR op{hint}"
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
                raise from_mlir_error(err, file_name, "cannot parse") from None
            check_upstream_only(ir, ctx, module, file_name)
            target = find_function(ir, module, function, file_name)
            self.function: str = ir.StringAttr(target.attributes["sym_name"]).value
            signature = target.attributes["function_type"].value
            self.arguments = [
                slot_of(ir, t, f"argument #{i} of @{self.function}")
                for i, t in enumerate(signature.inputs)
            ]
            self.results = [
                slot_of(ir, t, f"result #{i} of @{self.function}")
                for i, t in enumerate(signature.results)
            ]
            self._check_results()
            return_scalars_in_tensors(ir, module, target, self.function)
            strip_hyperoffload_attributes(ir, module)
            target.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            try:
                normalize_memrefs(ir, module, widen=False)
                poison_allocations(ir, module)
                dma_to_copies(ir, module, file_name)
                frees = any(
                    op.name in ("memref.dealloc", "memref.realloc")
                    for op in all_ops(ir, module.operation)
                )
                pipeline = loops_pipeline(deallocate=not frees)
                passmanager.PassManager.parse(pipeline).run(module.operation)
                normalize_memrefs(ir, module, widen=True)
                self._assert_messages = hook_asserts(ir, module, file_name)
                module.operation.verify()
                passmanager.PassManager.parse(LLVM_PIPELINE).run(module.operation)
            except ir.MLIRError as err:
                raise from_mlir_error(err, file_name, "cannot lower") from None
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
                    ASSERT_HOOK, ctypes.cast(self._hook, ctypes.c_void_p)
                )

    def _check_results(self) -> None:
        for index, slot in enumerate(self.results):
            if slot.shape is not None and any(n < 0 for n in slot.shape):
                raise ExecutionError(
                    f"result #{index} of @{self.function} has a dynamic shape ({slot.text})"
                )

    def __call__(self, inputs: Sequence[object]) -> list[np.ndarray[Any, Any]]:
        if len(inputs) != len(self.arguments):
            raise ExecutionError(
                f"@{self.function} takes {len(self.arguments)} argument(s), "
                f"got {len(inputs)}"
            )
        keep: list[object] = []
        pointers = [
            pack_argument(i, slot, value, keep)
            for i, (slot, value) in enumerate(zip(self.arguments, inputs, strict=True))
        ]
        outputs: list[np.ndarray[Any, Any]] = []
        for slot in self.results:  # out-parameters, scalars as 0-d memrefs
            output, pointer = result_buffer(slot, keep)
            outputs.append(output)
            pointers.append(pointer)
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
            unpack_result(slot, o)
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


def compare_upstream(
    original_text: str,
    lowered_text: str,
    inputs: Sequence[object],
    function: str | None = None,
) -> Comparison:
    """
    Run `function` of both programs on the same `inputs`. They match when
    they return as many outputs, of the same shapes and dtypes, with equal
    values (any NaN equals any NaN), with no tolerance: a
    lowering that only moves data between memories must not change a bit
    (compute is lowered identically, no fast-math, no reassociation).
    """
    original = run_upstream(original_text, inputs, function, "<original>")
    lowered = run_upstream(lowered_text, inputs, function, "<lowered>")
    return compare_outputs(original, lowered)
