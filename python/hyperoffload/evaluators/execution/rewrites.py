"""
The rewrites, with the MLIR Python bindings (`ir` is `mlir.ir`), that make
an upstream program runnable on the host and make its mistakes visible,
done between upstream pipelines (the steps are listed in the package
docstring): memory spaces dropped and `i1` memory widened to `i8`, buffers
poisoned when allocated, whole-buffer DMA run as a copy at its wait,
`cf.assert` routed to a Python hook.

```mlir
%t = memref.alloc() : memref<4xf32>                 // filled with NaN
memref.dma_start %src[%c0], %t[%c0], %c4, %tag[%c0] : ...
%v = memref.load %t[%c0] : memref<4xf32>            // before the wait: NaN
memref.dma_wait %tag[%c0], %c4 : memref<1xi32>      // the copy runs here
```
"""

import re
from collections.abc import Sequence
from importlib import import_module
from typing import Any

import numpy as np

from hyperoffload.evaluators.execution.diagnostics import ExecutionError, location

ASSERT_HOOK = "__hyperoffload_assert_failed"
"""The function a failing `cf.assert` calls with its number."""


def all_ops(ir: Any, root: Any) -> list[Any]:
    """Every op nested in `root` (itself included), parents first."""
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


def normalize_memrefs(ir: Any, module: Any, widen: bool) -> None:
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
    for op in all_ops(ir, module.operation):
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


def poison_allocations(ir: Any, module: Any) -> None:
    """
    Fill every `memref.alloc` of floats with NaN and of integers with ones
    (its contents are undefined until written), so that a read of a buffer
    before it is written shows in the outputs.
    """
    arith: Any = import_module("mlir.dialects.arith")
    linalg: Any = import_module("mlir.dialects.linalg")
    for op in all_ops(ir, module.operation):
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


def dma_to_copies(ir: Any, module: Any, file_name: str) -> None:
    """
    Run each `memref.dma_start` of a whole buffer as a `memref.copy` where
    it is awaited (its `memref.dma_wait` on the same tag, in the same block;
    else where it starts), so that a read of the destination before the wait
    sees stale data.
    """
    memref: Any = import_module("mlir.dialects.memref")
    ops = all_ops(ir, module.operation)
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
            where = location(start.location, file_name)
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


def hook_asserts(ir: Any, module: Any, file_name: str) -> list[str]:
    """
    Replace every `cf.assert %ok, "message"` by a call of the runtime hook
    with the assertion's number when `%ok` is false; return the messages.
    """
    arith: Any = import_module("mlir.dialects.arith")
    func: Any = import_module("mlir.dialects.func")
    scf: Any = import_module("mlir.dialects.scf")
    asserts = [op for op in all_ops(ir, module.operation) if op.name == "cf.assert"]
    if not asserts:
        return []
    i1 = ir.IntegerType.get_signless(1)
    i64 = ir.IntegerType.get_signless(64)
    with ir.InsertionPoint.at_block_begin(module.body), ir.Location.unknown():
        hook = func.FuncOp(ASSERT_HOOK, ir.FunctionType.get([i64], []))
        hook.attributes["sym_visibility"] = ir.StringAttr.get("private")
    messages: list[str] = []
    for op in asserts:
        message = ir.StringAttr(op.attributes["msg"]).value
        where = location(op.location, file_name)
        messages.append(f"{where}: error: assertion failed: {message}")
        with ir.InsertionPoint(op), op.location:
            true = arith.ConstantOp(i1, ir.IntegerAttr.get(i1, 1))
            failed = arith.XOrIOp(op.operands[0], true.result)
            branch = scf.IfOp(failed.result)
            with ir.InsertionPoint(branch.then_block):
                number = arith.ConstantOp(
                    i64, ir.IntegerAttr.get(i64, len(messages) - 1)
                )
                func.CallOp([], ir.FlatSymbolRefAttr.get(ASSERT_HOOK), [number.result])
                scf.YieldOp([])
        op.erase()
    return messages


def strip_hyperoffload_attributes(ir: Any, module: Any) -> None:
    """Drop discardable `hyperoffload.*` attributes, argument attributes included."""

    def keep(name: str) -> bool:
        return not name.startswith("hyperoffload.")

    for op in all_ops(ir, module.operation):
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


def return_scalars_in_tensors(ir: Any, module: Any, target: Any, name: str) -> None:
    """
    Return each scalar result of `target` as a 0-d tensor, which
    bufferization turns into an out-parameter like the other results.
    """
    tensor: Any = import_module("mlir.dialects.tensor")
    function_type = target.attributes["function_type"].value
    results: list[Any] = list(function_type.results)
    if all(isinstance(t, ir.ShapedType) for t in results):
        return
    for op in all_ops(ir, module.operation):
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
