"""
Writing a run's outputs so that a failed run touches none of them and an
output never replaces a node that is not a file of ours.

Every output path is checked when the run starts (its folder exists, it is
not a folder, two outputs do not name one file); the outputs are kept in
memory as the run produces them and written together once it succeeded:

- a regular file or a new path is written beside its destination under a
  temporary name and renamed into place: an existing file is replaced whole
  or not at all, its permission bits kept;
- a symbolic link is followed: its target is written as above, and the link
  stays a link;
- a FIFO, a character device or any other node is written in place, opened
  for writing as it is (no rename, no truncation): `-o /dev/null` stays the
  device, and a reader of a FIFO gets the bytes.

Files are written in three steps: every temporary file first, then every
in-place node, the renames last, so a run that fails while writing leaves
every existing regular file byte-identical (and a failure to write a
temporary file, a full disk, reaches no FIFO or device either).

```python
outputs = Outputs({"--trace": Path("trace.json"), "--plot": Path("timeline.png")})
...  # the run: a failure here writes nothing
outputs.put(Path("trace.json"), trace_text)
outputs.put(Path("timeline.png"), png_bytes)
outputs.write()
write_output(Path("out.mlir"), text)  # one output, checked and written at once
```
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


class OutputError(ValueError):
    """An output that cannot be written; `where` is its path."""

    def __init__(self, path: Path, message: str):
        super().__init__(message)
        self.where = str(path)


@dataclass(frozen=True)
class _Target:
    """Where an output's bytes go: the path a link leads to, and how it is written."""

    path: Path
    in_place: bool
    """A FIFO, a device or another node that is not a regular file."""


def _target(path: Path, flag: str) -> _Target:
    """The checked destination of `path` (raises `OutputError`)."""
    resolved = Path(os.path.realpath(path))
    try:
        mode = resolved.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as err:
        raise OutputError(path, f"cannot write {flag}: {err.strerror}") from None
    if mode is None:
        folder = resolved.parent
        if not folder.is_dir():
            raise OutputError(
                path, f"cannot write {flag}: no folder {folder} to write it in"
            )
        if not os.access(folder, os.W_OK):
            raise OutputError(path, f"cannot write {flag}: {folder} is not writable")
        return _Target(resolved, in_place=False)
    if stat.S_ISDIR(mode):
        raise OutputError(path, f"cannot write {flag}: it is a folder")
    if stat.S_ISSOCK(mode):
        raise OutputError(path, f"cannot write {flag}: it is a socket")
    if not os.access(resolved, os.W_OK):
        raise OutputError(path, f"cannot write {flag}: it is not writable")
    if stat.S_ISREG(mode) and not os.access(resolved.parent, os.W_OK):
        raise OutputError(
            path, f"cannot write {flag}: its folder {resolved.parent} is not writable"
        )
    return _Target(resolved, in_place=not stat.S_ISREG(mode))


class Outputs:
    """The files a run writes: checked when named, written together by `write`."""

    def __init__(self, paths: Mapping[str, Path | None] | None = None):
        """`paths`: each output by the flag that names it (None: not asked for)."""
        self._targets: dict[Path, tuple[str, _Target]] = {}
        self._data: dict[Path, bytes] = {}
        for flag, path in (paths or {}).items():
            if path is not None:
                self.name(flag, path)

    def name(self, flag: str, path: Path) -> None:
        """Check `path`, the output of `flag`, now (raises `OutputError`)."""
        target = _target(path, flag)
        for other, (other_flag, known) in self._targets.items():
            same = known.path == target.path and other_flag != flag
            if same and not target.in_place:
                raise OutputError(
                    path, f"{flag} and {other_flag} name the same file ({other})"
                )
        self._targets.setdefault(path, (flag, target))

    def put(self, path: Path, data: str | bytes) -> None:
        """Keep `data` for `path` until `write` (a path not named is checked now)."""
        if path not in self._targets:
            self.name("the output", path)
        self._data[path] = data.encode() if isinstance(data, str) else data

    def write(self) -> None:
        """Write every output put; on failure, no regular file is changed."""
        flags = {path: self._targets[path][0] for path in self._data}
        targets = {path: _target(path, flag) for path, flag in flags.items()}
        partials: list[tuple[Path, Path]] = []
        try:
            for path, target in targets.items():
                if not target.in_place:
                    partial = _write_beside(target.path, self._data[path])
                    partials.append((partial, target.path))
            for path, target in targets.items():
                if target.in_place:
                    _write_in_place(path, target.path, self._data[path], flags[path])
            for partial, destination in partials:
                os.replace(partial, destination)
            partials.clear()
        finally:
            for partial, _ in partials:
                partial.unlink(missing_ok=True)
        self._data.clear()


def _write_beside(destination: Path, data: bytes) -> Path:
    """A new file beside `destination` holding `data`, with its permission bits."""
    for attempt in range(100):
        partial = destination.with_name(
            f".{destination.name}.{os.getpid()}.{attempt}.partial"
        )
        try:
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        try:
            with open(fd, "wb") as file:
                file.write(data)
            if destination.exists():
                os.chmod(partial, stat.S_IMODE(destination.stat().st_mode))
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        return partial
    raise OutputError(destination, "cannot write it: too many partial files beside it")


def _write_in_place(path: Path, node: Path, data: bytes, flag: str) -> None:
    """Write `data` into a FIFO or a device as it is: opened, written, closed."""
    try:
        fd = os.open(node, os.O_WRONLY)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
    except OSError as err:
        raise OutputError(path, f"cannot write {flag}: {err.strerror}") from None


def write_output(path: Path, data: str | bytes, flag: str = "the output") -> None:
    """One output, checked and written now (as `Outputs` writes it)."""
    outputs = Outputs({flag: path})
    outputs.put(path, data)
    outputs.write()
