"""
Which blocks of a KV cache a decode step reads: the one rule the frontend
(what a step exports as arguments) and the generation simulator (what each
call of a generation reads) share.

>>> blocks_read("window", block=16, window=32, sinks=4, length=70)
[0, 2, 3, 4]
>>> blocks_read("blocked", block=16, window=0, sinks=0, length=33)
[0, 1, 2]
"""

import math


def blocks_read(
    attention: str, block: int, window: int, sinks: int, length: int
) -> list[int]:
    """
    The blocks of `block` positions a step with `length` cached positions
    reads, in increasing order: every one (`blocked`), or those holding the
    first `sinks` positions or the last `window` ones (`window`).
    """
    last = math.ceil(length / block)
    if attention != "window":
        return list(range(last))
    sink_blocks = range(math.ceil(min(sinks, length) / block))
    first = max(0, length - window) // block
    return sorted({*sink_blocks, *range(first, last)})
