"""The SQL of the TPC-DS benchmark pipeline's stages, as DuckDB SQL run on Spark by ``DucklakeOperator``.

Stages: ingest (one statement per source table), validate (a failing check raises an error naming its
violations), denormalize (one wide table per sales channel), aggregate (analyst-facing tables), query (the
benchmark queries' results land in the lake). Tables: ``tpcds.*`` (sources), ``wide.*``, ``agg.*``,
``results.*``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from airflow_provider_lakehouse.tpcds.tables import SOURCE_TABLES

STAGES = ("ingest", "validate", "denormalize", "aggregate", "query")


@dataclass(frozen=True)
class PipelineTask:
    """One SQL task of the pipeline: its stage, its name, the schema it runs in (``USE``) and its SQL.

    :param stage: one of :data:`STAGES`.
    :param name: the task's id inside its stage's task group.
    :param sql: DuckDB SQL without the ``ATTACH``/``USE`` preamble.
    :param schema: the schema the statements' unqualified names resolve in (``None``: the lake's default).
    """

    stage: str
    name: str
    sql: str
    schema: str | None = None


def preamble(lake: str, schema: str | None = None) -> str:
    """``ATTACH`` the lake and ``USE`` it (or one of its schemas: the TPC-DS queries name tables unqualified).

    >>> preamble("main", "tpcds")
    "ATTACH 'ducklake://main' AS dl; USE dl.tpcds;\\n"
    """
    return f"ATTACH 'ducklake://{lake}' AS dl; USE dl{'.' + schema if schema else ''};\n"


def ingest_sql(table: str, landing: str) -> str:
    """Load one source table from the landing area (replacing the previous load)."""
    if table not in SOURCE_TABLES:
        raise ValueError(f"{table!r} is no TPC-DS source table")
    return (
        f"CREATE SCHEMA IF NOT EXISTS tpcds;\n"
        f"CREATE OR REPLACE TABLE tpcds.{table} AS SELECT * FROM read_parquet('{landing}/{table}.parquet');"
    )


def _check(name: str, violations: dict[str, str]) -> str:
    """One SELECT counting each kind of violation; any count above zero fails with all counts named."""
    counts = ",\n  ".join(f"({query}) AS {label}" for label, query in violations.items())
    labels = list(violations)
    total = " + ".join(labels)
    report = " || ', ' || ".join(f"'{label}=' || CAST({label} AS VARCHAR)" for label in labels)
    return (
        f"SELECT {', '.join(labels)},\n"
        f"  CASE WHEN {total} > 0 THEN error('check {name} failed: ' || {report}) END AS failed\n"
        f"FROM (SELECT\n  {counts}) AS counts;"
    )


def _orphans(fact: str, key: str, dim: str, dim_key: str) -> str:
    return (
        f"SELECT count(*) FROM tpcds.{fact} f LEFT JOIN tpcds.{dim} d ON f.{key} = d.{dim_key} "
        f"WHERE f.{key} IS NOT NULL AND d.{dim_key} IS NULL"
    )


SURROGATE_KEYS = {
    "call_center": "cc_call_center_sk",
    "catalog_page": "cp_catalog_page_sk",
    "customer": "c_customer_sk",
    "customer_address": "ca_address_sk",
    "customer_demographics": "cd_demo_sk",
    "date_dim": "d_date_sk",
    "household_demographics": "hd_demo_sk",
    "income_band": "ib_income_band_sk",
    "item": "i_item_sk",
    "promotion": "p_promo_sk",
    "reason": "r_reason_sk",
    "ship_mode": "sm_ship_mode_sk",
    "store": "s_store_sk",
    "time_dim": "t_time_sk",
    "warehouse": "w_warehouse_sk",
    "web_page": "wp_web_page_sk",
    "web_site": "web_site_sk",
}


def validation_sql() -> dict[str, str]:
    """The eight checks, by task name."""
    keys = {
        f"{dim}_keys": f"SELECT count(*) - count(DISTINCT {key}) + count(*) FILTER (WHERE {key} IS NULL) "
        f"FROM tpcds.{dim}"
        for dim, key in SURROGATE_KEYS.items()
    }
    return {
        "store_sales_references": _check(
            "store_sales_references",
            {
                "items": _orphans("store_sales", "ss_item_sk", "item", "i_item_sk"),
                "customers": _orphans("store_sales", "ss_customer_sk", "customer", "c_customer_sk"),
                "stores": _orphans("store_sales", "ss_store_sk", "store", "s_store_sk"),
                "dates": _orphans("store_sales", "ss_sold_date_sk", "date_dim", "d_date_sk"),
            },
        ),
        "catalog_sales_references": _check(
            "catalog_sales_references",
            {
                "items": _orphans("catalog_sales", "cs_item_sk", "item", "i_item_sk"),
                "customers": _orphans("catalog_sales", "cs_bill_customer_sk", "customer", "c_customer_sk"),
                "call_centers": _orphans("catalog_sales", "cs_call_center_sk", "call_center", "cc_call_center_sk"),
                "dates": _orphans("catalog_sales", "cs_sold_date_sk", "date_dim", "d_date_sk"),
            },
        ),
        "web_sales_references": _check(
            "web_sales_references",
            {
                "items": _orphans("web_sales", "ws_item_sk", "item", "i_item_sk"),
                "customers": _orphans("web_sales", "ws_bill_customer_sk", "customer", "c_customer_sk"),
                "web_sites": _orphans("web_sales", "ws_web_site_sk", "web_site", "web_site_sk"),
                "dates": _orphans("web_sales", "ws_sold_date_sk", "date_dim", "d_date_sk"),
            },
        ),
        "returns_references": _check(
            "returns_references",
            {
                "store_items": _orphans("store_returns", "sr_item_sk", "item", "i_item_sk"),
                "catalog_items": _orphans("catalog_returns", "cr_item_sk", "item", "i_item_sk"),
                "web_items": _orphans("web_returns", "wr_item_sk", "item", "i_item_sk"),
            },
        ),
        "inventory_references": _check(
            "inventory_references",
            {
                "items": _orphans("inventory", "inv_item_sk", "item", "i_item_sk"),
                "warehouses": _orphans("inventory", "inv_warehouse_sk", "warehouse", "w_warehouse_sk"),
                "dates": _orphans("inventory", "inv_date_sk", "date_dim", "d_date_sk"),
            },
        ),
        "surrogate_keys": _check("surrogate_keys", keys),
        "non_negative_quantities": _check(
            "non_negative_quantities",
            {
                "store_sales": "SELECT count(*) FROM tpcds.store_sales WHERE ss_quantity < 0",
                "catalog_sales": "SELECT count(*) FROM tpcds.catalog_sales WHERE cs_quantity < 0",
                "web_sales": "SELECT count(*) FROM tpcds.web_sales WHERE ws_quantity < 0",
                "returns": "SELECT count(*) FROM tpcds.store_returns WHERE sr_return_quantity < 0",
                "inventory": "SELECT count(*) FROM tpcds.inventory WHERE inv_quantity_on_hand < 0",
            },
        ),
        "sale_dates_in_calendar": _check(
            "sale_dates_in_calendar",
            {
                "store": "SELECT count(*) FROM tpcds.store_sales WHERE ss_sold_date_sk NOT BETWEEN "
                "(SELECT min(d_date_sk) FROM tpcds.date_dim) AND (SELECT max(d_date_sk) FROM tpcds.date_dim)",
                "catalog": "SELECT count(*) FROM tpcds.catalog_sales WHERE cs_sold_date_sk NOT BETWEEN "
                "(SELECT min(d_date_sk) FROM tpcds.date_dim) AND (SELECT max(d_date_sk) FROM tpcds.date_dim)",
                "web": "SELECT count(*) FROM tpcds.web_sales WHERE ws_sold_date_sk NOT BETWEEN "
                "(SELECT min(d_date_sk) FROM tpcds.date_dim) AND (SELECT max(d_date_sk) FROM tpcds.date_dim)",
            },
        ),
    }


_CHANNELS = {  # channel: (sales table, prefix, customer key, outlet key, outlet table, outlet key column, outlet name)
    "store": ("store_sales", "ss", "ss_customer_sk", "ss_store_sk", "store", "s_store_sk", "s_store_name"),
    "catalog": (
        "catalog_sales",
        "cs",
        "cs_bill_customer_sk",
        "cs_call_center_sk",
        "call_center",
        "cc_call_center_sk",
        "cc_name",
    ),
    "web": ("web_sales", "ws", "ws_bill_customer_sk", "ws_web_site_sk", "web_site", "web_site_sk", "web_name"),
}


def denormalize_sql() -> dict[str, str]:
    """One wide sales table per channel: the sale joined with its date, item, customer and outlet."""
    out = {}
    for channel, (sales, p, customer, outlet, outlet_table, outlet_key, outlet_name) in _CHANNELS.items():
        out[f"{channel}_sales_wide"] = f"""CREATE SCHEMA IF NOT EXISTS wide;
CREATE OR REPLACE TABLE wide.{channel}_sales AS
SELECT s.{p}_sold_date_sk AS date_sk, d.d_date AS sold_date, d.d_year AS sold_year, d.d_moy AS sold_month,
       s.{p}_item_sk AS item_sk, i.i_item_id AS item_id, i.i_category AS category, i.i_brand AS brand,
       s.{customer} AS customer_sk, c.c_customer_id AS customer_id,
       s.{outlet} AS outlet_sk, o.{outlet_name} AS outlet_name,
       s.{p}_quantity AS quantity, s.{p}_ext_sales_price AS sales_amount, s.{p}_net_paid AS net_paid,
       s.{p}_net_profit AS net_profit
FROM tpcds.{sales} s
LEFT JOIN tpcds.date_dim d ON s.{p}_sold_date_sk = d.d_date_sk
LEFT JOIN tpcds.item i ON s.{p}_item_sk = i.i_item_sk
LEFT JOIN tpcds.customer c ON s.{customer} = c.c_customer_sk
LEFT JOIN tpcds.{outlet_table} o ON s.{outlet} = o.{outlet_key};"""
    return out


def _all_sales(columns: str) -> str:
    return " UNION ALL ".join(f"SELECT '{c}' AS channel, {columns} FROM wide.{c}_sales" for c in _CHANNELS)


AGGREGATES_PUBLISHED = ("daily_sales_by_channel", "channel_comparison", "return_rate_by_category")


def aggregate_sql() -> dict[str, str]:
    """The six aggregates; the small ones (:data:`AGGREGATES_PUBLISHED`) also go to a Data Table."""
    head = "CREATE SCHEMA IF NOT EXISTS agg;\n"
    return {
        "daily_sales_by_channel": head
        + f"""CREATE OR REPLACE TABLE agg.daily_sales_by_channel AS
SELECT sold_date, channel, count(*) AS lines, sum(quantity) AS quantity, sum(sales_amount) AS sales,
       sum(net_profit) AS profit
FROM ({_all_sales("sold_date, quantity, sales_amount, net_profit")}) AS s
WHERE sold_date IS NOT NULL
GROUP BY sold_date, channel;""",
        "customer_lifetime_value": head
        + f"""CREATE OR REPLACE TABLE agg.customer_lifetime_value AS
SELECT customer_id, count(*) AS purchases, count(DISTINCT channel) AS channels, sum(net_paid) AS lifetime_value,
       min(sold_date) AS first_purchase, max(sold_date) AS last_purchase
FROM ({_all_sales("customer_id, net_paid, sold_date")}) AS s
WHERE customer_id IS NOT NULL
GROUP BY customer_id;""",
        "return_rate_by_category": head
        + """CREATE OR REPLACE TABLE agg.return_rate_by_category AS
WITH sold AS (
  SELECT i.i_category AS category, sum(ss.ss_quantity) AS quantity
  FROM tpcds.store_sales ss JOIN tpcds.item i ON ss.ss_item_sk = i.i_item_sk
  GROUP BY i.i_category),
returned AS (
  SELECT i.i_category AS category, sum(sr.sr_return_quantity) AS quantity
  FROM tpcds.store_returns sr JOIN tpcds.item i ON sr.sr_item_sk = i.i_item_sk
  GROUP BY i.i_category)
SELECT sold.category, sold.quantity AS sold_quantity, coalesce(returned.quantity, 0) AS returned_quantity,
       round(coalesce(returned.quantity, 0) / sold.quantity, 4) AS return_rate
FROM sold LEFT JOIN returned ON sold.category = returned.category
WHERE sold.category IS NOT NULL;""",
        "channel_comparison": head
        + f"""CREATE OR REPLACE TABLE agg.channel_comparison AS
SELECT channel, sold_year, count(*) AS lines, sum(sales_amount) AS sales, sum(net_profit) AS profit,
       round(sum(net_profit) / sum(sales_amount), 4) AS margin, round(avg(sales_amount), 2) AS average_line
FROM ({_all_sales("sold_year, sales_amount, net_profit")}) AS s
WHERE sold_year IS NOT NULL
GROUP BY channel, sold_year;""",
        "top_brands_by_month": head
        + f"""CREATE OR REPLACE TABLE agg.top_brands_by_month AS
SELECT * FROM (
  SELECT sold_year, sold_month, brand, sum(sales_amount) AS sales,
         rank() OVER (PARTITION BY sold_year, sold_month ORDER BY sum(sales_amount) DESC) AS brand_rank
  FROM ({_all_sales("sold_year, sold_month, brand, sales_amount")}) AS s
  WHERE brand IS NOT NULL AND sold_year IS NOT NULL
  GROUP BY sold_year, sold_month, brand) AS ranked
WHERE brand_rank <= 10;""",
        "outlet_performance": head
        + f"""CREATE OR REPLACE TABLE agg.outlet_performance AS
SELECT channel, outlet_name, count(DISTINCT customer_id) AS customers, sum(sales_amount) AS sales,
       sum(net_profit) AS profit
FROM ({_all_sales("outlet_name, customer_id, sales_amount, net_profit")}) AS s
WHERE outlet_name IS NOT NULL
GROUP BY channel, outlet_name;""",
    }


def query_result_sql(number: int, query: str) -> str:
    """A benchmark query's result, stored in the lake as ``results.qNN``."""
    body = query.strip().rstrip(";")
    return f"CREATE SCHEMA IF NOT EXISTS results;\nCREATE OR REPLACE TABLE results.q{number:02d} AS\n{body};"


def publish_sql(lake: str, datatable: str) -> str:
    """Copy the small aggregates into a Data Table: one lake script, so the copies land together or not at all
    (the Data Table's transaction commits with the script; ``NAME:SCHEMA``'s schema is created if missing).

    >>> print(publish_sql("main", "main:tpcds").splitlines()[1])
    CREATE OR REPLACE TABLE dt.daily_sales_by_channel AS SELECT * FROM dl.agg.daily_sales_by_channel;
    """
    copies = "".join(
        f"CREATE OR REPLACE TABLE dt.{table} AS SELECT * FROM dl.agg.{table};\n" for table in AGGREGATES_PUBLISHED
    )
    return f"ATTACH 'ducklake://{lake}' AS dl; ATTACH 'datatable://{datatable}' AS dt;\n" + copies


def pipeline_tasks(landing: str, queries: Mapping[int, str]) -> list[PipelineTask]:
    """Every SQL task of the pipeline in stage order: what the DAG runs and what the benchmark runs.

    :param landing: the landing area (a directory, ``s3://`` prefix or a template such as
        ``{{ params.landing }}``).
    :param queries: benchmark query text by number, as the generator ships it.
    """
    tasks = [PipelineTask("ingest", table, ingest_sql(table, landing)) for table in SOURCE_TABLES]
    tasks += [PipelineTask("validate", name, sql) for name, sql in validation_sql().items()]
    tasks += [PipelineTask("denormalize", name, sql) for name, sql in denormalize_sql().items()]
    tasks += [PipelineTask("aggregate", name, sql) for name, sql in aggregate_sql().items()]
    tasks += [
        PipelineTask("query", f"q{number:02d}", query_result_sql(number, text), schema="tpcds")
        for number, text in queries.items()
    ]
    return tasks
