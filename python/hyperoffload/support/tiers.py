"""
The memory tiers, one type for the whole project: the dialect's
`#hyperoffload.tier<...>`, schedule buffers, hardware links and exports all
use `Tier` (a `StrEnum`, so it compares equal to its name and prints as it).

```python
Tier("remote") is Tier.REMOTE       # True
Tier.HBM == "hbm"                   # True
```
"""

from enum import StrEnum


class Tier(StrEnum):
    """The memory tiers a tensor can live in."""

    HBM = "hbm"
    """Device memory: the only tier compute reads and writes."""
    REMOTE = "remote"
    """Pooled memory over the supernode link."""
    HOST = "host"
    """CPU DRAM over PCIe."""
    SSD = "ssd"
    """Local flash."""


OFFLOAD_TIERS = (Tier.REMOTE, Tier.HOST, Tier.SSD)
"""The tiers outside HBM: where a link goes and where state may live."""
