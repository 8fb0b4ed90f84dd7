"""
The round hardware of the hand-worked tests and the program graph of a small
function on it (`test_planner.py`, `test_lifetimes.py`, `test_bounds.py`,
`test_parked_arguments.py`):

```python
graph = graph_of(ctx, "func.func @f(%x: tensor<256xf32>) -> ...", round_hardware())
```

HBM 1 GB/s, 1 GFLOP/s, no launch overhead, a remote link without latency
unless given: an elementwise `arith` op is memory-bound at 1 ns per byte of
its distinct operands and its result.
"""

from collections.abc import Mapping

from xdsl.context import Context

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.lifetimes import ProgramGraph
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import Hardware, Link
from hyperoffload.support.tiers import Tier


def round_hardware(
    hbm_capacity: int = 10**9,
    link_capacity: int = 10**12,
    link_bandwidth: float = 1e10,
    latency_s: float = 0.0,
    links: Mapping[Tier, Link] | None = None,
) -> Hardware:
    """1 GB/s HBM, 1 GFLOP/s, no launch overhead; a remote link each way, or `links`."""
    if links is None:
        remote = Link(
            Tier.REMOTE, link_capacity, link_bandwidth, link_bandwidth, latency_s
        )
        links = {Tier.REMOTE: remote}
    return Hardware(
        name="round",
        description=f"1 GB/s HBM, 1 GFLOP/s, links to {', '.join(t.value for t in links)}",
        hbm_capacity=hbm_capacity,
        hbm_bandwidth=1e9,
        peak_flops={"f32": 1e9},
        compute_efficiency=1.0,
        memory_efficiency=1.0,
        attention_efficiency=1.0,
        op_overhead_s=0.0,
        links=dict(links),
    )


def graph_of(ctx: Context, text: str, hardware: Hardware) -> ProgramGraph:
    """The program graph of the first function of `text` on `hardware`."""
    function = main_function(parse_mlir(ctx, text, "t.mlir"))
    return ProgramGraph.build(function, CostModel(hardware))
