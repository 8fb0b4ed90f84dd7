"""
The LP bound that counts the link (`hyperoffload.analysis.link_bound`) in
words, beside a peak row of any benchmark table.

```python
lp_bound_words(661, {"status": "Optimal"}, 1234, 0.02, 1176)
# 'LP bound 661 B within 2% (-46.4%), ours 10.1% of the saving it allows'
```
"""

from __future__ import annotations

from typing import Any

from hyperoffload.support.units import format_bytes


def lp_bound_words(
    bound: int | None,
    info: dict[str, Any] | None,
    none_peak: int,
    limit: float,
    ours_peak: int | None = None,
    minus: str = "-",
) -> str:
    """
    The LP bound that counts the link beside a peak row, in words: the bound
    within `limit` against `none`'s peak, how it was solved where not to
    optimality (the bound is then the largest single-op working set), and
    the share of the saving it allows that a plan within the limit
    (`ours_peak`) achieves. `bound` None: results from before the bound;
    `minus`: the sign of a reduction.

        lp_bound_words(661, {"status": "Optimal"}, 1234, 0.02, 1176)
        # 'LP bound 661 B within 2% (-46.4%), ours 10.1% of the saving it allows'
    """
    if bound is None:
        return "LP bound: not in these results (run before it)"
    status = (info or {}).get("status", "Optimal")
    notes: list[str] = []
    if none_peak > 0:
        notes.append(f"{bound / none_peak - 1:+.1%}".replace("-", minus))
    added = (info or {}).get("added")
    if added is not None:
        notes.append(f"computed on {added} on the run's program")
    if status != "Optimal":
        seconds = (info or {}).get("seconds")
        after = "" if seconds is None else f" after {seconds:.0f} s"
        notes.append(
            f"the LP stopped at {status!r}{after}: this is the largest single-op "
            "working set"
        )
    digits = 0 if float(round(limit * 100, 6)).is_integer() else 1
    words = f"LP bound {format_bytes(bound)} within {limit:.{digits}%}"
    if notes:
        words += f" ({'; '.join(notes)})"
    if ours_peak is not None:
        saving = none_peak - bound
        words += (
            ", which allows no saving"
            if saving <= 0
            else f", ours {(none_peak - ours_peak) / saving:.1%} of the saving "
            "it allows"
        )
    return words
