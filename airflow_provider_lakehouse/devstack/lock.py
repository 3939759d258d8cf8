"""One lock per state folder, so that processes sharing a stack take turns starting and stopping it.

The test suite runs in two worker processes on one stack, and a user may run ``devstack up`` while tests run: two
processes finding the Spark Connect server down would both pick its port and start a JVM, and two first runs would
both generate credentials. An advisory ``flock`` on ``<state>/.lock`` orders them; it is released when its process
dies, so a killed process never leaves the stack locked.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class StateLock:
    """A lock held by one process at a time, re-entrant within that process (``up`` takes it and calls methods
    that take it again).

    :param path: the lock file; created when first taken.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock for the ``with`` block, waiting for another process to release it."""
        with self._thread_lock:
            if self._depth == 0:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                except BaseException:
                    os.close(fd)
                    raise
                self._fd = fd
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._fd is not None:
                    os.close(self._fd)  # closing the descriptor releases the flock
                    self._fd = None


_LOCKS: dict[Path, StateLock] = {}
_LOCKS_GUARD = threading.Lock()


def state_lock(state_dir: Path) -> StateLock:
    """The process's one lock object for ``state_dir``: two :class:`Stack` objects on one folder share it, so a
    method of one called while the other holds it re-enters instead of waiting for itself."""
    path = state_dir.resolve() / ".lock"
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(path, StateLock(path))
