"""
One program on one hardware model: the module, its cost model, the program
as compiled (its hyperoffload ops included) and the reference program (the
same stripped of them, `hyperoffload.ir.strip`: what the other policies start
from), each extracted once, when first asked for, and simulated as they are
(the peers run on them by `hyperoffload.policies.peers.simulate_program`).

A program with conditional regions is read along the path where every
condition holds (every routed expert runs: the dense step's work).

```python
program = Program(module, load_hardware("ascend-910c"))
planned = program.simulate("plan")        # the module as written
reference = program.simulate("none")      # stripped, everything in HBM
program.reference_function                # the stripped func.func, e.g. to read its arguments
```

The module is read, never changed; change it after a figure was asked for
and the figures describe it as it was.
"""

from __future__ import annotations

from functools import cached_property
from typing import Literal

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from hyperoffload.analysis.cost import CostModel
from hyperoffload.analysis.extract import (
    Extraction,
    extract,
    main_function,
    one_path,
    stripped_copy,
)
from hyperoffload.model.hardware import Hardware
from hyperoffload.model.schedule import Schedule
from hyperoffload.sim.simulator import SimResult, simulate


class Program:
    """The planned and reference programs of `function` (None: the first public one)."""

    def __init__(
        self, module: ModuleOp, hardware: Hardware, function: str | None = None
    ):
        self.module = module
        self.hardware = hardware
        self.function = function
        """The name of the function read (None: the first public one)."""
        self.costs = CostModel(hardware)
        """The one cost model both programs are extracted with."""

    @cached_property
    def planned_extraction(self) -> Extraction:
        """The program as compiled, extracted (along its path)."""
        return extract(main_function(one_path(self.module), self.function), self.costs)

    @property
    def planned(self) -> Schedule:
        """The schedule of the program as compiled (its hyperoffload ops included)."""
        return self.planned_extraction.schedule

    @cached_property
    def reference_module(self) -> ModuleOp:
        """A copy of the module stripped of its hyperoffload ops."""
        return stripped_copy(self.module)

    @cached_property
    def reference_function(self) -> FuncOp:
        """The function read, stripped, along its path (the one `reference` is of)."""
        return main_function(one_path(self.reference_module), self.function)

    @cached_property
    def reference_extraction(self) -> Extraction:
        """The reference program, extracted."""
        return extract(self.reference_function, self.costs)

    @property
    def reference(self) -> Schedule:
        """The schedule of the reference program (no hyperoffload ops)."""
        return self.reference_extraction.schedule

    @property
    def unknown_ops(self) -> set[str]:
        """The ops the cost model did not know (the reference holds no others)."""
        _ = self.planned_extraction
        return set(self.costs.unknown_ops)

    def simulate(
        self,
        policy: Literal["plan", "none"] = "plan",
        capacity: int | None = None,
        record: bool = True,
    ) -> SimResult:
        """
        `plan`: the program as compiled, under `capacity` (None: unlimited);
        `none`: the reference, everything in HBM (capacity ignored).
        """
        if policy == "plan":
            return simulate(self.planned, self.hardware, capacity, record=record)
        return simulate(self.reference, self.hardware, None, record=record)
