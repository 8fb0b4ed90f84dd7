"""
The pooled KV cache of a top-k decode step (`hyperoffload-gen ... --mode
decode --attention topk`), read for the generation replay
(`hyperoffload.policies.generation_topk`):

```mlir
func.func @decode(%arg0: tensor<1x1xi64>,
    %arg1: tensor<31x1x32x4096x128xf16> {hyperoffload.category = "kv",
        hyperoffload.tier = #hyperoffload.tier<remote>,
        hyperoffload.kv_pool = array<i64: 0, 0>}, ...)
    attributes {hyperoffload.kv_cache = {attention = "topk", block = 4096 : i64,
        topk = 4 : i64, sinks = 4 : i64, recent = 4096 : i64, kv_len = 123000 : i64}}
```

`topk_step` prices one call with every block resident (the step's compute)
and reads the layout the replay needs.
"""

from __future__ import annotations

from typing import Any, cast

from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import BlockArgument

from hyperoffload.analysis.cost import tensor_bytes, tensor_type
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.kv_cache import KV_CACHE_ATTR, KVCacheError
from hyperoffload.analysis.program import Program
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.topk_step import TopkStep
from hyperoffload.support.topk_blocks import topk_layout

KV_POOL_ATTR = "hyperoffload.kv_pool"


def is_topk(module: ModuleOp, function: str | None = None) -> bool:
    """Whether the decode step of `module` selects its blocks (attention topk)."""
    attrs = main_function(module, function).attributes.get(KV_CACHE_ATTR)
    if not isinstance(attrs, DictionaryAttr):
        return False
    kind = attrs.data.get("attention")
    return isinstance(kind, StringAttr) and kind.data == "topk"


def _int(attrs: DictionaryAttr, name: str, where: str) -> int:
    value = attrs.data.get(name)
    if not isinstance(value, IntegerAttr):
        raise KVCacheError(f"{where}: '{KV_CACHE_ATTR}' needs an integer '{name}'")
    return cast(IntegerAttr[Any], value).value.data


def topk_step(
    module: ModuleOp, hardware: Hardware, function: str | None = None
) -> TopkStep:
    """The replay's view of a top-k decode step (stripped of offload ops)."""
    program = Program(module, hardware, function)
    step = program.reference_function
    where = f"@{step.sym_name.data}"
    attrs = step.attributes.get(KV_CACHE_ATTR)
    if not isinstance(attrs, DictionaryAttr):
        raise KVCacheError(f"{where} has no '{KV_CACHE_ATTR}' attribute")
    block = _int(attrs, "block", where)
    topk = _int(attrs, "topk", where)
    kv_len = _int(attrs, "kv_len", where)
    layout = topk_layout(
        block, _int(attrs, "sinks", where), _int(attrs, "recent", where), kv_len
    )
    pools: list[BlockArgument] = []
    arg_attrs = step.arg_attrs.data if step.arg_attrs else ()
    for arg, attr in zip(step.body.block.args, arg_attrs, strict=False):
        if isinstance(attr.data.get(KV_POOL_ATTR), DenseArrayBase):
            pools.append(arg)
    if not pools or len(pools) % 2:
        raise KVCacheError(f"{where}: no key and value pools ('{KV_POOL_ATTR}')")
    pool_type = tensor_type(pools[0])
    assert pool_type is not None
    shape = pool_type.get_shape()
    per_block = tensor_bytes(pools[0], step) // max(shape[0], 1)
    pool_bytes = sum(tensor_bytes(pool, step) for pool in pools)
    run = program.simulate("none", record=False)
    layers = len(pools) // 2
    return TopkStep(
        compute_s=run.makespan_s,
        layers=layers,
        block_bytes=2 * per_block,
        blocks=shape[0],
        fixed=len(layout.fixed),
        topk=min(topk, len(layout.candidates)),
        entry_bytes=2 * layers * per_block // block,
        block=block,
        other_hbm_bytes=max(0, run.peak_hbm_bytes - pool_bytes),
        block_elements_per_row=shape[-1],
        sinks=layout.sinks,
        recent=layout.recent,
        kv_len=kv_len,
    )
