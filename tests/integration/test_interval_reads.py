"""DuckDB's ``INTERVAL`` columns in lakes DuckDB made, read by the Python reader (the Lakehouse UI's previews, the
``DuckLake.read`` API) as DuckDB reads them: exact in inlined rows, milliseconds in data files (DuckDB's Parquet
writer keeps no more), at every snapshot. DuckDB is the referee. The Spark engine still refuses them by name
(``tests/integration/test_spark_values_as_duckdb.py``)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from airflow_provider_lakehouse.ducklake.intervals import interval_text
from airflow_provider_lakehouse.exceptions import LakehouseError
from airflow_provider_lakehouse.plugins.api.lake_views import preview
from tests import referee
from tests.referee import LakeSetup, lake_snapshots

pytestmark = pytest.mark.integration

VALUES = [
    "INTERVAL '1 year 2 months 3 days 04:05:06.789123'",
    "NULL",
    "INTERVAL '36 hours'",
    "to_microseconds(1)",
    "INTERVAL '13 months'",
    "INTERVAL '100000 hours 59 minutes'",
    "INTERVAL 0 DAY",
]
#: DuckDB's Parquet writer refuses negative intervals, so these stay inlined
NEGATIVE = ["INTERVAL '-5 days'", "INTERVAL '-1 year -2 months -04:00:00.5'", "INTERVAL '2 years -3 months'"]


def _duckdb_text(con: Any, table: str, snapshot: int | None = None) -> list[tuple[int, str | None]]:
    at = f" AT (VERSION => {snapshot})" if snapshot is not None else ""
    return [tuple(r) for r in con.sql(f"SELECT id, CAST(iv AS VARCHAR) FROM lake.{table}{at} ORDER BY id").fetchall()]


def _ours_text(lake: Any, table: str, snapshot: int | None = None) -> list[tuple[int, str | None]]:
    data = lake.read(f"main.{table}", version=snapshot).sort_by("id")
    assert data.schema.field("iv").type == pa.month_day_nano_interval()
    return [(r["id"], None if r["iv"] is None else interval_text(r["iv"])) for r in data.to_pylist()]


def test_the_python_reader_reads_intervals_as_duckdb(setup: LakeSetup) -> None:
    setup.create()
    con = referee.connect()
    setup.attach(con)
    con.sql("CREATE TABLE lake.t (id INTEGER, iv INTERVAL)")
    con.sql("INSERT INTO lake.t VALUES " + ", ".join(f"({i}, {v})" for i, v in enumerate(VALUES)))  # inlined: exact
    con.sql("CALL ducklake_flush_inlined_data('lake')")  # now in a file: milliseconds
    con.sql("INSERT INTO lake.t VALUES " + ", ".join(f"({100 + i}, {v})" for i, v in enumerate(VALUES + NEGATIVE)))
    con.sql("DELETE FROM lake.t WHERE id IN (2, 102)")
    con.sql("ALTER TABLE lake.t ADD COLUMN later INTERVAL DEFAULT '1 day'")
    lake = setup.open()
    theirs = _duckdb_text(con, "t")
    assert _ours_text(lake, "t") == theirs
    assert ("1 year 2 months 3 days 04:05:06.789" in dict(theirs).values()) and (-5 not in dict(theirs))
    assert dict(theirs)[100] == "1 year 2 months 3 days 04:05:06.789123"  # inlined again: exact
    compared = referee.same_at_every_snapshot(
        lake, lambda snapshot: _duckdb_text(con, "t", snapshot), lambda snapshot: _ours_text(lake, "t", snapshot)
    )
    assert compared >= 5
    later = lake.read("main.t").column("later").to_pylist()
    assert {interval_text(v) for v in later} == {"1 day"}


def test_the_lake_browser_previews_intervals_in_duckdbs_text(setup: LakeSetup) -> None:
    """The Lakehouse UI's table preview, over a file and inlined rows, and after an update (which reads the table
    whole): each cell is DuckDB's text of the value."""
    setup.create()
    con = referee.connect()
    setup.attach(con)
    con.sql("CREATE TABLE lake.t (id INTEGER, iv INTERVAL)")
    con.sql("INSERT INTO lake.t VALUES (1, INTERVAL '1 year 2 months 3 days 04:05:06.789'), (2, NULL)")
    con.sql("CALL ducklake_flush_inlined_data('lake')")
    con.sql("INSERT INTO lake.t VALUES (3, INTERVAL '-1 day 00:00:00.000001')")
    lake = setup.open()
    expected = [[1, "1 year 2 months 3 days 04:05:06.789"], [2, None], [3, "-1 day 00:00:00.000001"]]
    assert _duckdb_text(con, "t") == [tuple(row) for row in expected]
    shown = preview(lake, "main.t")
    assert shown.rows == expected
    con.sql("UPDATE lake.t SET id = id * 10 WHERE id = 2")
    shown = preview(setup.open(), "main.t")
    assert sorted(shown.rows, key=lambda r: r[0]) == [expected[0], expected[2], [20, None]]


def test_filters_on_an_interval_column(setup: LakeSetup) -> None:
    """NULL tests filter intervals (they found no rows: the file was skipped by DuckDB's empty counts); a
    comparison, which Arrow cannot make, fails naming the table and the predicate instead of with pyarrow's error."""
    setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=0)
    con.sql("CREATE TABLE lake.t (id INTEGER, iv INTERVAL)")
    con.sql("INSERT INTO lake.t VALUES (1, INTERVAL 1 DAY), (2, NULL), (3, INTERVAL 3 MONTH)")
    lake = setup.open()
    # DuckDB writes no counts for an INTERVAL column (0 values, 0 NULLs): no file may be skipped by them
    kept = lake.read("main.t", filters=[("iv", "is_not_null", None)]).sort_by("id")
    assert kept.column("id").to_pylist() == [1, 3]
    assert lake.read("main.t", filters=[("iv", "is_null", None)]).column("id").to_pylist() == [2]
    one_day = pa.scalar(pa.MonthDayNano([0, 1, 0]), pa.month_day_nano_interval())
    with pytest.raises(LakehouseError, match=r"Cannot filter main\.t by \[\('iv', '='.*no kernel"):
        lake.read("main.t", filters=[("iv", "=", one_day)])


def test_the_python_reader_reads_timetz_as_duckdb_hands_it_to_arrow(setup: LakeSetup) -> None:
    """``TIME WITH TIME ZONE``: DuckDB gives Arrow the time of day without its offset, which is the UTC time for a
    value read from a data file (DuckDB's Parquet writer normalizes it) and the time as written for an inlined one.
    The reader gives the same, at every snapshot, and its NULL filters skip no file by DuckDB's zero counts."""
    setup.create()
    con = referee.connect()
    setup.attach(con)
    con.sql("CREATE TABLE lake.t (id INTEGER, x TIMETZ)")
    con.sql("INSERT INTO lake.t VALUES (1, '12:00:00.5+02'), (2, NULL), (3, '23:30:00-05:30')")
    con.sql("CALL ducklake_flush_inlined_data('lake')")
    con.sql("INSERT INTO lake.t VALUES (4, '12:00:00.5+02'), (5, '00:00:01+00'), (6, NULL)")
    lake = setup.open()
    for snapshot in lake_snapshots(lake)[2:]:
        theirs = con.sql(f"SELECT * FROM lake.t AT (VERSION => {snapshot}) ORDER BY id").to_arrow_table()
        assert lake.read("main.t", version=snapshot).sort_by("id").to_pylist() == theirs.to_pylist(), snapshot
    assert lake.read("main.t").schema.field("x").type == pa.time64("us")
    nulls = lake.read("main.t", filters=[("x", "is_null", None)]).column("id").to_pylist()
    assert sorted(nulls) == [2, 6]
