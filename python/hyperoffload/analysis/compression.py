"""
The compressed form of an IR value (`hyperoffload.model.compression`, from
its tensor type): what a `store` or `prefetch` with `compress` moves, and
what the planner prices for a value it compresses.

```mlir
%kh = hyperoffload.store %k {compress = "int8"} : tensor<1x8x128x64xbf16> -> !hyperoffload.remote<tensor<1x8x128x64xbf16>>
```
moves `65536 + 1024 * 2` bytes instead of 131072, its quantisation on the
compute stream first:
```python
value_compression(store.value, "int8", hardware)   # Compressed(INT8, 67584, codec_s)
```
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import SSAValue

from hyperoffload.analysis.cost import element_bytes, tensor_type
from hyperoffload.model.compression import Compressed, compression
from hyperoffload.model.hardware import Hardware


def value_compression(
    value: SSAValue, scheme: StringAttr | str | None, hardware: Hardware
) -> Compressed | None:
    """`value` compressed with `scheme` (None: not compressed, or not a tensor)."""
    value_type = tensor_type(value)
    if scheme is None or value_type is None:
        return None
    name = scheme.data if isinstance(scheme, StringAttr) else scheme
    return compression(
        value_type.get_shape(), element_bytes(value_type.element_type), name, hardware
    )
