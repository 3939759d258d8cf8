"""Lakes whose deletes DuckDB 1.5 wrote as deletion vectors (``write_deletion_vectors``, catalog format
``puffin``): our reader and the Spark engine see exactly the rows DuckDB sees, at every snapshot."""

from __future__ import annotations

from typing import Any

import pyarrow.compute as pc
import pytest

from airflow_provider_lakehouse.ducklake.deletion_vectors import DeletionVectorError, deleted_positions_of
from tests import referee
from tests.integration.test_spark_sql import run, selected
from tests.referee import LakeSetup

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# Each delete exercises one kind of Roaring container: sparse positions (array), every third row of 200,000
# (bitmaps: more than 4096 per 65,536 positions) and one long range (a run container once DuckDB optimises it).
DELETES = ("id IN (5, 77, 131071, 131072)", "id % 3 = 0", "id BETWEEN 150000 AND 170000")


def _lake_with_deletion_vectors(setup: LakeSetup) -> tuple[Any, list[int]]:
    """DuckDB writes the table and three deletes as deletion vectors; returns its connection and the snapshots."""
    setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT="0", WRITE_DELETION_VECTORS="true")
    con.execute("CREATE TABLE lake.t AS SELECT range AS id, range * 2 AS twice FROM range(200000)")
    snapshots = [con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('lake')").fetchone()[0]]
    for condition in DELETES:
        con.execute(f"DELETE FROM lake.t WHERE {condition}")
        snapshots.append(con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('lake')").fetchone()[0])
    deletes = [f.delete_file for f in setup.open().scan("main.t").files]
    assert deletes and {d.format for d in deletes if d is not None} == {"puffin"}
    return con, snapshots


def test_our_reader_sees_what_duckdb_sees_at_every_snapshot(setup: LakeSetup) -> None:
    con, snapshots = _lake_with_deletion_vectors(setup)
    lake = setup.open()
    for snapshot in snapshots:
        ours = sorted(lake.read("main.t", columns=["id"], version=snapshot).column("id").to_pylist())
        theirs = [r[0] for r in con.execute(f"SELECT id FROM lake.t AT (VERSION => {snapshot}) ORDER BY id").fetchall()]
        assert ours == theirs, f"snapshot {snapshot}"
    assert len(ours) == 200000 - len({5, 77, 131071, 131072} | set(range(0, 200000, 3)) | set(range(150000, 170001)))


def test_the_spark_engine_reads_deletion_vectors(spark: Any, setup: LakeSetup) -> None:
    con, snapshots = _lake_with_deletion_vectors(setup)
    probe = "SELECT count(*) AS n, sum(twice) AS s FROM t{at} WHERE id IN (5, 6, 77, 131072) OR id % 1000 = 1"
    for snapshot in [None, *snapshots]:
        at = "" if snapshot is None else f" AT (VERSION => {snapshot})"
        ours = selected(run(spark, setup, probe.format(at=at)))
        theirs = con.execute(probe.format(at=at).replace("FROM t", "FROM lake.t")).fetchone()
        assert [(r["n"], r["s"]) for r in ours] == [theirs], f"snapshot {snapshot}"
    # and a change through the Spark engine keeps DuckDB's deletes: DuckDB agrees afterwards
    run(spark, setup, "DELETE FROM t WHERE id < 10; UPDATE t SET twice = -1 WHERE id = 11")
    duck = con.execute("SELECT count(*), sum(twice) FROM lake.t").fetchone()
    ours = setup.open().read("main.t", columns=["twice"]).column("twice").to_pylist()
    assert (len(ours), sum(ours)) == duck


def test_a_corrupt_deletion_vector_is_named_not_misread(setup: LakeSetup) -> None:
    _con, _snapshots = _lake_with_deletion_vectors(setup)
    lake = setup.open()
    (data_file,) = lake.scan("main.t").files
    assert data_file.delete_file is not None
    path = data_file.delete_file.path
    with lake.storage.open_input(path) as handle:
        blob = bytearray(handle.read())
    blob[-20] ^= 0xFF
    with pytest.raises(DeletionVectorError, match="checksum does not match"):
        deleted_positions_of(bytes(blob), path)


def _lake_with_two_live_delete_files(setup: LakeSetup, deletion_vectors: bool) -> Any:
    setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT="50", **({"WRITE_DELETION_VECTORS": "true"} if deletion_vectors else {}))
    con.sql("CREATE TABLE lake.t AS SELECT range::INTEGER AS id FROM range(300)")
    con.sql("DELETE FROM lake.t WHERE id < 3")  # recorded as inlined deletions of the file's rows
    con.sql("BEGIN")
    con.sql("DELETE FROM lake.t WHERE id % 2 = 0")
    con.sql("CALL ducklake_flush_inlined_data('lake')")
    con.sql("COMMIT")
    return con


@pytest.mark.parametrize("deletion_vectors", [True, False])
def test_two_live_delete_files_both_delete(setup: LakeSetup, deletion_vectors: bool) -> None:
    """DuckDB 1.5.5 leaves a data file with two live delete files when one transaction deletes from it and flushes
    its inlined deletions (read-back fuzzer seeds 28512 and 28578). DuckDB then reads the file once per delete file:
    449 rows of a 300-row table. Every committed delete counts, so we read the 149 rows the statements leave; and
    our next delete ends both files, after which DuckDB reads the right rows again."""
    con = _lake_with_two_live_delete_files(setup, deletion_vectors)
    (data_file,) = setup.open().scan("main.t").files
    assert data_file.delete_file is not None and len(data_file.other_delete_files) == 1
    assert con.sql("SELECT count(*), count(DISTINCT id) FROM lake.t").fetchone() == (449, 300)  # DuckDB's bug
    expected = [i for i in range(300) if i >= 3 and i % 2 == 1]
    assert sorted(setup.open().read("main.t").column("id").to_pylist()) == expected

    tx = setup.open().transaction()
    tx.delete_where("main.t", pc.field("id") == 299)
    tx.commit()
    (data_file,) = setup.open().scan("main.t").files
    assert not data_file.other_delete_files
    assert [r[0] for r in con.sql("SELECT id FROM lake.t ORDER BY id").fetchall()] == expected[:-1]


def test_the_spark_engine_applies_both_live_delete_files(spark: Any, setup: LakeSetup) -> None:
    _lake_with_two_live_delete_files(setup, deletion_vectors=True)
    ours = selected(run(spark, setup, "SELECT count(*) AS n, sum(id) AS s FROM t"))
    expected = [i for i in range(300) if i >= 3 and i % 2 == 1]
    assert [(r["n"], r["s"]) for r in ours] == [(len(expected), sum(expected))]
