"""
`hyperoffload-layout`: static memory layout for any compiler. Reads buffers
with half-open lifetimes in MiniMalloc's CSV format (`id,lower,upper,size`,
github.com/google/minimalloc) or the same rows as JSON, and writes each
buffer's offset (`id,lower,upper,size,offset`, or JSON) within a capacity:
the heuristics' layout, searched on by the exact search
(`hyperoffload.model.exact_layout`) for `--time-limit` seconds where it does
not fit. Every layout is checked before it is written; an input that does
not fit is an error (exit status 1), as is a malformed row (`file:line`).

```
hyperoffload-layout buffers.csv --capacity 1048576 -o offsets.csv
hyperoffload-layout buffers.json --capacity 1MiB --time-limit 30 -o offsets.json
```
JSON: `{"buffers": [{"id": "b1", "lower": 0, "upper": 3, "size": 4}, ...]}`
(or the list alone), written back with an `offset` per buffer.
"""

import argparse
import csv
import io
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from hyperoffload.ir.diagnostics import Severity, format_diagnostic
from hyperoffload.model.exact_layout import exact_layout
from hyperoffload.model.layout import (
    Allocation,
    Layout,
    check_layout,
    live_peak,
    static_layout,
)
from hyperoffload.support.outputs import Outputs
from hyperoffload.support.strict_json import strict_dumps
from hyperoffload.support.units import parse_size
from hyperoffload.tools.command_line import run_reporting_errors

TOOL = "hyperoffload-layout"
FIELDS = ("id", "lower", "upper", "size")


class LayoutInputError(ValueError):
    """A malformed input, located (`file:line: error: ...`)."""

    def __init__(self, where: str, message: str):
        super().__init__(format_diagnostic(where, Severity.ERROR, message))


@dataclass(frozen=True)
class Buffers:
    """The buffers read: their ids and allocations (`buffer`: the row's index)."""

    ids: list[str]
    allocations: list[Allocation]


def _number(where: str, field: str, text: object) -> int:
    """A non-negative integer field."""
    try:
        value = int(str(text).strip())
    except ValueError:
        raise LayoutInputError(
            where, f"{field} must be an integer, not {text!r}"
        ) from None
    if value < 0:
        raise LayoutInputError(where, f"{field} cannot be negative: {value}")
    return value


def _buffer(where: str, row: dict[str, Any], index: int) -> tuple[str, Allocation]:
    missing = [field for field in FIELDS if row.get(field) in (None, "")]
    if missing:
        raise LayoutInputError(where, f"missing {', '.join(missing)}")
    lower, upper, size = (_number(where, f, row[f]) for f in FIELDS[1:])
    if upper <= lower:
        raise LayoutInputError(
            where, f"the lifetime [{lower}, {upper}) is empty: upper must exceed lower"
        )
    return str(row["id"]).strip(), Allocation(index, size, lower, upper)


def read_csv(path: Path, text: str) -> Buffers:
    """MiniMalloc's CSV: a header naming `id,lower,upper,size` (any order), a row per buffer."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None or not set(FIELDS) <= {h.strip() for h in header}:
        got = ",".join(header or [])
        raise LayoutInputError(
            f"{path}:1", f"expected the header id,lower,upper,size, not {got!r}"
        )
    names = [h.strip() for h in header]
    ids: list[str] = []
    allocations: list[Allocation] = []
    for cells in reader:
        where = f"{path}:{reader.line_num}"
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(names):
            raise LayoutInputError(
                where, f"expected {len(names)} fields, found {len(cells)}"
            )
        name, allocation = _buffer(
            where, dict(zip(names, cells, strict=True)), len(ids)
        )
        ids.append(name)
        allocations.append(allocation)
    return Buffers(ids, allocations)


def read_json(path: Path, text: str) -> Buffers:
    """`{"buffers": [{"id", "lower", "upper", "size"}, ...]}` or the list alone."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise LayoutInputError(f"{path}:{err.lineno}", err.msg) from None
    data = cast(object, data)
    rows = (
        cast(dict[str, object], data).get("buffers") if isinstance(data, dict) else data
    )
    if not isinstance(rows, list):
        raise LayoutInputError(str(path), "expected a list of buffers")
    ids: list[str] = []
    allocations: list[Allocation] = []
    for index, row in enumerate(cast(list[object], rows)):
        where = f"{path}: buffer #{index}"
        if not isinstance(row, dict):
            raise LayoutInputError(where, "expected an object")
        name, allocation = _buffer(where, cast(dict[str, Any], row), index)
        ids.append(name)
        allocations.append(allocation)
    return Buffers(ids, allocations)


def read_buffers(path: Path) -> Buffers:
    text = path.read_text()
    return read_json(path, text) if path.suffix == ".json" else read_csv(path, text)


def lay_out(
    buffers: Buffers, capacity: int, time_limit: float, nodes: int | None = None
) -> tuple[Layout, str]:
    """
    A checked layout within `capacity` and how it was found (the exact search
    within `time_limit` seconds and, if given, `nodes` nodes); raises
    `ValueError` if none.
    """
    allocations = buffers.allocations
    layout = static_layout(allocations, "auto", alignment=1)
    how = f"heuristics ({layout.strategy})"
    if layout.arena_bytes > capacity:
        result = exact_layout(
            allocations, 1, layout, time_limit, target=capacity, node_budget=nodes
        )
        layout = result.layout
        how = "exact search" + (", proven optimal" if result.proven_optimal else "")
        if layout.arena_bytes > capacity:
            proof = (
                f"no layout fits below {result.lower_bound} bytes"
                if result.lower_bound > capacity
                else f"none found within {time_limit:g} s"
                + ("" if nodes is None else f" and {nodes} nodes")
            )
            raise ValueError(
                f"the buffers do not fit in {capacity} bytes: the best layout "
                f"found needs {layout.arena_bytes} (live peak "
                f"{live_peak(allocations, 1)}; {proof})"
            )
    check_layout(allocations, layout, alignment=1)
    return layout, how


def format_csv(buffers: Buffers, layout: Layout) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow((*FIELDS, "offset"))
    for name, a, offset in zip(
        buffers.ids, buffers.allocations, layout.offsets, strict=True
    ):
        writer.writerow((name, a.start, a.end, a.bytes, offset))
    return out.getvalue()


def format_json(buffers: Buffers, layout: Layout) -> str:
    rows = [
        {"id": name, "lower": a.start, "upper": a.end, "size": a.bytes, "offset": o}
        for name, a, o in zip(
            buffers.ids, buffers.allocations, layout.offsets, strict=True
        )
    ]
    return strict_dumps({"arena": layout.arena_bytes, "buffers": rows}, indent=1) + "\n"


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=TOOL,
        description="Offsets for buffers with known lifetimes within a capacity "
        "(MiniMalloc's CSV format, or JSON).",
    )
    parser.add_argument(
        "input", type=Path, help="a .csv (id,lower,upper,size) or .json file"
    )
    parser.add_argument(
        "--capacity", required=True, help="bytes available (e.g. 1048576 or 1MiB)"
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=10.0,
        help="seconds the exact search may take where the heuristics do not fit (default 10)",
    )
    parser.add_argument(
        "--nodes",
        type=int,
        help="a node budget for the exact search besides its time (a result "
        "that does not depend on the machine's load)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        help="where to write the offsets (.json: as JSON; default: CSV on stdout)",
    )
    return parser


def _run(args: Sequence[str] | None) -> int:
    options = _arguments().parse_args(args)
    text: str = options.capacity
    capacity = int(text) if text.strip().isdigit() else parse_size(text)
    if options.time_limit <= 0:
        raise ValueError(f"--time-limit must be positive, not {options.time_limit}")
    if options.nodes is not None and options.nodes <= 0:
        raise ValueError(f"--nodes must be positive, not {options.nodes}")
    output: Path | None = options.output
    outputs = Outputs({"--output": output})  # checked before the search
    start = time.perf_counter()
    buffers = read_buffers(options.input)
    layout, how = lay_out(buffers, capacity, options.time_limit, options.nodes)
    as_json = output is not None and output.suffix == ".json"
    written = (format_json if as_json else format_csv)(buffers, layout)
    if output is None:
        sys.stdout.write(written)
    else:
        outputs.put(output, written)
        outputs.write()
    print(
        f"{options.input}: {len(buffers.ids)} buffers, live peak "
        f"{live_peak(buffers.allocations, 1)}, arena {layout.arena_bytes} of "
        f"{capacity} ({how}, {time.perf_counter() - start:.2f} s)",
        file=sys.stderr,
    )
    return 0


def main(args: Sequence[str] | None = None) -> int:
    return run_reporting_errors(TOOL, lambda: _run(args))


if __name__ == "__main__":
    sys.exit(main())
