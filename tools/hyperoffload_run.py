"""
`hyperoffload-run`: execute a planned program on a device with PyTorch
(prefetches and stores as asynchronous copies on copy streams), measure
makespan, peak device memory, exposed transfer time and bytes moved, and
check its outputs against the program stripped of its offload ops.

```
hyperoffload-run planned.mlir --device cuda --json
hyperoffload-run examples/tiny_llama_forward.mlir --device cpu --seed 1
```

The JSON has `hyperoffload-sim --json`'s keys (`makespan_s`,
`peak_hbm_bytes`, `exposed_transfer_s`, `bytes_to_device`, ...), measured,
plus `reserved_peak_bytes`, `outputs_match_reference` and the reference's
own measurement (`reference`); docs/execution.md.
"""

import argparse
import importlib.util
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from hyperoffload.ir.diagnostics import Severity, emit, format_diagnostic
from hyperoffload.support.strict_json import strict_dumps
from hyperoffload.tools.command_line import run_reporting_errors

TOOL = "hyperoffload-run"


class ToolError(ValueError):
    """A user error the tool reports as `TOOL: error: ...`."""


def require_torch(tool: str) -> None:
    """A diagnostic, not an import error, where PyTorch is not installed."""
    if importlib.util.find_spec("torch") is None:
        raise ToolError(
            format_diagnostic(
                tool,
                Severity.ERROR,
                "PyTorch is not installed; install the torch extra: pip install -e '.[torch]'",
            )
        )


def add_device_arguments(parser: argparse.ArgumentParser) -> None:
    """`--device`, `--threads`: shared by the tools that run programs."""
    parser.add_argument(
        "--device", default="cpu", help="cpu or cuda (default: %(default)s)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        help="cpu: intra-op threads during the run (default: torch's)",
    )


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=TOOL,
        description=(
            "Execute a program (MLIR as hyperoffload-opt reads it, planned or not) on a "
            "device with PyTorch: compute ops as torch operations, prefetch and store as "
            "asynchronous copies on a copy stream per link direction; report what was "
            "measured in hyperoffload-sim's keys."
        ),
    )
    parser.add_argument("input", type=Path, help="a .mlir program")
    add_device_arguments(parser)
    parser.add_argument(
        "--function", help="the function to run (default: the first public one)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the random inputs (default: 0)"
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="untimed runs of the reference before measuring (default: %(default)s)",
    )
    parser.add_argument(
        "--fast-inputs",
        action="store_true",
        help="draw inputs with torch's generator (for gigabytes of parameters)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print JSON instead of a table"
    )
    return parser


def _progress(message: str, tool: str = TOOL) -> None:
    emit(tool, Severity.REMARK, message)


def load_program(path: Path, tool: str = TOOL) -> ModuleOp:
    """Parse and verify `path` (torch-mlir output included); `tool` says so."""
    from hyperoffload.ir.context import make_context
    from hyperoffload.ir.diagnostics import verify_module
    from hyperoffload.ir.engines import parse_with_engine

    text = path.read_text()
    start = time.perf_counter()
    module = parse_with_engine(make_context(), text, str(path))
    verify_module(module)
    _progress(f"parsed {path} in {time.perf_counter() - start:.2f} s", tool)
    return module


def _run(args: Sequence[str] | None) -> int:
    options = _arguments().parse_args(args)
    require_torch(TOOL)
    from hyperoffload.evaluators.torch import make_device, run_program
    from hyperoffload.evaluators.torch.run import format_report

    device = make_device(options.device, options.threads)
    module = load_program(options.input)
    start = time.perf_counter()
    report = run_program(
        module,
        device,
        options.function,
        options.seed,
        max(options.warmup, 0),
        options.fast_inputs,
    )
    _progress(f"ran on {device.name} in {time.perf_counter() - start:.2f} s")
    print(strict_dumps(report, indent=1) if options.json else format_report(report))
    return 0


def main(args: Sequence[str] | None = None) -> int:
    return run_reporting_errors(TOOL, lambda: _run(args))


if __name__ == "__main__":
    sys.exit(main())
