"""
The KV cache of a decode step exported in blocks: which function arguments
are which blocks, and which results are the new entries.

`hyperoffload-gen ... --mode decode --attention blocked|window` tags the
function and each block argument:

```mlir
func.func @decode(%token: tensor<1x1xi64>,
    %k0: tensor<1x2x16x16xf32> {hyperoffload.category = "kv",
        hyperoffload.tier = #hyperoffload.tier<remote>,
        hyperoffload.kv_block = array<i64: 0, 0, 0>},   // layer 0, keys, block 0
    ...) -> (tensor<1x1x128xf32>, ...)
    attributes {hyperoffload.kv_cache = {attention = "window", block = 16 : i64,
                window = 32 : i64, sinks = 4 : i64, kv_len = 64 : i64}}
```

The results after the logits are each layer's new keys and values, in the
order `k0, v0, k1, v1, ...`. `decode_step` reads a module's decode step for
`hyperoffload.policies.generation`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
)

from hyperoffload.analysis.cost import element_bytes, tensor_type
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.program import Program
from hyperoffload.dialects.hyperoffload import PrefetchOp, StoreOp
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.kv_step import BlockKey, KVLayout, StepBlocks
from hyperoffload.support.quantize import Compression

KV_CACHE_ATTR = "hyperoffload.kv_cache"
"""Function attribute: how the decode step's cache is laid out in blocks."""
KV_BLOCK_ATTR = "hyperoffload.kv_block"
"""Argument attribute: `array<i64: layer, kind, block>` (kind 0 keys, 1 values)."""


class KVCacheError(ValueError):
    """A program whose cache is not laid out in blocks, or is tagged inconsistently."""


@dataclass(frozen=True)
class KVCache:
    """The blocks of one decode function."""

    layout: KVLayout
    blocks: dict[int, tuple[BlockKey, int]]
    """Argument index -> ((layer, kind), block index)."""
    entries: dict[int, BlockKey]
    """Result index -> the (layer, kind) whose new entry it is."""


def _int(attrs: DictionaryAttr, name: str, where: str) -> int:
    value = attrs.data.get(name)
    if not isinstance(value, IntegerAttr):
        raise KVCacheError(f"{where}: '{KV_CACHE_ATTR}' needs an integer '{name}'")
    return value.value.data


def read_layout(function: func.FuncOp) -> KVLayout:
    """The `hyperoffload.kv_cache` attribute of `function`, checked."""
    where = f"@{function.sym_name.data}"
    attrs = function.attributes.get(KV_CACHE_ATTR)
    if not isinstance(attrs, DictionaryAttr):
        raise KVCacheError(
            f"{where} has no '{KV_CACHE_ATTR}' attribute: export the decode step "
            "with blocks (hyperoffload-gen --mode decode --attention blocked|window)"
        )
    attention = attrs.data.get("attention")
    if not isinstance(attention, StringAttr) or attention.data not in (
        "blocked",
        "window",
    ):
        raise KVCacheError(f'{where}: attention must be "blocked" or "window"')
    layout = KVLayout(
        "blocked" if attention.data == "blocked" else "window",
        _int(attrs, "block", where),
        _int(attrs, "window", where),
        _int(attrs, "sinks", where),
        _int(attrs, "kv_len", where),
    )
    if layout.block < 1 or layout.kv_len < 1:
        raise KVCacheError(f"{where}: block and kv_len must be positive")
    if layout.attention == "window" and layout.window < 1:
        raise KVCacheError(f"{where}: a window must be positive")
    return layout


def read_kv_cache(function: func.FuncOp) -> KVCache:
    """The layout, block arguments and new-entry results of a decode step."""
    layout = read_layout(function)
    where = f"@{function.sym_name.data}"
    blocks: dict[int, tuple[BlockKey, int]] = {}
    arg_attrs = function.arg_attrs.data if function.arg_attrs else ()
    for index, attrs in enumerate(arg_attrs):
        assert isinstance(attrs, DictionaryAttr)
        tag = attrs.data.get(KV_BLOCK_ATTR)
        if tag is None:
            continue
        values = (
            cast(DenseArrayBase[Any], tag).get_values()
            if isinstance(tag, DenseArrayBase)
            else ()
        )
        if len(values) != 3:
            raise KVCacheError(
                f"{where}: argument {index}: '{KV_BLOCK_ATTR}' must be "
                "array<i64: layer, kind, block>"
            )
        layer, kind, block = (int(v) for v in values)
        if kind not in (0, 1) or layer < 0 or block < 0:
            raise KVCacheError(
                f"{where}: argument {index}: bad block tag {layer}, {kind}, {block}"
            )
        blocks[index] = ((layer, kind), block)
    if not blocks:
        raise KVCacheError(f"{where}: no argument carries '{KV_BLOCK_ATTR}'")
    layers = 1 + max(key[0] for key, _ in blocks.values())
    results = len(function.function_type.outputs.data)
    if results < 1 + 2 * layers:
        raise KVCacheError(
            f"{where}: {results} results, but {layers} layers need the logits "
            "and a new key and value entry each"
        )
    entries = {
        1 + 2 * layer + kind: (layer, kind)
        for layer in range(layers)
        for kind in (0, 1)
    }
    return KVCache(layout, blocks, entries)


def kv_compression(step: func.FuncOp) -> Compression | None:
    """
    The scheme the plan moves the cache with: the `compress` of the prefetches
    of block arguments and the stores of new entries (None if none carries
    one); `KVCacheError` if they disagree.
    """
    cache = read_kv_cache(step)
    args = step.body.block.args
    returned = step.body.block.last_op
    assert isinstance(returned, func.ReturnOp)
    kv_values = {args[i] for i in cache.blocks} | {
        returned.operands[i] for i in cache.entries
    }
    schemes: set[str | None] = set()
    for op in step.walk():
        if isinstance(op, PrefetchOp):
            moves_kv = op.source in kv_values
        elif isinstance(op, StoreOp):
            moves_kv = any(use.operation is returned for use in op.handle.uses)
        else:
            continue
        if moves_kv:
            schemes.add(None if op.compress is None else op.compress.data)
    named = {scheme for scheme in schemes if scheme is not None}
    if len(named) > 1 or (named and None in schemes):
        listed = ", ".join(sorted(str(s) for s in schemes))
        raise KVCacheError(
            f"@{step.sym_name.data}: the KV blocks move with different "
            f"compression ({listed}); a generation replays one scheme"
        )
    return Compression(named.pop()) if named else None


def decode_step(
    module: ModuleOp, hardware: Hardware, function: str | None = None
) -> StepBlocks:
    """
    The decode step of `module` (stripped of offload ops) with its cache's
    blocks, and the compression its plan moves them with (`kv_compression`).
    """
    compress = kv_compression(main_function(module, function))
    program = Program(module, hardware, function)
    step = program.reference_function
    cache = read_kv_cache(step)
    extraction = program.reference_extraction
    args = step.body.block.args
    returned = step.body.block.last_op
    assert isinstance(returned, func.ReturnOp)
    blocks = {
        extraction.buffer_of[args[index]]: block
        for index, block in cache.blocks.items()
    }
    entries = {
        extraction.buffer_of[returned.operands[index]]: key
        for index, key in cache.entries.items()
    }
    shapes: dict[int, tuple[int, ...]] = {}
    nbytes = 2
    for index in cache.blocks:
        value_type = tensor_type(args[index])
        assert value_type is not None
        shapes[extraction.buffer_of[args[index]]] = tuple(value_type.get_shape())
        nbytes = element_bytes(value_type.element_type)
    return StepBlocks(
        extraction.schedule, cache.layout, blocks, entries, shapes, nbytes, compress
    )
