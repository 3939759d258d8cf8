"""Commits under concurrency and faults: nothing lost, nothing duplicated, conflicts fail cleanly."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from airflow_provider_lakehouse.exceptions import CommitConflictError
from tests import referee
from tests.conftest import REPO_ROOT
from tests.integration.lake_writer import setup_to_env
from tests.referee import LakeSetup

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def new_lake(setup: LakeSetup):  # type: ignore[no-untyped-def]
    lake = setup.create()
    with lake.transaction() as tx:
        tx.create_table("t", pa.schema([("id", pa.int64()), ("v", pa.string())]))
    return lake


def run_writers(setup: LakeSetup, writers: list[tuple[str, int, int]]) -> None:
    env = dict(os.environ, LAKE_SETUP=setup_to_env(setup), PYTHONPATH=str(REPO_ROOT))
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.integration.lake_writer", engine, str(start), str(count)],
            env=env,
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for engine, start, count in writers
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]


def check_all_rows(setup: LakeSetup, expected_ids: set[int]) -> None:
    lake = setup.open()
    ids = lake.read("t").column("id").to_pylist()
    assert len(ids) == len(set(ids)), "duplicated rows"
    assert set(ids) == expected_ids, "lost rows"
    snaps = [s.snapshot_id for s in lake.snapshots()]
    assert snaps == list(range(len(snaps))), "snapshot ids must be dense and increasing"
    con = referee.connect()
    setup.attach(con)
    assert con.sql("SELECT count(*), count(DISTINCT id) FROM lake.t").fetchone() == (len(expected_ids),) * 2


def test_concurrent_writers_of_ours_lose_and_duplicate_nothing(setup: LakeSetup) -> None:
    new_lake(setup)
    writers = [("ours", 100_000 * (w + 1), 8) for w in range(4)]
    run_writers(setup, writers)
    check_all_rows(setup, {s + i for _e, s, n in writers for i in range(n * 10)})


def test_ours_and_duckdb_writing_at_once(setup: LakeSetup) -> None:
    new_lake(setup)
    writers = [("ours", 100_000, 8), ("duckdb", 200_000, 8), ("ours", 300_000, 8)]
    run_writers(setup, writers)
    check_all_rows(setup, {s + i for _e, s, n in writers for i in range(n * 10)})


def test_concurrent_appends_rebase_but_deletes_of_the_same_file_conflict(setup: LakeSetup) -> None:
    lake = new_lake(setup)
    with lake.transaction() as tx:
        tx.append("t", pa.table({"id": pa.array(range(100), pa.int64()), "v": ["a"] * 100}))
    base = lake.current_snapshot_id()

    first, second = lake.transaction(), lake.transaction()
    first.append("t", pa.table({"id": pa.array([1000], pa.int64()), "v": ["first"]}))
    second.append("t", pa.table({"id": pa.array([2000], pa.int64()), "v": ["second"]}))
    first.commit()
    second.commit()  # rebased on top of the first: appends do not conflict
    assert second.snapshot is not None and second.snapshot.snapshot_id == base + 2
    assert lake.read("t").num_rows == 102

    loser_a, loser_b = lake.transaction(), lake.transaction()
    loser_a.delete_where("t", pc.field("id") < 10)
    loser_b.delete_where("t", pc.field("id").isin([50, 51]))  # same data file
    delete_file = loser_b._written[0]
    loser_a.commit()
    with pytest.raises(CommitConflictError, match="same data file"):
        loser_b.commit()
    assert not lake.storage.exists(delete_file), "files of a failed commit must be removed"
    assert lake.read("t").num_rows == 92 and lake.current_snapshot_id() == base + 3

    # delete vs a concurrent insert into the same table also conflicts (DuckDB's rule)
    deleter, inserter = lake.transaction(), lake.transaction()
    deleter.delete_where("t", pc.field("id") == 99)
    inserter.append("t", pa.table({"id": pa.array([3000], pa.int64()), "v": ["x"]}))
    inserter.commit()
    with pytest.raises(CommitConflictError):
        deleter.commit()
    assert lake.read("t").num_rows == 93


def test_drop_table_then_insert_conflicts_and_lake_stays_readable(setup: LakeSetup) -> None:
    lake = new_lake(setup)
    writer = lake.transaction()
    writer.append("t", pa.table({"id": pa.array([1], pa.int64()), "v": ["x"]}))
    written = list(writer._written)
    with lake.transaction() as tx:
        tx.drop_table("t")
    with pytest.raises(CommitConflictError, match="dropped"):
        writer.commit()
    assert not any(lake.storage.exists(p) for p in written)
    con = referee.connect()
    setup.attach(con)
    assert con.sql("SELECT count(*) FROM ducklake_snapshots('lake')").fetchone()[0] == lake.current_snapshot_id() + 1


def test_a_commit_whose_connection_dies_lands_exactly_once(stack: object) -> None:
    setup = referee.postgres_lake(stack)
    lake = new_lake(setup)
    tx = lake.transaction()
    tx.append("t", pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["x"] * 3}))
    raw = tx._conn.raw  # type: ignore[attr-defined]
    original_commit = tx._conn.commit

    def die_then_commit() -> None:
        # the server ends our session right before COMMIT: the first attempt cannot land
        import psycopg

        with psycopg.connect(**setup.store.spec.connect_kwargs(), autocommit=True) as killer:  # type: ignore[attr-defined]
            killer.execute("SELECT pg_terminate_backend(%s)", (raw.info.backend_pid,))
        tx._conn.commit = original_commit  # type: ignore[method-assign]
        original_commit()

    tx._conn.commit = die_then_commit  # type: ignore[method-assign]
    snapshot = tx.commit()
    assert snapshot is not None
    assert sorted(lake.read("t").column("id").to_pylist()) == [1, 2, 3]
    assert [s.commit_extra_info for s in lake.snapshots()].count(tx.extra_info) == 1


def test_unknown_commit_outcome_is_reported_and_files_kept(stack: object, monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow_provider_lakehouse.exceptions import CommitStateUnknownError, ServiceUnavailableError

    setup = referee.postgres_lake(stack)
    lake = new_lake(setup)
    tx = lake.transaction()
    tx.append("t", pa.table({"id": pa.array([1], pa.int64()), "v": ["x"]}))
    written = list(tx._written)
    raw = tx._conn.raw  # type: ignore[attr-defined]
    original_commit = tx._conn.commit

    def die_and_stay_unreachable() -> None:
        import psycopg

        with psycopg.connect(**setup.store.spec.connect_kwargs(), autocommit=True) as killer:  # type: ignore[attr-defined]
            killer.execute("SELECT pg_terminate_backend(%s)", (raw.info.backend_pid,))

        def unreachable() -> None:  # the one simulated edge: the catalog host stops answering
            raise ServiceUnavailableError("catalog unreachable")

        monkeypatch.setattr(lake.store, "connect", unreachable)
        original_commit()

    tx._conn.commit = die_and_stay_unreachable  # type: ignore[method-assign]
    with pytest.raises(CommitStateUnknownError, match="may or may not have landed"):
        tx.commit()
    monkeypatch.undo()
    assert all(lake.storage.exists(p) for p in written), "files of a commit with unknown outcome must be kept"
    assert lake.read("t").num_rows == 0  # (here it did not land)


def _lose_the_first_race(setup: LakeSetup, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make the next commit attempt lose the race for its snapshot id once, as it would to a concurrent writer.

    On PostgreSQL another writer really commits first (the attempt then collides on the snapshot row's primary
    key); on SQLite the attempt holds the write lock, so the collision is raised as SQLite reports it.
    """
    import sqlite3

    from airflow_provider_lakehouse.ducklake.commit_builder import CommitBuilder

    original = CommitBuilder.run
    calls: list[int] = []

    def run(builder: CommitBuilder, operations):  # type: ignore[no-untyped-def]
        if builder.record.author == "rival":
            return original(builder, operations)
        calls.append(builder.sid)
        if len(calls) == 1:
            if setup.pg is None:
                raise sqlite3.IntegrityError("UNIQUE constraint failed: ducklake_snapshot.snapshot_id")
            with setup.open().transaction(author="rival") as rival:  # another table: no logical conflict
                rival.append("other", pa.table({"id": [len(calls)]}))
        return original(builder, operations)

    monkeypatch.setattr(CommitBuilder, "run", run)
    return calls


def _future():  # type: ignore[no-untyped-def]
    import datetime as dt

    return dt.datetime.now(dt.UTC) + dt.timedelta(days=1)


def test_a_retried_commit_leaves_no_unreferenced_file(
    setup: LakeSetup, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Deletes and a flush of inlined rows (which writes a delete file for rows already deleted) commit after a
    forced retry: every file they wrote is referenced, none is left over, DuckDB reads the result."""
    import logging

    con = referee.connect()
    setup.attach(con)
    con.sql("CREATE TABLE lake.t (id BIGINT, v VARCHAR)")
    con.sql("CREATE TABLE lake.other (id BIGINT)")
    con.sql("INSERT INTO lake.t SELECT i, 'file' FROM range(100) r(i)")
    con.sql("INSERT INTO lake.t VALUES (1000, 'inlined'), (1001, 'inlined'), (1002, 'inlined')")
    con.sql("DELETE FROM lake.t WHERE id = 1001")
    con.sql("DETACH lake")
    lake = setup.open()

    caplog.set_level(logging.INFO, logger="airflow_provider_lakehouse.ducklake.transaction")
    calls = _lose_the_first_race(setup, monkeypatch)
    with lake.transaction(author="test") as tx:
        tx.delete_where("t", pc.field("id") < 10)
        tx.delete_where("t", pc.field("id") < 20)  # the same data file again: one delete file must remain
    assert len(calls) == 2 and calls[1] == calls[0] + (1 if setup.pg is not None else 0)
    assert "lost the race" in caplog.text

    calls = _lose_the_first_race(setup, monkeypatch)
    report = lake.flush_inlined_data("t")
    assert len(calls) == 2 and report.rows_flushed == 3
    assert lake.delete_orphaned_files(older_than=_future()).files_deleted == []

    expected = sorted([*list(range(20, 100)), 1000, 1002])
    assert sorted(lake.read("t").column("id").to_pylist()) == expected
    setup.attach(con)
    assert [r[0] for r in con.sql("SELECT id FROM lake.t ORDER BY id").fetchall()] == expected


def test_concurrent_create_schema_if_not_exists_is_no_conflict(setup: LakeSetup) -> None:
    """Scripts of parallel tasks start with CREATE SCHEMA IF NOT EXISTS: the second commit uses the schema the
    first created (DuckDB reads both tables); without IF NOT EXISTS it is a conflict, as in DuckDB."""
    lake = setup.create()
    first, second = lake.transaction(), lake.transaction()
    for tx, table in ((first, "a"), (second, "b")):
        tx.create_schema("staging", if_not_exists=True)
        tx.create_table(f"staging.{table}", pa.schema([("id", pa.int64())]))
        tx.append(f"staging.{table}", pa.table({"id": [1, 2]}))
    first.commit()
    second.commit()
    assert [s.name for s in lake.schemas()].count("staging") == 1
    con = referee.connect()
    setup.attach(con)
    assert con.sql(
        "SELECT (SELECT count(*) FROM lake.staging.a), (SELECT count(*) FROM lake.staging.b)"
    ).fetchone() == (2, 2)

    third, fourth = lake.transaction(), lake.transaction()
    third.create_schema("other")
    fourth.create_schema("other")
    third.commit()
    with pytest.raises(CommitConflictError, match="schema 'other' was created concurrently"):
        fourth.commit()


def test_tasks_starting_together_on_a_new_lake_all_open_it(setup: LakeSetup) -> None:
    """The first tasks of a DAG on a new lake each create its catalog at once; one creates it, the others
    open it (found when 4 TPC-DS ingest tasks started together: Postgres' unique index on schema names)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    start = threading.Barrier(4)

    def open_new_lake(_: int) -> int:
        start.wait()
        return setup.create().current_snapshot_id()

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(open_new_lake, range(4))) == [0, 0, 0, 0]
    con = referee.connect()
    setup.attach(con)
    assert con.sql("SELECT count(*) FROM ducklake_snapshots('lake')").fetchone() == (1,)
