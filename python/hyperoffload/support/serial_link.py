"""
Just-in-time issue on a serial link, the one home of the rule: a fetch that
must land before op `before` is issued before the op in which its transfer
has to begin, counting back from `before` through the link time the fetches
placed before it left free (`free[i]`: the seconds of op i the link is still
idle). A copy stream is first come, first served, so fetches placed latest
deadline first each take the latest slot that still hides them; a fetch
placed out of that order fills the idle time left before its use.

Ops 0..3 take 1 s each; a 1.5 s fetch for op 3 begins 1.5 s in, during op
1, and a 1 s fetch for op 2 then has only op 0's second left:
```python
free = np.ones(4)
issue_just_in_time(free, 0, 3, 1.5)  # 1 (free is now [1, 0.5, 0, 1])
issue_just_in_time(free, 0, 2, 1.0)  # 0
```
"""

from bisect import bisect_right
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

EPSILON_S = 1e-12
"""Slack for float sums of op times when matching a start time to an op boundary."""


def issue_just_in_time(
    free: npt.NDArray[np.float64], low: int, before: int, seconds: float
) -> int:
    """
    The op before which a fetch of `seconds` for op `before` is issued, as
    late as the idle link time in `free` after op `low` lets it end in time
    (`low` if it cannot); its time is taken from `free` (in place).
    """
    window = free[low:before][::-1]
    taken = np.cumsum(window)
    full = int(np.searchsorted(taken, seconds - EPSILON_S))
    window[: min(full, window.size)] = 0.0
    if full < window.size:
        window[full] = taken[full] - seconds
    return max(low, before - full - 1)


def lead(prefix: Sequence[float], before: int, seconds: float) -> int:
    """
    The last op starting `seconds` of compute or more before op `before`
    (or 0), `prefix[i]` the compute time before op i.

    >>> lead([0.0, 1.0, 2.0, 3.0], 3, 1.5)
    1
    """
    return max(0, bisect_right(prefix, prefix[before] - seconds) - 1)
