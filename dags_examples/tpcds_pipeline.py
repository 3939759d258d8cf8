"""TPC-DS benchmark pipeline: 52 tasks in 5 stages on Spark over a lake, small aggregates to a Data Table.

Generate the data first: ``python -m airflow_provider_lakehouse.tpcds generate --sf 0.1 --landing DIR`` and
pass ``DIR`` as the ``landing`` parameter (default: ``$TPCDS_LANDING``). Stages (task groups):

1. ingest (24): one source table each, from the landing area's Parquet files into ``tpcds.*``;
2. validate (8): referential integrity and data quality; a failing check names its violation counts;
3. denormalize (3): ``wide.{store,catalog,web}_sales``;
4. aggregate (6 + 1): ``agg.*``, then the small aggregates are published to a Data Table;
5. query (10): TPC-DS queries 3, 7, 19, 27, 34, 43, 46, 53, 67, 79 into ``results.qNN`` (query text from
   the generator, cached per DuckDB version when the data is generated or on the first parse, so parsing the
   DAG, which every task process repeats, stays cheap).

At most ``$TPCDS_MAX_ACTIVE_TASKS`` tasks (default 2) of a run execute at once: every task is a Spark job that
already uses all the executor cores it is given, so on a small machine more concurrent tasks compete for the same
cores and memory (the benchmark measures 1, 2 and 4). Raise it where the Spark cluster is larger than the workers.

Every task's SQL is known when the DAG is parsed, so the Airflow graph shows the lake tables as assets
between the stages.
"""

from __future__ import annotations

import os
import tempfile

import pendulum
from airflow.sdk import Param, dag, task_group

from airflow_provider_lakehouse.operators.ducklake import DucklakeOperator
from airflow_provider_lakehouse.tpcds.pipeline import pipeline_tasks, preamble, publish_sql

# The lake is fixed when the DAG is parsed (the graph's assets name its tables); the landing area, scale factor,
# Data Table and Spark connection are run parameters (TPCDS_DATATABLE is the Data Table's default).
LAKE = os.environ.get("TPCDS_LAKE", "main")
DATATABLE = os.environ.get("TPCDS_DATATABLE", "main:tpcds")
EXTENSIONS = os.environ.get("LAKEHOUSE_DUCKDB_EXTENSIONS", os.path.join(tempfile.gettempdir(), "lakehouse-duckdb"))


MAX_ACTIVE_TASKS = int(os.environ.get("TPCDS_MAX_ACTIVE_TASKS", "2"))


def _query_texts() -> dict[int, str]:
    """The benchmark queries as DuckDB's generator ships them (never pasted into this repository), from the
    per-version cache after the first time."""
    from airflow_provider_lakehouse.tpcds.generate import benchmark_queries

    return benchmark_queries(EXTENSIONS)


@dag(
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_tasks=MAX_ACTIVE_TASKS,
    tags=["tpcds", "benchmark", "example"],
    params={
        "landing": Param(
            os.environ.get("TPCDS_LANDING", "/tmp/tpcds/landing"),
            type="string",
            description="Where the generated Parquet files are (a directory or s3://bucket/prefix).",
        ),
        "scale_factor": Param(0.1, type="number", description="The scale factor the data was generated at."),
        # Shown in the trigger form, but only this value is valid: the graph's assets name this lake's tables.
        "lake": Param(
            LAKE,
            type="string",
            enum=[LAKE],
            description="The lake, fixed when the DAG is parsed ($TPCDS_LAKE): the assets name its tables.",
        ),
        "datatable": Param(
            DATATABLE, type="string", description="The Data Table (NAME:SCHEMA) the small aggregates are published to."
        ),
        "spark_conn_id": Param(
            "",
            type="string",
            description="A Spark connection (spark-submit or Spark Connect) to run on instead of "
            "the lake's own spark_conn_id; empty: the lake's.",
        ),
        "engine": Param(
            "spark",
            type="string",
            enum=["spark", "duckdb", "auto"],
            description="The engine of every SQL task: spark, duckdb (in the worker) or auto (by bytes scanned).",
        ),
    },
)
def tpcds_pipeline() -> None:
    tasks = pipeline_tasks("{{ params.landing }}", _query_texts())  # the same SQL the benchmark runs

    def sql_tasks(stage: str) -> list[DucklakeOperator]:
        return [
            DucklakeOperator(
                task_id=t.name,
                ducklake=LAKE,
                sql=preamble(LAKE, t.schema) + t.sql,
                spark_conn_id="{{ params.spark_conn_id }}",
                engine="{{ params.engine }}",
            )
            for t in tasks
            if t.stage == stage
        ]

    @task_group
    def ingest() -> None:
        sql_tasks("ingest")

    @task_group
    def validate() -> None:
        sql_tasks("validate")

    @task_group
    def denormalize() -> None:
        sql_tasks("denormalize")

    @task_group
    def aggregate() -> None:
        # The small aggregates go to the Data Table for operational use (dashboards, APIs), in lake SQL that
        # attaches both stores: the copies commit together with the task, or not at all.
        publish_to_datatable = DucklakeOperator(
            task_id="publish_to_datatable",
            ducklake=LAKE,
            sql=publish_sql(LAKE, "{{ params.datatable }}"),
            spark_conn_id="{{ params.spark_conn_id }}",
            engine="{{ params.engine }}",
        )
        sql_tasks("aggregate") >> publish_to_datatable

    @task_group
    def query() -> None:
        sql_tasks("query")

    ingest() >> validate() >> denormalize() >> aggregate() >> query()


tpcds_pipeline()
