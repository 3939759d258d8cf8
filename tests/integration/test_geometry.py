"""DuckDB's ``GEOMETRY`` columns, with DuckDB as the referee: the Python reader and the Spark engine read them as
DuckDB hands them to Arrow (well-known binary) at every snapshot, and what the Python writer and Spark write there
DuckDB reads back as ``GEOMETRY``, with DuckDB's own statistics (no min/max; a bounding box and the types seen)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from airflow_provider_lakehouse.ducklake.geometry import InvalidGeometryError, from_wkt, wkt
from airflow_provider_lakehouse.exceptions import LakehouseError, StatementError
from airflow_provider_lakehouse.plugins.api.lake_views import preview
from tests import referee
from tests.integration.test_partitioned_writes import file_layout, write_both_ways
from tests.integration.test_spark_sql import run, selected
from tests.referee import LakeSetup, lake_snapshots

pytestmark = pytest.mark.integration

SHAPES = [
    "'POINT(1 2)'",
    "NULL",
    "'POINT Z(1 2 3)'",
    "'LINESTRING(0.1 -2.5, 3 4)'",
    "'POINT EMPTY'",
    "'MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))'",
    "'GEOMETRYCOLLECTION(POINT(7 8), LINESTRING(-1 -1, 2 2))'",
    "'POINT M(1 1 9)'",
    "'POINT ZM(1 1 9 10)'",
    "'POLYGON((0 0, 10 0, 10 10, 0 0), (1 1, 2 1, 2 2, 1 1))'",
    "'MULTIPOINT((1e20 -3), (4 5))'",
    "'LINESTRING EMPTY'",
]
#: more shapes for the text of a geometry: nesting, empty members, numbers in and out of exponent form
TEXT_SHAPES = [
    "POINT(1e20 -3)",
    "POINT(0.30000000000000004 0.3333333333333333)",
    "POINT(-0 1e-7)",
    "POINT(123456789.123 1e15)",
    "POINT(1e16 2.5e-300)",
    "MULTIPOINT((1 2), (3 4))",
    "MULTIPOINT(EMPTY, 1 2)",
    "MULTIPOINT EMPTY",
    "POLYGON EMPTY",
    "MULTILINESTRING((1 2, 3 4), (5 6, 7 8))",
    "MULTILINESTRING Z((1 2 3, 4 5 6), EMPTY)",
    "MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)), EMPTY)",
    "GEOMETRYCOLLECTION EMPTY",
    "GEOMETRYCOLLECTION(POINT(1 2), GEOMETRYCOLLECTION(LINESTRING(1 1, 2 2)))",
    "GEOMETRYCOLLECTION Z(POINT Z(1 2 3), POINT Z EMPTY)",
    "MULTIPOINT ZM((1 2 3 4))",
    "LINESTRING M(1 2 3, 4 5 6)",
]


def _duckdb_rows(con: Any, table: str, snapshot: int | None = None) -> list[tuple[Any, ...]]:
    at = f" AT (VERSION => {snapshot})" if snapshot is not None else ""
    return [tuple(r) for r in con.sql(f"SELECT * FROM lake.{table}{at} ORDER BY id").fetchall()]


def _our_rows(lake: Any, table: str, snapshot: int | None = None) -> list[tuple[Any, ...]]:
    data = lake.read(f"main.{table}", version=snapshot).sort_by("id")
    return [tuple(row.values()) for row in data.to_pylist()]


def _stats(con: Any, table: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Each file's and the table's statistics of the geometry columns, in file order."""
    files = con.sql(
        "SELECT s.value_count, s.null_count, s.min_value, s.max_value, s.extra_stats "
        "FROM __ducklake_metadata_lake.ducklake_file_column_stats s "
        "JOIN __ducklake_metadata_lake.ducklake_column c ON c.table_id = s.table_id AND c.column_id = s.column_id "
        "JOIN __ducklake_metadata_lake.ducklake_table t ON t.table_id = s.table_id "
        f"WHERE t.table_name = '{table}' AND c.column_type = 'geometry' AND c.end_snapshot IS NULL "
        "AND t.end_snapshot IS NULL ORDER BY s.data_file_id, s.column_id"
    ).fetchall()
    whole = con.sql(
        "SELECT s.contains_null, s.min_value, s.max_value, s.extra_stats "
        "FROM __ducklake_metadata_lake.ducklake_table_column_stats s "
        "JOIN __ducklake_metadata_lake.ducklake_column c ON c.table_id = s.table_id AND c.column_id = s.column_id "
        "JOIN __ducklake_metadata_lake.ducklake_table t ON t.table_id = s.table_id "
        f"WHERE t.table_name = '{table}' AND c.column_type = 'geometry' AND c.end_snapshot IS NULL "
        "AND t.end_snapshot IS NULL ORDER BY s.column_id"
    ).fetchall()
    return [tuple(r) for r in files], [tuple(r) for r in whole]


def _shapes_in(setup: LakeSetup) -> Any:
    """A new lake with table ``shapes`` (``id``, ``g``) holding :data:`SHAPES`; DuckDB, with it attached."""
    setup.create()
    con = referee.connect()
    setup.attach(con)
    con.sql("CREATE TABLE lake.shapes (id INTEGER, g GEOMETRY)")
    con.sql("INSERT INTO lake.shapes VALUES " + ", ".join(f"({i}, {v})" for i, v in enumerate(SHAPES)))
    return con


def test_the_python_reader_reads_geometry_as_duckdb(setup: LakeSetup) -> None:
    """Files (DuckDB never inlines a table with a geometry column), deletes, an update, a geometry column added
    later with a default (which DuckDB stores as text): our rows equal DuckDB's at every snapshot."""
    con = _shapes_in(setup)
    con.sql("DELETE FROM lake.shapes WHERE id IN (2, 5)")
    con.sql("UPDATE lake.shapes SET g = 'POINT(-4 -4)' WHERE id = 3")
    con.sql("ALTER TABLE lake.shapes ADD COLUMN later GEOMETRY DEFAULT 'MULTIPOINT((1e20 2), EMPTY)'")
    con.sql("INSERT INTO lake.shapes VALUES (100, 'POINT(0 0)', 'LINESTRING(1 1, 2 2)')")
    con.sql("INSERT INTO lake.shapes (id) VALUES (101)")
    lake = setup.open()
    assert lake.read("main.shapes").schema.field("g").type == pa.binary()
    assert _our_rows(lake, "shapes") == _duckdb_rows(con, "shapes")
    compared = referee.same_at_every_snapshot(
        lake,
        lambda snapshot: _duckdb_rows(con, "shapes", snapshot),
        lambda snapshot: _our_rows(lake, "shapes", snapshot),
    )
    assert compared >= 5


def test_the_text_of_a_geometry_is_duckdbs() -> None:
    con = referee.connect()
    for shape in TEXT_SHAPES + [s.strip("'") for s in SHAPES if s != "NULL"]:
        data, text = con.sql(f"SELECT '{shape}'::GEOMETRY, '{shape}'::GEOMETRY::VARCHAR").fetchone()
        assert wkt(data) == text, shape


def test_the_binary_of_a_geometry_text_is_duckdbs() -> None:
    """For the defaults DuckDB stores as text: DuckDB's own text and the text it was given, in other spellings."""
    con = referee.connect()
    spellings = ["point(1 2)", "POINT Z(1 2 3)", "MULTIPOINT(1 2, 3 4)", "LINESTRING ( 1 2 , 3 4 )"]
    for shape in TEXT_SHAPES + [s.strip("'") for s in SHAPES if s != "NULL"] + spellings:
        data, text = con.sql(f"SELECT '{shape}'::GEOMETRY, '{shape}'::GEOMETRY::VARCHAR").fetchone()
        assert from_wkt(shape) == data, shape
        assert from_wkt(text) == data, text
    assert from_wkt("POINT(1 2) x") == from_wkt("POINT(1 2)")  # DuckDB ignores what follows the geometry
    refused = ["POINT(1)", "CIRCLE(1 2)", "LINESTRING(1 2, 3)", "GEOMETRYCOLLECTION(POINT M(7 8 9))"]
    refused += ["GEOMETRYCOLLECTION Z(POINT(1 2 3))", "GEOMETRYCOLLECTION M(POINT M(1 2 3), LINESTRING EMPTY)"]
    for bad in refused:  # DuckDB fails to parse each
        with pytest.raises(duckdb.InvalidInputException):
            con.sql(f"SELECT '{bad}'::GEOMETRY").fetchall()
        with pytest.raises(InvalidGeometryError):
            from_wkt(bad)


def test_the_lake_browser_previews_geometry_as_duckdbs_text(setup: LakeSetup) -> None:
    """The table preview shows each geometry as DuckDB's text of it, from the first files (an append-only table)
    and after an update (the table read whole)."""
    con = _shapes_in(setup)
    for change in ("", "UPDATE lake.shapes SET id = id + 100 WHERE id = 0"):
        if change:
            con.sql(change)
        shown = preview(setup.open(), "main.shapes")
        expected = con.sql("SELECT id, g::VARCHAR FROM lake.shapes ORDER BY rowid").fetchall()
        assert sorted(shown.rows, key=str) == sorted((list(r) for r in expected), key=str), change
        assert [100 if change else 0, "POINT (1 2)"] in shown.rows


def test_python_writes_are_read_by_duckdb_with_its_statistics(tmp_path: Path) -> None:
    """The Python writer appends DuckDB's own geometry values to ``ours``; DuckDB inserts them into ``theirs``.
    DuckDB reads both alike, and the catalog holds the same statistics for both, per file (each shape alone, then
    mixed) and per table."""
    setup = referee.sqlite_lake(tmp_path)
    setup.create()
    con = referee.connect()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=0)
    for name in ("theirs", "ours"):
        con.sql(f"CREATE TABLE lake.{name} (id INTEGER, g GEOMETRY)")
    batches = [[shape] for shape in SHAPES] + [SHAPES[:6], SHAPES[6:], ["NULL", "NULL"]]
    for number, batch in enumerate(batches):
        values = ", ".join(f"({100 * number + i}, {v})" for i, v in enumerate(batch))
        con.sql(f"INSERT INTO lake.theirs VALUES {values}")
        data = con.sql(f"SELECT id, g::GEOMETRY AS g FROM (VALUES {values}) v(id, g)").arrow().read_all()
        with setup.open().transaction() as tx:
            tx.append("main.ours", data)
    assert _duckdb_rows(con, "ours") == _duckdb_rows(con, "theirs")
    assert con.sql("SELECT DISTINCT typeof(g) FROM lake.ours").fetchall() == [("GEOMETRY",)]
    assert _stats(con, "ours") == _stats(con, "theirs")
    assert '"xmax": 100000000000000000000.000000' in _stats(con, "ours")[1][0][3]


@pytest.mark.slow
def test_spark_reads_and_writes_geometry_as_duckdb(spark: Any, lakes: tuple[LakeSetup, LakeSetup]) -> None:
    """A ``SELECT`` returns DuckDB's bytes; ``CREATE TABLE … AS``, ``INSERT … SELECT`` and an ``UPDATE`` of
    another column keep the column ``GEOMETRY``, ``CREATE TABLE`` and ``ADD COLUMN`` declare one, text is parsed
    as DuckDB casts it, with the values and statistics DuckDB writes for the same script."""
    ours, theirs = lakes
    for setup in lakes:
        _shapes_in(setup).sql("DELETE FROM lake.shapes WHERE id = 2")
    tasks = [  # each a task on Spark, its statements one by one in DuckDB
        [
            "CREATE TABLE copied AS SELECT id, g FROM shapes WHERE id < 8",
            "INSERT INTO copied SELECT id + 100, g FROM shapes WHERE g IS NOT NULL",
            "UPDATE shapes SET id = id + 1000 WHERE id > 6",
            "CREATE TABLE declared (id INTEGER, g GEOMETRY)",
            "INSERT INTO declared SELECT * FROM shapes WHERE id % 2 = 1",
            "ALTER TABLE declared ADD COLUMN later GEOMETRY DEFAULT 'POINT Z(1 2 3)'",
            "INSERT INTO declared SELECT id + 500, NULL, g FROM shapes WHERE id < 4",
            "INSERT INTO declared (id) VALUES (900)",
        ],
        ["INSERT INTO declared VALUES (901, 'POINT(1.5 -2)', 'multipoint z ((1 2 3), empty)')"],
        ["UPDATE declared SET g = 'LINESTRING(0 0, 1e20 1)' WHERE id % 3 = 0"],
    ]
    response = run(
        spark,
        ours,
        "ATTACH 'ducklake' AS dl; USE dl; " + "; ".join(tasks[0]) + "; SELECT id, g FROM shapes ORDER BY id",
    )
    for task in tasks[1:]:
        run(spark, ours, "ATTACH 'ducklake' AS dl; USE dl; " + "; ".join(task))
    con = referee.connect()
    theirs.attach(con, "lake")
    con.sql("USE lake")
    for statement in [statement for task in tasks for statement in task]:
        con.sql(statement)
    con.sql("USE memory")
    expected = con.sql("SELECT id, g FROM lake.shapes ORDER BY id").fetchall()
    rows = selected(response)
    assert [r["id"] for r in rows] == [r[0] for r in expected]
    theirs_stats = {t: _stats(con, t) for t in ("shapes", "copied", "declared")}
    theirs_rows = {t: _duckdb_rows(con, t) for t in ("shapes", "copied", "declared")}
    con.sql("DETACH lake")
    ours.attach(con, "lake")
    for table in ("shapes", "copied", "declared"):
        assert _duckdb_rows(con, table) == theirs_rows[table], table
        assert con.sql(f"SELECT DISTINCT typeof(g) FROM lake.{table}").fetchall() == [("GEOMETRY",)]
        files, whole = _stats(con, table)
        assert files == theirs_stats[table][0], table
        # DuckDB committed each statement: its table statistics predate ``later`` and never get a row for it
        # (spec 5.2); the task is one commit, whose new table has a row for every column
        assert whole[: len(theirs_stats[table][1])] == theirs_stats[table][1], table
    assert _our_rows(ours.open(), "shapes") == theirs_rows["shapes"]


@pytest.mark.slow
@pytest.mark.parametrize("value", ["'POINT(1)'", "'CIRCLE(1 2)'", "'\\x01\\x02'::BLOB"])
def test_spark_refuses_what_is_not_a_geometry(spark: Any, lakes: tuple[LakeSetup, LakeSetup], value: str) -> None:
    """Text that is not well-known text (DuckDB fails to parse it too) and bytes that are not well-known binary:
    the insert fails naming the column, and lands nothing."""
    ours, _theirs = lakes
    _shapes_in(ours).close()
    before = lake_snapshots(ours.open())
    with pytest.raises(StatementError, match="'g'"):
        run(spark, ours, f"ATTACH 'ducklake' AS dl; USE dl; INSERT INTO shapes VALUES (50, {value})")
    assert lake_snapshots(ours.open()) == before


#: shapes whose well-known binary is UTF-8 (zeros and counts): the only ones DuckDB 1.5.5 writes as identity keys
UTF8_SHAPES = ["'POINT(0 0)'", "'LINESTRING EMPTY'", "'GEOMETRYCOLLECTION EMPTY'", "NULL", "'POINT(0 0)'"]


@pytest.mark.parametrize(
    ("spec", "shapes"), [("g", UTF8_SHAPES), ("bucket(5, g)", SHAPES), ("id, bucket(3, g)", SHAPES)]
)
def test_partitioned_by_geometry_as_duckdb(setup: LakeSetup, spec: str, shapes: list[str]) -> None:
    """Identity keys are DuckDB's text of the geometry (WKT), buckets hash its well-known binary: the files,
    their directories and partition values are DuckDB's for the same rows, and DuckDB reads them alike."""
    con = referee.connect()
    data = (
        con.sql(
            "SELECT id, g::GEOMETRY AS g FROM (VALUES "
            + ", ".join(f"({i % 2}, {shape})" for i, shape in enumerate(shapes))
            + ") v(id, g)"
        )
        .arrow()
        .read_all()
    )
    lake = write_both_ways(setup, "id INTEGER, g GEOMETRY", spec, data)
    assert file_layout(setup, lake, "main.ours") == file_layout(setup, lake, "main.theirs")
    setup.attach(con)
    assert sorted(_duckdb_rows(con, "ours"), key=repr) == sorted(_duckdb_rows(con, "theirs"), key=repr)
    if spec == "g":
        values = {v for _directory, values in file_layout(setup, lake, "main.ours") for v in values}
        assert values == {"POINT (0 0)", "LINESTRING EMPTY", "GEOMETRYCOLLECTION EMPTY", None}


def test_an_identity_key_whose_binary_is_not_utf8_fails_as_in_duckdb(setup: LakeSetup) -> None:
    con = referee.connect()
    data = con.sql("SELECT 1 AS id, 'POINT(1 2)'::GEOMETRY AS g").arrow().read_all()
    setup.create()
    setup.attach(con, DATA_INLINING_ROW_LIMIT=0)
    con.sql("CREATE TABLE lake.p (id INTEGER, g GEOMETRY)")
    con.sql("ALTER TABLE lake.p SET PARTITIONED BY (g)")
    with pytest.raises(Exception, match=r"Invalid unicode \(byte sequence mismatch\)"):
        con.sql("INSERT INTO lake.p VALUES (1, 'POINT(1 2)')")
    lake = setup.open()
    before = lake_snapshots(lake)
    refused = pytest.raises(LakehouseError, match=r"Invalid unicode \(byte sequence mismatch\).*partition key 'g'")
    with refused, lake.transaction() as tx:
        tx.append("main.p", data)
    assert lake_snapshots(setup.open()) == before


@pytest.mark.slow
def test_spark_partitions_by_geometry_as_duckdb(spark: Any, lakes: tuple[LakeSetup, LakeSetup]) -> None:
    ours, theirs = lakes
    for setup in lakes:
        _shapes_in(setup).close()
    script = [
        "CREATE TABLE p (id INTEGER, g GEOMETRY)",
        "ALTER TABLE p SET PARTITIONED BY (bucket(4, g))",
        "INSERT INTO p SELECT id % 2, g FROM shapes",
        "CREATE TABLE q (id INTEGER, g GEOMETRY)",
        "ALTER TABLE q SET PARTITIONED BY (g)",
        "INSERT INTO q SELECT id, g FROM shapes WHERE id = 11 OR g IS NULL",
        # text, parsed before it is hashed and sorted
        "INSERT INTO p VALUES (7, 'POINT Z(1 2 3)'), (8, 'LINESTRING(0 0, 1.5 -2, 3 4)'), (9, 'POINT(-5 2)')",
        "CREATE TABLE s (id INTEGER, g GEOMETRY)",
        "ALTER TABLE s SET SORTED BY (g DESC)",
        "INSERT INTO s VALUES (1, 'POINT(2 1)'), (2, 'POINT Z(1 2 3)'), (3, NULL), (4, 'LINESTRING(0 0, 1 1)')",
        "INSERT INTO s SELECT id + 10, g FROM shapes",
    ]
    run(spark, ours, "ATTACH 'ducklake' AS dl; USE dl; " + "; ".join(script))
    con = referee.connect()
    theirs.attach(con, "lake")
    con.sql("USE lake")
    for statement in script:
        con.sql(statement)
    for table in ("main.p", "main.q"):  # the same partitions (Spark's tasks may each write a file to one)
        assert set(file_layout(ours, ours.open(), table)) == set(file_layout(theirs, theirs.open(), table)), table
    # each file in DuckDB's order (Spark's tasks may each write one)
    files = [uri for uri in ours.file_uris() if "/s/" in uri]
    assert files
    for uri in files:
        as_written = con.sql(f"SELECT id FROM read_parquet('{uri}')").fetchall()
        assert as_written == con.sql(f"SELECT id FROM read_parquet('{uri}') ORDER BY g DESC").fetchall(), uri
