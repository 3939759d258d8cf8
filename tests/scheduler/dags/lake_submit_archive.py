"""Test DAG for the real-scheduler class-archive test: two spark-submit lake tasks with no upstream, so the
scheduler starts them at once on a machine without a class-data archive; each driver JVM may write one."""

from __future__ import annotations

import pendulum
from airflow.sdk import dag

from airflow_provider_lakehouse.operators.ducklake import DucklakeOperator

TASKS = 2  # two drivers race for the archive; each is a JVM on a 2-core machine


@dag(
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_tasks=TASKS,
    default_args={"retries": 1},
)
def lake_submit_archive() -> None:
    for task in range(TASKS):
        DucklakeOperator(
            task_id=f"write_{task}",
            sql=f"CREATE TABLE submit_{task} AS SELECT {task} AS task, range AS i FROM range(1000)",
        )


lake_submit_archive()
