"""
`hyperoffload-calibrate`: measure this machine's device (GEMM throughput per
dtype, memory and host-link bandwidths, launch overhead, elementwise op time)
and write a hardware preset that `hyperoffload-sim --hardware FILE` and
`hyperoffload-pipeline{hardware=FILE}` read, every figure marked "measured
on <device>, <date>".

```
hyperoffload-calibrate --device cuda -o presets/h200-measured.toml
hyperoffload-calibrate --device cpu --quick            # the preset on stdout, in a few seconds
```
"""

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from hyperoffload.ir.diagnostics import Severity, emit
from hyperoffload.support.outputs import Outputs
from hyperoffload.tools.command_line import run_reporting_errors
from hyperoffload.tools.hyperoffload_run import add_device_arguments, require_torch

TOOL = "hyperoffload-calibrate"


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=TOOL,
        description=(
            "Run microbenchmarks on a device and write a hardware preset (TOML, the "
            "form of hyperoffload-sim's presets) with every figure measured."
        ),
    )
    add_device_arguments(parser)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small sizes, few repetitions (seconds on a CPU; for tests)",
    )
    parser.add_argument(
        "-o", "--output", type=Path, help="the preset file (default: stdout)"
    )
    return parser


def _run(args: Sequence[str] | None) -> int:
    options = _arguments().parse_args(args)
    outputs = Outputs({"-o": options.output})  # checked before the measurements
    require_torch(TOOL)
    from hyperoffload.evaluators.torch.calibrate import calibrate, preset_toml

    start = time.perf_counter()
    calibration = calibrate(options.device, options.quick, options.threads)
    text = preset_toml(calibration)
    emit(
        TOOL,
        Severity.REMARK,
        f"measured {calibration.name} in {time.perf_counter() - start:.1f} s",
    )
    if options.output is None:
        print(text, end="")
    else:
        outputs.put(options.output, text)
        outputs.write()
        emit(TOOL, Severity.REMARK, f"wrote {options.output}")
    return 0


def main(args: Sequence[str] | None = None) -> int:
    return run_reporting_errors(TOOL, lambda: _run(args))


if __name__ == "__main__":
    sys.exit(main())
