"""
A pool of forked worker processes that runs fuzz cases with a timeout each.

Each worker is forked from the driver (so it starts with everything the
driver imported), runs cases one at a time and is replaced after `recycle`
cases, after a crash (it died: a signal or an exit) or after a hang (it ran
past the timeout and was killed). `run_cases` yields every case with its
result: what the worker returned, or a `Died` saying how it ended.

```python
for case, result in run_cases(cases, check, jobs=2, timeout=60):
    ...
```
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import resource
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

WALL_FACTOR = 10
"""A case is a hang past `timeout` seconds of CPU time, or this many times as
many seconds of wall-clock time (a worker blocked without computing)."""
POLL_S = 0.5
"""How often the driver reads the workers' CPU time."""


STOP_SIGNALS: list[int] = []
"""The signals that stopped the run (a tool run in-process may take the
KeyboardInterrupt for its own: the driver checks this list too)."""


def _interrupt(signum: int, frame: object) -> None:
    STOP_SIGNALS.append(signum)
    raise KeyboardInterrupt


def stop_on_sigterm() -> None:
    """
    From now on SIGTERM stops the run as Ctrl-C does (a `KeyboardInterrupt`
    in the driver), so the cases that finished are counted and written; the
    driver restores `signal.SIG_DFL` when it is done.
    """
    signal.signal(signal.SIGTERM, _interrupt)


@dataclass(frozen=True)
class Died:
    """A case whose worker did not answer."""

    outcome: str
    """`crash` (the worker died) or `hang` (killed after the timeout)."""
    detail: str


def quiet_worker(memory_limit: int | None) -> None:
    """
    Worker set-up: file descriptors 1 and 2 go to /dev/null (the cases'
    Python output is captured in-process; this silences what native code and
    child processes print), and the address space is capped so that a case
    allocating without bound fails with MemoryError instead of exhausting
    the machine.
    """
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    if memory_limit:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))


def _serve(
    connection: Connection,
    function: Callable[[Any], Any],
    memory_limit: int | None,
    initializer: Callable[[], None] | None,
) -> None:
    quiet_worker(memory_limit)
    if initializer is not None:
        initializer()
    while True:
        try:
            case = connection.recv()
        except EOFError:
            return
        if case is None:
            return
        try:
            result = function(case)
        except BaseException as err:  # noqa: BLE001 -- the driver classifies it
            result = Died("traceback", f"escaped the case runner: {err!r}")
        connection.send(result)


class _Worker:
    def __init__(
        self,
        function: Callable[[Any], Any],
        memory_limit: int | None,
        initializer: Callable[[], None] | None,
    ) -> None:
        context = multiprocessing.get_context("fork")
        self.connection, child = context.Pipe()
        self.process: BaseProcess = context.Process(
            target=_serve,
            args=(child, function, memory_limit, initializer),
            daemon=True,
        )
        self.process.start()
        child.close()
        self.case: Any = None
        self.started = 0.0
        self.cpu_started: float | None = None
        self.done = 0

    def submit(self, case: Any) -> None:
        self.case = case
        self.started = time.monotonic()
        self.cpu_started = self.cpu()
        self.connection.send(case)

    def cpu(self) -> float | None:
        pid = self.process.pid
        return None if pid is None else cpu_seconds(pid)

    def over(self, timeout: float, now: float) -> str:
        """
        Why the case is past `timeout` (seconds of CPU time its worker and
        the worker's forks spent on it, or `WALL_FACTOR` times as many of
        wall-clock time), or "" if it is not: on a loaded machine a case
        waits for a core, and only what it computes counts.
        """
        wall = now - self.started
        cpu = self.cpu()
        if cpu is None or self.cpu_started is None:
            return f"no answer after {wall:.0f} s" if wall >= timeout else ""
        spent = cpu - self.cpu_started
        if spent >= timeout or wall >= timeout * WALL_FACTOR:
            return f"no answer after {spent:.0f} s of CPU time ({wall:.0f} s)"
        return ""

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.send(None)
        self.process.join(5)
        self.kill()

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.connection.close()


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """
    The CPU time of process `pid` and its children, live (the forks that read
    with upstream MLIR) and ended, from /proc; None where there is no /proc.
    """
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # after the name: state is field 3, utime..cstime are fields 14 to 17
    total = sum(int(f) for f in fields[11:15]) / _TICK
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    for child in children:
        total += cpu_seconds(int(child)) or 0.0
    return total


def _how_it_died(process: BaseProcess) -> str:
    process.join(5)
    code = process.exitcode
    if code is None:
        return "the worker closed its pipe"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"the worker exited with status {code}"


def run_cases(
    cases: Iterable[Any],
    function: Callable[[Any], Any],
    jobs: int = 1,
    timeout: float = 60.0,
    recycle: int = 200,
    memory_limit: int | None = 4 << 30,
    initializer: Callable[[], None] | None = None,
) -> Iterator[tuple[Any, Any]]:
    """
    Run `function(case)` for every case in `jobs` forked workers (each runs
    `initializer` first); yield
    (case, result) as each ends, in completion order. A worker that dies
    gives `Died("crash", ...)`, one that runs past `timeout` seconds of CPU
    time (`_Worker.over`) is killed and gives `Died("hang", ...)`.
    """
    pending = iter(cases)
    idle: list[_Worker] = []
    busy: list[_Worker] = []
    exhausted = False
    try:
        while True:
            while not exhausted and len(busy) < jobs:
                case = next(pending, None)
                if case is None:
                    exhausted = True
                    break
                worker = (
                    idle.pop() if idle else _Worker(function, memory_limit, initializer)
                )
                worker.submit(case)
                busy.append(worker)
            if not busy:
                return
            now = time.monotonic()
            soonest = min(w.started + timeout for w in busy)
            ready = wait(
                [w.connection for w in busy], min(POLL_S, max(0.0, soonest - now))
            )
            now = time.monotonic()
            for worker in list(busy):
                result: Any
                if worker.connection in ready:
                    try:
                        result = worker.connection.recv()
                    except (EOFError, OSError):
                        result = Died("crash", _how_it_died(worker.process))
                elif why := worker.over(timeout, now):
                    result = Died("hang", why)
                else:
                    continue
                busy.remove(worker)
                worker.done += 1
                if isinstance(result, Died) and result.outcome != "traceback":
                    worker.kill()
                elif worker.done >= recycle:
                    worker.stop()
                else:
                    idle.append(worker)
                yield worker.case, result
    finally:
        for worker in idle + busy:
            worker.kill()
