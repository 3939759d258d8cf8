"""Py4J's own log lines, at their real level.

When the JVM end of a pooled Py4J connection is gone, Py4J's next command on it fails, is retried on a new
connection and succeeds; Py4J reports the first failure to the *root* logger at INFO, with the full
``ConnectionResetError`` / ``Py4JNetworkError`` traceback. In ``airflow dags test`` (one process, one JVM, many
tasks) that traceback opened the log of every Spark task after the first, and read as an error. It is a
handled retry: it becomes one DEBUG line here. A command whose retry fails still raises in the task, and
Py4J's ``logging.exception`` for it is left alone, except inside :func:`best_effort_jvm_calls`: there the caller
handles the failure itself (a progress line that is not printed, a tag that is already gone), so Py4J's error
line and traceback would only read as the task's error in a task that succeeded.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger("airflow_provider_lakehouse.spark.py4j")

_RETRY_NOTICE = "Exception while sending command."
_SOURCE = os.path.join("py4j", "java_gateway.py")
_best_effort = threading.local()


@contextmanager
def best_effort_jvm_calls() -> Iterator[None]:
    """Py4J commands sent by this thread inside the block may fail, and the block handles that: Py4J's error
    line for a command that failed for good becomes a DEBUG line (see :func:`quiet_py4j`)."""
    outer = getattr(_best_effort, "active", False)
    _best_effort.active = True
    try:
        yield
    finally:
        _best_effort.active = outer


class _RetriedCommandNotice(logging.Filter):
    """Drops Py4J's INFO notice of a retried command (logged to the root logger), and its error line for a
    failed command inside :func:`best_effort_jvm_calls`, and logs one DEBUG line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg != _RETRY_NOTICE or not record.pathname.endswith(_SOURCE):
            return True
        cause = record.exc_info[1] if record.exc_info else None
        cause_name = type(cause.__context__ or cause).__name__ if cause else "unknown"
        if record.levelno == logging.INFO:
            log.debug(
                "py4j: a pooled connection to the JVM was closed (%s); the command was retried on a new one",
                cause_name,
            )
            return False
        if getattr(_best_effort, "active", False):
            log.debug("py4j: a best-effort command to the JVM failed (%s); its caller carries on", cause_name)
            return False
        return True


def quiet_py4j() -> None:
    """Keep Py4J's connection chatter out of task logs (idempotent): its loggers at WARNING, and its retried
    command notice at DEBUG."""
    # py4j logs every connection close at INFO, also from __del__ at interpreter exit (after logging closed).
    logging.getLogger("py4j").setLevel(logging.WARNING)
    root = logging.getLogger()
    if not any(isinstance(existing, _RetriedCommandNotice) for existing in root.filters):
        root.addFilter(_RetriedCommandNotice())
