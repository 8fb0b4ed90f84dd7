"""
`hyperoffload-check`: compile a program with HyperOffload, lower its offload
ops to upstream MLIR, run the result natively (MLIR ExecutionEngine) next to
the original program on the same random inputs and say whether the outputs
are bitwise equal.

```
hyperoffload-check examples/tiny_llama_train.mlir \\
    --pipeline 'hyperoffload-pipeline{hbm-capacity=700KB}' --seed 1
```

The original is FILE stripped of any offload ops (`hyperoffload-strip`), its
collectives (a sharded step's) as their single-process semantics; the
lowered program is FILE after `--pipeline` and `convert-hyperoffload-to-linalg`
(with `--arena`: after `--pipeline`, `hyperoffload-assign-offsets` and
`convert-hyperoffload-to-linalg{arena=true}`, every device buffer at its
offset in one arena).
Both are printed in generic form (`--quiet` leaves them out), then the
verdict. Exit status: 0 when the outputs match, 1 when they differ or on an
error.
"""

import argparse
import io
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException

from hyperoffload.analysis.extract import ExtractionError, main_function
from hyperoffload.ir.diagnostics import Severity, emit, format_diagnostic
from hyperoffload.tools.command_line import run_reporting_errors

TOOL = "hyperoffload-check"
CONVERSION = "convert-hyperoffload-to-linalg"
ARENA_CONVERSION = "convert-hyperoffload-to-linalg{arena=true}"
ASSIGN_OFFSETS = "hyperoffload-assign-offsets"
DEFAULT_PIPELINE = "hyperoffload-pipeline"


class CheckError(DiagnosticException):
    """A user error: no such function, an empty module."""


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=TOOL,
        description=(
            "Compile a program (MLIR as hyperoffload-opt reads it), lower its offload "
            f"ops with {CONVERSION}, run the lowered and the original program with "
            "the MLIR ExecutionEngine on the same random inputs and compare outputs."
        ),
    )
    parser.add_argument("input", type=Path, help="a .mlir program")
    parser.add_argument(
        "--function", help="the function to run (default: the first public one)"
    )
    parser.add_argument(
        "--pipeline",
        default=DEFAULT_PIPELINE,
        help=(
            "the xDSL pass pipeline to apply before the conversion, e.g. "
            "'hyperoffload-pipeline{hbm-capacity=700KB}'; '' for none "
            "(default: %(default)s)"
        ),
    )
    parser.add_argument(
        "--arena",
        action="store_true",
        help=(
            f"run the static memory layout: append {ASSIGN_OFFSETS} to the "
            f"pipeline and lower with {ARENA_CONVERSION}"
        ),
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the random inputs (default: 0)"
    )
    parser.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="print only the verdict, not the two programs",
    )
    return parser


def _progress(message: str) -> None:
    emit(TOOL, Severity.REMARK, message)


def _generic(module: ModuleOp) -> str:
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(module)
    return stream.getvalue() + "\n"


def _function(module: ModuleOp, name: str | None, file_name: str) -> FuncOp:
    try:
        return main_function(module, name)
    except ExtractionError as err:
        raise CheckError(
            format_diagnostic(file_name, Severity.ERROR, f"{err} to check")
        ) from None


def _pipeline(
    available: dict[str, Callable[[], type[ModulePass]]], spec: str, arena: bool
) -> tuple[list[PassPipeline], str]:
    """The user's pipeline (`spec`, possibly empty), then the conversion (after
    the layout, with `arena`); and the whole pipeline as text."""
    pipelines: list[PassPipeline] = []
    if spec:
        try:
            pipelines.append(PassPipeline.parse_spec(available, spec))
        except ArgSpecParseError as err:  # a BaseException: caught here
            raise CheckError(
                format_diagnostic(TOOL, Severity.ERROR, f"invalid --pipeline: {err}")
            ) from None
    lowering = f"{ASSIGN_OFFSETS},{ARENA_CONVERSION}" if arena else CONVERSION
    pipelines.append(PassPipeline.parse_spec(available, lowering))
    return pipelines, ",".join(p for p in (spec, lowering) if p)


def _format(value: float) -> str:
    return "0" if value == 0 else f"{value:.3g}"


def _differences(original: list[Any], lowered: list[Any]) -> list[str]:
    """A line for each output that differs."""
    from hyperoffload.support.arrays import equal_elements, max_abs_diff, same_array

    lines: list[str] = []
    if len(original) != len(lowered):
        lines.append(
            f"  the original returns {len(original)} output(s), "
            f"the lowered program {len(lowered)}"
        )
    for index, (a, b) in enumerate(zip(original, lowered, strict=False)):
        if same_array(a, b):
            continue
        if a.shape != b.shape or a.dtype != b.dtype:
            lines.append(
                f"  output #{index}: {a.dtype}{list(a.shape)} in the original, "
                f"{b.dtype}{list(b.shape)} in the lowered program"
            )
            continue
        differing = int(np.count_nonzero(~equal_elements(a, b)))
        lines.append(
            f"  output #{index}: {differing} of {a.size} element(s) differ, "
            f"max |diff| = {_format(max_abs_diff(a, b))}"
        )
    return lines


def _run(args: Sequence[str] | None) -> int:
    options = _arguments().parse_args(args)
    from hyperoffload.evaluators.execution import compare_upstream
    from hyperoffload.evaluators.numeric import random_inputs
    from hyperoffload.ir.context import make_context
    from hyperoffload.ir.diagnostics import verify_module
    from hyperoffload.ir.engines import parse_with_engine
    from hyperoffload.passes import all_passes
    from hyperoffload.passes.collectives_to_linalg import lower_collectives
    from hyperoffload.passes.strip import StripPass

    file_name = str(options.input)
    text = options.input.read_text()
    start = time.perf_counter()
    ctx = make_context()
    module = parse_with_engine(ctx, text, file_name)
    verify_module(module)
    _progress(f"parsed {file_name} in {time.perf_counter() - start:.2f} s")

    original = module.clone()
    StripPass().apply(ctx, original)
    lower_collectives(original)
    function = _function(original, options.function, file_name)
    name = function.sym_name.data
    inputs = random_inputs(function, options.seed)

    passes, spec = _pipeline(all_passes(), options.pipeline.strip(), options.arena)
    start = time.perf_counter()
    for pipeline in passes:
        pipeline.apply(ctx, module)
    verify_module(module)
    _progress(f"applied {spec} in {time.perf_counter() - start:.2f} s")

    original_text, lowered_text = _generic(original), _generic(module)
    if not options.quiet:
        print(f"// original: {file_name} without offload ops (generic form)")
        print(original_text)
        print(f"// lowered: {file_name} after {spec} (generic form)")
        print(lowered_text, flush=True)

    start = time.perf_counter()
    comparison = compare_upstream(original_text, lowered_text, inputs, name)
    _progress(
        f"ran @{name} (original and lowered) in {time.perf_counter() - start:.2f} s"
    )
    verdict = "yes" if comparison.match else "no"
    print(f"outputs match: {verdict} (max |diff| = {_format(comparison.max_abs_diff)})")
    for line in _differences(comparison.original, comparison.lowered):
        print(line)
    return 0 if comparison.match else 1


def main(args: Sequence[str] | None = None) -> int:
    status = 0

    def run() -> None:
        nonlocal status
        status = _run(args)

    return run_reporting_errors(TOOL, run) or status


if __name__ == "__main__":
    sys.exit(main())
