"""Data Tables in lake SQL: how fast rows cross between a Data Table and a lake (prints a table; not a test).

    python -m tests.benchmarks.bench_datatables [--rows 1000000]

On the local stack (Postgres, SeaweedFS S3, local Spark ``local[2]``), for each engine:

- **read**: ``CREATE TABLE dl.copy AS SELECT * FROM dt.src`` of a ``--rows`` table (id, group, amount, label);
  on Spark twice: read by the driver (``datatable_partition_bytes`` above the table's size) and by the
  executors in page ranges (8 MB ranges);
- **write**: ``CREATE TABLE dt.copy2 AS SELECT * FROM dl.copy`` (Spark: staged by the executors; DuckDB: COPY
  from the task's process).

Wall time of each script (the planner, the catalog commit and, for reads, the lake write included) and rows
written per second (a round trip writes every row twice). One run each; the machine is shared, so compare
engines within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import uuid
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()

    import psycopg

    from airflow_provider_lakehouse.devstack.stack import Stack
    from airflow_provider_lakehouse.duckdb_engine.runner import DuckDBPlanRunner
    from airflow_provider_lakehouse.spark.driver import PlanRunner, RunOptions
    from airflow_provider_lakehouse.spark.plan import plan_script
    from airflow_provider_lakehouse.spark.session import local_session
    from tests import referee
    from tests.integration.test_spark_sql import spec_of

    stack = Stack()
    stack.up(log=lambda _m: None)
    os.environ.update(stack.env())
    datatable = referee.postgres_spec(json.loads(os.environ["AIRFLOW_CONN_DATATABLE_MAIN"]))
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(**datatable.connect_kwargs(), autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(
            f"CREATE TABLE {schema}.src AS SELECT g AS id, g % 100 AS grp, (g * 1.25)::numeric(12, 2) AS amount, "
            f"'label ' || (g % 1000) AS label FROM generate_series(1, {args.rows}) g"
        )
        size = conn.execute(f"SELECT pg_relation_size('{schema}.src')").fetchone()[0]  # type: ignore[index]
    spark = local_session({"spark.master": "local[2]", "spark.sql.shuffle.partitions": "4"})
    runs: list[tuple[str, str, float, int]] = []

    def timed(engine: str, what: str, sql: str, **options: Any) -> None:
        lake = referee.postgres_lake(stack)
        lake.create()
        plan = plan_script(f"ATTACH 'datatable://main:{schema}' AS dt; ATTACH 'ducklake' AS dl; " + sql)
        specs = {"main": datatable}
        started = time.perf_counter()
        if engine == "duckdb":
            response = DuckDBPlanRunner(spec_of(lake), RunOptions(**options), datatables=specs).run(plan)
        else:
            response = PlanRunner(spark, spec_of(lake), RunOptions(**options), datatables=specs).run(plan)
        elapsed = time.perf_counter() - started
        rows = sum(int(c.get("affected_rows") or 0) for c in response["result"]["commands"])
        readers = [r["reader"] for c in response["result"]["commands"] for r in c.get("datatable_reads", [])]
        runs.append((engine, f"{what} {readers[0] if readers else ''}".strip(), elapsed, rows))

    copy_in = "CREATE TABLE dl.copy AS SELECT * FROM dt.src"
    round_trip = copy_in + "; CREATE TABLE dt.copy_{n} AS SELECT * FROM dl.copy"
    timed("spark", "read", copy_in, datatable_partition_bytes=size + 1)
    timed("spark", "read", copy_in, datatable_partition_bytes=8 * 1024 * 1024)
    timed("duckdb", "read", copy_in)
    timed("spark", "read + write", round_trip.format(n=1), datatable_partition_bytes=8 * 1024 * 1024)
    timed("duckdb", "read + write", round_trip.format(n=2))
    spark.stop()
    with psycopg.connect(**datatable.connect_kwargs(), autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")

    print(f"\n{args.rows:,} rows ({size / 1e6:.0f} MB in Postgres); {platform.node()}, {os.cpu_count()} vCPUs\n")
    print("| engine | script | s | rows/s |")
    print("|---|---|---:|---:|")
    for engine, what, elapsed, rows in runs:
        print(f"| {engine} | {what} | {elapsed:.1f} | {rows / elapsed:,.0f} |")


if __name__ == "__main__":
    main()
