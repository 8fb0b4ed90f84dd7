"""
Text a script writes into a page between two markers, the rest of the page
kept as it is:

```python
page = "a\\n<!-- x:begin -->\\nold\\n<!-- x:end -->\\nb\\n"
replace_between(page, "\\nnew\\n", "<!-- x:begin -->", "<!-- x:end -->")
# 'a\\n<!-- x:begin -->\\nnew\\n<!-- x:end -->\\nb\\n'
between(page, "<!-- x:begin -->", "<!-- x:end -->")  # '\\nold\\n'
```
"""

from __future__ import annotations

from pathlib import Path

from hyperoffload.support.outputs import write_output


class MarkerError(ValueError):
    """A page without its markers: `begin` once, and `end` after it."""


def _split(document: str, begin: str, end: str) -> tuple[str, str, str]:
    """(head, what lies between, tail) of `document` around `begin` and the
    first `end` after it."""
    if document.count(begin) != 1:
        raise MarkerError(f"needs one {begin}, not {document.count(begin)}")
    head, rest = document.split(begin)
    if end not in rest:
        raise MarkerError(f"needs {end} after {begin}")
    inside, tail = rest.split(end, 1)
    return head, inside, tail


def between(document: str, begin: str, end: str) -> str:
    """What `document` holds between `begin` and `end`."""
    return _split(document, begin, end)[1]


def replace_between(document: str, text: str, begin: str, end: str) -> str:
    """`document` with `text` between `begin` and `end`, the markers kept."""
    head, _, tail = _split(document, begin, end)
    return f"{head}{begin}{text}{end}{tail}"


def write_between(path: Path, text: str, begin: str, end: str) -> None:
    """Write `text` between the markers of the page at `path` (`write_output`)."""
    try:
        page = replace_between(path.read_text(), text, begin, end)
    except MarkerError as err:
        raise MarkerError(f"{path}: {err}") from None
    write_output(path, page)
