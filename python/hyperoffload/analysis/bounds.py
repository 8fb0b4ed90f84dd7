"""
The memory lower bound `M_LB(T_exposed = 0)` for a fixed op order: the least
peak any plan that exposes no transfer time could reach.

A tensor can be out of HBM while op t runs only if t does not read it and,
within one idle gap (a, b) of the tensor, its store fits in the compute
between its producer and t and its fetch in the compute between t and b.
An argument that lives outside HBM needs no store, and nothing holds it
after its last use; nor does anything hold a value returned at a result
tagged with a tier (written back there) after its last use before the
return, once stored. Subtracting every such tensor from the unconstrained
timeline, op by op, bounds every zero-exposure plan from below; the bound
ignores that transfers share a link, so it is optimistic (lower) where the
link is busy.

```python
bound = memory_lower_bound(ProgramGraph.build(function, costs), hardware)
```
"""

from __future__ import annotations

import numpy as np

from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.model.hardware import Hardware
from hyperoffload.support.tiers import Tier


def memory_lower_bound(graph: ProgramGraph, hardware: Hardware) -> int:
    """`M_LB(T_exposed = 0)` in bytes, for the graph of an unplanned program."""
    n = len(graph.ops)
    if n == 0:
        return 0
    live = np.array(graph.timeline, dtype=np.int64)
    prefix = np.asarray(graph.prefix)
    removable = np.zeros(n + 1, dtype=np.int64)  # a difference array over ops
    link = hardware.link(hardware.offload_tier)
    written_back = graph.returned_to_tiers()
    for info in graph.values:
        if info.buffer is None:
            continue
        buffer = graph.schedule.buffers[info.buffer]
        if buffer.tier != Tier.HBM or buffer.kind == "constant":
            continue
        remote = info.tier != Tier.HBM
        fetch = (hardware.link(info.tier) if remote else link).transfer_time(
            info.bytes, True
        )
        store = 0.0 if remote else link.transfer_time(info.bytes, False)
        if remote and info.last_use < n - 1:
            # it lives outside HBM: nothing holds it after its last use
            removable[info.last_use + 1] += info.bytes
            removable[n] -= info.bytes
        gaps = info.gaps()
        after = None if remote else graph.written_back_gap(info, written_back)
        for gap in gaps if after is None else [*gaps, after]:
            if gap.ops < 1:
                continue
            ops = np.arange(gap.after + 1, gap.before)
            # compute between the end of its producer (where its store may
            # start, whichever gap it serves) and the start of op t, and
            # from the end of op t to the start of op b
            since = prefix[ops] - prefix[max(info.producer, -1) + 1]
            until = prefix[gap.before] - prefix[ops + 1]
            out = ops[(since >= store) & (until >= (fetch if gap.before < n else 0.0))]
            if out.size:
                removable[out[0]] += info.bytes
                removable[out[-1] + 1] -= info.bytes
    bound = live - np.cumsum(removable)[:n]
    largest_working_set = graph.schedule.largest_working_set()
    return int(max(int(bound.max()), largest_working_set))
