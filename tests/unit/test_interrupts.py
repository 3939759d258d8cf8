"""RepeatingInterrupt: a kill that lands while nothing runs still stops what starts next."""

from __future__ import annotations

import threading
import time

import duckdb
import pytest

from airflow_provider_lakehouse.interrupts import RepeatingInterrupt

#: minutes of DuckDB work on two cores
LONG_QUERY = "SELECT count(*) FROM range(100000000000) t(i) WHERE i % 7 = 3"


def test_duckdb_forgets_an_interrupt_that_lands_while_no_query_runs() -> None:
    """Why the repetition exists: DuckDB clears the interrupt when the next query begins."""
    con = duckdb.connect()
    con.interrupt()
    assert con.execute("SELECT count(*) FROM range(1000000)").fetchone() == (1000000,)


def test_a_query_started_after_the_interrupt_is_interrupted_too() -> None:
    con = duckdb.connect()
    repeating = RepeatingInterrupt(con.interrupt, every_s=0.1)
    watchdog = threading.Timer(300, con.interrupt)  # only so a regression fails instead of running for minutes
    repeating.start()
    watchdog.start()
    try:
        with pytest.raises(duckdb.InterruptException):
            con.execute(LONG_QUERY).fetchall()
        assert watchdog.is_alive(), "only the test's watchdog stopped the query"
    finally:
        repeating.stop()
        watchdog.cancel()
    assert con.execute("SELECT 42").fetchone() == (42,)  # the connection stays usable (a rollback runs on it)


def test_no_call_after_stop_returns() -> None:
    calls: list[float] = []
    in_call = threading.Event()

    def slow_interrupt() -> None:
        in_call.set()
        time.sleep(0.3)
        calls.append(time.monotonic())

    repeating = RepeatingInterrupt(slow_interrupt, every_s=0.01)
    repeating.start()
    assert in_call.wait(30)
    repeating.stop()  # waits out the call in progress
    stopped_at = time.monotonic()
    count = len(calls)
    time.sleep(0.5)
    assert len(calls) == count and all(call <= stopped_at for call in calls)


def test_start_after_stop_and_a_second_start_do_nothing() -> None:
    calls: list[int] = []
    repeating = RepeatingInterrupt(lambda: calls.append(1), every_s=0.01)
    repeating.stop()
    repeating.start()
    time.sleep(0.2)
    assert calls == []
    again = RepeatingInterrupt(lambda: calls.append(1), every_s=0.01)
    again.start()
    again.start()
    time.sleep(0.2)
    repeating_threads = [t for t in threading.enumerate() if t.name == "lakehouse-interrupt"]
    again.stop()
    assert len(repeating_threads) == 1 and calls
