"""Parse-time lineage of the operators: inlets/outlets from SQL written in the DAG, an alias otherwise."""

from __future__ import annotations

from airflow.sdk import DAG, Asset, AssetAlias

from airflow_provider_lakehouse.hooks._lineage import SqlTarget
from airflow_provider_lakehouse.lineage import Dataset
from airflow_provider_lakehouse.operators.datatable import DataTableOperator
from airflow_provider_lakehouse.operators.ducklake import DucklakeOperator


def uris(assets: list) -> list[str]:
    return [a.uri for a in assets if isinstance(a, Asset)]


def test_static_sql_declares_tables_and_files() -> None:
    with DAG("lineage_static"):
        load = DucklakeOperator(
            task_id="load",
            sql="ATTACH 'ducklake://Sales' AS dl; USE dl; "
                "CREATE OR REPLACE TABLE raw.orders AS SELECT * FROM read_parquet('s3://landing/orders/*.parquet'); "
                "INSERT INTO mart.daily SELECT day, sum(amount) FROM raw.orders WHERE day > '{{ ds }}' GROUP BY day",
        )
        report = DataTableOperator(task_id="report", datatable="main:ops",
                                   sql="INSERT INTO summary SELECT * FROM public.events")
    assert uris(load.inlets) == ["s3://landing/orders/*.parquet", "ducklake://sales/raw.orders"]
    assert uris(load.outlets) == ["ducklake://sales/mart.daily", "ducklake://sales/raw.orders"]
    assert uris(report.inlets) == ["datatable://main/public.events"]
    assert uris(report.outlets) == ["datatable://main/ops.summary"]
    assert all(a.name == a.uri for a in load.outlets)  # one identity per table, whoever declares it


def test_run_time_sql_gets_an_alias_and_keeps_user_outlets() -> None:
    mine = Asset("s3://bucket/report.csv")
    with DAG("lineage_dynamic"):
        from_file = DucklakeOperator(task_id="from_file", sql="sql/correct_orders.sql")
        jinja = DataTableOperator(task_id="jinja", sql="{% for t in params.tables %}DELETE FROM {{ t }};{% endfor %}",
                                  outlets=[mine])
        templated_name = DataTableOperator(task_id="templated_name", datatable="{{ params.table }}", sql="SELECT 1")
    assert from_file.outlets == [AssetAlias("lakehouse__lineage_dynamic__from_file")]
    assert jinja.outlets == [mine, AssetAlias("lakehouse__lineage_dynamic__jinja")]
    assert templated_name.outlets == [AssetAlias("lakehouse__lineage_dynamic__templated_name")]


def test_unparseable_sql_does_not_break_the_dag() -> None:
    with DAG("lineage_bad"):
        bad = DucklakeOperator(task_id="bad", sql="SELEC nonsense FROM (")
    assert bad.outlets == [AssetAlias("lakehouse__lineage_bad__bad")]


def test_asset_uris_of_datasets() -> None:
    target = SqlTarget("ducklake", "main", "main", "duckdb")
    assert target.asset_uri(Dataset("table", "sales.orders")) == "ducklake://main/sales.orders"
    assert target.asset_uri(Dataset("table", "s.t", "datatable://ops")) == "datatable://ops/s.t"
    assert target.asset_uri(Dataset("table", "db.s.t")) is None  # no store knows a three-part name
    assert target.asset_uri(Dataset("table", "s.t", "other.duckdb")) is None
    assert target.asset_uri(Dataset("file", "s3a://b/k.parquet")) == "s3://b/k.parquet"
    assert target.asset_uri(Dataset("file", "/data/x.csv")) == "file:///data/x.csv"
    assert target.asset_uri(Dataset("file", "relative/x.csv")) is None
