"""A fork while the JVM output forwarder logs must not leave the child waiting on a log lock forever.

Airflow's task logger writes through structlog, whose per-file lock a forked child inherits as it was. The
OpenLineage listener forks after every task; a child that inherited the lock held by the forwarder hung until
the listener killed it, and the task's COMPLETE event was lost (without the fix, 30 of 40 forks hung here).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator

import pytest
import structlog

from airflow_provider_lakehouse.spark.jvm_output import forward

JVM_LINE = b"25/11/23 08:30:00 WARN Something: a line the JVM printed\n"


@pytest.fixture
def structlog_root_logger() -> Iterator[None]:
    """The root logger writing through a structlog ``WriteLogger``, as in an Airflow task process."""
    sink = open(os.devnull, "w")  # noqa: SIM115 - closed below
    writer = structlog.WriteLogger(sink)

    class StructlogHandler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            writer.msg(self.format(record))

    root = logging.getLogger()
    saved = root.handlers[:], root.level
    root.handlers[:] = [StructlogHandler()]
    root.setLevel(logging.INFO)
    try:
        yield
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
        sink.close()


def _flood_forwarder() -> threading.Event:
    """A forwarder kept busy by a writer that never pauses, as the JVM's console at start-up."""
    stop = threading.Event()
    read_end, write_end = os.pipe()

    def write() -> None:
        with os.fdopen(write_end, "wb") as out:
            while not stop.is_set():
                out.write(JVM_LINE * 50)
                out.flush()

    threading.Thread(target=write, daemon=True).start()
    forward(os.fdopen(read_end, "rb"), "stderr")
    return stop


def _child_finished(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            return True
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return False


def test_a_fork_while_the_forwarder_logs_can_log_in_the_child(structlog_root_logger: None) -> None:
    stop = _flood_forwarder()
    try:
        time.sleep(0.2)  # the forwarder is inside a log call most of the time from here on
        hung = 0
        for _ in range(20):
            pid = os.fork()
            if pid == 0:  # the child: what the OpenLineage listener's child does first
                try:
                    logging.getLogger("child").info("the child logs")
                finally:
                    os._exit(0)
            hung += not _child_finished(pid, within_s=10)
    finally:
        stop.set()
    assert hung == 0, f"{hung} of 20 forked children hung on a log lock"
