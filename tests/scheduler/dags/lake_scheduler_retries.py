"""Test DAG for the real-scheduler test: 16 mapped inserts into one partitioned lake table at once, some failing
after their commit on the first try; one task killed after its commit, one killed in the middle of its script. Airflow retries
them all; the table must end with every row exactly once.

With ``LAKE_SCHEDULER_DATATABLE=SCHEMA`` every task also writes its rows to table ``sched_rows`` of Data Table
``main:SCHEMA`` in the same script, so both stores must end with every row exactly once."""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import dag

from airflow_provider_lakehouse.operators.ducklake import DucklakeOperator

MAPPED = 16
#: rows of the first try's slow statement (times 1000): long enough to be killed mid-script on either engine (Spark
#: counts 4e10 in about 25 s on 2 cores, DuckDB 4e11 in about 30 s; 4e9 had ended on a faster machine before the kill)
SPIN = int(os.environ.get("LAKE_SCHEDULER_SPIN", "40000000"))
DATATABLE_SCHEMA = os.environ.get("LAKE_SCHEDULER_DATATABLE", "")
#: the Spark connection every task names (``spark_conn_id``) instead of the lake's own Spark
SPARK_CONN_ID = os.environ.get("LAKE_SCHEDULER_SPARK_CONN_ID") or None


def both_stores(lake_sql: str, datatable_sql: str) -> str:
    """``lake_sql``, and with a Data Table configured, ``datatable_sql`` after it in the same script."""
    if not DATATABLE_SCHEMA:
        return lake_sql
    return f"ATTACH 'datatable://main:{DATATABLE_SCHEMA}' AS dt; {lake_sql}; {datatable_sql}"


class FailsAfterCommit(DucklakeOperator):
    """As if the worker died right after the commit: the first try of every fifth map index raises then."""

    def execute(self, context: Any) -> Any:
        response = super().execute(context)
        ti = context["ti"]
        if ti.try_number == 1 and ti.map_index % 5 == 0:
            raise RuntimeError(f"injected failure after the commit (map index {ti.map_index})")
        return response


class KilledAfterCommit(DucklakeOperator):
    """Commits, then waits on its first try to be killed (SIGKILL) by the test."""

    def execute(self, context: Any) -> Any:
        response = super().execute(context)
        if context["ti"].try_number == 1:
            Path(os.environ["LAKE_SCHEDULER_MARKERS"], "after_commit.pid").write_text(str(os.getpid()))
            time.sleep(900)
        return response


class KilledMidScript(DucklakeOperator):
    """Announces itself on its first try, then runs a script whose second statement is slow there: the test
    kills it after the first statement has written its files, before the commit."""

    def execute(self, context: Any) -> Any:
        if context["ti"].try_number == 1:
            Path(os.environ["LAKE_SCHEDULER_MARKERS"], "mid_script.pid").write_text(str(os.getpid()))
        return super().execute(context)


@dag(
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_tasks=8,
    default_args={"retries": 2, "retry_delay": dt.timedelta(seconds=3), "spark_conn_id": SPARK_CONN_ID},
)
def lake_scheduler_retries() -> None:
    create_sql = "CREATE TABLE IF NOT EXISTS sched_rows (source INTEGER, i INTEGER)"
    # The lake table is partitioned by source: every concurrent insert writes under its own source=N/ directory.
    partitioned = f"{create_sql}; ALTER TABLE sched_rows SET PARTITIONED BY (source)"
    create = DucklakeOperator(task_id="create", sql=both_stores(partitioned, create_sql.replace("sched", "dt.sched")))
    insert_sql = "INSERT INTO sched_rows SELECT {source}, i FROM range(10) r(i)"
    inserts = FailsAfterCommit.partial(
        task_id="insert",
        sql=both_stores(
            insert_sql.format(source="$source"), insert_sql.format(source="$source").replace("INTO ", "INTO dt.")
        ),
    ).expand(parameters=[{"source": m} for m in range(MAPPED)])
    after_commit = KilledAfterCommit(
        task_id="killed_after_commit",
        sql=both_stores(insert_sql.format(source=100), insert_sql.format(source=100).replace("INTO ", "INTO dt.")),
    )
    mid_script = KilledMidScript(
        task_id="killed_mid_script",
        sql=both_stores(insert_sql.format(source=200), insert_sql.format(source=200).replace("INTO ", "INTO dt."))
        + "; SELECT count(*) AS n FROM range(CAST($spin AS BIGINT)) a, range(1000) b",
        parameters={"spin": "{{ " + str(SPIN) + " if ti.try_number == 1 else 1 }}"},
    )
    create >> [inserts, after_commit, mid_script]


lake_scheduler_retries()
