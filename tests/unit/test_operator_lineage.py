"""Parse-time lineage of the operators: inlets/outlets from SQL written in the DAG, an alias otherwise."""

from __future__ import annotations

import pytest
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
        report = DataTableOperator(
            task_id="report", datatable="main:ops", sql="INSERT INTO summary SELECT * FROM public.events"
        )
    assert uris(load.inlets) == ["s3://landing/orders/*.parquet", "ducklake://sales/raw.orders"]
    assert uris(load.outlets) == ["ducklake://sales/mart.daily", "ducklake://sales/raw.orders"]
    assert uris(report.inlets) == ["datatable://main/public.events"]
    assert uris(report.outlets) == ["datatable://main/ops.summary"]
    assert all(a.name == a.uri for a in load.outlets)  # one identity per table, whoever declares it


def test_run_time_sql_gets_an_alias_and_keeps_user_outlets() -> None:
    mine = Asset("s3://bucket/report.csv")
    with DAG("lineage_dynamic"):
        from_file = DucklakeOperator(task_id="from_file", sql="sql/correct_orders.sql")
        jinja = DataTableOperator(
            task_id="jinja", sql="{% for t in params.tables %}DELETE FROM {{ t }};{% endfor %}", outlets=[mine]
        )
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


def test_openlineage_on_start_and_on_failure_need_no_io(monkeypatch: pytest.MonkeyPatch) -> None:
    import datetime as dt
    import json
    import uuid

    from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
    from openlineage.client.serde import Serde

    from tests.support.openlineage_schemas import validate_event

    monkeypatch.setenv(
        "AIRFLOW_CONN_DATATABLE_OPS",
        json.dumps(
            {
                "conn_type": "datatable",
                "host": "pg.internal",
                "port": 5433,
                "login": "u",
                "password": "s3cret pw",
                "schema": "warehouse",
            }
        ),
    )
    with DAG("lineage_ol"):
        table = DataTableOperator(
            task_id="table",
            datatable="ops:mart",
            sql="INSERT INTO daily (day, total) SELECT day, sum(amount) FROM sales.orders GROUP BY day",
        )
        lake = DucklakeOperator(
            task_id="lake",
            sql="ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE s.t AS SELECT id, upper(name) AS name FROM s.src",
        )
    for operator in (table, lake):
        for lineage in (operator.get_openlineage_facets_on_start(), operator.get_openlineage_facets_on_failure(None)):
            assert lineage.job_facets["sql"].query == operator.sql
            assert all("version" not in d.facets for d in lineage.outputs)  # nothing landed: no snapshot
            event = RunEvent(
                eventType=RunState.FAIL,
                eventTime=dt.datetime.now(dt.UTC).isoformat(),
                run=Run(runId=str(uuid.uuid4())),
                job=Job(namespace="tests", name=operator.task_id),
                producer="https://example.invalid/tests",
                inputs=lineage.inputs,
                outputs=lineage.outputs,
            )
            payload = Serde.to_json(event)
            validate_event(json.loads(payload))
            assert "s3cret" not in payload
    out = table.get_openlineage_facets_on_start().outputs[0]
    assert (out.namespace, out.name) == ("postgres://pg.internal:5433", "warehouse.mart.daily")
    total = out.facets["columnLineage"].fields["total"].inputFields[0]
    assert (total.name, total.field, total.transformations[0].subtype) == (
        "warehouse.sales.orders",
        "amount",
        "AGGREGATION",
    )
    created = lake.get_openlineage_facets_on_failure(None).outputs[0]
    assert (created.namespace, created.name) == ("ducklake://main", "s.t")
    assert created.facets["lifecycleStateChange"].lifecycleStateChange.value == "CREATE"


def test_lineage_problems_never_fail_the_task() -> None:
    with DAG("lineage_broken"):
        unknown = DataTableOperator(task_id="unknown", datatable="nosuchtable", sql="SELECT * FROM t")
    lineage = unknown.get_openlineage_facets_on_start()  # the connection does not exist: logged, empty
    assert lineage.inputs == [] and lineage.outputs == []


def test_partial_lineage_still_declares_assets() -> None:
    """A PIVOT whose column names depend on the data yields partial lineage: its tables are all known, so
    the task still declares them (an unanalysable statement would leave only the asset alias)."""
    with DAG("lineage_partial"):
        pivot = DucklakeOperator(
            task_id="pivot",
            sql="ATTACH 'ducklake' AS dl; USE dl; "
            "CREATE TABLE mart.wide AS PIVOT sales.orders ON channel USING sum(amount) GROUP BY region",
        )
        broken = DucklakeOperator(task_id="broken", sql="CREATE TABLE mart.bad AS SELEC 1")
    assert uris(pivot.inlets) == ["ducklake://main/sales.orders"]
    assert uris(pivot.outlets) == ["ducklake://main/mart.wide"]
    assert broken.outlets == [AssetAlias("lakehouse__lineage_partial__broken")]
