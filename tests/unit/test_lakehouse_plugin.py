"""The Lakehouse plugin's pure parts: the lineage record kept in asset events, the graph built from records,
the listing of lakes and Data Tables from the environment, and what the plugin registers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_lakehouse.assets.lineage_extra import (
    EXTRA_KEY,
    Edge,
    LineageRecord,
)
from airflow_provider_lakehouse.hooks._lineage import SqlTarget, lineage_record
from airflow_provider_lakehouse.lineage import extract_lineage
from airflow_provider_lakehouse.plugins.api.lineage_graph import build_graph
from airflow_provider_lakehouse.plugins.api.lineage_index import RUN, TaskLineage

TARGET = SqlTarget("ducklake", "main", "main", "duckdb")


def record_of(sql: str, output: str) -> tuple[LineageRecord, tuple[str, ...]]:
    lineage = extract_lineage(sql, "duckdb", "main")
    out = next(d for d in lineage.outputs if TARGET.dataset_id(d.dataset) == output)
    return lineage_record(lineage, out, TARGET, snapshot_read=3, try_number=1), out.columns_written


def test_lineage_record_round_trips_through_an_asset_event_extra() -> None:
    record, _ = record_of(
        "CREATE TABLE s.daily AS SELECT day, sum(amount) AS total FROM s.orders WHERE amount > 0 GROUP BY day",
        "ducklake://main/s.daily",
    )
    extra = json.loads(json.dumps(record.to_extra()))  # as the metadata database stores it
    assert LineageRecord.from_extra(extra) == record
    assert Edge("ducklake://main/s.orders", "amount", "DIRECT", "AGGREGATION") in record.columns["total"]
    assert Edge("ducklake://main/s.orders", "amount", "INDIRECT", "FILTER") in record.rows
    assert record.reads == {"ducklake://main/s.orders": ("amount", "day")}
    assert LineageRecord.from_extra({EXTRA_KEY: {"v": 99}}) is None
    assert LineageRecord.from_extra({"rows_written": 3}) is None


def test_graph_walks_upstream_and_downstream_across_tasks() -> None:
    daily, daily_cols = record_of(
        "CREATE TABLE s.daily AS SELECT day, sum(amount) AS total FROM s.orders GROUP BY day", "ducklake://main/s.daily"
    )
    report, report_cols = record_of(
        "INSERT INTO s.report SELECT day, total * 2 AS doubled FROM s.daily", "ducklake://main/s.report"
    )
    records = [
        TaskLineage("d", "daily", "ducklake://main/s.daily", daily, RUN, daily_cols),
        TaskLineage("e", "report", "ducklake://main/s.report", report, RUN, report_cols),
    ]
    graph = build_graph("ducklake://main/s.daily", records)
    depth = {n.id: n.depth for n in graph.nodes}
    assert depth == {"ducklake://main/s.orders": -1, "ducklake://main/s.daily": 0, "ducklake://main/s.report": 1}
    edges = {(e.source, e.source_column, e.target, e.target_column, e.subtype, e.task_id) for e in graph.edges}
    assert ("ducklake://main/s.orders", "amount", "ducklake://main/s.daily", "total", "AGGREGATION", "daily") in edges
    assert (
        "ducklake://main/s.daily",
        "total",
        "ducklake://main/s.report",
        "doubled",
        "TRANSFORMATION",
        "report",
    ) in edges
    assert next(n for n in graph.nodes if n.id == "ducklake://main/s.report").link == "?lake=main&table=s.report"
    # from the far end, two hops upstream
    assert {n.id for n in build_graph("ducklake://main/s.report", records).nodes} == set(depth)


def test_stores_are_listed_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow_provider_lakehouse.plugins.api import stores

    monkeypatch.setenv("AIRFLOW_CONN_DUCKLAKE_SALES", json.dumps({"conn_type": "ducklake", "host": "h"}))
    monkeypatch.setenv("AIRFLOW_CONN_DATATABLE_OPS", "datatable://u:p@h:5432/db")
    monkeypatch.setenv("AIRFLOW_CONN_DUCKLAKE_NOTALAKE", json.dumps({"conn_type": "postgres"}))
    found = {(r.kind, r.name) for r in stores.list_stores()}
    assert {("ducklake", "sales"), ("datatable", "ops")} <= found
    assert ("ducklake", "notalake") not in found
    with pytest.raises(ValueError):
        stores.store_ref("ducklake", "../etc")


LIST_AND_OPEN = """
import json
from airflow_provider_lakehouse.plugins.api import stores
listed = [(r.kind, r.name) for r in stores.list_stores()]
spec = stores.lake_spec(stores.store_ref("ducklake", "vaulted"))
print(json.dumps({"listed": listed, "data_path": spec.data_path}))
"""


def test_a_lake_kept_only_in_a_secrets_backend_is_listed_once_named(tmp_path: Path) -> None:
    """Airflow's secrets backends cannot be listed; ``[lakehouse] listed_connections`` names what they hold."""
    secrets = tmp_path / "connections.json"
    secrets.write_text(
        json.dumps(
            {
                "ducklake_vaulted": {
                    "conn_type": "ducklake",
                    "extra": {
                        "catalog_sqlite_path": str(tmp_path / "catalog.sqlite"),
                        "data_path": str(tmp_path / "data") + "/",
                    },
                }
            }
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW_CONN_", "AIRFLOW__"))}
    env.update(
        AIRFLOW_HOME=str(tmp_path / "home"),
        AIRFLOW__SECRETS__BACKEND="airflow.secrets.local_filesystem.LocalFilesystemBackend",
        AIRFLOW__SECRETS__BACKEND_KWARGS=json.dumps({"connections_file_path": str(secrets)}),
    )

    def run() -> dict[str, Any]:
        result = subprocess.run(
            [sys.executable, "-c", LIST_AND_OPEN],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            cwd=tmp_path,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        return json.loads(result.stdout.strip().splitlines()[-1])

    unnamed = run()
    assert ["ducklake", "vaulted"] not in unnamed["listed"]  # opens by name, but nothing can list it
    assert unnamed["data_path"] == str(tmp_path / "data") + "/"
    env["AIRFLOW__LAKEHOUSE__LISTED_CONNECTIONS"] = "ducklake_vaulted, not_a_lake"
    assert ["ducklake", "vaulted"] in run()["listed"]


def test_plugin_serves_its_committed_bundle_as_javascript() -> None:
    from fastapi.testclient import TestClient

    from airflow_provider_lakehouse.plugins.api.app import BUNDLE, DIST, create_app
    from airflow_provider_lakehouse.plugins.lakehouse import (
        NAV_VIEW,
        TASK_VIEW,
        react_apps,
    )

    assert (DIST / BUNDLE).is_file()
    apps = react_apps()
    assert [a["destination"] for a in apps] == ["nav", "dag", "task_instance"]
    assert all(a["bundle_url"].endswith(f"/lakehouse/static/{BUNDLE}") for a in apps)
    source = (Path(DIST) / BUNDLE).read_text()
    assert NAV_VIEW in source and TASK_VIEW in source  # the bundle registers the names the plugin declares
    response = TestClient(create_app()).get(f"/static/{BUNDLE}")
    assert response.status_code == 200 and "javascript" in response.headers["content-type"]
