"""DuckLake views (``ducklake_view``), refereed by DuckDB 1.5.5: lake SQL reads the views DuckDB creates, on both
engines, as DuckDB reads them (unqualified names in the view's schema, column aliases, views of views, time
travel reaching the view's tables); ``CREATE VIEW`` and ``DROP VIEW`` on Spark write views DuckDB reads, with
DuckDB's snapshot changes; and the statements DuckDB refuses are refused, leaving the lake as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from airflow_provider_lakehouse.duckdb_engine.runner import DuckDBPlanRunner
from airflow_provider_lakehouse.exceptions import StatementError, UnsupportedStatementError
from airflow_provider_lakehouse.jsonsafe import to_json_safe
from airflow_provider_lakehouse.spark.driver import RunOptions
from airflow_provider_lakehouse.spark.plan import plan_script
from tests import referee
from tests.integration.test_spark_sql import run, spec_of
from tests.referee import LakeSetup, lake_snapshots

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DUCKDB_LAKE = [
    "CREATE TABLE lake.orders AS SELECT range AS id, range % 3 AS region, range * 1.5 AS amount FROM range(12)",
    "CREATE SCHEMA lake.sales",
    "CREATE TABLE lake.sales.orders AS SELECT 100 + range AS id, 9 AS region, 2.0 AS amount FROM range(2)",
    "CREATE TABLE lake.sales.regions AS SELECT range AS region, 'r' || range AS label FROM range(3)",
    # catalog-qualified: stored as {DUCKLAKE_CATALOG}.main.orders
    "CREATE VIEW lake.big AS SELECT id, amount FROM lake.main.orders WHERE amount > 6",
    # unqualified, in schema sales: DuckDB reads sales.orders, not main.orders
    "CREATE VIEW lake.sales.local_orders AS SELECT id, region FROM orders",
    # column aliases (fewer than the columns), a join, an aggregate
    "CREATE VIEW lake.sales.totals (region_label, total) AS "
    "SELECT r.label, sum(o.amount), count(*) AS n FROM lake.main.orders o JOIN regions r ON r.region = o.region "
    "GROUP BY r.label",
    # a view of a view, and a CTE
    "CREATE VIEW lake.sales.top AS WITH ranked AS (SELECT *, row_number() OVER (ORDER BY total DESC) AS rn "
    "FROM totals) SELECT region_label, total FROM ranked WHERE rn = 1",
    "CREATE SCHEMA lake.only_views",
    "CREATE VIEW lake.only_views.v AS SELECT 1 AS one",
]
VIEWS = ["main.big", "sales.local_orders", "sales.totals", "sales.top"]


def _duckdb_rows(setup: LakeSetup, sql: str) -> list[dict[str, Any]]:
    con = referee.connect()
    setup.attach(con, alias="lake")
    con.execute("USE lake")
    try:
        return to_json_safe(referee.rows(con, sql))
    finally:
        con.close()


def _latest_changes(setup: LakeSetup) -> list[tuple[str, list[str]]]:
    """The latest snapshot's changes as ``ducklake_snapshots()`` groups them: (kind, names) pairs."""
    query = "SELECT changes FROM ducklake_snapshots('lake') ORDER BY snapshot_id DESC LIMIT 1"
    return [tuple(pair) for pair in _duckdb_rows(setup, query)[0]["changes"]]


def _selected(response: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in response["result"]["commands"] if c["kind"] == "select"][-1]["rows"]


def _duckdb_engine(setup: LakeSetup, sql: str) -> dict[str, Any]:
    return DuckDBPlanRunner(spec_of(setup), RunOptions()).run(plan_script(sql))


@pytest.fixture
def lake_with_views(tmp_path: Path) -> LakeSetup:
    """DuckDB's views on SQLite and local files: reading them depends on no catalog database (the tests that
    write views run on Postgres and S3 too)."""
    setup = referee.sqlite_lake(tmp_path)
    con = referee.connect()
    setup.attach(con, alias="lake")
    for statement in DUCKDB_LAKE:
        con.execute(statement)
    con.close()
    return setup


@pytest.mark.parametrize("view", VIEWS)
def test_views_duckdb_created_read_as_duckdb_reads_them(lake_with_views: LakeSetup, spark: Any, view: str) -> None:
    query = f"SELECT * FROM {view} ORDER BY ALL"
    expected = _duckdb_rows(lake_with_views, query)
    assert expected, "the referee's view is empty: nothing would be compared"
    script = f"ATTACH 'ducklake' AS dl; USE dl; {query}"
    assert _selected(run(spark, lake_with_views, script)) == expected
    assert _selected(_duckdb_engine(lake_with_views, script)) == expected


def test_a_view_read_names_the_view_and_the_tables_it_scanned(lake_with_views: LakeSetup, spark: Any) -> None:
    response = run(spark, lake_with_views, "ATTACH 'ducklake' AS dl; USE dl; SELECT count(*) AS n FROM sales.top")
    scans = [c for c in response["result"]["commands"] if c["kind"] == "select"][-1]["scans"]
    assert [s.get("view") for s in scans if "view" in s] == ["sales.top", "sales.totals"]
    assert sorted(s["table"] for s in scans if "table" in s) == ["main.orders", "sales.regions"]


def test_time_travel_through_a_view_reads_its_tables_at_that_snapshot(lake_with_views: LakeSetup, spark: Any) -> None:
    before = lake_snapshots(lake_with_views.open())[-1]
    con = referee.connect()
    lake_with_views.attach(con, alias="lake")
    con.execute("INSERT INTO lake.main.orders VALUES (50, 0, 99.0)")
    con.close()
    for query in (f"SELECT * FROM big AT (VERSION => {before}) ORDER BY id", "SELECT * FROM big ORDER BY id"):
        expected = _duckdb_rows(lake_with_views, query)
        assert _selected(run(spark, lake_with_views, f"ATTACH 'ducklake' AS dl; USE dl; {query}")) == expected
    assert len(_duckdb_rows(lake_with_views, "SELECT * FROM big")) == 1 + len(
        _duckdb_rows(lake_with_views, f"SELECT * FROM big AT (VERSION => {before})")
    )


SPARK_VIEWS = """
ATTACH 'ducklake' AS dl; USE dl;
CREATE TABLE events (id BIGINT, kind VARCHAR, amount DECIMAL(10, 2));
INSERT INTO events VALUES (1, 'buy', 10.50), (2, 'sell', 3.25), (3, 'buy', 7.00), (4, 'refund', -2.00);
CREATE SCHEMA reports;
CREATE VIEW reports.buys AS SELECT id, amount FROM dl.main.events WHERE kind = 'buy';
CREATE VIEW reports.by_kind (k, total) AS SELECT kind, sum(amount), count(*) AS n FROM dl.events GROUP BY kind;
CREATE VIEW main.big_buys AS SELECT * FROM reports.buys WHERE amount > 8;
CREATE OR REPLACE VIEW main.big_buys AS SELECT id, amount * 2 AS doubled FROM reports.buys WHERE amount > 8;
SELECT * FROM main.big_buys ORDER BY id;
"""


@pytest.mark.parametrize("engine", ["spark", "duckdb"])
def test_views_created_in_a_task_are_read_by_duckdb(setup: LakeSetup, spark: Any, engine: str) -> None:
    def task(sql: str) -> dict[str, Any]:
        return run(spark, setup, sql) if engine == "spark" else _duckdb_engine(setup, sql)

    response = task(SPARK_VIEWS)
    assert _selected(response) == [{"id": 1, "doubled": 21.0}]  # read in the script that created it
    assert len(response["catalog_info"]["snapshots_created"]) == 1  # one snapshot for the whole script
    for view, query in {
        "reports.buys": "SELECT id, amount FROM main.events WHERE kind = 'buy'",
        "reports.by_kind": "SELECT kind AS k, sum(amount) AS total, count(*) AS n FROM main.events GROUP BY kind",
        "main.big_buys": "SELECT id, amount * 2 AS doubled FROM main.events WHERE kind = 'buy' AND amount > 8",
    }.items():
        assert _duckdb_rows(setup, f"SELECT * FROM {view} ORDER BY ALL") == _duckdb_rows(
            setup, f"{query} ORDER BY ALL"
        ), view
    columns = _duckdb_rows(setup, "SELECT column_name FROM (DESCRIBE reports.by_kind)")
    assert [c["column_name"] for c in columns] == ["k", "total", "n"]
    stored = dict(_latest_changes(setup))
    assert sorted(stored["views_created"]) == ["main.big_buys", "reports.buys", "reports.by_kind"]

    task("ATTACH 'ducklake' AS dl; USE dl; DROP VIEW reports.buys")
    with pytest.raises(Exception, match="buys"):
        _duckdb_rows(setup, "SELECT * FROM reports.buys")
    assert [kind for kind, _names in _latest_changes(setup)] == ["views_dropped"]


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("CREATE VIEW big AS SELECT 1 AS one", "View main.big already exists"),
        ("CREATE VIEW orders AS SELECT 1 AS one", "Table main.orders already exists"),
        ("CREATE TABLE big (a INTEGER)", "main.big is a view"),
        ("DROP TABLE big", "main.big is a view, not a table"),
        ("DROP VIEW orders", "main.orders is a table, not a view"),
        ("DROP VIEW nope", "View main.nope does not exist"),
        ("INSERT INTO big VALUES (1, 2)", "main.big is a view"),
        ("DELETE FROM big", "main.big is a view"),
        ("UPDATE big SET amount = 0", "main.big is a view"),
        ("CREATE VIEW v3 (a, b, c) AS SELECT id FROM orders", "More view aliases"),
        ("CREATE VIEW v4 AS SELECT no_such_column FROM orders", "no_such_column"),
        ("DROP SCHEMA sales", "sales"),
        ("DROP SCHEMA only_views", "drop its views first"),
    ],
)
def test_what_duckdb_refuses_is_refused_and_nothing_lands(
    lake_with_views: LakeSetup, spark: Any, statement: str, message: str
) -> None:
    con = referee.connect()
    lake_with_views.attach(con, alias="lake")
    con.execute("USE lake")
    with pytest.raises(Exception):  # noqa: B017 - DuckDB's own error types vary; it must refuse
        con.execute(statement)
    con.close()
    before = lake_snapshots(lake_with_views.open())
    with pytest.raises(StatementError, match=message):
        run(spark, lake_with_views, f"ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE side AS SELECT 1 AS x; {statement}")
    assert lake_snapshots(lake_with_views.open()) == before


def test_drop_view_if_exists_and_create_if_not_exists_as_duckdb(lake_with_views: LakeSetup, spark: Any) -> None:
    response = run(
        spark,
        lake_with_views,
        "ATTACH 'ducklake' AS dl; USE dl; DROP VIEW IF EXISTS nope; CREATE VIEW IF NOT EXISTS big AS SELECT 1 AS one;"
        " SELECT count(*) AS n FROM big",
    )
    statuses = [c.get("status") for c in response["result"]["commands"]]
    assert statuses[2:4] == ["absent", "exists"]
    assert _selected(response) == _duckdb_rows(lake_with_views, "SELECT count(*) AS n FROM big")


def test_a_spark_dialect_script_cannot_create_a_view() -> None:
    with pytest.raises(UnsupportedStatementError, match="DuckDB SQL"):
        plan_script("CREATE VIEW v AS SELECT 1", dialect="spark")
