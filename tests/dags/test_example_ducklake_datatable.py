"""The README's one-query-surface example (a lake and a Data Table in one script) with ``airflow dags test`` on
both Spark servers and DuckDB, OpenLineage's file transport on: both stores end as DuckDB computes them, no credential shows, and
the lineage (Data Table tables by the Postgres naming, lake tables as ``ducklake://``) is the same on Spark and
DuckDB."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest

from tests import referee
from tests.dags.runs import DagTestRun, DagTestRuns, assert_clean_engine_output, assert_no_secret_shown
from tests.dags.test_lineage_events import complete_events, dataset, edges

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DAG_ID = "example_ducklake_datatable"


def run_example(dag_runs: DagTestRuns, engine: str) -> DagTestRun:
    """The example's run on ``engine``, against a fresh lake and an emptied ``shop`` schema."""

    def empty_shop(env: dict[str, str]) -> None:
        with psycopg.connect(**datatable_spec(env).connect_kwargs(), autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS shop CASCADE")

    return dag_runs.get(DAG_ID, engine, prepare=empty_shop)


def datatable_spec(env: dict[str, str]) -> Any:
    return referee.postgres_spec(json.loads(env["AIRFLOW_CONN_DATATABLE_MAIN"]))


def check_both_stores(env: dict[str, str], setup: Any) -> list[tuple[Any, ...]]:
    """DuckDB (its own postgres and ducklake extensions) computes the revenue from the two stores; the Data Table
    and the lake's audit table must hold exactly that."""
    con = referee.connect()
    setup.attach(con, "dl")
    conninfo = referee.postgres_conninfo(datatable_spec(env))
    con.execute(f"ATTACH {referee.sql_literal(conninfo)} AS dt (TYPE postgres, READ_ONLY)")
    expected = con.execute(
        "SELECT o.day, c.tier, count(*) AS orders, sum(o.amount) AS revenue FROM dl.shop.orders o "
        "JOIN dt.shop.customers c ON c.id = o.customer_id GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    published = con.execute("SELECT * FROM dt.shop.revenue_by_tier ORDER BY ALL").fetchall()
    audit = con.execute("SELECT * FROM dl.shop.published ORDER BY ALL").fetchall()
    con.close()
    assert [r[1] for r in expected] == ["gold", "silver"] and published == expected
    assert audit == [(day, tier, revenue) for day, tier, _orders, revenue in expected]
    return published


def publish_lineage(run: DagTestRun) -> dict[str, Any]:
    """The publish task's inputs, outputs and column lineage from its COMPLETE event (run facets dropped)."""
    publish = complete_events(run.events(), DAG_ID)["publish_revenue"]
    spec = datatable_spec(run.env)
    postgres = f"postgres://{spec.host}:{spec.port}"
    customers = dataset(publish["inputs"], postgres, f"{spec.dbname}.shop.customers")
    dataset(publish["inputs"], "ducklake://main", "shop.orders")
    revenue = dataset(publish["outputs"], postgres, f"{spec.dbname}.shop.revenue_by_tier")
    assert edges(revenue["facets"]["columnLineage"], "tier") == {
        (postgres, f"{spec.dbname}.shop.customers", "tier", "DIRECT", "IDENTITY")
    }
    assert ("ducklake://main", "shop.orders", "amount", "DIRECT", "AGGREGATION") in edges(
        revenue["facets"]["columnLineage"], "revenue"
    )
    assert [f["name"] for f in customers["facets"]["schema"]["fields"]] == ["id", "name", "tier"]
    return {
        side: sorted(
            (d["namespace"], d["name"], json.dumps(d.get("facets", {}).get("columnLineage"), sort_keys=True))
            for d in publish[side]
        )
        for side in ("inputs", "outputs")
    }


@pytest.mark.parametrize("engine", ["spark_connect", "spark_submit"])
def test_the_example_on_a_spark_server(engine: str, dag_runs: DagTestRuns) -> None:
    """On the stack's Spark servers: both stores as DuckDB computes them, clean engine output (the sentiment example's
    checks, made here for the servers), no credential shown, the lineage of the publishing task."""
    run = run_example(dag_runs, engine)
    assert_clean_engine_output(run)
    check_both_stores(run.env, run.setup)
    assert_no_secret_shown(run)
    publish_lineage(run)


def published_to_the_lake(setup: Any) -> list[tuple[Any, ...]]:
    """The run's own lake audit table: what its publishing task wrote to the Data Table, as the lake recorded it."""
    con = referee.connect()
    setup.attach(con, "dl")
    rows = con.execute("SELECT * FROM dl.shop.published ORDER BY ALL").fetchall()
    con.close()
    return rows


def test_the_example_gives_the_same_stores_and_lineage_on_spark_and_duckdb(dag_runs: DagTestRuns) -> None:
    """The Spark side is the run on the stack's Spark Connect server (made once for the test above too). Each run
    has a lake of its own but all share the Data Table's ``shop`` schema, so the runs are compared by their lake's
    audit table, their commands and their lineage; the DuckDB run, the last to write the Data Table, is checked
    against it."""
    seen = {}
    for engine in ("spark_connect", "duckdb"):
        run = run_example(dag_runs, engine)
        assert_no_secret_shown(run)
        commands = [(c["kind"], c.get("affected_rows")) for c in run.xcoms["publish_revenue"]["result"]["commands"]]
        seen[engine] = (published_to_the_lake(run.setup), commands, publish_lineage(run))
    published = check_both_stores(run.env, run.setup)
    assert seen["duckdb"][0] == [(day, tier, revenue) for day, tier, _orders, revenue in published]
    assert seen["duckdb"] == seen["spark_connect"]
