"""
Embedding HyperOffload in other toolchains.

```python
import hyperoffload

planned, report = hyperoffload.compile(module, hardware="ascend-910c", hbm_capacity="32GB")
# `module`: IR text, an xDSL ModuleOp or an upstream mlir.ir.Module; `planned` is
# of the same kind, `report` gives the peak and makespan before and after.

from mlir.passmanager import PassManager
pm = PassManager.parse("builtin.module(canonicalize)")
hyperoffload.add_to_pass_manager(pm, hardware="ascend-910c", max_slowdown=0.02)
pm.add("cse")
pm.run(upstream_module.operation)  # a failure carries our diagnostic
```

An upstream module crosses into xDSL once for the whole pipeline (generic
text out, one parse, every pass, generic text back), not once per pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from io import StringIO
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError

from hyperoffload.analysis.extract import program_schedules
from hyperoffload.ir.context import make_context
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.sim.hardware import load_hardware
from hyperoffload.sim.policies import PolicyOptions, run_policy


@dataclass(frozen=True)
class CompileReport:
    """Simulated figures of the first function, before and after planning."""

    hardware: str
    hbm_capacity_bytes: int
    peak_before_bytes: int
    peak_after_bytes: int
    makespan_before_s: float
    makespan_after_s: float
    exposed_transfer_s: float


def _print(module: ModuleOp, generic: bool) -> str:
    out = StringIO()
    printer = Printer(stream=out, print_generic_format=generic)
    printer.print_op(module)
    return out.getvalue()


def plan_module(
    module: ModuleOp, hardware: str, hbm_capacity: str | int | None, **options: Any
) -> CompileReport:
    """Run `hyperoffload-pipeline` on an xDSL module in place and report."""
    from hyperoffload.passes.pipeline import PipelinePass

    model = load_hardware(hardware, hbm_capacity)
    _, stripped, _ = program_schedules(module, model)
    before = run_policy("none", stripped, stripped, model, None, PolicyOptions(), False)
    PipelinePass(hardware=hardware, hbm_capacity=hbm_capacity, **options).apply(
        make_context(), module
    )
    planned, _, _ = program_schedules(module, model)
    after = run_policy("plan", planned, stripped, model, None, PolicyOptions(), False)
    return CompileReport(
        model.name,
        model.hbm_capacity,
        before.peak_hbm_bytes,
        after.peak_hbm_bytes,
        before.makespan_s,
        after.makespan_s,
        after.exposed_transfer_s,
    )


def compile(
    module: Any,
    hardware: str = "ascend-910c",
    hbm_capacity: str | int | None = None,
    **options: Any,
) -> tuple[Any, CompileReport]:
    """
    Plan `module` with `hyperoffload-pipeline` (options as in the pass, with
    underscores: `max_slowdown=0.02`, `alpha=1.0`, ...). Returns a new module
    of the kind given and the report; the input is left unchanged.
    """
    if isinstance(module, str):
        parsed = parse_mlir(make_context(), module, "<compile>")
        report = plan_module(parsed, hardware, hbm_capacity, **options)
        return _print(parsed, generic=False), report
    if isinstance(module, ModuleOp):
        planned = module.clone()
        return planned, plan_module(planned, hardware, hbm_capacity, **options)
    if hasattr(module, "operation") and hasattr(module.operation, "get_asm"):
        text = module.operation.get_asm(print_generic_op_form=True)
        parsed = parse_mlir(make_context(), text, "<upstream module>")
        report = plan_module(parsed, hardware, hbm_capacity, **options)
        return to_upstream(parsed, module.context), report
    raise TypeError(
        "compile() takes MLIR text, an xDSL ModuleOp or an upstream mlir.ir.Module, "
        f"not {type(module).__name__}"
    )


def load_dialect(context: Any) -> None:
    """
    Make an upstream `mlir.ir.Context` read the hyperoffload dialect (loaded
    from its IRDL export; generic form only, as xDSL prints with
    `print_generic_format`).
    """
    from hyperoffload.tools.export_irdl import irdl_text

    ir: Any = import_module("mlir.ir")
    irdl: Any = import_module("mlir.dialects.irdl")
    if getattr(context, "_hyperoffload_loaded", False):
        return
    with context:
        irdl.load_dialects(ir.Module.parse(irdl_text()))
    context._hyperoffload_loaded = True


def to_upstream(module: str | ModuleOp, context: Any) -> Any:
    """An upstream `mlir.ir.Module` of our IR (text in any form we read, or xDSL)."""
    parsed = (
        parse_mlir(make_context(), module, "<to_upstream>")
        if isinstance(module, str)
        else module
    )
    ir: Any = import_module("mlir.ir")
    load_dialect(context)
    return ir.Module.parse(_print(parsed, generic=True), context)


def add_to_pass_manager(
    pass_manager: Any,
    hardware: str = "ascend-910c",
    hbm_capacity: str | int | None = None,
    **options: Any,
) -> None:
    """
    Append `hyperoffload-pipeline` to an upstream `mlir.passmanager.PassManager`
    as a Python-defined pass; it replaces the module's body in place. A
    diagnostic (bad IR, an infeasible target) fails the pass with its message.
    Call it inside the `mlir.ir.Context` the pass manager runs in.
    """

    def run(op: Any, pass_: Any) -> None:
        ir: Any = import_module("mlir.ir")
        try:
            text = op.get_asm(print_generic_op_form=True)
            parsed = parse_mlir(make_context(), text, "<pass manager>")
            plan_module(parsed, hardware, hbm_capacity, **options)
            planned = ir.Module.parse(_print(parsed, generic=True), op.context)
        except (DiagnosticException, ParseError, ValueError) as err:
            op.location.emit_error(f"hyperoffload-pipeline: {str(err).splitlines()[0]}")
            pass_.signal_pass_failure()
            return
        body = op.regions[0].blocks[0]
        for old in list(body.operations):
            old.erase()
        for new in list(planned.body.operations):
            body.append(new)

    # Loading a dialect while the pass manager runs (multi-threaded) aborts.
    ir: Any = import_module("mlir.ir")
    load_dialect(ir.Context.current)
    pass_manager.add(
        run,
        name="HyperoffloadPipeline",
        argument="hyperoffload-pipeline",
        description="HyperOffload: insert, move-window and verify offload ops",
    )
