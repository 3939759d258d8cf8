"""Data Tables end to end: create a table in a schema, insert rows handed over by an upstream task, read back.

Run it on the local stack with ``python3 -m airflow_provider_lakehouse.devstack demo``.
"""

from __future__ import annotations

import datetime as dt

from airflow.sdk import dag, task

from airflow_provider_lakehouse.client import datatable
from airflow_provider_lakehouse.operators.datatable import DataTableOperator

# [START example_datatable]
ANALYTICS = "main:analytics"  # data table "main", schema "analytics" (created on first write)


@dag(schedule=None, start_date=dt.datetime(2024, 1, 1), catchup=False, tags=["example", "datatable"])
def example_datatable() -> None:
    create_table = DataTableOperator(
        task_id="create_table",
        datatable=ANALYTICS,
        sql="""
            CREATE TABLE IF NOT EXISTS customers (
                id        bigint PRIMARY KEY,
                name      text NOT NULL,
                email     text,
                signed_up date,
                lifetime_value numeric(12, 2),
                profile   jsonb
            );
            TRUNCATE customers;
        """,
        fetch="none",
    )

    @task
    def new_customers() -> list[dict]:
        # Anything a task returns can feed a later statement as a bound parameter.
        return [
            {
                "id": 1,
                "name": "Ada",
                "email": "ada@example.com",
                "signed_up": "2024-01-15",
                "lifetime_value": "1250.50",
                "profile": {"tier": "gold", "tags": ["early"]},
            },
            {
                "id": 2,
                "name": "Grace",
                "email": "grace@example.com",
                "signed_up": "2024-02-01",
                "lifetime_value": "980.00",
                "profile": {"tier": "silver"},
            },
            # Stored literally: parameters are bound by the server, never pasted into SQL.
            {
                "id": 3,
                "name": "Robert'); DROP TABLE customers;--",
                "email": None,
                "signed_up": "2024-03-09",
                "lifetime_value": "0",
                "profile": None,
            },
        ]

    insert_rows = DataTableOperator(
        task_id="insert_rows",
        datatable=ANALYTICS,
        sql="""
            INSERT INTO customers
            SELECT * FROM jsonb_to_recordset($rows) AS r(
                id bigint, name text, email text, signed_up date, lifetime_value numeric(12, 2), profile jsonb)
            RETURNING id
        """,
        parameters={"rows": new_customers()},
    )

    read_one = DataTableOperator(
        task_id="read_one",
        datatable=ANALYTICS,
        sql="SELECT id, name, signed_up, lifetime_value, profile FROM customers WHERE id = $1",
        parameters=[1],
        fetch="one",
    )

    count_rows = DataTableOperator(
        task_id="count_rows", datatable=ANALYTICS, sql="SELECT count(*) FROM customers", fetch="scalar"
    )

    @task
    def signed_up_since(day: str) -> list[dict]:
        # The same data table from TaskFlow code: no connection string in sight.
        return (
            datatable(ANALYTICS)
            .query("SELECT name FROM customers WHERE signed_up >= $1::date ORDER BY id", day)
            .fetch()
        )

    create_table >> insert_rows >> [read_one, count_rows] >> signed_up_since("2024-02-01")


example_datatable()
# [END example_datatable]
