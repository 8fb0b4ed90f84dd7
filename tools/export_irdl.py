"""
`hyperoffload-export-irdl`: write the dialect as IRDL for upstream `mlir-opt`.

```
hyperoffload-export-irdl -o dialects/hyperoffload.irdl.mlir
mlir-opt --irdl-file=dialects/hyperoffload.irdl.mlir program.generic.mlir
```

The export itself is `hyperoffload.ir.irdl_export`.
"""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from hyperoffload.ir.irdl_export import irdl_text
from hyperoffload.support.outputs import write_output
from hyperoffload.tools.command_line import run_reporting_errors

DEFAULT_OUTPUT = (
    Path(__file__).resolve().parent.parent / "dialects" / "hyperoffload.irdl.mlir"
)


def _run(args: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n\n")[0].strip()
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help="file to write ('-' for stdout; default: %(default)s)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if the output file is stale",
    )
    options = parser.parse_args(args)
    text = irdl_text()
    if options.check:
        current = options.output.read_text() if options.output.exists() else ""
        if current != text:
            print(
                f"{options.output} is stale: run hyperoffload-export-irdl",
                file=sys.stderr,
            )
            return 1
    elif str(options.output) == "-":
        sys.stdout.write(text)
    else:
        write_output(options.output, text)
    return 0


def main(args: Sequence[str] | None = None) -> int:
    return run_reporting_errors("hyperoffload-export-irdl", lambda: _run(args))


if __name__ == "__main__":
    sys.exit(main())
