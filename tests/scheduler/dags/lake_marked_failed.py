"""Test DAG for the real-scheduler test: a lake task whose last statement would run for hours on Spark. The test
marks it failed while that statement runs; Airflow then SIGTERMs the task, whose ``on_kill`` must stop the
statement on the shared Spark Connect server (which otherwise runs it to its end) and commit nothing."""

from __future__ import annotations

import os

import pendulum
from airflow.sdk import dag

from airflow_provider_lakehouse.operators.ducklake import DucklakeOperator


@dag(schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False)
def lake_marked_failed() -> None:
    DucklakeOperator(
        task_id="runs_for_hours",
        sql="CREATE TABLE marked_rows (i INTEGER); INSERT INTO marked_rows SELECT i FROM range(10) r(i); "
        "SELECT count(*) AS n FROM range(CAST(4000000000 AS BIGINT)) a, range(10000) b",
        spark_conn_id=os.environ.get("LAKE_SCHEDULER_SPARK_CONN_ID") or None,  # the shared server, if one is named
    )


lake_marked_failed()
