"""Result columns are named as DuckDB names them, on the Spark engine: the keys of a ``SELECT``'s rows and the
columns ``CREATE TABLE ... AS SELECT`` creates, for items without an alias (``count(*)`` is ``count_star()``,
``x / 2`` is ``(x / 2)``), each checked against DuckDB 1.5 running the same statement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from airflow_provider_lakehouse.spark.driver import PlanRunner
from airflow_provider_lakehouse.spark.plan import plan_script
from tests import referee
from tests.integration.test_duckdb_semantics import _spec
from tests.referee import LakeSetup

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ITEMS = [
    "count(*)",
    "count(a)",
    "sum(a)",
    "a + 1",
    "x / 2",
    "a // 2",
    "a % 2",
    "-a",
    "CAST(a AS VARCHAR)",
    "a::BIGINT",
    "'lit'",
    "1",
    "a IS NULL",
    "CASE WHEN a > 0 THEN 'p' ELSE 'n' END",
    "coalesce(s, 'z')",
    "s || 'x'",
    "upper(s)",
    "SUBSTRING(s, 1, 2)",
    's AS "we`ird.name"',
    "round(x, 1)",
    "a BETWEEN 0 AND 2",
    "s LIKE 'q%'",
    "a IN (1, 2)",
    "st.k",
    "l[1]",
    "year(d)",
    "power(x, 2)",
    "x ** 2",
    "list(a)",
    "string_agg(s, ',')",
]
AGGREGATES = ("count(", "sum(", "list(", "string_agg(")


@pytest.fixture(scope="module")
def spark(stackless_spark: Any) -> Any:
    return stackless_spark


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> LakeSetup:
    return referee.sqlite_lake_made_by_duckdb(
        Path(tmp_path_factory.mktemp("names")),
        [
            "CREATE TABLE t (a INTEGER, s VARCHAR, d DATE, x DOUBLE, l INTEGER[], st STRUCT(k INTEGER))",
            "INSERT INTO t VALUES (1, 'q', DATE '2024-01-02', 1.5, [1, 2], {'k': 3}), "
            "(2, 'r', DATE '2023-05-06', -2.0, [4], {'k': 5})",
        ],
    )


def _duckdb_columns(setup: LakeSetup, sql: str) -> list[str]:
    con = referee.connect()
    setup.attach(con, alias="lake")
    con.execute("USE lake")
    try:
        return [column[0] for column in con.execute(sql).description]
    finally:
        con.close()


def _run(spark: Any, setup: LakeSetup, sql: str) -> dict[str, Any]:
    return PlanRunner(spark, _spec(setup)).run(plan_script(f"ATTACH 'ducklake' AS dl; USE dl; {sql}"))


@pytest.mark.parametrize("aggregates", [False, True], ids=["rows", "aggregates"])
def test_select_keys_and_created_columns_are_duckdbs(spark: Any, lake: LakeSetup, aggregates: bool) -> None:
    items = [item for item in ITEMS if item.startswith(AGGREGATES) == aggregates]
    query = f"SELECT a AS id_col, {', '.join(items)} FROM t" + (" GROUP BY ALL" if aggregates else "")
    expected = _duckdb_columns(lake, query)
    assert len(expected) == len(items) + 1
    rows = _run(spark, lake, query)["result"]["commands"][-1]["rows"]
    assert list(rows[0]) == expected

    _run(spark, lake, f"CREATE OR REPLACE TABLE made AS {query}")
    assert _duckdb_columns(lake, "SELECT * FROM made") == expected


def test_a_set_operation_is_named_by_its_first_query(spark: Any, lake: LakeSetup) -> None:
    query = "SELECT a + 1, count(*) FROM t GROUP BY ALL UNION ALL SELECT 7, 8"
    rows = _run(spark, lake, query)["result"]["commands"][-1]["rows"]
    assert list(rows[0]) == _duckdb_columns(lake, query)


def test_a_temp_table_and_a_view_keep_duckdbs_names(spark: Any, lake: LakeSetup) -> None:
    script = (
        "CREATE TEMP TABLE tmp AS SELECT count(*), a // 2 FROM t GROUP BY ALL; "
        'SELECT "count_star()" AS n, "(a // 2)" AS half FROM tmp ORDER BY half; '
        "CREATE OR REPLACE VIEW counted AS SELECT s || 'x', count(*) FROM t GROUP BY ALL"
    )
    rows = _run(spark, lake, script)["result"]["commands"][-2]["rows"]
    assert rows == [{"n": 1, "half": 0}, {"n": 1, "half": 1}]
    assert _duckdb_columns(lake, "SELECT * FROM counted") == _duckdb_columns(
        lake, "SELECT s || 'x', count(*) FROM t GROUP BY ALL"
    )


def test_names_spark_would_parse_as_paths_are_written_and_copied(spark: Any, lake: LakeSetup, tmp_path: Path) -> None:
    """DuckDB calls ``SUBSTRING(s, 1, 2)`` ``main."substring"(s, 1, 2)``: a dot and quotes, which Spark's
    by-name column lookups parse as a path (TPC-DS q79's third column). Tables and files get the name intact."""
    query = 'SELECT SUBSTRING(s, 1, 2), a AS "x`y" FROM t ORDER BY a'
    expected = _duckdb_columns(lake, query)
    assert expected[0].startswith('main."substring"')
    copied = tmp_path / "copied.parquet"
    _run(
        spark,
        lake,
        f"CREATE OR REPLACE TABLE odd AS {query}; INSERT INTO odd {query}; COPY ({query}) TO '{copied}' (FORMAT parquet)",
    )
    assert _duckdb_columns(lake, "SELECT * FROM odd") == expected
    con = referee.connect()
    lake.attach(con, alias="lake")
    assert con.execute("SELECT * FROM lake.odd ORDER BY 2").fetchall() == [("q", 1), ("q", 1), ("r", 2), ("r", 2)]
    copied_file = con.execute(f"SELECT * FROM read_parquet('{copied}')")
    assert [column[0] for column in copied_file.description] == expected
    assert copied_file.fetchall() == [("q", 1), ("r", 2)]

    changed = _run(
        spark,
        lake,
        'DELETE FROM odd WHERE "x`y" = 2; UPDATE odd SET "x`y" = 5 WHERE "x`y" = 1; SELECT * FROM odd ORDER BY 2',
    )
    rows = changed["result"]["commands"][-1]["rows"]
    assert [list(row) for row in rows] == [expected, expected]
    assert [tuple(row.values()) for row in rows] == [("q", 5), ("q", 5)]

    merged = _run(
        spark,
        lake,
        'MERGE INTO odd USING (SELECT 5 AS k UNION ALL SELECT 9) AS src ON odd."x`y" = src.k '
        "WHEN MATCHED THEN UPDATE SET \"x`y\" = 6 WHEN NOT MATCHED THEN INSERT VALUES ('n', src.k); "
        "SELECT * FROM odd ORDER BY 2",
    )
    rows = merged["result"]["commands"][-1]["rows"]
    assert [tuple(row.values()) for row in rows] == [("q", 6), ("q", 6), ("n", 9)]
