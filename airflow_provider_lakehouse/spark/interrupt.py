"""Stopping a script's Spark operations when its task is killed or times out.

Spark runs an operation to its end whether or not its client still waits for it. Over Spark Connect that means a
task killed in the middle of a statement left the statement running on the shared server: Airflow's SIGTERM only
calls ``on_kill`` and its SIGKILL follows 5 s later, and a count whose client was SIGKILLed went on using both
cores of this machine for minutes. A :class:`SparkOperations` block tags every operation its thread sends with a
tag unique to the script's run, so all of them can be interrupted at once, from a signal handler or another thread.

A kill that lands while a statement has no operation or job running yet finds nothing, so a killed run is
interrupted again until it ends (:class:`~airflow_provider_lakehouse.interrupts.RepeatingInterrupt`).
"""

from __future__ import annotations

import logging
import uuid
from types import TracebackType
from typing import Any

from airflow_provider_lakehouse.interrupts import RepeatingInterrupt
from airflow_provider_lakehouse.spark.py4j_logging import best_effort_jvm_calls
from airflow_provider_lakehouse.spark.session import is_connect_session

log = logging.getLogger(__name__)


class SparkOperations:
    """The Spark operations of one script run, tagged so they can be interrupted together.

    Use as a context manager around the run: inside it, every Spark operation this thread starts carries
    :attr:`tag`. Leaving the block by an exception (a timeout raised into the task) interrupts whatever is
    still running, as does :meth:`interrupt` from elsewhere (the operator's ``on_kill``). Works on Spark Connect
    (operation tags) and on classic sessions (job tags).

    :param spark: the session the run uses; shared sessions are fine, the tag is unique to this run.
    :param logger: where interruptions are reported (the task log).
    """

    def __init__(self, spark: Any, *, logger: logging.Logger | Any = log) -> None:
        self._spark = spark
        self._logger = logger
        #: unique per run: the session may be shared with other tasks, which must not be interrupted
        self.tag = f"lakehouse-{uuid.uuid4().hex}"
        #: set by :meth:`interrupt`: a kill between two statements finds nothing running, so the run must not
        #: start the next one (ask before each statement)
        self.interrupted = False
        self._connect = is_connect_session(spark)
        self._repeater = RepeatingInterrupt(self._interrupt_started_later)

    def __enter__(self) -> SparkOperations:
        self._spark.addTag(self.tag)
        if not self._connect:
            # A classic session's own tags are per thread (Spark files them under the thread's id), so only the
            # run's thread could interrupt them; the SparkContext's job tag is the plain text, cancellable from any
            # thread, as the repeated interrupts need.
            self._spark.sparkContext.addJobTag(self.tag)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        try:
            # A failed statement has ended already. An exception raised into the run (a timeout) leaves its
            # operation behind: PySpark's Connect client releases it, which stops it (measured), but a classic
            # session's job runs on in this process's JVM.
            if exc_type is not None and (stopped := self._interrupt_running()):
                self._logger.warning(
                    "interrupted %d running Spark operation(s) of the script, which ended with %s (tag %s)",
                    len(stopped),
                    exc_type.__name__,
                    self.tag,
                )
        finally:
            self._repeater.stop()
            try:
                with best_effort_jvm_calls():
                    self._spark.removeTag(self.tag)
                    if not self._connect:
                        self._spark.sparkContext.removeJobTag(self.tag)
            except Exception:  # a stopped session has no tags left to remove
                pass

    def interrupt(self) -> list[str]:
        """Interrupt this run's operations that are still running; returns their ids (empty if none was). Until
        the run's block exits, operations it starts afterwards are interrupted too (within
        :data:`~airflow_provider_lakehouse.interrupts.REPEAT_EVERY_S`).

        Never raises: it runs while a task is being killed, where a second error would hide the first.
        """
        self.interrupted = True
        stopped = self._interrupt_running()
        self._repeater.start()
        return stopped

    def _interrupt_running(self, *, quiet: bool = False) -> list[str]:
        """Interrupt what runs now: operation ids over Spark Connect; on a classic session the ids found from the
        run's thread (Spark's interruptTag sees only its caller's tags), every job cancelled whichever thread asks.
        """
        try:
            with best_effort_jvm_calls():
                stopped = [str(op) for op in self._spark.interruptTag(self.tag) or ()]
                if not self._connect:
                    self._spark.sparkContext.cancelJobsWithTag(self.tag)
                return stopped
        except Exception as exc:
            if not quiet:
                self._logger.warning("could not interrupt the Spark operations tagged %s: %s", self.tag, exc)
            return []

    def _interrupt_started_later(self) -> None:
        # quiet: the session may be stopping under this thread as the run ends
        if stopped := self._interrupt_running(quiet=True):  # only Spark Connect reports what it stopped
            self._logger.warning(
                "interrupted %d Spark operation(s) the script started after it was killed (tag %s)",
                len(stopped),
                self.tag,
            )
