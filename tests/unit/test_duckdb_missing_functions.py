"""Which calls of a DuckDB-dialect statement DuckDB 1.5 fails as functions it does not have. The expected error
is DuckDB's own, asked at test time by running the statement in DuckDB; the statements without a missing function
are DuckDB keywords, names, table functions, types and DuckDB's own spellings that are followed by ``(``."""

from __future__ import annotations

import duckdb
import pytest
import sqlglot

from airflow_provider_lakehouse.sql.duckdb_missing_functions import missing_function_error

#: statements whose ``name(`` is no missing function: keywords, names, table functions, types, DuckDB spellings
NO_MISSING_FUNCTION = [
    "INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET v = excluded.v",
    "INSERT INTO t (a, b) VALUES (1, 2)",
    "ALTER TABLE t SET PARTITIONED BY (year(ts), bucket(4, id))",
    "COPY t TO 'x.parquet' (FORMAT PARQUET, COMPRESSION zstd)",
    "SELECT * EXCLUDE (a) FROM t",
    "SELECT * REPLACE (a + 1 AS a) FROM t",
    "SELECT * RENAME (a AS b) FROM t",
    "SELECT DISTINCT ON (a) a FROM t GROUP BY GROUPING SETS ((a), ())",
    "CREATE TABLE t (a INTEGER PRIMARY KEY, b STRUCT(x INT), c MAP(VARCHAR, INT), d DECIMAL(3, 1), CHECK (a > 0))",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
    "SELECT * FROM ducklake_snapshots('dl')",
    "SELECT * FROM range(3) r(x), read_parquet('a.parquet')",
    "SELECT x::DECIMAL(3, 1), CAST(x AS VARCHAR(3)), CAST(x AS STRUCT(a INT)) FROM t",
    "SELECT ifnull(a, 1), if(a > 1, 1, 2), percentile_cont(0.5) WITHIN GROUP (ORDER BY a) FROM t",
    "SELECT list_transform([1], x -> x + 1), struct_pack(a := 1), current_date, now() FROM t",
    "MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, a) VALUES (s.id, s.a)",
    "CREATE VIEW v (x, y) AS SELECT 1, 2",
    "UPDATE t SET a = b FROM u(b) WHERE t.id = u.b",
]

#: statements calling a function DuckDB does not have, and its name
MISSING = {
    "SELECT initcap(s) FROM t": "initcap",
    'SELECT "initcap"(s) FROM t': "initcap",
    "UPDATE t SET a = nvl(a, 1)": "nvl",
    "SELECT a FROM t WHERE rand() > 0.5": "rand",
    "CREATE TABLE u AS SELECT date_format(d, '%Y') AS y FROM t": "date_format",
    "INSERT INTO u SELECT collect_list(a) FROM t": "collect_list",
    "SELECT struct(a) FROM t": "struct",
    "SELECT current_timestamp() FROM t": "current_timestamp",
    "SELECT sum(size(l)) OVER () FROM t": "size",
}


def duckdbs_error(sql: str) -> str:
    """The first line of the error DuckDB fails ``sql`` with, over tables ``t`` and ``u`` of the columns it uses."""
    con = duckdb.connect(config={"autoinstall_known_extensions": False})
    con.sql("CREATE TABLE t (id INTEGER, a INTEGER, s VARCHAR, d DATE, l INTEGER[])")
    con.sql("CREATE TABLE u (x INTEGER[])")
    with pytest.raises(duckdb.CatalogException) as failure:
        con.sql(sql.replace("CREATE TABLE u", "CREATE TABLE v"))
    return str(failure.value).splitlines()[0]


@pytest.mark.parametrize("sql", NO_MISSING_FUNCTION)
def test_keywords_names_and_duckdb_spellings_are_no_missing_function(sql: str) -> None:
    assert missing_function_error(sql, sqlglot.parse_one(sql, read="duckdb")) is None


@pytest.mark.parametrize("sql", MISSING)
def test_a_function_duckdb_does_not_have_gets_duckdbs_error(sql: str) -> None:
    expected = duckdbs_error(sql)
    assert f"name {MISSING[sql]} does not exist" in expected
    assert missing_function_error(sql, sqlglot.parse_one(sql, read="duckdb")) == expected
