"""A killed script's Spark operations stay interrupted: also the ones it starts after the kill."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from airflow_provider_lakehouse.spark.interrupt import SparkOperations

#: hours on two cores
ENDLESS_COUNT = "SELECT count(*) FROM range(CAST(4000000000 AS BIGINT)) a, range(10000) b"


@pytest.mark.integration
def test_an_operation_started_after_the_interrupt_is_interrupted_too(stackless_spark: Any) -> None:
    """A kill that lands while a statement is still being planned finds no job to cancel; the job the statement
    starts a moment later is cancelled all the same (on a classic session it would have run for hours)."""
    watchdog_fired = threading.Event()

    def watchdog() -> None:  # only so a regression fails instead of running for hours
        watchdog_fired.set()
        stackless_spark.sparkContext.cancelAllJobs()

    timer = threading.Timer(300, watchdog)
    timer.start()
    try:
        with SparkOperations(stackless_spark) as operations:
            assert operations.interrupt() == []  # nothing is running yet
            with pytest.raises(Exception, match="cancel") as raised:
                stackless_spark.sql(ENDLESS_COUNT).collect()
    finally:
        timer.cancel()
    assert not watchdog_fired.is_set(), f"only the test's watchdog stopped the count: {raised.value}"


@pytest.mark.integration
def test_a_run_that_ended_interrupts_nothing_more(stackless_spark: Any) -> None:
    with SparkOperations(stackless_spark) as operations:
        operations.interrupt()
    assert stackless_spark.range(1000).count() == 1000
    assert stackless_spark.sql("SELECT count(*) FROM range(100) a, range(100) b").collect()[0][0] == 10000
