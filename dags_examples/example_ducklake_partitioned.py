"""A partitioned lake table, written and pruned the way DuckDB does it.

``create_events`` partitions ``web.events`` by month, by region and into 8 buckets of ``user_id`` with DuckLake's
``ALTER TABLE … SET PARTITIONED BY``. ``load_events`` appends a day of events: on Spark the executors write one
Parquet file per partition under hive directories (``month=1/region=eu/bucket=3/ducklake-….parquet``) and
register each file's partition values, exactly as DuckDB's ``ducklake`` extension would, so DuckDB and this
provider both skip the files a filter rules out. ``eu_that_day`` reads only the ``region=eu`` files: its
response's ``scans[].files_pruned`` counts the files it skipped. Run it with
``airflow dags test example_ducklake_partitioned`` on the local stack.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import dag

from airflow_provider_lakehouse.operators.ducklake import DucklakeOperator

CREATE_EVENTS = """
ATTACH 'ducklake://main' AS dl;
CREATE SCHEMA IF NOT EXISTS dl.web;
CREATE TABLE IF NOT EXISTS dl.web.events (user_id BIGINT, region VARCHAR, ts TIMESTAMP, kind VARCHAR);
ALTER TABLE dl.web.events SET PARTITIONED BY (month(ts), region, bucket(8, user_id));
"""

LOAD_EVENTS = """
ATTACH 'ducklake://main' AS dl;
DELETE FROM dl.web.events WHERE CAST(ts AS DATE) = $day::DATE;
INSERT INTO dl.web.events
  SELECT i % 97 AS user_id,
         CASE i % 3 WHEN 0 THEN 'eu' WHEN 1 THEN 'us' ELSE 'ap' END AS region,
         CAST($day AS TIMESTAMP) + INTERVAL 7 SECOND * i AS ts,
         CASE WHEN i % 10 = 0 THEN 'purchase' ELSE 'view' END AS kind
  FROM range(5000) r(i);
"""

EU_THAT_DAY = """
ATTACH 'ducklake://main' AS dl;
SELECT kind, count(*) AS events FROM dl.web.events
WHERE region = 'eu' AND CAST(ts AS DATE) = $day::DATE GROUP BY kind ORDER BY kind;
"""


@dag(
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    tags=["ducklake", "example"],
)
def example_ducklake_partitioned() -> None:
    create = DucklakeOperator(task_id="create_events", sql=CREATE_EVENTS)
    load = DucklakeOperator(task_id="load_events", sql=LOAD_EVENTS, parameters={"day": "{{ ds }}"})
    query = DucklakeOperator(task_id="eu_that_day", sql=EU_THAT_DAY, parameters={"day": "{{ ds }}"})
    create >> load >> query


example_ducklake_partitioned()
