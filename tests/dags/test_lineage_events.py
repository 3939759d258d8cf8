"""Lineage end to end: ``airflow dags test`` with OpenLineage's file transport, then the events (validated
against the OpenLineage JSON schemas) and Airflow's asset tables are checked."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from airflow_provider_lakehouse.assets.lineage_extra import EXTRA_KEY, LineageRecord
from tests.dags.runs import DagTestRuns
from tests.support.openlineage_schemas import validate_event

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def read_assets(environment: dict[str, str], runs: list[str]) -> dict[str, Any]:
    """Assets, the events that the DAG runs ``runs`` (run ids) published (with extras and source task) and alias
    links, from the Airflow metadata DB."""
    script = (
        "import json\n"
        "from airflow.models.asset import AssetModel, AssetEvent, AssetAliasModel, AssetDagRunQueue\n"
        "from airflow.utils.session import create_session\n"
        "with create_session() as s:\n"
        "    assets = {a.id: a.uri for a in s.query(AssetModel).all()}\n"
        "    events = [{'uri': assets[e.asset_id], 'extra': e.extra, 'dag': e.source_dag_id, 'task': e.source_task_id,\n"
        "               'run': e.source_run_id}\n"
        "              for e in s.query(AssetEvent).order_by(AssetEvent.id).all()]\n"
        "    aliases = {a.name: sorted(x.uri for x in a.assets) for a in s.query(AssetAliasModel).all()}\n"
        "    queued = [(assets[q.asset_id], q.target_dag_id) for q in s.query(AssetDagRunQueue).all()]\n"
        "    print(json.dumps({'assets': sorted(assets.values()), 'events': events, 'aliases': aliases,\n"
        "                      'queued': queued}))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    found["events"] = [event for event in found["events"] if event.pop("run") in runs]
    return found


def complete_events(events: list[dict[str, Any]], dag_id: str) -> dict[str, dict[str, Any]]:
    """The COMPLETE event of each task of ``dag_id``, by task id."""
    out = {}
    for event in events:
        name = event["job"]["name"]
        if event["eventType"] == "COMPLETE" and name.startswith(f"{dag_id}."):
            out[name[len(dag_id) + 1 :]] = event
    return out


def _missing_events(events: list[dict[str, Any]], outputs: dict[str, str]) -> str:
    """What was emitted, and what Airflow said about OpenLineage, for a COMPLETE event that is missing."""
    emitted = [(event["eventType"], event["job"]["name"]) for event in events]
    said = [
        line
        for text in outputs.values()
        for line in text.splitlines()
        if "openlineage" in line.lower() and ("warn" in line.lower() or "error" in line.lower())
    ]
    return f"events emitted: {emitted}\nOpenLineage warnings and errors: {said[-40:]}"


def dataset(datasets: list[dict[str, Any]], namespace: str, name: str) -> dict[str, Any]:
    found = [d for d in datasets if d["namespace"] == namespace and d["name"] == name]
    assert found, f"no dataset {namespace} {name} among {[(d['namespace'], d['name']) for d in datasets]}"
    return found[0]


def edges(facet: dict[str, Any], column: str) -> set[tuple[str, str, str, str, str]]:
    return {
        (f["namespace"], f["name"], f["field"], t["type"], t["subtype"])
        for f in facet["fields"][column]["inputFields"]
        for t in f["transformations"]
    }


def test_openlineage_events_and_assets(dag_runs: DagTestRuns) -> None:
    operations = dag_runs.get("example_ducklake_operations", "local")
    tables = dag_runs.get("example_datatable", "local")
    env, setup = operations.env, operations.setup
    outputs = {run.dag_id: run.output for run in (operations, tables)}
    events = operations.events() + tables.events()
    unvalidated = set()
    for event in events:
        for facet in validate_event(event):  # raises on any violation of the OpenLineage schemas
            unvalidated.add(facet.split(":")[0].rsplit(".", 1)[-1])
    assert not unvalidated & {
        "schema",
        "columnLineage",
        "version",
        "outputStatistics",
        "sql",
        "catalog",
        "lifecycleStateChange",
        "symlinks",
    }, "our facets must all be checked"
    text = "\n".join(run.events_file.read_text() for run in (operations, tables))
    assert all(secret not in text for secret in operations.secrets()), "a credential leaked into an OpenLineage event"

    # -- the lake: load, correct ---------------------------------------------------------------
    xcoms = operations.xcoms
    lake_events = complete_events(events, "example_ducklake_operations")
    assert {"load_orders", "correct_orders"} <= set(lake_events), _missing_events(events, outputs)
    load = lake_events["load_orders"]
    assert load["job"]["facets"]["sql"]["dialect"] == "duckdb"
    assert "read_parquet" in load["job"]["facets"]["sql"]["query"]
    dataset(load["inputs"], "s3://landing", "examples/orders.parquet")
    orders = dataset(load["outputs"], "ducklake://main", "sales.orders")
    facets = orders["facets"]
    loaded_snapshot = xcoms["load_orders"]["catalog_info"]["snapshot_after"]
    assert facets["version"]["datasetVersion"] == str(loaded_snapshot)
    assert [f["name"] for f in facets["schema"]["fields"]] == ["order_id", "customer_id", "amount", "order_day"]
    assert facets["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    assert facets["catalog"]["framework"] == "ducklake" and facets["catalog"]["name"] == "main"
    assert facets["catalog"]["warehouseUri"] == setup.data_path
    assert edges(facets["columnLineage"], "amount") == {
        ("s3://landing", "examples/orders.parquet", "amount", "DIRECT", "IDENTITY")
    }
    stats = orders["outputFacets"]["outputStatistics"]
    # (exact files and bytes are checked against the catalog in tests/integration/test_lineage_runtime.py;
    # here the DAG's maintenance task has merged the files since)
    assert stats["rowCount"] == 1000 and stats["fileCount"] >= 1 and stats["size"] > 0

    correct = lake_events["correct_orders"]  # a .sql file: lineage known only at run time
    orders = dataset(correct["outputs"], "ducklake://main", "sales.orders")
    corrected_snapshot = xcoms["correct_orders"]["catalog_info"]["snapshot_after"]
    assert orders["facets"]["version"]["datasetVersion"] == str(corrected_snapshot)
    assert ("ducklake://main", "sales.orders", "amount", "DIRECT", "TRANSFORMATION") in edges(
        orders["facets"]["columnLineage"], "amount"
    )
    affected = sum(c.get("affected_rows") or 0 for c in xcoms["correct_orders"]["result"]["commands"])
    assert orders["outputFacets"]["outputStatistics"]["rowCount"] == affected
    dataset(correct["inputs"], "ducklake://main", "sales.orders")  # UPDATE/DELETE/MERGE read it too

    # -- the data table: Postgres naming, schema from information_schema ----------------------
    table_events = complete_events(events, "example_datatable")
    assert {"insert_rows", "create_table", "signed_up_since"} <= set(table_events), _missing_events(events, outputs)
    conn = json.loads(env["AIRFLOW_CONN_DATATABLE_MAIN"])
    customers = dataset(
        table_events["insert_rows"]["outputs"],
        f"postgres://{conn['host']}:{conn['port']}",
        f"{conn['schema']}.analytics.customers",
    )
    assert [f["name"] for f in customers["facets"]["schema"]["fields"]] == [
        "id",
        "name",
        "email",
        "signed_up",
        "lifetime_value",
        "profile",
    ]
    assert customers["outputFacets"]["outputStatistics"]["rowCount"] == 3
    assert {"namespace": "datatable://main", "name": "analytics.customers", "type": "TABLE"} in customers["facets"][
        "symlinks"
    ]["identifiers"]
    truncate = dataset(
        table_events["create_table"]["outputs"],
        f"postgres://{conn['host']}:{conn['port']}",
        f"{conn['schema']}.analytics.customers",
    )
    assert truncate["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "TRUNCATE"

    # TaskFlow code querying through the hook: Airflow's hook-lineage collector reports the read
    taskflow = table_events["signed_up_since"]
    assert [(d["namespace"], d["name"]) for d in taskflow["inputs"]] == [
        (f"postgres://{conn['host']}:{conn['port']}", f"{conn['schema']}.analytics.customers")
    ]
    assert taskflow["outputs"] == []

    # -- Airflow's assets: declared at parse time, published at run time -----------------------
    db = read_assets(env, runs=[operations.run_id, tables.run_id])
    for uri in (
        "ducklake://main/sales.orders",
        "s3://landing/examples/orders.parquet",
        "datatable://main/analytics.customers",
    ):
        assert uri in db["assets"]
    assert db["aliases"]["lakehouse__example_ducklake_operations__correct_orders"] == ["ducklake://main/sales.orders"]
    # Each output's column lineage record (what the Lakehouse views draw) is checked apart from the counts.
    records = {
        (e["task"], e["uri"]): LineageRecord.from_extra(e["extra"])
        for e in db["events"]
        if e["dag"] == "example_ducklake_operations"
    }
    load_record = records[("load_orders", "ducklake://main/sales.orders")]
    landing = "s3://landing/examples/orders.parquet"
    assert load_record is not None
    assert {k: set(v) for k, v in load_record.reads.items()} == {
        landing: {"amount", "customer_id", "order_day", "order_id"}
    }
    assert (landing, "amount", "DIRECT", "IDENTITY") in {
        (e.source, e.column, e.type, e.subtype) for e in load_record.columns["amount"]
    }
    extras = {
        (e["task"], e["uri"]): {k: v for k, v in e["extra"].items() if k != EXTRA_KEY}
        for e in db["events"]
        if e["dag"] == "example_ducklake_operations"
    }
    order_columns = ["amount", "customer_id", "order_day", "order_id"]
    assert extras[("land_files", "s3://landing/examples/orders.parquet")] == {
        "rows_written": 1000,
        "columns_written": order_columns,
    }
    assert extras[("load_orders", "ducklake://main/sales.orders")] == {
        "snapshot_id": loaded_snapshot,
        "rows_written": 1000,
        "columns_written": order_columns,
    }
    assert extras[("correct_orders", "ducklake://main/sales.orders")] == {  # UPDATE amount, MERGE's INSERT list
        "snapshot_id": corrected_snapshot,
        "rows_written": affected,
        "columns_written": order_columns,
    }
    # a DAG scheduled on the lake table got a run queued by the table's change
    assert ["ducklake://main/sales.orders", "example_lineage_consumer"] in db["queued"]
    table_extras = {
        (e["task"], e["uri"]): {k: v for k, v in e["extra"].items() if k != EXTRA_KEY}
        for e in db["events"]
        if e["dag"] == "example_datatable"
    }
    assert table_extras[
        ("insert_rows", "datatable://main/analytics.customers")
    ] == {  # * of jsonb_to_recordset AS r(...)
        "rows_written": 3,
        "columns_written": ["email", "id", "lifetime_value", "name", "profile", "signed_up"],
    }
