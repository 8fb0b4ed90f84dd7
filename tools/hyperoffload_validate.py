"""
`hyperoffload-validate`: the simulator against measurement. For a program,
unplanned and planned with `hyperoffload-pipeline` at HBM targets (fractions
of its modelled unplanned peak), the makespan, peak and exposed transfer time
`hyperoffload-sim` models on a hardware preset beside what `hyperoffload-run`
measures on the device, as a markdown table (or JSON).

```
hyperoffload-calibrate --device cuda -o h200.toml
hyperoffload-validate model.mlir --device cuda --hardware h200.toml --capacities 0.8,0.6
```
"""

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hyperoffload.ir.diagnostics import Severity, emit
from hyperoffload.support.outputs import Outputs
from hyperoffload.support.strict_json import strict_dumps
from hyperoffload.tools.command_line import run_reporting_errors
from hyperoffload.tools.hyperoffload_run import (
    ToolError,
    add_device_arguments,
    load_program,
    require_torch,
)

TOOL = "hyperoffload-validate"


def _fractions(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected fractions such as 0.8,0.6, not '{text}'"
        ) from None
    if not values or any(not 0 < v <= 1 for v in values):
        raise argparse.ArgumentTypeError(f"fractions must be in (0, 1], not '{text}'")
    return values


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=TOOL,
        description=(
            "Compare the simulator (on a hardware preset) with hyperoffload-run (on the "
            "device) for a program, unplanned and planned at HBM targets."
        ),
    )
    parser.add_argument("input", type=Path, help="a .mlir program")
    add_device_arguments(parser)
    parser.add_argument(
        "--hardware",
        required=True,
        help="the preset the simulator models (a name or a .toml file, e.g. from hyperoffload-calibrate)",
    )
    parser.add_argument(
        "--capacities",
        type=_fractions,
        default=[0.8, 0.6],
        help="HBM targets as fractions of the modelled unplanned peak (default: 0.8,0.6)",
    )
    parser.add_argument(
        "--function", help="the function to run (default: the first public one)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="untimed runs of the unplanned program first (default: %(default)s)",
    )
    parser.add_argument("--fast-inputs", action="store_true")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--json-out", type=Path, help="also write the JSON to this file"
    )
    return parser


def _progress(message: str) -> None:
    emit(TOOL, Severity.REMARK, message)


def _run(args: Sequence[str] | None) -> int:
    options = _arguments().parse_args(args)
    outputs = Outputs({"--json-out": options.json_out})  # checked before the run
    require_torch(TOOL)
    from hyperoffload.analysis.program import Program
    from hyperoffload.evaluators.numeric.interpreter import find_function
    from hyperoffload.evaluators.torch import make_device, tensor_inputs
    from hyperoffload.evaluators.torch.run import measure, outputs_match, report_dict
    from hyperoffload.evaluators.torch.validation import (
        ValidationRow,
        format_markdown,
        rows_json,
    )
    from hyperoffload.ir.context import make_context
    from hyperoffload.ir.diagnostics import verify_module
    from hyperoffload.model.hardware import load_hardware
    from hyperoffload.passes.pipeline import PipelinePass
    from hyperoffload.sim.report import report_dict as sim_report

    device = make_device(options.device, options.threads)
    hardware = load_hardware(options.hardware)
    unplanned = Program(load_program(options.input, TOOL), hardware).reference_module
    function = find_function(unplanned, options.function)
    name = function.sym_name.data

    none = Program(unplanned, hardware, name).simulate("none")
    programs: list[tuple[float | None, int | None, Any, dict[str, Any]]] = [
        (None, None, unplanned, sim_report("none", hardware.name, none, none))
    ]
    ctx = make_context()
    for fraction in options.capacities:
        capacity = int(fraction * none.peak_hbm_bytes)
        start = time.perf_counter()
        planned = unplanned.clone()
        PipelinePass(hardware=options.hardware, hbm_capacity=capacity).apply(
            ctx, planned
        )
        verify_module(planned)
        result = Program(planned, hardware, name).simulate("plan", capacity)
        modelled = sim_report("plan", hardware.name, result, none)
        programs.append((fraction, capacity, planned, modelled))
        _progress(
            f"planned for {fraction:.0%} of the modelled peak in "
            f"{time.perf_counter() - start:.2f} s"
        )

    inputs = tensor_inputs(function, options.seed, options.fast_inputs)
    rows: list[ValidationRow] = []
    reference = None
    for fraction, capacity, module, modelled in programs:
        start = time.perf_counter()
        warmup = max(options.warmup, 0) if reference is None else 0
        execution = measure(module, device, inputs, name, warmup)
        if reference is None:
            reference = execution
        measured = report_dict(
            "none" if fraction is None else "plan",
            device,
            execution.measurement,
            reference.measurement,
        )
        match = outputs_match(execution, reference)
        measured["outputs_match_reference"] = match
        rows.append(
            ValidationRow(
                modelled["policy"], fraction, capacity, modelled, measured, match
            )
        )
        label = (
            "the unplanned program" if fraction is None else f"the {fraction:.0%} plan"
        )
        _progress(f"ran {label} in {time.perf_counter() - start:.2f} s")
    document = {
        "program": str(options.input),
        "hardware": hardware.name,
        "device": device.name,
        "rows": rows_json(rows),
    }
    text = strict_dumps(document, indent=1)
    if options.json_out is not None:
        outputs.put(options.json_out, text + "\n")
        outputs.write()
    if options.json:
        print(text)
    else:
        print(
            format_markdown(
                rows,
                str(options.input),
                options.hardware,
                f"{device.kind} ({device.name})",
            )
        )
    if not all(row.outputs_match for row in rows):
        raise ToolError(
            f"{TOOL}: error: a planned program's outputs differ from the unplanned one's"
        )
    return 0


def main(args: Sequence[str] | None = None) -> int:
    return run_reporting_errors(TOOL, lambda: _run(args))


if __name__ == "__main__":
    sys.exit(main())
