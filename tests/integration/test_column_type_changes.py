"""Columns whose type was changed (``ALTER TABLE … ALTER COLUMN … TYPE``): their older data files and inlined rows
keep the old type, and every reader casts them to the new one as DuckDB does. DuckDB 1.5 is the referee: it makes
the lakes, and reads them next to what the Spark engine reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import referee
from tests.integration.test_spark_sql import duck_rows, run, selected

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: column, old type, new type, a value of the old type (chosen where a wrong cast shows)
CHANGES = [
    ("unsigned_to_double", "UINTEGER", "DOUBLE", "4000000000 - i"),  # Spark's reader gave -294967296
    ("decimal_to_double", "DECIMAL(4,1)", "DOUBLE", "12.5"),  # Spark's reader gave 125.0
    ("decimal_to_float", "DECIMAL(18,3)", "FLOAT", "1234567.125 + i"),
    ("bigint_to_float", "BIGINT", "FLOAT", "5000000001 + i"),  # no exact float: rounded, as DuckDB rounds
    ("smallint_to_float", "SMALLINT", "FLOAT", "(i - 150)::SMALLINT"),
    ("int_to_decimal", "INTEGER", "DECIMAL(15,2)", "i * 1000"),
    ("tinyint_to_decimal", "TINYINT", "DECIMAL(4,1)", "(i % 100)::TINYINT"),
    ("utinyint_to_uint", "UTINYINT", "UINTEGER", "(i % 250)::UTINYINT"),
    ("int_to_bigint", "INTEGER", "BIGINT", "2000000000 + i::INTEGER"),
    ("float_to_double", "FLOAT", "DOUBLE", "0.1::FLOAT"),
    ("date_to_timestamp", "DATE", "TIMESTAMP", "DATE '2020-01-01' + i::INTEGER"),
    ("date_to_timestamptz", "DATE", "TIMESTAMPTZ", "DATE '2020-01-01' + i::INTEGER"),
    ("seconds_to_timestamp", "TIMESTAMP_S", "TIMESTAMP", "TIMESTAMP '2021-03-04 05:06:07'"),
    ("list_widened", "INTEGER[]", "BIGINT[]", "[i::INTEGER, NULL]"),
    ("struct_widened", "STRUCT(a INTEGER, b VARCHAR)", "STRUCT(a BIGINT, b VARCHAR)", "{'a': i::INTEGER, 'b': 'x'}"),
]
#: DuckDB 1.5.5 itself fails an insert after a BOOLEAN column with inlined rows became an integer ("Could not
#: convert string 'true' to INT8"): that change is read from data files only
FILES_ONLY = [("boolean_to_int", "BOOLEAN", "INTEGER", "i % 3 = 0")]


def lake_with_changed_types(tmp_path: Path, rows: int, changes: list[tuple[str, str, str, str]]) -> referee.LakeSetup:
    """A DuckDB lake with table ``t``: ``rows`` rows of the old types (in a data file from 11 rows on, inlined in
    the catalog below), every column changed to its new type, then one row more in the new types."""
    columns = ", ".join(f"{name} {old}" for name, old, _new, _value in changes)
    values = ", ".join(value for _name, _old, _new, value in changes)
    script = [
        f"CREATE TABLE t (id INTEGER, {columns})",
        f"INSERT INTO t SELECT i::INTEGER, {values} FROM range({rows}) r(i)",
        "INSERT INTO t (id) VALUES (-1)",
        *(f"ALTER TABLE t ALTER COLUMN {name} TYPE {new}" for name, _old, new, _value in changes),
        f"INSERT INTO t SELECT 1000, {values} FROM range(7, 8) r(i)",
    ]
    return referee.sqlite_lake_made_by_duckdb(tmp_path, script)


@pytest.mark.parametrize(
    ("rows", "changes"), [(300, CHANGES + FILES_ONLY), (3, CHANGES)], ids=["data-files", "inlined-rows"]
)
def test_columns_of_a_changed_type_read_as_duckdb_reads_them(
    stackless_spark: Any, tmp_path: Path, rows: int, changes: list[tuple[str, str, str, str]]
) -> None:
    lake = lake_with_changed_types(tmp_path, rows, changes)
    con = referee.connect()
    lake.attach(con)
    queries = [
        "SELECT * FROM t ORDER BY id",
        # filters on the changed columns: their file statistics are still in the old type's spelling
        "SELECT id FROM t WHERE date_to_timestamp >= TIMESTAMP '2020-01-05 00:00:00' ORDER BY id",
        "SELECT id FROM t WHERE int_to_bigint > 2000000001 ORDER BY id",
        "SELECT count(*) AS n, sum(unsigned_to_double) AS s, min(bigint_to_float) AS m FROM t",
    ]
    for query in queries:
        ours = selected(run(stackless_spark, lake, f"ATTACH 'ducklake' AS dl; USE dl; {query}"))
        theirs = duck_rows(con, query.replace("FROM t", "FROM lake.t"))
        assert ours == theirs, query
