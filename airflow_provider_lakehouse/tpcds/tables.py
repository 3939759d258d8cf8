"""The 24 TPC-DS source tables: 7 facts (sales, returns, inventory) and 17 dimensions."""

from __future__ import annotations

FACT_TABLES = (
    "store_sales",
    "store_returns",
    "catalog_sales",
    "catalog_returns",
    "web_sales",
    "web_returns",
    "inventory",
)
DIMENSION_TABLES = (
    "call_center",
    "catalog_page",
    "customer",
    "customer_address",
    "customer_demographics",
    "date_dim",
    "household_demographics",
    "income_band",
    "item",
    "promotion",
    "reason",
    "ship_mode",
    "store",
    "time_dim",
    "warehouse",
    "web_page",
    "web_site",
)
SOURCE_TABLES = FACT_TABLES + DIMENSION_TABLES

# The benchmark's query stage: TPC-DS queries whose results land in the lake.
BENCHMARK_QUERIES = (3, 7, 19, 27, 34, 43, 46, 53, 67, 79)
