"""A lake's everyday operations on Spark: land files on S3, load them, correct rows, travel in time, maintain.

Every statement is DuckDB SQL, run on Spark by ``DucklakeOperator``; each task's response (XCom) lists its
statements' results and the snapshots it created.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import dag

from airflow_provider_lakehouse.operators.ducklake import DucklakeOperator

PREAMBLE = "ATTACH 'ducklake' AS dl; USE dl;\n"
LANDING = "s3://landing/examples/orders.parquet"


@dag(schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False, tags=["ducklake", "example"])
def example_ducklake_operations() -> None:
    land = DucklakeOperator(
        task_id="land_files",
        sql=PREAMBLE
        + f"""
            COPY (SELECT i AS order_id, i % 7 AS customer_id, round(i * 1.5, 2) AS amount, i % 30 AS order_day
                  FROM range(1, 1001) t(i))
            TO '{LANDING}' (FORMAT parquet);
        """,
    )
    load = DucklakeOperator(
        task_id="load_orders",
        sql=PREAMBLE
        + f"""
            CREATE SCHEMA IF NOT EXISTS sales;
            CREATE OR REPLACE TABLE sales.orders AS
                SELECT order_id, customer_id, amount, order_day FROM read_parquet('{LANDING}');
        """,
    )
    correct = DucklakeOperator(
        task_id="correct_orders",
        sql="sql/correct_orders.sql",  # a file next to the DAG, rendered as a template
        parameters={"doubled": 3, "minimum": 10},
    )
    travel = DucklakeOperator(
        task_id="time_travel",
        sql=PREAMBLE
        + """
            SELECT (SELECT count(*) FROM sales.orders AT (VERSION => $loaded)) AS rows_when_loaded,
                   (SELECT count(*) FROM sales.orders) AS rows_now,
                   (SELECT round(sum(amount), 2) FROM sales.orders) AS amount_now;
        """,
        parameters={"loaded": "{{ ti.xcom_pull(task_ids='load_orders')['catalog_info']['snapshot_after'] }}"},
    )
    maintain = DucklakeOperator(
        task_id="maintain",
        sql=PREAMBLE
        + """
            CALL ducklake_merge_adjacent_files('dl');
            CALL ducklake_expire_snapshots('dl', older_than => now() - INTERVAL '7 days');
            SELECT table_name, file_count, (SELECT count(*) FROM sales.orders) AS row_count
            FROM ducklake_table_info('dl') WHERE table_name = 'orders';
        """,
    )
    land >> load >> correct >> travel >> maintain


example_ducklake_operations()
