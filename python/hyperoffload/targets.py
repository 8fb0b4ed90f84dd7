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
from xdsl.targets.mlir import MLIRTarget
from xdsl.utils.target import Target

from hyperoffload.ir.printing import FastPrinter


@dataclass(frozen=True)
class FastMLIRTarget(MLIRTarget):
    """xDSL's `mlir` target (MLIR text) printed by `FastPrinter`: the same text."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if self.syntax_highlight:
            super().emit(ctx, module, output)
            return
        printer = FastPrinter(
            stream=output,
            print_generic_format=self.print_generic_format,
            print_properties_as_attributes=self.print_properties_as_attributes,
            print_debuginfo=self.print_debuginfo,
        )
        printer.print_op(module)
        printer.print_metadata(ctx.loaded_dialects)
        print("\n", file=output)


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
    """
    Our targets; xDSL's `mlir` stays xDSL's here (`hyperoffload-opt` replaces
    it with `FastMLIRTarget`).
    """
    return {ScheduleTarget.name: lambda: ScheduleTarget}
