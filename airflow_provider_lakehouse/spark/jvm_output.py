"""The local Spark JVM's console output, logged at its real level.

The JVM's stdout and stderr were the task process's own, so Airflow logged every JVM line as an error: the
log4j profile notice, "Using incubator modules", the ``[Stage 0:> (0 + 1) / 1]`` console progress bar. Here
the JVM writes into pipes instead, and each line goes to the ``airflow_provider_lakehouse.spark.jvm`` logger
at the level log4j printed (WARN, ERROR ...), notices at INFO and progress-bar fragments at DEBUG.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import IO

from airflow_provider_lakehouse.spark.thread_logging import log_between_forks

log = logging.getLogger("airflow_provider_lakehouse.spark.jvm")

_LOG4J = re.compile(r"^\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) ")
_LEVELS = {
    "TRACE": logging.DEBUG,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
}
_PROGRESS_BAR = re.compile(r"^\s*\[Stage \d+:")
# a stack trace's lines after its first: frames, causes, and the exception line a log4j record prints next
_CONTINUATION = re.compile(r"^(\s+at |\s*\.\.\. \d+ more|Caused by: |\s+Suppressed: |[\w.$]+(Exception|Error)(: |$))")


def level_of(line: str, previous: int) -> int:
    """The level a JVM console line deserves.

    >>> level_of("25/11/23 08:30:00 WARN NativeCodeLoader: Unable to load native-hadoop library", logging.INFO)
    30
    >>> level_of("WARNING: Using incubator modules: jdk.incubator.vector", logging.INFO)
    20
    >>> level_of("[Stage 0:>                                                          (0 + 1) / 1]", logging.INFO)
    10
    >>> level_of("\\tat org.apache.spark.SparkContext.<init>(SparkContext.scala:1)", logging.ERROR)
    40
    """
    match = _LOG4J.match(line)
    if match:
        return _LEVELS[match.group(1)]
    if _PROGRESS_BAR.match(line):
        return logging.DEBUG
    if _CONTINUATION.match(line):
        return previous  # a stack trace continues the record that started it
    return logging.INFO


def forward(stream: IO[bytes], name: str) -> threading.Thread:
    """Read ``stream`` line by line (``\\r`` also ends a progress-bar line) in a daemon thread and log it
    (between forks: see :mod:`.thread_logging`)."""

    def run() -> None:
        previous = logging.INFO
        buffer = b""
        for chunk in iter(lambda: stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536), b""):
            buffer += chunk
            *lines, buffer = re.split(rb"\r\n|\r|\n", buffer)
            for raw in lines:
                line = raw.decode(errors="replace").rstrip()
                if line:
                    previous = level_of(line, previous)
                    log_between_forks(log, previous, "%s", line)
        if buffer.strip():
            log_between_forks(log, previous, "%s", buffer.decode(errors="replace").rstrip())

    thread = threading.Thread(target=run, name=f"spark-jvm-{name}", daemon=True)
    thread.start()
    return thread
