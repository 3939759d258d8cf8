"""DuckDB's 128-bit integers (``HUGEINT``, ``UHUGEINT``) in lakes DuckDB made: DuckDB 1.5 stores them as ``DOUBLE``
in Parquet files (so a value beyond 2^53 comes back as the nearest double's integer) and exactly in inlined rows.
The Spark engine and the Python reader read them as DuckDB reads them, and Spark's writes land as DuckDB's would;
DuckDB, running the same statements on a second lake, is the referee."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from airflow_provider_lakehouse.exceptions import StatementError
from tests import referee
from tests.integration.test_partitioned_writes import file_layout
from tests.integration.test_spark_sql import duck_rows, run, selected
from tests.integration.test_spark_values_as_duckdb import run_on_both, same_table
from tests.referee import LakeSetup, lake_snapshots

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: values past 2^53 (files keep the nearest double), a 39-digit one (inlined rows keep it), negatives and NULLs
SETUP = [
    "CREATE TABLE w (id INTEGER, h HUGEINT, u UHUGEINT)",
    "INSERT INTO w VALUES (1, 18446744073709551617, 3), (2, -123456789012345678901234567890123, NULL), "
    "(3, NULL, 99999999999999999999999999999999999999), (4, 9007199254740993, 9007199254740993)",
]
INLINED = "INSERT INTO w VALUES (5, -17, 5), (6, -7, 0)"
#: HUGEINT's largest value has 39 digits: DuckDB and the Python reader keep it, Spark's DECIMAL(38, 0) cannot
WIDEST = "INSERT INTO w VALUES (8, 170141183460469231731687303715884105727, 8)"


def _lake_made_by_duckdb(root: Path, *, flush: bool, widest: bool = False) -> LakeSetup:
    root.mkdir()
    lake = referee.sqlite_lake(root)
    con = referee.connect()
    lake.attach(con, "lake")
    con.sql("USE lake")
    for statement in SETUP:
        con.sql(statement)
    if flush:
        con.sql("CALL ducklake_flush_inlined_data('lake')")
    con.sql(INLINED)
    if widest:
        con.sql(WIDEST)
    con.close()
    return lake


@pytest.fixture
def lakes(tmp_path: Path) -> tuple[LakeSetup, LakeSetup]:
    return (
        _lake_made_by_duckdb(tmp_path / "ours", flush=True),
        _lake_made_by_duckdb(tmp_path / "theirs", flush=True),
    )


def _on_twins(spark: Any, ours: LakeSetup, theirs: LakeSetup, script: list[str]) -> Any:
    """:func:`run_on_both` with DuckDB writing files: the Spark engine writes every insert to a file, and DuckDB
    inlines small ones, exactly, until they are flushed, when it writes the doubles Spark wrote."""
    return run_on_both(spark, ours, theirs, script, data_inlining_row_limit=0)


@pytest.fixture
def empty_lakes(tmp_path: Path) -> tuple[LakeSetup, LakeSetup]:
    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    return referee.sqlite_lake(tmp_path / "ours"), referee.sqlite_lake(tmp_path / "theirs")


def test_the_python_reader_reads_what_duckdb_reads(tmp_path: Path) -> None:
    lake = _lake_made_by_duckdb(tmp_path / "lake", flush=True, widest=True)
    con = referee.connect()
    lake.attach(con, "lake")
    theirs = con.sql("SELECT id, h, u FROM lake.w ORDER BY id").fetchall()
    con.close()
    ours = lake.open().read("main.w").sort_by("id")
    assert [str(f.type) for f in ours.schema] == ["int32", "decimal128(38, 0)", "decimal128(38, 0)"]
    as_ints = [(r["id"], *(None if r[c] is None else int(r[c]) for c in ("h", "u"))) for r in ours.to_pylist()]
    assert as_ints == theirs
    # the file holds doubles: 2^64 + 1 and 2^53 + 1 are read as their nearest doubles, as DuckDB reads them
    assert as_ints[0][1] == 2**64 and as_ints[3][1] == 2**53
    assert as_ints[-1][1] == 2**127 - 1  # inlined: exact, 39 digits


@pytest.mark.parametrize("flush", [True, False], ids=["data-files", "inlined-rows"])
def test_spark_selects_what_duckdb_selects(spark: Any, tmp_path: Path, flush: bool) -> None:
    lake = _lake_made_by_duckdb(tmp_path / "lake", flush=flush)
    query = "SELECT id, h, u, h + 1 AS next, h > 10 AS big FROM w ORDER BY id"
    response = run(spark, lake, f"ATTACH 'ducklake' AS dl; USE dl; {query}")
    con = referee.connect()
    lake.attach(con, "lake")
    con.sql("USE lake")
    theirs = con.sql(query).fetchall()
    # the response carries DECIMAL(38, 0) values as JSON numbers or text; DuckDB's are Python ints
    ours = [
        (r["id"], *(None if r[c] is None else int(Decimal(str(r[c]))) for c in ("h", "u", "next")), r["big"])
        for r in selected(response)
    ]
    assert ours == theirs


CHANGES = [
    "INSERT INTO w VALUES (7, 12345678901234567890123, 7)",
    "INSERT INTO w SELECT id + 100, h * 2, u FROM w WHERE id IN (1, 2, 4)",
    "UPDATE w SET u = 42 WHERE id = 2",
    "DELETE FROM w WHERE id = 6",
    "CREATE TABLE copied AS SELECT * FROM w WHERE id < 100",
]


def test_spark_writes_land_as_duckdb_writes_them(spark: Any, lakes: tuple[LakeSetup, LakeSetup]) -> None:
    con = _on_twins(spark, *lakes, CHANGES)
    for table in ("w", "copied"):
        same_table(con, table)
    # what Spark wrote is what DuckDB writes: doubles in the file, no min/max statistics
    files = duck_rows(con, "SELECT data_file FROM ducklake_list_files('ours', 'copied')")
    assert files
    for f in files:
        types = duck_rows(con, f"SELECT name, type FROM parquet_schema('{f['data_file']}') WHERE name IN ('h', 'u')")
        assert {t["type"] for t in types} == {"DOUBLE"}


def test_a_value_spark_cannot_hold_fails_the_statement_and_lands_nothing(spark: Any, tmp_path: Path) -> None:
    lake = _lake_made_by_duckdb(tmp_path / "lake", flush=True, widest=True)
    before = lake_snapshots(lake.open())
    with pytest.raises(StatementError, match=r"(?s)Statement 4 failed: .*170141183460469231731687303715884105727"):
        run(spark, lake, "ATTACH 'ducklake' AS dl; USE dl; INSERT INTO w VALUES (9, 1, 1); SELECT max(h) FROM w")
    assert lake_snapshots(lake.open()) == before


DECLARED = [
    "CREATE TABLE made (id INTEGER, h HUGEINT, u UHUGEINT)",
    "INSERT INTO made VALUES (1, 36893488147419103233, 2), (2, NULL, 4), (3, -5, NULL)",
    "ALTER TABLE made ADD COLUMN extra HUGEINT",
    "ALTER TABLE made ALTER COLUMN id TYPE HUGEINT",
    "UPDATE made SET extra = h * 3 WHERE id = 1",
    "CREATE TABLE totals AS SELECT id, h FROM made WHERE h IS NOT NULL",
]


def test_spark_declares_hugeint_columns_as_duckdb_does(spark: Any, empty_lakes: tuple[LakeSetup, LakeSetup]) -> None:
    con = _on_twins(spark, *empty_lakes, DECLARED)
    for table in ("made", "totals"):
        same_table(con, table)
    assert duck_rows(con, "SELECT typeof(id) AS t FROM ours.made LIMIT 1") == [{"t": "HUGEINT"}]


SUMS = [
    "CREATE TABLE facts (k INTEGER, i INTEGER, b BIGINT, s SMALLINT, flag BOOLEAN, d DECIMAL(10, 2), ub UBIGINT, "
    "h HUGEINT)",
    "INSERT INTO facts VALUES (1, 2147483647, 9223372036854775807, 7, true, 1.50, 18446744073709551615, 3), "
    "(1, 2147483647, 9223372036854775807, 8, false, 2.25, 18446744073709551615, -4), "
    "(2, -5, -3, NULL, true, NULL, 1, NULL)",
    "CREATE TABLE totals AS SELECT k, sum(i) AS si, sum(b) AS sb, sum(s), sum(d) AS sd, count(*) AS n, "
    "sum(ub) AS sub, sum(h) AS sh, sum(flag) AS trues FROM facts GROUP BY k",
    "CREATE TABLE windowed AS SELECT k, sum(i) OVER (PARTITION BY k) AS w, "
    "sum(b) FILTER (WHERE k = 1) OVER () AS f, s + 1 AS next FROM facts",
]


def test_create_table_as_of_integer_sums_makes_hugeint_columns_as_duckdb(
    spark: Any, empty_lakes: tuple[LakeSetup, LakeSetup]
) -> None:
    """DuckDB sums integers into a ``HUGEINT`` (no overflow): the new table's column is one, on Spark too (the sum of
    two maximal ``BIGINT``s needs it); a sum of decimals stays a ``DECIMAL(38, s)``."""
    con = _on_twins(spark, *empty_lakes, SUMS)
    for table in ("totals", "windowed"):
        same_table(con, table)
    assert duck_rows(con, "SELECT typeof(si) AS t, typeof(sd) AS d, typeof(sub) AS u FROM ours.totals LIMIT 1") == [
        {"t": "HUGEINT", "d": "DECIMAL(38,2)", "u": "HUGEINT"}
    ]


PARTITIONED = [
    "CREATE TABLE p (id INTEGER, h HUGEINT, u UHUGEINT)",
    "ALTER TABLE p SET PARTITIONED BY (h, bucket(5, u))",
    # past 2^53 and past 2^64 (the key is the exact value, the file keeps its double), negatives, NULLs
    "INSERT INTO p VALUES (1, 18446744073709551617, 3), (2, -123456789012345678901234567890123, NULL), "
    "(3, NULL, 99999999999999999999999999999999999999), (4, 9007199254740993, 9007199254740993), "
    "(5, 18446744073709551617, 12345678901234567890123)",
    "UPDATE p SET u = u + 1 WHERE id = 1",
]


def test_hugeint_partition_keys_land_as_duckdb_writes_them(
    spark: Any, empty_lakes: tuple[LakeSetup, LakeSetup]
) -> None:
    """A 128-bit key's partition value is its exact decimal text and ``bucket`` hashes that text, as DuckDB does
    (files carry no min/max for these columns, so neither DuckDB nor our reader prunes by them)."""
    con = _on_twins(spark, *empty_lakes, PARTITIONED)
    same_table(con, "p")
    ours, theirs = empty_lakes
    assert file_layout(ours, ours.open(), "main.p") == file_layout(theirs, theirs.open(), "main.p")
    assert "18446744073709551617" in {v for _, values in file_layout(ours, ours.open(), "main.p") for v in values}


def test_the_python_writer_partitions_hugeint_keys_as_duckdb(empty_lakes: tuple[LakeSetup, LakeSetup]) -> None:
    ours, theirs = empty_lakes
    con = referee.connect()
    for name, lake in (("ours", ours), ("theirs", theirs)):
        lake.attach(con, name, DATA_INLINING_ROW_LIMIT=0)
        con.sql(f"CREATE TABLE {name}.p (id INTEGER, h HUGEINT, u UHUGEINT)")
        con.sql(f"ALTER TABLE {name}.p SET PARTITIONED BY (bucket(7, h), u)")
    data = pa.table(
        {
            "id": pa.array([1, 2, 3, 4], pa.int32()),
            "h": pa.array([Decimal(2**100), Decimal(-(2**70)), None, Decimal(7)], pa.decimal128(38, 0)),
            "u": pa.array([Decimal(2**64), Decimal(0), Decimal(5), None], pa.decimal128(38, 0)),
        }
    )
    con.register("incoming", data)
    con.sql("INSERT INTO theirs.p SELECT * FROM incoming")
    with ours.open().transaction() as tx:
        tx.append("main.p", data)
    assert file_layout(ours, ours.open(), "main.p") == file_layout(theirs, theirs.open(), "main.p")
    same_table(con, "p")
