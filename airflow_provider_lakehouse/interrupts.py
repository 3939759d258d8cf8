"""Interrupting a killed script's work again and again until it stops, for both engines.

An interrupt stops only what runs at that instant: a Spark job, a DuckDB query. A kill that lands while the
script is between two such pieces of one statement (Spark plans a statement, or runs one job per query stage
with none in between; DuckDB's Python side prepares the next query) stops nothing, and the piece that starts a
moment later runs to its end: hours, for a count of the tests' kind. :class:`RepeatingInterrupt` calls the
engine's interrupt every :data:`REPEAT_EVERY_S` seconds from the first kill until the script's statements have
ended, so such a piece is stopped within that time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

#: how often a killed script's work is interrupted again
REPEAT_EVERY_S = 0.5


class RepeatingInterrupt:
    """Calls ``interrupt`` every ``every_s`` seconds between :meth:`start` and :meth:`stop`, in a daemon thread.

    :param interrupt: the engine's interrupt; must not raise (it runs while a task is being killed).
    :param every_s: the pause between two calls.
    """

    def __init__(self, interrupt: Callable[[], object], every_s: float = REPEAT_EVERY_S) -> None:
        self._interrupt = interrupt
        self._every_s = every_s
        self._stopped = threading.Event()
        self._calling = threading.Lock()  # held during a call, so stop() can wait one out
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Begin (once; later calls and calls after :meth:`stop` do nothing)."""
        if self._thread is not None or self._stopped.is_set():
            return
        self._thread = threading.Thread(target=self._repeat, name="lakehouse-interrupt", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the repetition: once this returns, ``interrupt`` is not called again (the script's clean-up, such
        as a rollback, may run on the same connection)."""
        self._stopped.set()
        with self._calling:
            pass

    def _repeat(self) -> None:
        while not self._stopped.wait(self._every_s):
            with self._calling:
                if self._stopped.is_set():
                    return
                self._interrupt()
