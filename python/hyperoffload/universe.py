"""
The `xdsl.universe` entry point: plain `xdsl-opt` (and any xDSL tool) sees the
`hyperoffload` dialect, our passes and the schedule target.

```
xdsl-opt model.mlir -p 'hyperoffload-insert{hbm-capacity=32GB}'
```
"""

from xdsl.ir import Dialect
from xdsl.universe import Universe

from hyperoffload.passes import get_all_passes
from hyperoffload.targets import get_all_targets


def _hyperoffload() -> Dialect:
    from hyperoffload.dialects.hyperoffload import Hyperoffload

    return Hyperoffload


HYPEROFFLOAD_UNIVERSE = Universe(
    all_dialects={"hyperoffload": _hyperoffload},
    all_passes=get_all_passes(),
    all_targets=get_all_targets(),
)
