"""
The figures README.md and docs/*.md quote from runs on small programs,
measured again (`bench/docs_figures.py`): each must be what the run gives
now, and every figure marker in the pages must be one the script writes.
"""

from pathlib import Path

import pytest
import results_summary
from docs_figures import FIGURES, ROOT, Checked, Written, marked, quoted

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize(
    "figure",
    FIGURES,
    ids=[
        f.name if isinstance(f, Written) else f"{f.page}:{i}"
        for i, f in enumerate(FIGURES)
    ],
)
def test_the_page_quotes_what_the_run_gives(figure: Written | Checked) -> None:
    page = (ROOT / figure.page).read_text()
    if isinstance(figure, Written):
        quote = dict(marked(page)).get(figure.name)
    else:
        quote = quoted(page, figure.pattern)
    assert quote == figure.measure(), (
        f"{figure.page} is stale: run .venv/bin/python bench/docs_figures.py"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_marked_figure_is_one_the_script_writes(page: Path) -> None:
    known = {(f.page, f.name) for f in FIGURES if isinstance(f, Written)}
    name = str(page.relative_to(ROOT))
    for figure, _ in marked(page.read_text()):
        assert (name, figure) in known, f"{name}: no measurement writes {figure!r}"


def test_the_results_table_is_what_the_results_give() -> None:
    """docs/benchmarks.md's summary of the default suite, against results.json."""
    assert results_summary.main(["--check"]) == 0, (
        "docs/benchmarks.md is stale: run .venv/bin/python bench/results_summary.py"
    )
