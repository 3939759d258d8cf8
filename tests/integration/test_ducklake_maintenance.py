"""Introspection and maintenance on our lakes, checked against DuckDB's own view of the same lake."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tests import referee
from tests.referee import LakeSetup, assert_same_at_every_snapshot, rows

pytestmark = pytest.mark.integration


def small_files_lake(setup: LakeSetup, batches: int = 4):  # type: ignore[no-untyped-def]
    lake = setup.create()
    with lake.transaction() as tx:
        tx.create_table("t", pa.schema([("id", pa.int64()), ("v", pa.string())]))
    for i in range(batches):
        with lake.transaction() as tx:
            tx.append("t", pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64()), "v": ["x"] * 10}))
    with lake.transaction() as tx:
        tx.update_where("t", pc.field("id") == 5, {"v": "upd"})
    return lake


def test_snapshots_table_info_and_changes_match_duckdb(setup: LakeSetup) -> None:
    lake = small_files_lake(setup)
    con = referee.connect()
    setup.attach(con)
    theirs = rows(con, "FROM ducklake_snapshots('lake') ORDER BY snapshot_id")
    ours = lake.snapshots()
    assert [(s.snapshot_id, s.changes) for s in ours] == [(t["snapshot_id"], dict(t["changes"])) for t in theirs]
    info = lake.table_info()[0]
    their_info = rows(con, "FROM ducklake_table_info('lake')")[0]
    assert (info.file_count, info.file_size_bytes, info.delete_file_count, info.delete_file_size_bytes) == (
        their_info["file_count"],
        their_info["file_size_bytes"],
        their_info["delete_file_count"],
        their_info["delete_file_size_bytes"],
    )
    assert info.row_count == con.sql("SELECT count(*) FROM lake.t").fetchone()[0]
    key = lambda r: (r["snapshot_id"], r["change_type"], r["rowid"])  # noqa: E731
    for start, end in ((2, 6), (0, 1), (0, 3)):  # a range from snapshot 0 starts before the table existed
        ours_changes = sorted(lake.table_changes("t", start, end).to_pylist(), key=key)
        their_changes = sorted(rows(con, f"FROM ducklake_table_changes('lake', 'main', 't', {start}, {end})"), key=key)
        assert ours_changes == their_changes, (start, end)


def test_merge_flush_expire_cleanup_keep_every_reader_right(setup: LakeSetup) -> None:
    lake = small_files_lake(setup)
    report = lake.merge_adjacent_files("t")
    assert report.files_merged == 4 and report.snapshot_id is not None
    con = referee.connect()
    setup.attach(con)
    assert assert_same_at_every_snapshot(lake, con, "t") == 7  # time travel through the partial file
    con.sql("INSERT INTO lake.t VALUES (100, 'inlined'), (101, 'inlined 2')")
    con.sql("DELETE FROM lake.t WHERE id = 101")
    con.close()
    flushed = lake.flush_inlined_data("t")
    assert flushed.rows_flushed == 2
    con = referee.connect()
    setup.attach(con)
    assert assert_same_at_every_snapshot(lake, con, "t") == 10
    with lake.store.connection() as conn:
        assert conn.query("SELECT count(*) FROM {M}ducklake_inlined_data_1_1")[0][0] == 0

    dry = lake.expire_snapshots(keep_last=2, dry_run=True)
    assert dry.snapshots_expired == list(range(lake.current_snapshot_id() - 1))
    assert len(lake.snapshots()) == lake.current_snapshot_id() + 1  # a dry run changes nothing
    lake.expire_snapshots(keep_last=2)
    assert [s.snapshot_id for s in lake.snapshots()] == [lake.current_snapshot_id() - 1, lake.current_snapshot_id()]
    scheduled = lake.cleanup_old_files(cleanup_all=True)
    assert scheduled.dry_run and scheduled.files_deleted  # the merged sources
    assert all(lake.storage.exists(f) for f in scheduled.files_deleted)
    done = lake.cleanup_old_files(cleanup_all=True, dry_run=False)
    assert not any(lake.storage.exists(f) for f in done.files_deleted)
    final = sorted(lake.read("t").to_pylist(), key=lambda r: r["id"])
    assert final == rows(con, "FROM lake.t ORDER BY id") and len(final) == 41
    # DuckDB's own maintenance calls work on the lake we maintained
    con.sql("CALL ducklake_merge_adjacent_files('lake')")
    con.sql("CALL ducklake_cleanup_old_files('lake', cleanup_all => true)")
    assert rows(con, "SELECT count(*) AS n FROM lake.t") == [{"n": 41}]


def test_orphans_from_a_writer_that_died_before_committing(setup: LakeSetup, tmp_path: Path) -> None:
    lake = small_files_lake(setup, batches=1)
    tx = lake.transaction()
    tx.append("t", pa.table({"id": pa.array([1000], pa.int64()), "v": ["never committed"]}))
    orphan = tx._written[0]
    tx._conn.close()  # the process "dies": no commit, no abort, the file stays behind
    assert lake.read("t").num_rows == 10
    now = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)
    assert lake.delete_orphaned_files(older_than=now).files_deleted == [orphan]
    assert lake.delete_orphaned_files().files_deleted == []  # young files may belong to a commit in flight
    lake.delete_orphaned_files(older_than=now, dry_run=False)
    assert not lake.storage.exists(orphan)
    con = referee.connect()
    setup.attach(con)
    assert con.sql("SELECT count(*) FROM lake.t").fetchone()[0] == 10


def test_time_travel_by_timestamp_matches_duckdb(setup: LakeSetup) -> None:
    import time

    lake = small_files_lake(setup, batches=2)
    marks = []
    for snap in lake.snapshots():
        marks.append((snap.snapshot_id, snap.snapshot_time))
    time.sleep(0.01)
    con = referee.connect()
    setup.attach(con)
    for snap_id, when in marks[1:]:
        ours = lake.read("t", timestamp=when).num_rows
        assert lake.snapshot(timestamp=when).snapshot_id == snap_id
        theirs = con.sql(f"SELECT count(*) FROM lake.t AT (TIMESTAMP => '{when.isoformat()}'::TIMESTAMPTZ)").fetchone()[
            0
        ]
        assert ours == theirs
    with pytest.raises(LookupError, match="No snapshot at or before"):
        lake.snapshot(timestamp=dt.datetime(2000, 1, 1, tzinfo=dt.UTC))


def test_duckdbs_own_maintenance_calls_work_on_our_lake(setup: LakeSetup) -> None:
    lake = small_files_lake(setup)
    lake.merge_adjacent_files("t")
    con = referee.connect()
    setup.attach(con)
    con.sql("INSERT INTO lake.t VALUES (100, 'inlined'), (101, 'inlined 2')")
    con.sql("CALL ducklake_flush_inlined_data('lake')")
    con.sql("CALL ducklake_expire_snapshots('lake', older_than => now())")
    con.sql("CALL ducklake_cleanup_old_files('lake', cleanup_all => true)")
    con.sql("CALL ducklake_delete_orphaned_files('lake', cleanup_all => true)")
    theirs = rows(con, "FROM lake.t ORDER BY id")
    assert len(theirs) == 42 and len(lake.snapshots()) == 1
    assert sorted(lake.read("t").to_pylist(), key=lambda r: r["id"]) == theirs
