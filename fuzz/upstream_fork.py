"""
A faster stand-in, for fuzzing only, of the child process in which the
tools parse text with upstream MLIR (`hyperoffload.ir.upstream`): the
worker forks itself instead of starting `python -m hyperoffload.ir.upstream`.

The child does what that module's `__main__` does (parse, normalise, print
JSON on stdout; a Python exception is a traceback on stderr and status 1;
an assertion in the bindings aborts the child, not the worker), so the tool
sees the same `CompletedProcess`; it is only spared starting Python and
importing the bindings (~0.3 s a parse). Reproducers run the real tools.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import selectors
import signal
import subprocess
import time
import traceback
from collections.abc import Sequence
from typing import Any

UPSTREAM_MODULE = "hyperoffload.ir.upstream"


def _child(text: str, out: int, err: int) -> None:
    from hyperoffload.ir import upstream

    status = 0
    try:
        normalize: Any = getattr(upstream, "_normalize_here")  # noqa: B009 -- private
        data = json.dumps(normalize(text)).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(out, view) :]
    except BaseException:  # noqa: BLE001 -- reported as the real child would
        with contextlib.suppress(OSError):
            os.write(err, traceback.format_exc().encode())
        status = 1
    os._exit(status)


def run_forked(text: str, timeout: float = 120.0) -> tuple[int, str, str]:
    """(status, stdout, stderr) of normalising `text` in a forked child."""
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover -- the child
        os.close(out_read)
        os.close(err_read)
        _child(text, out_write, err_write)
    os.close(out_write)
    os.close(err_write)
    chunks: dict[int, list[bytes]] = {out_read: [], err_read: []}
    selector = selectors.DefaultSelector()
    for fd in chunks:
        selector.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    open_fds = set(chunks)
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            break
        for key, _ in selector.select(left):
            fd = key.fd
            assert isinstance(fd, int)
            data = os.read(fd, 1 << 16)
            if data:
                chunks[fd].append(data)
            else:
                selector.unregister(fd)
                open_fds.discard(fd)
    selector.close()
    os.close(out_read)
    os.close(err_read)
    _, wait_status = os.waitpid(pid, 0)
    status = os.waitstatus_to_exitcode(wait_status)
    return (
        status,
        b"".join(chunks[out_read]).decode(errors="replace"),
        b"".join(chunks[err_read]).decode(errors="replace"),
    )


class _ForkingSubprocess:
    """`subprocess` as `hyperoffload.ir.upstream` sees it, its child forked."""

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)

    def run(
        self, args: Sequence[str], input: str = "", **kwargs: Any
    ) -> subprocess.CompletedProcess[str]:
        if list(args[-2:]) != ["-m", UPSTREAM_MODULE]:
            return subprocess.run(args, input=input, **kwargs)
        status, out, err = run_forked(input)
        return subprocess.CompletedProcess(list(args), status, out, err)


def install() -> None:
    """Make this process (a fuzz worker) fork for upstream parses (for good)."""
    from hyperoffload.ir import upstream

    setattr(upstream, "subprocess", _ForkingSubprocess())  # noqa: B010
    # Import the bindings once here, so that each fork starts with them.
    for name in ("mlir.ir", "mlir.passmanager"):
        importlib.import_module(name)
