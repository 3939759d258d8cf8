"""Logging from the provider's background threads without breaking a later ``fork``.

A thread that is inside a log call holds the log sink's lock (Airflow's task logger writes through structlog,
whose per-file lock is not reset in a forked child). If the process forks at that moment (the OpenLineage
listener forks after every task), the child's first log line waits for a lock no thread of the child will
ever release: it hangs until the listener kills it, and its event is silently lost. With the Spark JVM's
output forwarded by a busy thread, 30 of 40 forks hung this way.

The background threads therefore log through :func:`log_between_forks`: a fork waits until the current line
is written, and no line is written while a fork is under way.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

_NO_FORK_IN_PROGRESS = threading.Lock()


def log_between_forks(logger: logging.Logger, level: int, message: str, *args: Any) -> None:
    """``logger.log(level, message, *args)``, never while this process forks."""
    with _NO_FORK_IN_PROGRESS:
        logger.log(level, message, *args, stacklevel=2)  # the record's location: the caller, not this helper


def _release_after_fork() -> None:
    _NO_FORK_IN_PROGRESS.release()


os.register_at_fork(
    before=_NO_FORK_IN_PROGRESS.acquire, after_in_parent=_release_after_fork, after_in_child=_release_after_fork
)
