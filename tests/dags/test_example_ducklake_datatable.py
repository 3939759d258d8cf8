"""The README's one-query-surface example (a lake and a Data Table in one script) with ``airflow dags test`` on
every engine, OpenLineage's file transport on: both stores end as DuckDB computes them, no credential shows, and
the lineage (Data Table tables by the Postgres naming, lake tables as ``ducklake://``) is the same on Spark and
DuckDB."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest

from airflow_provider_lakehouse.devstack.commands import read_xcoms
from tests import referee
from tests.conftest import run_airflow
from tests.dags.test_example_ducklake import engine_env
from tests.dags.test_lineage_events import complete_events, dataset, edges

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DAG_ID = "example_ducklake_datatable"


def run_example(
    stack: Any, stack_env: dict[str, str], engine: str, events_file: Path
) -> tuple[dict[str, str], Any, str]:
    """Run the example on ``engine`` against a fresh lake and an emptied ``shop`` schema; returns the
    environment, the lake and the command's output."""
    env, setup = engine_env(stack, stack_env, engine)
    env.update(
        AIRFLOW__OPENLINEAGE__DISABLED="false",
        AIRFLOW__OPENLINEAGE__NAMESPACE="lakehouse-tests",
        AIRFLOW__OPENLINEAGE__TRANSPORT=json.dumps({"type": "file", "log_file_path": str(events_file), "append": True}),
    )
    with psycopg.connect(**datatable_spec(env).connect_kwargs(), autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS shop CASCADE")
    result = run_airflow(env, "dags", "test", DAG_ID)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    return env, setup, output


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


def check_no_secret(env: dict[str, str], output: str, events_text: str) -> None:
    secrets = [
        json.loads(env["AIRFLOW_CONN_DUCKLAKE_MAIN"])["password"],
        json.loads(env["AIRFLOW_CONN_DATATABLE_MAIN"])["password"],
        json.loads(env["AIRFLOW_CONN_LAKEHOUSE_S3"])["password"],
    ]
    xcoms = json.dumps(read_xcoms(DAG_ID, env), default=str)
    for secret in secrets:
        assert secret not in output and secret not in xcoms and secret not in events_text


def publish_lineage(events_file: Path, env: dict[str, str]) -> dict[str, Any]:
    """The publish task's inputs, outputs and column lineage from its COMPLETE event (run facets dropped)."""
    events = [json.loads(line) for line in events_file.read_text().splitlines() if line.strip()]
    publish = complete_events(events, DAG_ID)["publish_revenue"]
    spec = datatable_spec(env)
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
def test_the_example_on_a_spark_server(
    engine: str, stack: Any, stack_env: dict[str, str], airflow_db: None, tmp_path: Path
) -> None:
    events_file = tmp_path / "events.jsonl"
    env, setup, output = run_example(stack, stack_env, engine, events_file)
    assert {x["engine"] for x in read_xcoms(DAG_ID, env).values() if isinstance(x, dict) and "engine" in x} == {engine}
    check_both_stores(env, setup)
    check_no_secret(env, output, events_file.read_text())
    publish_lineage(events_file, env)


def test_the_example_gives_the_same_stores_and_lineage_on_spark_and_duckdb(
    stack: Any, stack_env: dict[str, str], airflow_db: None, tmp_path: Path
) -> None:
    seen = {}
    for engine in ("local", "duckdb"):
        events_file = tmp_path / f"events-{engine}.jsonl"
        env, setup, output = run_example(stack, stack_env, engine, events_file)
        published = check_both_stores(env, setup)
        check_no_secret(env, output, events_file.read_text())
        responses = read_xcoms(DAG_ID, env)
        commands = [(c["kind"], c.get("affected_rows")) for c in responses["publish_revenue"]["result"]["commands"]]
        seen[engine] = (published, commands, publish_lineage(events_file, env))
    assert seen["duckdb"] == seen["local"]
