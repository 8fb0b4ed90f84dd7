"""
The figures that README.md and docs/*.md quote from runs on the small
programs of examples/ and test/inputs/, measured again.

Two kinds of quote:
- *written*: the page holds the figure between `<!-- figure:NAME -->` and
  `<!-- /figure -->`, and this script writes it there;
- *checked*: the figure sits where a marker cannot (in a command of a code
  block), and a pattern finds it; this script reports a difference and
  leaves the page alone.

`test/python/benchmark/test_docs_figures.py` measures every figure again
and compares. Figures of the large benchmark runs are written by their own
scripts (`bench/seed_claims.py`, `bench/results_summary.py`, ...), not here.
`unmarked` finds the figures a page holds outside markers: docs/figures.md
lists them, section by section, with how each is kept true.

    .venv/bin/python bench/docs_figures.py [--check]
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import redirect_stdout
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from hyperoffload.analysis.program import Program
from hyperoffload.api import CompileReport, plan_module
from hyperoffload.ir.context import make_context
from hyperoffload.ir.diagnostics import collect_diagnostics
from hyperoffload.ir.parsing import parse_mlir
from hyperoffload.model.hardware import load_hardware
from hyperoffload.sim.simulator import SimResult
from hyperoffload.support.markers import replace_between
from hyperoffload.support.outputs import write_output
from hyperoffload.support.units import format_bytes, format_seconds
from hyperoffload.tools import hyperoffload_check

ROOT = Path(__file__).resolve().parent.parent
TINY_LLAMA = ROOT / "examples" / "tiny_llama_train.mlir"
HARDWARE = "ascend-910c"
SHARE = 0.6
"""The tiny LLaMA step is planned at this share of its unconstrained peak."""

MARKED = re.compile(r"<!-- figure:([\w-]+) -->(.*?)<!-- /figure -->", re.DOTALL)


@dataclass(frozen=True)
class Written:
    """A figure the page holds between markers, written by this script."""

    page: str
    name: str
    measure: Callable[[], str]


@dataclass(frozen=True)
class Checked:
    """A figure in `page` that group 1 of `pattern` finds, compared only."""

    page: str
    pattern: str
    measure: Callable[[], str]


@cache
def _module() -> ModuleOp:
    """The tiny LLaMA step as parsed (planning takes a clone of it)."""
    text = TINY_LLAMA.read_text()
    return parse_mlir(make_context(), text, str(TINY_LLAMA.relative_to(ROOT)))


@cache
def _unconstrained() -> SimResult:
    """The tiny LLaMA step as written (no offload ops), simulated in unlimited HBM."""
    return Program(_module(), load_hardware(HARDWARE)).simulate("plan", record=False)


@cache
def _target() -> int:
    """`SHARE` of the tiny LLaMA step's unconstrained peak, in bytes."""
    return int(SHARE * _unconstrained().peak_hbm_bytes)


@cache
def _at_target() -> tuple[CompileReport, list[str]]:
    """The tiny LLaMA step planned at `_target()`, and the pass's remarks."""
    with collect_diagnostics() as diagnostics:
        report = plan_module(_module().clone(), HARDWARE, _target())
    return report, [str(d) for d in diagnostics]


def _percent(after: float, before: float) -> str:
    return f"{100 * (after / before - 1):+.1f}%"


def _slowdown(report: CompileReport) -> str:
    return f"{100 * (report.makespan_after_s / report.makespan_before_s - 1):+.2f}%"


def _as_written() -> str:
    return "`" + next(r for r in _at_target()[1] if ": as written: " in r) + "`"


def _checked(*flags: str) -> str:
    """What `hyperoffload-check` says of the tiny LLaMA step planned at 60%."""
    pipeline = f"hyperoffload-pipeline{{hbm-capacity={round(_target() / 1000)}KB}}"
    out = io.StringIO()
    with redirect_stdout(out), collect_diagnostics():
        hyperoffload_check.main([str(TINY_LLAMA), "--pipeline", pipeline, *flags])
    return out.getvalue().strip().removeprefix("outputs match: ")


CHECK_COMMAND = (
    r"hyperoffload-check examples/tiny_llama_train\.mlir \\?\s*"
    r"--pipeline 'hyperoffload-pipeline\{hbm-capacity=(\d+)KB\}'"
)

TINY_MOE = ROOT / "test" / "inputs" / "tiny_moe_routed_decode.mlir"
ROUTED_LIT = ROOT / "test" / "passes" / "pipeline-routed-whole.mlir"
"""The lit test that plans the tiny-moe routed decode as a whole, at 278KB and
at 90KB, and checks the planned peak and slowdown the pass reports."""


def _tiny_moe_peak() -> str:
    """The tiny-moe routed decode's peak in unlimited HBM (every expert run)."""
    hardware = load_hardware(HARDWARE)
    module = parse_mlir(make_context(), TINY_MOE.read_text(), TINY_MOE.name)
    none = Program(module, hardware).simulate("none", record=False)
    return format_bytes(none.peak_hbm_bytes)


def _routed_plan(prefix: str) -> str:
    """The peak and slowdown the lit test's `prefix` lines hold the plan to."""
    found = re.search(
        rf"// {prefix}(?:-SAME)?:.*as written: peak ([\d.]+ KB), slowdown (\+[\d.]+%)",
        ROUTED_LIT.read_text(),
    )
    if found is None:
        raise ValueError(f"{ROUTED_LIT.name} no longer checks the {prefix} plan")
    return f"{found.group(1)} at {found.group(2)}"


def _readme_cnn_peak() -> str:
    """The example CNN's peak as the README quotes it (`test_readme_own_model.py`
    measures that one against a fresh export)."""
    return quoted(
        (ROOT / "README.md").read_text(),
        r"hyperoffload-sim cnn_train\.mlir +# peak ([\d.]+ KB)",
    )


FIGURES: tuple[Written | Checked, ...] = (
    Written(
        "docs/passes.md",
        "tiny-llama-peak",
        lambda: format_bytes(_unconstrained().peak_hbm_bytes),
    ),
    Written(
        "docs/passes.md",
        "tiny-llama-makespan",
        lambda: format_seconds(_unconstrained().makespan_s),
    ),
    Written(
        "docs/passes.md",
        "tiny-llama-target",
        lambda: f"`hyperoffload-pipeline{{hbm-capacity={_target()}}}`",
    ),
    Written(
        "docs/passes.md",
        "tiny-llama-planned",
        lambda: (
            f"{format_bytes(_at_target()[0].peak_after_bytes)} "
            f"({_percent(_at_target()[0].peak_after_bytes, _at_target()[0].peak_before_bytes)})"
            f" at {format_seconds(_at_target()[0].makespan_after_s)}"
            f" ({_slowdown(_at_target()[0])})"
        ),
    ),
    Written("docs/passes.md", "tiny-llama-as-written", _as_written),
    Checked(
        "docs/own-model.md",
        r"# the unconstrained peak: ([\d.]+ KB)",
        _readme_cnn_peak,
    ),
    Written("docs/passes.md", "tiny-moe-peak", _tiny_moe_peak),
    Written("docs/passes.md", "tiny-moe-whole", lambda: _routed_plan("REMARK")),
    Written("docs/passes.md", "tiny-moe-cold", lambda: _routed_plan("COLD")),
    Checked("README.md", CHECK_COMMAND, lambda: str(round(_target() / 1000))),
    Checked("docs/lowering.md", CHECK_COMMAND, lambda: str(round(_target() / 1000))),
    Checked(
        "README.md",
        CHECK_COMMAND.replace("(\\d+)", "\\d+") + r" -q\n# outputs match: (.*)\n",
        lambda: _checked("-q"),
    ),
    Checked(
        "docs/lowering.md",
        CHECK_COMMAND.replace("(\\d+)", "\\d+")
        + r" --arena -q\n\s*# outputs match: (.*)\n",
        lambda: _checked("--arena", "-q"),
    ),
)


def marked(page: str) -> Iterator[tuple[str, str]]:
    """(name, text) of every figure between markers in `page`."""
    for found in MARKED.finditer(page):
        yield found.group(1), found.group(2)


def written(page: str, name: str, text: str) -> str:
    """`page` with `text` as its figure `name` (which must be there, once)."""
    return replace_between(page, text, f"<!-- figure:{name} -->", "<!-- /figure -->")


def quoted(page: str, pattern: str) -> str:
    """What group 1 of `pattern` finds in `page` (it must find it)."""
    found = re.search(pattern, page)
    if found is None:
        raise ValueError(f"the page no longer matches {pattern!r}")
    return found.group(1)


FIGURE = re.compile(
    r"(?<![\w.])[\u2212+-]?\d[\d,]*(?:\.\d+)?(?:e[\u2212+-]?\d+)?\s?"
    r"(?:GB/s|TB/s|tokens/s|steps/s|TFLOPS|GiB|MiB|KiB|GB|MB|KB|TB|ms|us|µs|ns"
    r"|minutes|seconds|hours|min|s|%|x|\u00d7)(?![\w/])"
)
"""A figure: a number with a unit of size, time, rate or share (`28.52 GB`, `+2.3%`)."""
SECTION = re.compile(r"<!-- ([\w./-]+):\s?begin -->.*?<!-- \1:\s?end -->", re.DOTALL)
"""A section a script writes: `<!-- NAME:begin -->` ... `<!-- NAME:end -->`."""


def sections(page: str) -> Iterator[str]:
    """The NAME of each section between markers that `page` holds."""
    for found in SECTION.finditer(page):
        yield found.group(1)


def unmarked(page: str) -> dict[str, list[str]]:
    """
    The figures of each section of `page` (by heading) that no marker holds:
    in its prose and tables outside code spans, and in the comments of its
    code blocks (`# peak 111.18 KB`), where a command's output is quoted.
    """
    text = MARKED.sub("", SECTION.sub("", page))
    found: dict[str, list[str]] = {}
    heading, fenced = "", False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced and line.startswith("#"):
            heading = line.lstrip("#").strip()
            continue
        if fenced:
            if "#" not in line:
                continue
            line = line.split("#", 1)[1]
        line = re.sub(r"`[^`]*`", "", line)
        found.setdefault(heading, []).extend(m.group(0) for m in FIGURE.finditer(line))
    return {heading: figures for heading, figures in found.items() if figures}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Measure the figures README.md and docs/ quote from small runs."
    )
    parser.add_argument(
        "--check", action="store_true", help="compare only; exit 1 on a difference"
    )
    options = parser.parse_args(argv)
    pages = {figure.page: (ROOT / figure.page).read_text() for figure in FIGURES}
    stale, unwritable = 0, 0
    for figure in FIGURES:
        measured = figure.measure()
        page = pages[figure.page]
        if isinstance(figure, Written):
            now = dict(marked(page)).get(figure.name)
            if now != measured:
                stale += 1
                print(f"{figure.page}: {figure.name}: {now!r} -> {measured!r}")
                pages[figure.page] = written(page, figure.name, measured)
        elif (now := quoted(page, figure.pattern)) != measured:
            stale, unwritable = stale + 1, unwritable + 1
            print(f"{figure.page}: {figure.pattern!r}: says {now}, measured {measured}")
    if not options.check:
        for name, text in pages.items():
            if text != (ROOT / name).read_text():
                write_output(ROOT / name, text)
    return 1 if unwritable or (stale and options.check) else 0


if __name__ == "__main__":
    sys.exit(main())
