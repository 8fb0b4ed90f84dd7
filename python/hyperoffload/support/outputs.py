"""
Writing outputs so that a failed run loses nothing: a file is written beside
its destination under a temporary name and renamed into place only once it
is complete, so an existing file is replaced whole or not at all.

```python
write_atomically(Path("out.mlir"), text)
with replaced(Path("timeline.png")) as partial:
    figure.savefig(partial)
```
"""

from __future__ import annotations

import os
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def replaced(path: Path) -> Generator[Path]:
    """A temporary path beside `path` (same suffix), renamed to `path` if the block succeeds."""
    partial = path.with_name(f".{path.stem}.{os.getpid()}.partial{path.suffix}")
    try:
        yield partial
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path`, or leave `path` as it was if writing fails."""
    with replaced(path) as partial:
        partial.write_text(text)
