"""
The figures README.md and docs/*.md quote from runs on small programs,
measured again (`bench/docs_figures.py`): each must be what the run gives
now, and every figure marker in the pages must be one the script writes.
"""

import json
import re
from pathlib import Path

import pytest
import results_summary
import routed_moe
from docs_figures import (
    FIGURES,
    ROOT,
    Checked,
    Written,
    marked,
    quoted,
    sections,
    unmarked,
)

from hyperoffload.support.markers import between

AUDIT = ROOT / "docs" / "figures.md"
"""The audit of every figure of the other pages (its own figures are counts)."""
PAGES = [ROOT / "README.md", *sorted(set((ROOT / "docs").glob("*.md")) - {AUDIT})]


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


def test_the_routed_section_is_what_the_results_give() -> None:
    document = (ROOT / "docs" / "benchmarks.md").read_text()
    results = json.loads((routed_moe.RESULTS / "results.json").read_text())
    assert between(document, routed_moe.BEGIN, routed_moe.END) == (
        "\n" + routed_moe.section(results)
    ), (
        "docs/benchmarks.md is stale: run .venv/bin/python bench/routed_moe.py --write-docs"
    )


def _audit(heading: str) -> list[list[str]]:
    """The cells of each row of the table under `heading` in docs/figures.md."""
    text = between(AUDIT.read_text() + "\n## ", f"## {heading}\n", "\n## ")
    rows = [line for line in text.splitlines() if line.startswith("| ")][2:]
    return [
        [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", row)[1:-1]]
        for row in rows
    ]


def test_every_marked_section_is_listed_with_the_script_that_writes_it() -> None:
    listed = {
        (page, marker): script
        for page, marker, script, _ in _audit("Sections written between markers")
        if not marker.startswith("figure:")
    }
    found = {
        (str(page.relative_to(ROOT)), name)
        for page in PAGES
        for name in sections(page.read_text())
    }
    assert found == listed.keys(), (
        "update docs/figures.md, 'Sections written between markers'"
    )
    for (page, marker), script in listed.items():
        if script.startswith("`"):
            source = (ROOT / script.strip("`")).read_text()
            assert marker in source, f"{script} does not write {marker} ({page})"


def test_every_figure_outside_markers_is_audited() -> None:
    listed = {
        (page, section): int(count)
        for page, section, count, _ in _audit("Figures outside markers")
    }
    found = {
        (str(page.relative_to(ROOT)), section): len(figures)
        for page in PAGES
        for section, figures in unmarked(page.read_text()).items()
    }
    changed = sorted(set(found.items()) ^ set(listed.items()))
    assert not changed, (
        "docs/figures.md, 'Figures outside markers', no longer counts these "
        f"(page, section), figures: {changed}; write a new figure between its "
        "script's markers or check it by a test, then say so there"
    )
