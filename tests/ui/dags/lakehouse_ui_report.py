"""A downstream report for the Lakehouse UI tests: reads the operations example's ``sales.orders`` and the
sentiment example's ``main.messages``, writes two derived tables (joins, filters, aggregations: typed column
edges two hops from the landing file), then deletes a row so a snapshot carries deletes."""

from __future__ import annotations

import pendulum
from airflow.sdk import dag

from airflow_provider_lakehouse.operators.ducklake import DucklakeOperator

PREAMBLE = "ATTACH 'ducklake' AS dl; USE dl;\n"


@dag(schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False, tags=["lakehouse-ui"])
def lakehouse_ui_report() -> None:
    totals = DucklakeOperator(
        task_id="customer_totals",
        sql=PREAMBLE
        + """
            CREATE OR REPLACE TABLE sales.customer_totals AS
                SELECT customer_id, count(*) AS orders, round(sum(amount), 2) AS revenue, max(order_day) AS last_day
                FROM sales.orders WHERE amount > 0 GROUP BY customer_id;
        """,
    )
    ranked = DucklakeOperator(
        task_id="top_customers",
        sql=PREAMBLE
        + """
            CREATE OR REPLACE TABLE sales.top_customers AS
                SELECT t.customer_id, t.revenue, upper(m.sentiment) AS mood
                FROM sales.customer_totals t LEFT JOIN main.messages m ON length(m.author) = t.customer_id
                WHERE t.orders > 10;
            DELETE FROM sales.top_customers WHERE customer_id = 0;
        """,
    )
    totals >> ranked


lakehouse_ui_report()
