"""Lakes whose deletes DuckDB 1.5 wrote as deletion vectors (``write_deletion_vectors``, catalog format
``puffin``): our reader and the Spark engine see exactly the rows DuckDB sees, at every snapshot."""

from __future__ import annotations

from typing import Any

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
