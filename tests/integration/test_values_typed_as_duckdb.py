"""Values of mixed kinds computed on Spark land as DuckDB 1.5 stores them; the same script run by DuckDB on a second
lake is the referee, and DuckDB reads both lakes.

- ``INSERT ... VALUES``: DuckDB casts each value to its column's type on its own, where Spark's inline table wants
  one type per column (it refused ``('2'), (1)`` and turned ``(1), (2.5)`` into ``'1.0'`` in a ``VARCHAR`` column).
- A query's ``VALUES`` are typed by their first row; struct literals keep their type (Spark's parser took ``VALUES
  (STRUCT(1 AS a))`` for a row of one integer).
- ``TIME`` literals and casts: Spark has no time type, and they were sqlglot's ``CAST(... AS TIMESTAMP)``, today's
  date at that time, stored as a ``TIMESTAMP WITH TIME ZONE``.
- Set operations: text united with numbers, booleans, dates or timestamps is text (Spark cast the text to the other
  type), booleans united with integers are integers (Spark refused the pair).
"""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_lakehouse.exceptions import StatementError
from tests import referee
from tests.integration.test_spark_sql import duck_rows, run, selected
from tests.integration.test_spark_values_as_duckdb import run_on_both, same_table
from tests.referee import LakeSetup, lake_snapshots

pytestmark = [pytest.mark.integration, pytest.mark.slow]


MIXED = {
    "text_and_dates": [
        "CREATE TABLE t (d DATE, s VARCHAR, ts TIMESTAMP)",
        "INSERT INTO t VALUES ('2020-01-01', DATE '2020-01-01', DATE '2020-01-01'), "
        "(DATE '2021-02-03', 'x', '2021-01-01 10:00:00'), (NULL, NULL, NULL)",
    ],
    "text_and_numbers": [
        "CREATE TABLE t (i INTEGER, s VARCHAR, d DOUBLE, x DECIMAL(6, 2))",
        "INSERT INTO t VALUES ('2', 1, '1e3', '1.005'), (2.5, 2.50, 2, 1.005), (2.5::DOUBLE, 1e3, 2.5, 1.005::DOUBLE), "
        "(3.5::DOUBLE, 2.5::DOUBLE, 0.1::FLOAT, 7)",
    ],
    "booleans_and_times": [
        "CREATE TABLE t (b BOOLEAN, tm TIME, tz TIMESTAMPTZ)",
        "INSERT INTO t VALUES ('true', '10:00:00', '2021-01-01 10:00:00+02'), "
        "(false, TIME '11:00:00', TIMESTAMP '2020-01-01 00:00:00'), (1, NULL, NULL)",
    ],
    "named_columns_out_of_order": [
        "CREATE TABLE t (s VARCHAR, i INTEGER, extra INTEGER DEFAULT 7)",
        "INSERT INTO t (i, s) VALUES (1, 2.50), ('3', 1e3), (2.5::DOUBLE, DATE '2020-01-01'), (3.5::DOUBLE, true)",
    ],
    "lists_structs_maps": [
        "CREATE TABLE t (l INTEGER[], s STRUCT(a INTEGER, b VARCHAR), m MAP(VARCHAR, INTEGER), txt VARCHAR)",
        "INSERT INTO t VALUES ([1, 2], {'a': 1, 'b': 'x'}, MAP {'a': 1}, [1, 2]), "
        "('[3, 4]', {'a': '2', 'b': 3}, MAP {'b': 2.5}, []), ([], NULL, NULL, 'x'), ([2.5], NULL, NULL, NULL)",
    ],
    "uuids_and_blobs": [
        "CREATE TABLE t (u UUID, b BLOB)",
        "INSERT INTO t VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'abc'), "
        "('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12'::UUID, '\\xAA'::BLOB), (NULL, NULL)",
    ],
    "partitioned_by_a_mixed_column": [
        "CREATE TABLE t (k INTEGER, v VARCHAR)",
        "ALTER TABLE t SET PARTITIONED BY (k)",
        "INSERT INTO t VALUES ('1', 1), (1, 'a'), (2.5, DATE '2020-01-01'), ('3', 2.50)",
    ],
    "one_struct_column": [
        "CREATE TABLE t (s STRUCT(a DOUBLE))",
        "INSERT INTO t VALUES ({'a': 1}), ({'a': 2.5})",
        "INSERT INTO t VALUES ({'a': 4})",
    ],
    # not an INSERT: a query's VALUES, typed by their first row; text after it takes the column's type
    "text_after_typed_values_in_a_query": [
        "CREATE TABLE t AS SELECT * FROM (VALUES (DATE '2021-02-03', 1, true, 1.5, -5), "
        "('2020-01-01', '2', 'false', '2.25', '7'), (NULL, NULL, NULL, NULL, 3000000000)) v(d, i, b, x, n)"
    ],
    "text_after_timestamps_in_a_merge_source": [
        "CREATE TABLE t (id INTEGER, seen TIMESTAMP)",
        "INSERT INTO t VALUES (1, NULL)",
        "MERGE INTO t USING (SELECT * FROM (VALUES (1, TIMESTAMP '2020-01-01 10:00:00'), (2, '2021-06-01 12:30:00')) "
        "s(id, seen)) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET seen = s.seen WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.seen)",
    ],
    # the struct literals of a query's VALUES keep their type too
    "struct_values_in_a_query": ["CREATE TABLE t AS SELECT * FROM (VALUES ({'a': 1}), ({'a': 2.5})) v(x)"],
    "nested_struct_values_in_a_query": [
        "CREATE TABLE t AS SELECT * FROM (VALUES ({'a': 1, 'b': [{'c': 'x'}]}), ({'a': 2, 'b': []})) v(x)"
    ],
}

#: TIME values computed on Spark (which has no time type; lake TIME columns are text there)
TIMES = {
    "literals_and_casts_in_create_table_as": [
        "CREATE TABLE t AS SELECT 1 AS id, TIME '10:00:00' AS a, CAST('11:00:00.5' AS TIME) AS b, "
        "TRY_CAST('x' AS TIME) AS c, CAST(' 7:05:03 ' AS TIME) AS d, "
        "CAST(TIMESTAMP '2020-01-01 23:59:59.123456' AS TIME) AS e, '10:00:00.250'::TIME AS f"
    ],
    "inserted_compared_and_deleted": [
        "CREATE TABLE t (id INTEGER, tm TIME)",
        "INSERT INTO t VALUES (1, TIME '10:00:00'), (2, '11:30:00.5'), (3, NULL)",
        "INSERT INTO t SELECT 4, CAST('12:00' AS TIME)",
        "INSERT INTO t SELECT id + 10, tm FROM t WHERE tm > TIME '10:30:00'",
        "DELETE FROM t WHERE tm = TIME '10:00:00'",
    ],
    "updated_and_merged": [
        "CREATE TABLE t (id INTEGER, tm TIME)",
        "INSERT INTO t VALUES (1, TIME '10:00:00.123456'), (2, TIME '23:59:59')",
        "UPDATE t SET tm = CAST(TIMESTAMP '2020-01-01 08:15:00' AS TIME) WHERE id = 1",
        "MERGE INTO t USING (SELECT 1 AS id, TIME '09:00:00' AS tm UNION ALL SELECT 5, TIME '08:00:00.25') s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET tm = s.tm WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.tm)",
        "INSERT INTO t SELECT 3, max(tm) FROM t",
    ],
    "comparisons_stored": [
        "CREATE TABLE t (id INTEGER, tm TIME)",
        "INSERT INTO t VALUES (1, TIME '10:00:00'), (2, TIME '10:00:00.5'), (3, NULL)",
        "CREATE OR REPLACE TABLE t AS SELECT id, tm, tm = TIME '10:00:00.5' AS eq, tm < TIME '10:00:00.2' AS lt, "
        "TIME '10:00:00' > TIME '09:59:59' AS gt, TIME '06:30:00' AS fixed, CAST(tm AS TIME) AS same FROM t",
    ],
}

#: set operations: text united with other scalars is text, booleans united with integers integers
SET_OPERATIONS = {
    "literals": [
        "CREATE TABLE t AS SELECT 1 AS i, DATE '2020-01-01' AS d, true AS b, 1.5 AS x, 1e10::DOUBLE AS f, "
        "TIMESTAMP '2020-01-01 10:00:00.5' AS ts, TIMESTAMPTZ '2020-01-01 10:00:00+02' AS tz "
        "UNION ALL SELECT '2', '2020-01-02', 'false', 'b', 'y', 'z', 'w'"
    ],
    "text_first": ["CREATE TABLE t AS SELECT 'a' AS x, 7 AS n UNION ALL SELECT 1, 8 UNION ALL SELECT 2.5, 9"],
    "columns_of_tables": [
        "CREATE TABLE src (d DATE, s VARCHAR, n INTEGER, flag BOOLEAN)",
        "INSERT INTO src VALUES (DATE '2020-01-01', 'x', 1, true), (NULL, NULL, NULL, NULL)",
        "CREATE TABLE t AS SELECT d AS a, n AS b, flag AS c FROM src UNION ALL SELECT s, s, n FROM src",
    ],
    "insert_into_text": [
        "CREATE TABLE t (s VARCHAR)",
        "INSERT INTO t VALUES ('a')",
        "INSERT INTO t SELECT 5 UNION ALL SELECT s FROM t",
    ],
    "intersect_and_except": [
        "CREATE TABLE t AS SELECT * FROM (SELECT 1 AS x INTERSECT SELECT '1') "
        "UNION ALL SELECT * FROM (SELECT 2 AS x EXCEPT SELECT '3')"
    ],
    "booleans_with_integers": [
        "CREATE TABLE t AS SELECT 1::BIGINT AS x, true AS y UNION ALL SELECT false, false UNION ALL SELECT 7, true"
    ],
}


#: defaults DuckDB casts into their column's type at each insert (and for the rows written before the column)
DEFAULTS = {
    "defaults_rounded_into_their_type": [
        "CREATE TABLE t (id INTEGER, d DATE DEFAULT DATE '2020-01-02', b BOOLEAN DEFAULT true, "
        "x DECIMAL(4, 1) DEFAULT 1.25)",
        "INSERT INTO t (id) VALUES (1)",
        "ALTER TABLE t ADD COLUMN n INTEGER DEFAULT 2.5",
        "ALTER TABLE t ADD COLUMN y DECIMAL(4, 1) DEFAULT 1.25",
        "INSERT INTO t (id) VALUES (2)",
    ],
}

SCRIPTS = {**MIXED, **TIMES, **SET_OPERATIONS, **DEFAULTS}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_values_computed_on_spark_have_duckdbs_types(spark: Any, lakes: tuple[LakeSetup, LakeSetup], name: str) -> None:
    ours, theirs = lakes
    con = run_on_both(spark, ours, theirs, SCRIPTS[name])
    same_table(con, "t")


def test_a_value_that_does_not_fit_fails_the_insert_and_leaves_nothing(
    spark: Any, lakes: tuple[LakeSetup, LakeSetup]
) -> None:
    """DuckDB refuses ``'x'`` for an INTEGER column (``Could not convert string 'x' to INT32``): so does the task,
    naming the column, with no snapshot and no data file of the insert."""
    ours, theirs = lakes
    run(spark, ours, "ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE t (i INTEGER, s VARCHAR)")
    snapshots = lake_snapshots(ours.open())
    con = referee.connect()
    theirs.attach(con, "theirs")
    con.sql("CREATE TABLE theirs.t (i INTEGER, s VARCHAR)")
    with pytest.raises(Exception, match="Could not convert string 'x' to INT32"):
        con.sql("INSERT INTO theirs.t VALUES (1, 'a'), ('x', 2)")
    with pytest.raises(StatementError) as failure:
        run(spark, ours, "ATTACH 'ducklake' AS dl; USE dl; INSERT INTO t VALUES (1, 'a'), ('x', 2)")
    assert "Column 'i'" in str(failure.value) and "'x'" in str(failure.value)
    assert lake_snapshots(ours.open()) == snapshots
    assert not [uri for uri in ours.file_uris() if uri.endswith(".parquet")]


@pytest.mark.parametrize(
    "values", ["('2'), (1)", "('2020-01-01'), (DATE '2021-01-01')", "(NULL), ('x'), (true)", "('a'), (2.5)"]
)
def test_typed_values_after_text_fail_as_in_duckdb(spark: Any, lakes: tuple[LakeSetup, LakeSetup], values: str) -> None:
    """DuckDB types a query's VALUES column by its first value: text, with which no later number, boolean or date
    combines. Spark made the column of the later type; the statement now fails with DuckDB's message."""
    query = f"CREATE TABLE t AS SELECT * FROM (VALUES {values}) v(x)"
    fails_on_both(spark, lakes, query, duckdb_error="Cannot combine types VARCHAR and", ours="Cannot combine types")


def test_a_select_returns_duckdbs_times(spark: Any, lakes: tuple[LakeSetup, LakeSetup]) -> None:
    """The rows a SELECT returns (the task's XCom): DuckDB's times, not timestamps of the day the task ran."""
    ours, _theirs = lakes
    query = (
        "SELECT TIME '10:00:00' AS a, CAST('23:59:59.999999' AS TIME) AS b, "
        "CAST(TIMESTAMP '2020-01-01 00:00:01.5' AS TIME) AS c, TRY_CAST('soon' AS TIME) AS d"
    )
    ours_rows = selected(run(spark, ours, f"ATTACH 'ducklake' AS dl; USE dl; {query}"))
    assert ours_rows == duck_rows(referee.connect(), query)


@pytest.mark.parametrize(
    "statement",
    [
        "ALTER TABLE keep ADD COLUMN a UINTEGER DEFAULT -344",
        "ALTER TABLE keep ADD COLUMN b TINYINT DEFAULT 300",
        "ALTER TABLE keep ADD COLUMN c DATE DEFAULT 'x'",
        "CREATE TABLE t (a TINYINT DEFAULT 300)",
    ],
)
def test_a_default_its_type_cannot_hold_fails_as_in_duckdb(
    spark: Any, lakes: tuple[LakeSetup, LakeSetup], statement: str
) -> None:
    """DuckDB refuses such a default when the table is created or altered (``Failed to cast value``); Spark stored
    it, and only an insert that used it failed."""
    fails_on_both(spark, lakes, statement, duckdb_error="Failed to cast value", ours="does not fit")


def fails_on_both(spark: Any, lakes: tuple[LakeSetup, LakeSetup], statement: str, duckdb_error: str, ours: str) -> None:
    """``statement``, after ``CREATE TABLE keep (i INTEGER)``, fails in DuckDB (``duckdb_error``) and on Spark
    (``ours``), where the script commits nothing: not even the table before it."""
    our_lake, their_lake = lakes
    con = referee.connect()
    their_lake.attach(con, "theirs")
    con.sql("USE theirs; CREATE TABLE keep (i INTEGER)")
    with pytest.raises(Exception, match=duckdb_error):
        con.sql(statement)
    with pytest.raises(StatementError, match=ours):
        run(spark, our_lake, f"ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE keep (i INTEGER); {statement}")
    assert lake_snapshots(our_lake.open()) == [0]
