"""Py4J's notice of a retried command reaches task logs as one DEBUG line, not an INFO traceback."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest

from airflow_provider_lakehouse.spark.py4j_logging import best_effort_jvm_calls, quiet_py4j

# What Py4J's GatewayClient.send_command does when a pooled connection was reset (py4j/java_gateway.py).
PY4J_SEND_COMMAND = """
import logging
import threading
try:
    try:
        raise ConnectionResetError(104, "Connection reset by peer")
    except ConnectionResetError as cause:
        raise RuntimeError("Error while sending") from cause
except RuntimeError:
    if retried:
        logging.info("Exception while sending command.", exc_info=True)
    else:
        logging.exception("Exception while sending command.")
"""


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def root_records() -> Iterator[list[logging.LogRecord]]:
    root = logging.getLogger()
    handler = Collect()
    saved_level, saved_filters = root.level, root.filters[:]
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler.records
    finally:
        root.removeHandler(handler)
        root.setLevel(saved_level)
        root.filters[:] = saved_filters


def py4j_logs(retried: bool) -> None:
    code = compile(PY4J_SEND_COMMAND, "/venv/site-packages/py4j/java_gateway.py", "exec")
    exec(code, {"retried": retried})


def test_a_retried_command_is_one_debug_line(root_records: list[logging.LogRecord]) -> None:
    quiet_py4j()
    quiet_py4j()  # idempotent: a task calls it for every session it opens
    py4j_logs(retried=True)
    assert [(r.levelno, r.name, r.exc_info) for r in root_records] == [
        (logging.DEBUG, "airflow_provider_lakehouse.spark.py4j", None)
    ]
    assert "ConnectionResetError" in root_records[0].getMessage()


def test_a_command_that_failed_for_good_is_still_an_error(root_records: list[logging.LogRecord]) -> None:
    quiet_py4j()
    py4j_logs(retried=False)
    assert [(r.levelno, r.getMessage()) for r in root_records] == [(logging.ERROR, "Exception while sending command.")]


def test_the_same_message_from_elsewhere_is_left_alone(root_records: list[logging.LogRecord]) -> None:
    quiet_py4j()
    logging.info("Exception while sending command.")
    assert [r.levelno for r in root_records] == [logging.INFO]


def test_a_failed_best_effort_command_is_one_debug_line_and_only_there(root_records: list[logging.LogRecord]) -> None:
    """A progress poll or a tag removal handles its own failure: Py4J's error line would read as the task's."""
    quiet_py4j()
    with best_effort_jvm_calls():
        py4j_logs(retried=False)
    assert [(r.levelno, r.name, r.exc_info) for r in root_records] == [
        (logging.DEBUG, "airflow_provider_lakehouse.spark.py4j", None)
    ]
    assert "best-effort" in root_records[0].getMessage()

    py4j_logs(retried=False)  # after the block, and in any other thread, a failure is an error again
    with best_effort_jvm_calls():
        other = threading.Thread(target=py4j_logs, args=(False,))
        other.start()
        other.join()
    assert [r.levelno for r in root_records[1:]] == [logging.ERROR, logging.ERROR]
