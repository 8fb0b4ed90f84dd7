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

An upstream module crosses into xDSL once for the whole pipeline, not once
per pass: a copy is read through the bindings into xDSL (no text; named
linalg ops xDSL lacks generalised in this process), every pass runs on it,
and the copy is changed to match through the bindings (`write_back`; text
only where that cannot make a change).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from io import StringIO
from typing import Any, TypeVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError

from hyperoffload.analysis.extract import main_function
from hyperoffload.analysis.program import Program
from hyperoffload.ir.context import make_context
from hyperoffload.ir.parsing import parse_mlir, read_upstream
from hyperoffload.ir.upstream import UnwritableChange, write_back
from hyperoffload.model.hardware import load_hardware
from hyperoffload.sim.arena import planned_arena

_T = TypeVar("_T")


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
    arena_after_bytes: int
    """The arena the planned program's static layout needs (>= its peak)."""


def _print(module: ModuleOp, generic: bool) -> str:
    out = StringIO()
    printer = Printer(stream=out, print_generic_format=generic)
    printer.print_op(module)
    return out.getvalue()


def _pipeline(hardware: str, hbm_capacity: str | int | None, **options: Any) -> Any:
    from hyperoffload.passes.pipeline import PipelinePass

    return PipelinePass(hardware=hardware, hbm_capacity=hbm_capacity, **options)


def plan_module(
    module: ModuleOp, hardware: str, hbm_capacity: str | int | None, **options: Any
) -> CompileReport:
    """Run `hyperoffload-pipeline` on an xDSL module in place and report."""
    model = load_hardware(hardware, hbm_capacity)
    function = main_function(module)
    planned = _pipeline(hardware, hbm_capacity, **options).planned_functions(module)
    done = next((p for p in planned if p.loop.function is function), None)
    if done is None:  # routed experts: the path where every expert runs
        program = Program(module, model)
        before = program.simulate("none", record=False)
        after = program.simulate("plan")
    else:
        before, after = done.before, done.after
    return CompileReport(
        model.name,
        model.hbm_capacity,
        before.peak_hbm_bytes,
        after.peak_hbm_bytes,
        before.makespan_s,
        after.makespan_s,
        after.exposed_transfer_s,
        planned_arena(after).arena_bytes,
    )


def _planned_upstream(
    module: Any, plan: Callable[[ModuleOp], _T], name: str
) -> tuple[Any, _T]:
    """
    A planned copy of the upstream module op `module` (ours): read through
    the bindings, planned by `plan(xdsl_module)`, written back through the
    bindings (from generic text where `write_back` cannot). Returns the copy
    (a detached module op) and what `plan` returned.
    """
    ir: Any = import_module("mlir.ir")
    copy = module.clone(ip=False).operation
    parsed, seen = read_upstream(make_context(), copy, name)
    result = plan(parsed)
    if seen is not None:
        try:
            return write_back(parsed, seen), result
        except (UnwritableChange, ir.MLIRError):
            pass
    text = _print(parsed, generic=True)
    return ir.Module.parse(text, module.context).operation.clone(ip=False), result


def _as_module(op: Any) -> Any:
    """An `mlir.ir.Module` holding the body and attributes of a detached module op."""
    ir: Any = import_module("mlir.ir")
    module = ir.Module.create(op.location)
    attributes = op.attributes
    for index in range(len(attributes)):
        named = attributes[index]
        module.operation.attributes[named.name] = named.attr
    for inner in list(op.regions[0].blocks[0].operations):
        module.body.append(inner)
    op.erase()
    return module


def _bindings(thing: Any) -> str:
    """
    The package of the MLIR Python bindings that made `thing` (a module, an
    op, a context): `mlir` for the bindings HyperOffload uses, `torch_mlir`
    for torch-mlir's own copy, and so on.
    """
    native = type(getattr(thing, "operation", thing)).__module__
    return native.split("._mlir_libs", 1)[0]


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

    `module` is MLIR text, an xDSL `ModuleOp` or an upstream module:
    - an `mlir.ir.Module` of the bindings HyperOffload uses is read through
      the bindings in this process (no text) and handed back as an
      `mlir.ir.Module` in its context (the hyperoffload dialect loaded there);
    - a module of another copy of the MLIR bindings (torch-mlir's
      `torch_mlir.ir.Module`, as `torch_mlir.fx.export_and_import` returns)
      goes through its generic text, which is read as text input is (its
      upstream normalisation in a child process: `mlir` is not loaded into a
      process that holds another copy). It comes back as a module of that
      copy in its context where that copy can load the dialect (from its
      IRDL export, as `to_upstream` does), else as IR text.
    Named linalg ops that xDSL does not know come back generalised.
    """
    if isinstance(module, str):
        parsed = parse_mlir(make_context(), module, "<compile>")
        report = plan_module(parsed, hardware, hbm_capacity, **options)
        return _print(parsed, generic=False), report
    if isinstance(module, ModuleOp):
        planned = module.clone()
        return planned, plan_module(planned, hardware, hbm_capacity, **options)
    if hasattr(module, "operation") and hasattr(module.operation, "get_asm"):
        if _bindings(module) == "mlir":
            load_dialect(module.context)
            planned, report = _planned_upstream(
                module.operation,
                lambda parsed: plan_module(parsed, hardware, hbm_capacity, **options),
                "<upstream module>",
            )
            return _as_module(planned), report
        text: str = module.operation.get_asm(print_generic_op_form=True)
        parsed = parse_mlir(make_context(), text, "<upstream module>")
        report = plan_module(parsed, hardware, hbm_capacity, **options)
        return _to_other_bindings(parsed, module.context), report
    raise TypeError(
        "compile() takes MLIR text, an xDSL ModuleOp or an upstream mlir.ir.Module, "
        f"not {type(module).__name__}"
    )


def _to_other_bindings(module: ModuleOp, context: Any) -> Any:
    """`module` in `context` of another copy of the bindings, else as text."""
    ir: Any = import_module(_bindings(context) + ".ir")
    failures = (ImportError, AttributeError, RuntimeError, ir.MLIRError)
    try:
        return to_upstream(module, context)
    except failures:
        return _print(module, generic=False)


def load_dialect(context: Any) -> None:
    """
    Make an upstream `Context` read the hyperoffload dialect (loaded from
    its IRDL export; generic form only, as xDSL prints with
    `print_generic_format`). The context may be of any copy of the MLIR
    bindings that has the `irdl` dialect (`mlir`, `torch_mlir`).
    """
    from hyperoffload.ir.irdl_export import irdl_text

    if getattr(context, "_hyperoffload_loaded", False):
        return
    bindings = _bindings(context)
    ir: Any = import_module(bindings + ".ir")
    irdl: Any = import_module(bindings + ".dialects.irdl")
    with context:
        irdl.load_dialects(ir.Module.parse(irdl_text()))
    context._hyperoffload_loaded = True


def to_upstream(module: str | ModuleOp, context: Any) -> Any:
    """
    An upstream `Module` of our IR (text in any form we read, or xDSL) in
    `context`, of the copy of the MLIR bindings that made `context`.
    """
    parsed = (
        parse_mlir(make_context(), module, "<to_upstream>")
        if isinstance(module, str)
        else module
    )
    ir: Any = import_module(_bindings(context) + ".ir")
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
            pipeline = _pipeline(hardware, hbm_capacity, **options)
            planned, _ = _planned_upstream(
                op,
                lambda parsed: pipeline.apply(make_context(), parsed),
                "<pass manager>",
            )
        except (DiagnosticException, ParseError, ValueError, ir.MLIRError) as err:
            op.location.emit_error(f"hyperoffload-pipeline: {str(err).splitlines()[0]}")
            pass_.signal_pass_failure()
            return
        body = op.regions[0].blocks[0]
        for old in list(body.operations):
            old.erase()
        for new in list(planned.regions[0].blocks[0].operations):
            body.append(new)
        planned.erase()

    # Loading a dialect while the pass manager runs (multi-threaded) aborts:
    # ours, and linalg, which generalising named ops needs.
    ir: Any = import_module("mlir.ir")
    context = ir.Context.current
    load_dialect(context)
    _ = context.dialects["linalg"]  # (looking it up loads it)
    pass_manager.add(
        run,
        name="HyperoffloadPipeline",
        argument="hyperoffload-pipeline",
        description="HyperOffload: insert, move-window and verify offload ops",
    )
