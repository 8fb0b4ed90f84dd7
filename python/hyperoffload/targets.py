"""
Output targets of `hyperoffload-opt` (`-t NAME{options}`).

```
hyperoffload-opt model.mlir -t 'hyperoffload-schedule{hardware=ascend-910c}' -o schedule.json
```
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target


@dataclass(frozen=True)
class ScheduleTarget(Target):
    """The JSON schedule of a function (docs/schedule.md), costed on a hardware model."""

    name = "hyperoffload-schedule"

    hardware: str = "ascend-910c"
    function: str | None = None

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from hyperoffload.analysis.extract import (
            CostModel,
            extract_schedule,
            main_function,
        )
        from hyperoffload.model.hardware import load_hardware

        hardware = load_hardware(self.hardware)
        schedule = extract_schedule(
            main_function(module, self.function), CostModel(hardware)
        )
        output.write(schedule.dumps())
        output.write("\n")


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    return {ScheduleTarget.name: lambda: ScheduleTarget}
