"""The Lakehouse API on a real api-server after the example DAGs ran under the scheduler: access control,
and every view checked against DuckDB (the DuckLake referee), psycopg and the lineage extractor."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from airflow_provider_lakehouse.hooks._lineage import SqlTarget, lineage_record
from airflow_provider_lakehouse.lineage import extract_lineage
from airflow_provider_lakehouse.plugins.api.values import cell
from tests import referee
from tests.ui.harness import LakehouseAirflow

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ORDERS = "ducklake://main/sales.orders"
LAKE_PATHS = [
    "lakes/main/snapshots",
    "lakes/main/tables/sales.orders",
    "lakes/main/tables/sales.orders/preview",
    "lakes/main/tables/sales.orders/changes?start=1&end=2",
    "datatables/main",
    "datatables/main/tables/analytics.customers/preview",
]
LINEAGE_PATHS = [f"lineage?dataset={ORDERS}", "dags/lakehouse_ui_report/dataflow"]


def duckdb_type(ducklake_type: str) -> str:
    """DuckLake's type names as DuckDB's DESCRIBE prints them."""
    names = {
        "int64": "BIGINT",
        "int32": "INTEGER",
        "int16": "SMALLINT",
        "float64": "DOUBLE",
        "float32": "FLOAT",
        "varchar": "VARCHAR",
        "boolean": "BOOLEAN",
        "date": "DATE",
        "timestamp": "TIMESTAMP",
    }
    return names.get(ducklake_type, ducklake_type.upper())


def duck(lakehouse: LakehouseAirflow) -> Any:
    con = referee.connect()
    lakehouse.lake.attach(con)
    return con


def test_anonymous_and_forged_requests_are_refused(lakehouse: LakehouseAirflow) -> None:
    import httpx

    for path in ["overview", *LAKE_PATHS, *LINEAGE_PATHS]:
        anonymous = httpx.get(f"{lakehouse.url}/lakehouse/api/{path}", timeout=30)
        assert anonymous.status_code == 401, (path, anonymous.text[:200])
        forged = httpx.get(
            f"{lakehouse.url}/lakehouse/api/{path}", headers={"Authorization": "Bearer not.a.jwt"}, timeout=30
        )
        assert forged.status_code == 403, (path, forged.text[:200])


def test_a_viewer_may_see_lineage_but_not_the_data_of_connections_it_cannot_read(lakehouse: LakehouseAirflow) -> None:
    for path in LAKE_PATHS:
        response = lakehouse.get(path, user="viewer")
        assert response.status_code == 403, (path, response.text[:200])
        assert "connection" in response.json()["detail"]
    for path in LINEAGE_PATHS:
        assert lakehouse.get(path, user="viewer").status_code == 200, path
    overview = lakehouse.get("overview", user="viewer").json()
    assert overview == {"stores": [], "recent_changes": []}  # lists only stores whose connection it may read


def test_no_response_carries_a_credential(lakehouse: LakehouseAirflow) -> None:
    env = lakehouse.cluster.env
    secrets = [
        json.loads(env["AIRFLOW_CONN_DUCKLAKE_MAIN"])["password"],
        json.loads(env["AIRFLOW_CONN_LAKEHOUSE_S3"])["password"],
        json.loads(env["AIRFLOW_CONN_LAKEHOUSE_S3"])["login"],
    ]
    bodies = [lakehouse.get(p).text for p in ["overview", *LAKE_PATHS, *LINEAGE_PATHS]]
    bodies.append(lakehouse.get("lakes/main/tables/sales.nope").text)  # errors too
    for secret in secrets:
        assert all(secret not in body for body in bodies)
    assert all("X-Amz-" not in body and "@127.0.0.1" not in body for body in bodies)  # no presigned URL, no DSN


def test_identifiers_are_validated_and_previews_capped(lakehouse: LakehouseAirflow) -> None:
    assert lakehouse.get("lakes/main/tables/sales.orders;drop").status_code == 400
    assert lakehouse.get("lakes/ma-in/tables/sales.orders").status_code == 400
    assert lakehouse.get("lakes/main/tables/sales.orders/preview", limit=10_000).status_code == 422
    assert lakehouse.get("datatables/main/tables/analytics.nope/preview").status_code == 404
    assert lakehouse.get("lakes/nolake/tables/sales.orders").status_code == 404


def test_home_lists_lakes_data_tables_and_recent_changes_with_their_task(lakehouse: LakehouseAirflow) -> None:
    overview = lakehouse.get("overview").json()
    stores = {(s["kind"], s["name"]): s for s in overview["stores"]}
    lake = stores[("ducklake", "main")]
    assert lake["reachable"] and {"sales.orders", "main.messages", "sales.customer_totals"} <= set(lake["tables"])
    con = duck(lakehouse)
    assert lake["snapshot_count"] == referee.rows(con, "SELECT count(*) AS n FROM ducklake_snapshots('lake')")[0]["n"]
    assert stores[("datatable", "main")]["reachable"]
    assert "analytics.customers" in stores[("datatable", "main")]["tables"]
    tasks = {(c["task"]["dag_id"], c["task"]["task_id"]) for c in overview["recent_changes"] if c["task"]}
    assert ("lakehouse_ui_report", "top_customers") in tasks


def test_table_page_matches_the_catalog_as_duckdb_reads_it(lakehouse: LakehouseAirflow) -> None:
    page = lakehouse.get("lakes/main/tables/sales.orders").json()
    con = duck(lakehouse)
    described = referee.rows(con, "DESCRIBE lake.sales.orders")
    assert [(c["name"], duckdb_type(c["type"])) for c in page["columns"]] == [
        (d["column_name"], d["column_type"]) for d in described
    ]
    assert page["row_count"] == referee.rows(con, "SELECT count(*) AS n FROM lake.sales.orders")[0]["n"]
    files = referee.rows(con, "SELECT * FROM ducklake_list_files('lake', 'orders', schema => 'sales')")
    assert page["file_count"] == len(files)
    assert page["delete_file_count"] == sum(1 for f in files if f["delete_file"])
    by_task = {s["task"]["task_id"]: s["snapshot_id"] for s in page["snapshots"] if s["task"]}
    assert {"load_orders", "correct_orders"} <= set(by_task)
    assert all(
        s["task"]["dag_id"] == "example_ducklake_operations"
        for s in page["snapshots"]
        if s["task"] and s["task"]["task_id"] in ("load_orders", "correct_orders")
    )
    xcom = lakehouse.cluster.xcom(
        "example_ducklake_operations", lakehouse.runs["example_ducklake_operations"], "load_orders"
    )
    assert by_task["load_orders"] == xcom["catalog_info"]["snapshot_after"]
    amount = next(c for c in page["columns"] if c["name"] == "amount")
    assert amount["min_value"] is not None and amount["max_value"] is not None


def test_snapshot_list_is_duckdbs(lakehouse: LakehouseAirflow) -> None:
    listed = lakehouse.get("lakes/main/snapshots", limit=1000).json()
    con = duck(lakehouse)
    ids = [
        r["snapshot_id"]
        for r in referee.rows(con, "SELECT snapshot_id FROM ducklake_snapshots('lake') ORDER BY snapshot_id DESC")
    ]
    assert [s["snapshot_id"] for s in listed] == ids
    page = lakehouse.get("lakes/main/snapshots", offset=1, limit=2).json()
    assert [s["snapshot_id"] for s in page] == ids[1:3]


@pytest.mark.parametrize("table", ["sales.orders", "main.messages", "sales.top_customers"])
def test_preview_at_every_snapshot_equals_duckdbs_rows(lakehouse: LakehouseAirflow, table: str) -> None:
    con = duck(lakehouse)
    page = lakehouse.get(f"lakes/main/tables/{table}").json()
    assert page["snapshots"], table
    for snapshot in [s["snapshot_id"] for s in page["snapshots"]]:
        preview = lakehouse.get(f"lakes/main/tables/{table}/preview", version=snapshot, limit=100).json()
        expected = referee.rows(con, f"SELECT * FROM lake.{table} AT (VERSION => {snapshot}) ORDER BY rowid LIMIT 100")
        assert preview["snapshot_id"] == snapshot
        assert preview["rows"] == [[cell(v) for v in row.values()] for row in expected], (table, snapshot)
    projected = lakehouse.get(f"lakes/main/tables/{table}/preview", columns=page["columns"][-1]["name"], limit=5).json()
    assert projected["columns"] == [page["columns"][-1]["name"]] and len(projected["rows"]) <= 5


@pytest.mark.parametrize("table", ["main.messages", "sales.customer_totals", "sales.orders", "sales.top_customers"])
def test_changes_between_snapshots_equal_ducklake_table_changes(lakehouse: LakehouseAirflow, table: str) -> None:
    """Every pair of snapshots, row for row: main.messages (inserts by a task and by DuckDB, inlined rows, a
    DuckDB delete), sales.orders (rows updated then deleted by one task's script: DuckDB lists each step, and so
    do we), sales.top_customers (created and deleted from by one script)."""
    con = duck(lakehouse)
    schema, name = table.split(".")
    ids = sorted(s["snapshot_id"] for s in lakehouse.get(f"lakes/main/tables/{table}").json()["snapshots"])
    for start in ids:
        for end in (i for i in ids if i >= start):
            changes = lakehouse.get(f"lakes/main/tables/{table}/changes", start=start, end=end, limit=500).json()
            expected = referee.rows(
                con, f"SELECT * FROM ducklake_table_changes('lake', '{schema}', '{name}', {start}, {end})"
            )
            shown = Counter(map(repr, changes["rows"]))
            listed = Counter(repr([cell(e[c]) for c in changes["columns"]]) for e in expected)
            if changes["truncated"]:  # the first 500 by (snapshot, row id, kind): a part of DuckDB's rows
                assert len(changes["rows"]) == 500 < len(expected) and not shown - listed, (table, start, end)
                kind_order = {"update_preimage": 0, "update_postimage": 1, "delete": 2, "insert": 3}
                first = sorted((e["snapshot_id"], e["rowid"], kind_order[e["change_type"]]) for e in expected)[:500]
                at = {c: i for i, c in enumerate(changes["columns"])}
                assert [
                    (r[at["snapshot_id"]], r[at["rowid"]], kind_order[r[at["change_type"]]]) for r in changes["rows"]
                ] == first
            else:
                assert shown == listed, (table, start, end)
            assert changes["counts"] == {
                k: sum(1 for e in expected if e["change_type"] == k) for k in {e["change_type"] for e in expected}
            }


def test_data_table_page_and_preview_equal_postgres(lakehouse: LakehouseAirflow) -> None:
    import psycopg

    detail = lakehouse.get("datatables/main").json()
    tables = {f"{t['schema_name']}.{t['name']}": t for s in detail["schemas"] for t in s["tables"]}
    customers = tables["analytics.customers"]
    assert [c["name"] for c in customers["columns"]] == [
        "id",
        "name",
        "email",
        "signed_up",
        "lifetime_value",
        "profile",
    ]
    assert customers["asset_uri"] == "datatable://main/analytics.customers"
    preview = lakehouse.get("datatables/main/tables/analytics.customers/preview").json()
    conn = json.loads(lakehouse.cluster.env["AIRFLOW_CONN_DATATABLE_MAIN"])
    with psycopg.connect(
        host=conn["host"], port=conn["port"], user=conn["login"], password=conn["password"], dbname=conn["schema"]
    ) as pg:
        rows = pg.execute("SELECT * FROM analytics.customers LIMIT 100").fetchall()
    assert preview["rows"] == [[cell(v) for v in row] for row in rows]


def _expected_edges(sql: str, output: str) -> set[tuple[str, str, str | None, str, str]]:
    target = SqlTarget("ducklake", "main", "main", "duckdb")
    lineage = extract_lineage(sql, "duckdb", "main")
    out = next(d for d in lineage.outputs if target.dataset_id(d.dataset) == output)
    record = lineage_record(lineage, out, target)
    edges: set[tuple[str, str, str | None, str, str]] = set()
    for column, column_edges in record.columns.items():
        edges |= {(e.source, e.column, column, e.type, e.subtype) for e in column_edges}
    edges |= {(e.source, e.column, None, e.type, e.subtype) for e in record.rows}
    return edges


def test_column_lineage_graph_equals_the_extractors_output(lakehouse: LakehouseAirflow) -> None:
    from tests.ui.dags.lakehouse_ui_report import PREAMBLE

    totals = "ducklake://main/sales.customer_totals"
    graph = lakehouse.get("lineage", dataset=totals).json()
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert nodes[totals]["depth"] == 0 and nodes[ORDERS]["depth"] == -1
    assert nodes["ducklake://main/sales.top_customers"]["depth"] == 1
    assert nodes[totals]["asset_id"] is not None  # links to Airflow's asset page
    sql = (
        PREAMBLE
        + """
            CREATE OR REPLACE TABLE sales.customer_totals AS
                SELECT customer_id, count(*) AS orders, round(sum(amount), 2) AS revenue, max(order_day) AS last_day
                FROM sales.orders WHERE amount > 0 GROUP BY customer_id;
        """
    )
    got = {
        (e["source"], e["source_column"], e["target_column"], e["type"], e["subtype"])
        for e in graph["edges"]
        if e["task_id"] == "customer_totals"
    }
    assert got == _expected_edges(sql, totals)
    assert all(
        e["origin"] == "run" and e["dag_id"] == "lakehouse_ui_report"
        for e in graph["edges"]
        if e["task_id"] == "customer_totals"
    )
    # upstream of sales.orders: load_orders read the landing file
    upstream = lakehouse.get("lineage", dataset=ORDERS).json()
    assert any(
        e["source"] == "s3://landing/examples/orders.parquet" and e["task_id"] == "load_orders"
        for e in upstream["edges"]
    )


def test_dag_data_flow_shows_reads_and_writes_with_columns(lakehouse: LakehouseAirflow) -> None:
    flow = lakehouse.get("dags/lakehouse_ui_report/dataflow").json()
    tasks = {t["task_id"]: t for t in flow["tasks"]}
    totals = tasks["customer_totals"]
    assert totals["origin"] == "run"
    assert totals["reads"] == {ORDERS: ["amount", "customer_id", "order_day"]}
    assert totals["writes"] == {
        "ducklake://main/sales.customer_totals": ["customer_id", "last_day", "orders", "revenue"]
    }
    assert tasks["top_customers"]["reads"]["ducklake://main/main.messages"] == ["author", "sentiment"]
    # a DAG that has not run: its SQL says the same, from the serialized DAG
    sentiment = lakehouse.get("dags/example_ducklake_sentiment/dataflow").json()
    summary = {t["task_id"]: t for t in sentiment["tasks"]}["sentiment_summary"]
    assert summary["reads"] == {"ducklake://main/main.messages": ["sentiment"]}


def test_task_instance_lineage_names_snapshots_rows_and_edges(lakehouse: LakehouseAirflow) -> None:
    run_id = lakehouse.runs["example_ducklake_operations"]
    ti = lakehouse.get(f"dags/example_ducklake_operations/runs/{run_id}/tasks/load_orders/lineage").json()
    xcom = lakehouse.cluster.xcom("example_ducklake_operations", run_id, "load_orders")
    assert ti["origin"] == "run" and ti["try_number"] == 1
    assert ti["snapshot_read"] == xcom["catalog_info"]["snapshot_before"]
    (output,) = ti["outputs"]
    assert output == {
        "dataset": ORDERS,
        "rows_written": 1000,
        "snapshot_id": xcom["catalog_info"]["snapshot_after"],
        "columns_written": ["amount", "customer_id", "order_day", "order_id"],
        "link": "?lake=main&table=sales.orders",
    }
    assert ti["reads"] == {"s3://landing/examples/orders.parquet": ["amount", "customer_id", "order_day", "order_id"]}
    assert {(e["source_column"], e["target_column"], e["type"], e["subtype"]) for e in ti["edges"]} >= {
        ("amount", "amount", "DIRECT", "IDENTITY")
    }


def test_open_in_lakehouse_extra_link(lakehouse: LakehouseAirflow) -> None:
    import httpx

    run_id = lakehouse.runs["example_ducklake_operations"]
    response = httpx.get(
        f"{lakehouse.url}/api/v2/dags/example_ducklake_operations/dagRuns/{run_id}/taskInstances/load_orders/links",
        headers={"Authorization": f"Bearer {lakehouse.token('admin')}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    links = response.json()["extra_links"]
    assert links.get("Open in Lakehouse", "").endswith(
        f"/dags/example_ducklake_operations/runs/{run_id}/tasks/load_orders/plugin/lakehouse-lineage"
    )


def test_changes_of_a_geometry_column_are_duckdbs_text_of_each_value(lakehouse: LakehouseAirflow) -> None:
    """Inserted, updated and deleted ``GEOMETRY`` values are listed as DuckDB's text of each (its bytes were shown
    before), row for row as ``ducklake_table_changes`` lists them. The table is dropped again, as the browser
    test's geometry table is."""
    con = duck(lakehouse)
    con.sql("CREATE TABLE lake.main.routes (id INTEGER, shape GEOMETRY)")
    try:
        con.sql(
            "INSERT INTO lake.main.routes VALUES (1, 'POINT(4.9 52.37)'), (2, 'LINESTRING(0 0, 1.5 -2, 3 4)'), "
            "(3, NULL), (4, 'MULTIPOINT Z((1 2 3), (4 5 6))')"
        )
        con.sql("UPDATE lake.main.routes SET shape = 'POLYGON((0 0, 4 0, 4 4, 0 0))' WHERE id = 3")
        con.sql("DELETE FROM lake.main.routes WHERE id = 2")
        ids = sorted(s["snapshot_id"] for s in lakehouse.get("lakes/main/tables/main.routes").json()["snapshots"])
        assert len(ids) == 4
        changes = lakehouse.get("lakes/main/tables/main.routes/changes", start=ids[0], end=ids[-1]).json()
        expected = referee.rows(
            con,
            "SELECT snapshot_id, rowid, change_type, id, shape::VARCHAR AS shape "
            f"FROM ducklake_table_changes('lake', 'main', 'routes', {ids[0]}, {ids[-1]})",
        )
        assert changes["columns"] == ["snapshot_id", "rowid", "change_type", "id", "shape"]
        assert Counter(map(repr, changes["rows"])) == Counter(repr([cell(v) for v in e.values()]) for e in expected)
        assert [ids[2], 2, "update_postimage", 3, "POLYGON ((0 0, 4 0, 4 4, 0 0))"] in changes["rows"]
    finally:
        con.sql("DROP TABLE lake.main.routes")
