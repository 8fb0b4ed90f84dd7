"""Text between a page's markers: replaced, read, and a page without them refused."""

from pathlib import Path

import pytest

from hyperoffload.support.markers import (
    MarkerError,
    between,
    replace_between,
    write_between,
)

BEGIN, END = "<!-- x:begin -->", "<!-- x:end -->"
PAGE = f"a\n{BEGIN}\nold\n{END}\nb\n"


def test_the_text_between_the_markers_is_replaced_and_the_rest_kept() -> None:
    assert (
        replace_between(PAGE, "\nnew\n", BEGIN, END) == f"a\n{BEGIN}\nnew\n{END}\nb\n"
    )
    assert between(PAGE, BEGIN, END) == "\nold\n"


def test_an_end_marker_shared_by_several_figures_ends_at_the_first_after_begin() -> (
    None
):
    page = "<!-- f:a -->1<!-- /f --> and <!-- f:b -->2<!-- /f -->"
    assert replace_between(page, "3", "<!-- f:b -->", "<!-- /f -->") == (
        "<!-- f:a -->1<!-- /f --> and <!-- f:b -->3<!-- /f -->"
    )


@pytest.mark.parametrize(
    "page",
    ["no markers", f"{BEGIN}{BEGIN}{END}", f"{END}{BEGIN}", f"a {BEGIN} b"],
)
def test_a_page_without_its_markers_is_refused(page: str) -> None:
    with pytest.raises(MarkerError):
        replace_between(page, "new", BEGIN, END)


def test_write_between_names_the_page(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    write_between(page, "\nnew\n", BEGIN, END)
    assert page.read_text() == f"a\n{BEGIN}\nnew\n{END}\nb\n"
    page.write_text("no markers")
    with pytest.raises(MarkerError, match=r"page\.md: needs one"):
        write_between(page, "new", BEGIN, END)
