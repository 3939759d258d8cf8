"""One query surface: a lake and a Data Table attached side by side in one ``DucklakeOperator`` script.

Orders land in the lake; the customer list lives in the Data Table (an operational Postgres database). The
first task joins the two and writes per-tier revenue back to the Data Table, where a dashboard or an API reads
it; the second keeps an audit trail of what it published in the lake. Each task is one unit: the lake's
snapshot and the Data Table's transaction commit together or neither does (see docs/ducklake.md, "Data Tables
in lake SQL"). Credentials are the provider's (connections ``ducklake_main`` and ``datatable_main``); the SQL
names only the stores. Run it with ``airflow dags test example_ducklake_datatable`` on the local stack.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import dag

from airflow_provider_lakehouse.operators.datatable import DataTableOperator
from airflow_provider_lakehouse.operators.ducklake import DucklakeOperator

SEED_CUSTOMERS = """
CREATE TABLE IF NOT EXISTS customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tier TEXT NOT NULL);
INSERT INTO customers VALUES (1, 'Ada', 'gold'), (2, 'Bob', 'silver'), (3, 'Cy', 'silver')
  ON CONFLICT (id) DO NOTHING;
CREATE TABLE IF NOT EXISTS revenue_by_tier (day DATE, tier TEXT, orders BIGINT, revenue NUMERIC(12, 2));
"""

LAND_ORDERS = """
ATTACH 'ducklake://main' AS dl;
CREATE SCHEMA IF NOT EXISTS dl.shop;
CREATE TABLE IF NOT EXISTS dl.shop.orders (id INTEGER, customer_id INTEGER, amount DECIMAL(10, 2), day DATE);
DELETE FROM dl.shop.orders WHERE day = $day::DATE;
INSERT INTO dl.shop.orders VALUES
  (1, 1, 120.00, $day::DATE), (2, 2, 35.50, $day::DATE), (3, 1, 80.25, $day::DATE), (4, 3, 12.00, $day::DATE);
"""

# The seeds' pattern: read the lake, join a Data Table, write the Data Table.
PUBLISH_REVENUE = """
ATTACH 'datatable://main:shop' AS dt;
ATTACH 'ducklake://main' AS dl;
DELETE FROM dt.revenue_by_tier WHERE day = $day::DATE;
INSERT INTO dt.revenue_by_tier
  SELECT o.day, c.tier, count(*) AS orders, sum(o.amount) AS revenue
  FROM dl.shop.orders o JOIN dt.customers c ON c.id = o.customer_id
  WHERE o.day = $day::DATE
  GROUP BY o.day, c.tier;
CREATE TABLE IF NOT EXISTS dl.shop.published (day DATE, tier VARCHAR, revenue DECIMAL(12, 2));
INSERT INTO dl.shop.published SELECT day, tier, revenue FROM dt.revenue_by_tier WHERE day = $day::DATE;
"""


@dag(
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    tags=["ducklake", "datatable", "example"],
)
def example_ducklake_datatable() -> None:
    seed = DataTableOperator(task_id="seed_customers", datatable="main:shop", sql=SEED_CUSTOMERS)
    land = DucklakeOperator(task_id="land_orders", sql=LAND_ORDERS, parameters={"day": "{{ ds }}"})
    publish = DucklakeOperator(task_id="publish_revenue", sql=PUBLISH_REVENUE, parameters={"day": "{{ ds }}"})
    [seed, land] >> publish


example_ducklake_datatable()
