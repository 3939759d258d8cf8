"""A PostgreSQL catalog that restarts or is briefly unreachable is waited out (within a bounded, configurable
time); nothing is lost or doubled, and when the wait is over the error says what was tried."""

from __future__ import annotations

import threading
import time
from typing import Any

import pyarrow as pa
import pytest

from airflow_provider_lakehouse.ducklake.catalog import DuckLake
from airflow_provider_lakehouse.ducklake.store import PostgresStore
from airflow_provider_lakehouse.exceptions import ServiceUnavailableError
from tests import referee

# exclusive: stops the stack's PostgreSQL
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.exclusive]


def _outage(stack: Any, seconds: float) -> threading.Thread:
    """Stop the catalog's server now (fast shutdown: open connections break) and start it after ``seconds``."""
    server = stack.postgres_server()
    server.stop()

    def come_back() -> None:
        time.sleep(seconds)
        server.start()

    thread = threading.Thread(target=come_back)
    thread.start()
    return thread


def test_a_restart_between_staging_and_commit_is_waited_out(stack: Any) -> None:
    setup = referee.postgres_lake(stack)
    lake = setup.create()
    with lake.transaction() as tx:
        tx.create_table("t", pa.schema([("id", pa.int64())]))
    tx = lake.transaction(author="test")
    tx.append("t", pa.table({"id": [1, 2, 3]}))
    outage = _outage(stack, 3)
    try:
        snapshot = tx.commit()  # its connection broke; the commit reconnects and lands once
        rows = lake.read("t").column("id").to_pylist()  # a new connection during or after the outage
    finally:
        outage.join()
    assert snapshot is not None and sorted(rows) == [1, 2, 3]
    assert [s.snapshot_id for s in lake.snapshots()] == [0, 1, 2]


def test_reads_wait_for_a_catalog_that_is_down(stack: Any) -> None:
    setup = referee.postgres_lake(stack)
    lake = setup.create()
    with lake.transaction() as tx:
        tx.create_table("t", pa.schema([("id", pa.int64())]))
        tx.append("t", pa.table({"id": [7]}))
    outage = _outage(stack, 2)
    try:
        assert lake.read("t").column("id").to_pylist() == [7]
    finally:
        outage.join()


def test_an_outage_longer_than_the_budget_fails_clearly_and_changes_nothing(stack: Any) -> None:
    setup = referee.postgres_lake(stack)
    setup.create()
    store = setup.store
    assert isinstance(store, PostgresStore)
    impatient = PostgresStore(store.spec, metadata_schema=store.metadata_schema, reconnect_timeout_s=1.0)
    lake = DuckLake(impatient, s3=setup.s3)
    outage = _outage(stack, 4)
    try:
        with (
            pytest.raises(
                ServiceUnavailableError, match=r"Could not connect to the lake catalog .*tried \d+ times"
            ) as caught,
            lake.transaction() as tx,
        ):
            tx.create_table("t", pa.schema([("id", pa.int64())]))
    finally:
        outage.join()
    assert store.spec.password not in str(caught.value)
    assert [s.snapshot_id for s in setup.open().snapshots()] == [0]
