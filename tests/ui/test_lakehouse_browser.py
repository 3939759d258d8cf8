"""The Lakehouse views in real Chromium against a real api-server, after the example DAGs ran under the
scheduler: log in as a person would, open every view, check what it shows against DuckDB, Postgres and the
lineage extractor, and save screenshots (those in docs/ui.md with ``LAKEHOUSE_UI_SHOTS=docs/images``)."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_lakehouse.plugins.api.values import cell
from tests import referee
from tests.conftest import REPO_ROOT
from tests.ui.browser import browser, log_in
from tests.ui.harness import LakehouseAirflow

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: where the screenshots go: a scratch folder, so that a test run leaves the tree clean;
#: ``LAKEHOUSE_UI_SHOTS=docs/images`` refreshes the ones docs/ui.md and the README show
SHOTS = REPO_ROOT / os.environ.get("LAKEHOUSE_UI_SHOTS", str(Path(tempfile.gettempdir()) / "lakehouse-ui-shots"))
TIMEOUT = 60_000


def js_text(value: Any) -> str:
    """How the React app prints a JSON value (``cellText``): JavaScript's spelling of numbers and NULL."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def shot(page: Any, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.wait_for_timeout(300)  # let the last render settle
    page.screenshot(path=str(path), full_page=True)
    return path


def table_texts(page: Any, test_id: str) -> list[list[str]]:
    rows = page.get_by_test_id(test_id).locator("tbody tr")
    return [[c.strip() for c in rows.nth(i).locator("td").all_inner_texts()] for i in range(rows.count())]


@pytest.fixture(scope="module")
def chromium() -> Any:
    """One browser for the module (Playwright's sync API allows one at a time per thread)."""
    with browser() as instance:
        yield instance


@pytest.fixture(scope="module")
def page(lakehouse: LakehouseAirflow, chromium: Any) -> Any:
    context = chromium.new_context(viewport={"width": 1440, "height": 900}, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    log_in(page, lakehouse.url, "admin", lakehouse.passwords["admin"])
    page.plugin_errors = errors  # type: ignore[attr-defined]
    yield page
    context.close()


def test_anonymous_browser_is_refused(lakehouse: LakehouseAirflow, chromium: Any) -> None:
    context = chromium.new_context()
    response = context.request.get(f"{lakehouse.url}/lakehouse/api/overview")
    assert response.status == 401
    assert context.request.get(f"{lakehouse.url}/lakehouse/api/lakes/main/tables/sales.orders/preview").status == 401
    page = context.new_page()  # and the page itself, opened without logging in, sends the browser to log in
    page.goto(f"{lakehouse.url}/plugin/lakehouse")
    # Airflow's UI loads first, then redirects; closing the context while that navigation is in flight can hang
    # Chromium's close, so the test waits for the login page it expects.
    page.wait_for_url(lambda url: "/auth/login" in url, timeout=TIMEOUT)
    page.wait_for_load_state("load")
    assert page.get_by_test_id("store-ducklake-main").count() == 0
    page.close()
    context.close()


def test_home(page: Any, lakehouse: LakehouseAirflow) -> None:
    page.goto(f"{lakehouse.url}/plugin/lakehouse")
    lake = page.get_by_test_id("store-ducklake-main")
    lake.wait_for()
    assert "reachable" in lake.inner_text()
    for table in ("sales.orders", "sales.customer_totals", "main.messages"):
        assert page.get_by_test_id(f"table-link-main-{table}").is_visible()
    assert page.get_by_test_id("store-datatable-main").is_visible()
    recent = page.get_by_test_id("recent-changes").inner_text()
    assert "lakehouse_ui_report.top_customers" in recent
    assert not [e for e in page.plugin_errors if "Component failed to load" in e]
    shot(page, "ui-home")


def test_lake_table_page(page: Any, lakehouse: LakehouseAirflow) -> None:
    con = referee.connect()
    lakehouse.lake.attach(con)
    page.goto(f"{lakehouse.url}/plugin/lakehouse")
    page.get_by_test_id("table-link-main-sales.orders").click()
    page.get_by_test_id("columns-table").wait_for()
    shown = [r[0] for r in table_texts(page, "columns-table")]
    assert shown == [d["column_name"] for d in referee.rows(con, "DESCRIBE lake.sales.orders")]
    count = referee.rows(con, "SELECT count(*) AS n FROM lake.sales.orders")[0]["n"]
    assert page.get_by_test_id("stat-rows").inner_text() == f"{count:,}"
    shot(page, "ui-lake-table")

    page.get_by_role("tab", name=re.compile("^Snapshots")).click()
    timeline = page.get_by_test_id("snapshot-timeline")
    timeline.wait_for()
    api = lakehouse.get("lakes/main/tables/sales.orders").json()
    assert [int(r[0]) for r in table_texts(page, "snapshot-timeline")] == [s["snapshot_id"] for s in api["snapshots"]]
    assert "example_ducklake_operations.load_orders" in timeline.inner_text()
    shot(page, "ui-lake-snapshots")

    page.get_by_role("tab", name=re.compile("^Files")).click()
    page.get_by_test_id("files-table").wait_for()
    assert len(table_texts(page, "files-table")) == api["file_count"]

    # preview at the snapshot load_orders committed: the rows DuckDB returns at that version
    loaded = next(s["snapshot_id"] for s in api["snapshots"] if s["task"] and s["task"]["task_id"] == "load_orders")
    page.get_by_role("tab", name="Preview").click()
    page.get_by_label("preview snapshot").select_option(str(loaded))
    page.get_by_label("preview rows").fill("25")
    page.get_by_test_id("preview-apply").click()
    page.get_by_test_id("preview-caption").filter(has_text=f"at snapshot {loaded}").wait_for()
    expected = referee.rows(con, f"SELECT * FROM lake.sales.orders AT (VERSION => {loaded}) ORDER BY rowid LIMIT 25")
    assert table_texts(page, "preview-rows") == [[js_text(cell(v)) for v in row.values()] for row in expected]
    shot(page, "ui-lake-preview")

    # changes of main.messages (a task's inserts, DuckDB's inlined inserts and a delete) equal DuckDB's
    messages = lakehouse.get("lakes/main/tables/main.messages").json()
    first, last = messages["snapshots"][-1]["snapshot_id"], messages["snapshots"][0]["snapshot_id"]
    page.goto(f"{lakehouse.url}/plugin/lakehouse?lake=main&table=main.messages&tab=changes")
    page.get_by_label("changes from").select_option(str(first))
    page.get_by_label("changes to").select_option(str(last))
    page.get_by_test_id("changes-apply").click()
    counts = page.get_by_test_id("changes-counts")
    counts.wait_for()
    page.get_by_test_id("changes-rows").wait_for()
    duck = referee.rows(
        con,
        f"SELECT * FROM ducklake_table_changes('lake', 'main', 'messages', {first + 1}, {last}) "
        "ORDER BY snapshot_id, rowid",
    )
    for kind in {r["change_type"] for r in duck}:
        assert f"{kind}: {sum(1 for r in duck if r['change_type'] == kind)}" in counts.inner_text()
    shown = table_texts(page, "changes-rows")
    assert sorted(shown) == sorted([js_text(cell(r[c])) for c in duck[0]] for r in duck)
    shot(page, "ui-lake-changes")


def test_data_table_page(page: Any, lakehouse: LakehouseAirflow) -> None:
    import psycopg

    page.goto(f"{lakehouse.url}/plugin/lakehouse?datatable=main&table=analytics.customers")
    page.get_by_test_id("datatable-preview-rows").wait_for()
    conn = json.loads(lakehouse.cluster.env["AIRFLOW_CONN_DATATABLE_MAIN"])
    with psycopg.connect(
        host=conn["host"], port=conn["port"], user=conn["login"], password=conn["password"], dbname=conn["schema"]
    ) as pg:
        rows = pg.execute("SELECT * FROM analytics.customers LIMIT 100").fetchall()
    assert table_texts(page, "datatable-preview-rows") == [[js_text(cell(v)) for v in row] for row in rows]
    assert "Robert'); DROP TABLE customers;--" in page.get_by_test_id("datatable-preview-rows").inner_text()
    shot(page, "ui-datatable")


def test_column_lineage_graph_and_impact(page: Any, lakehouse: LakehouseAirflow) -> None:
    focus = "ducklake://main/sales.customer_totals"
    page.goto(f"{lakehouse.url}/plugin/lakehouse?lineage={focus}")
    page.get_by_test_id("lineage-graph").wait_for()
    api = lakehouse.get("lineage", dataset=focus).json()
    assert page.get_by_test_id("lineage-edges").locator("tbody tr").count() == len(api["edges"])
    for node in api["nodes"]:
        assert page.locator(f"[data-node='{node['id']}']").count() == 1
    # impact analysis: revenue comes from orders.amount and flows into top_customers.revenue
    page.locator(f"[data-column='{focus}#revenue']").click()
    assert page.locator(f"[data-column='{focus}#revenue']").get_attribute("data-state") == "selected"
    assert page.locator("[data-column='ducklake://main/sales.orders#amount']").get_attribute("data-state") == "upstream"
    assert (
        page.locator("[data-column='ducklake://main/sales.top_customers#revenue']").get_attribute("data-state")
        == "downstream"
    )
    edge_texts = page.get_by_test_id("lineage-edges").inner_text()
    assert "DIRECT AGGREGATION" in edge_texts and "customer_totals" in edge_texts
    shot(page, "ui-lineage")


def test_dag_data_flow(page: Any, lakehouse: LakehouseAirflow) -> None:
    page.goto(f"{lakehouse.url}/dags/lakehouse_ui_report/plugin/lakehouse-flow")
    card = page.locator("[data-task='customer_totals']")
    card.wait_for()
    read = card.locator("[data-dataset='ducklake://main/sales.orders'][data-access='read'] [data-badge]")
    assert read.all_inner_texts() == ["amount", "customer_id", "order_day"]
    written = card.locator("[data-access='written'] [data-badge]")
    assert written.all_inner_texts() == ["customer_id", "last_day", "orders", "revenue"]
    assert page.locator("[data-task='top_customers']").is_visible()
    shot(page, "ui-dag-dataflow")


def test_task_instance_lineage(page: Any, lakehouse: LakehouseAirflow) -> None:
    run_id = lakehouse.runs["example_ducklake_operations"]
    xcom = lakehouse.cluster.xcom("example_ducklake_operations", run_id, "load_orders")
    page.goto(
        f"{lakehouse.url}/dags/example_ducklake_operations/runs/{run_id}/tasks/load_orders/plugin/lakehouse-lineage"
    )
    datasets = page.get_by_test_id("ti-datasets")
    datasets.wait_for()
    written = page.locator("[data-dataset='ducklake://main/sales.orders'][data-access='written']")
    assert "1,000" in written.inner_text() and str(xcom["catalog_info"]["snapshot_after"]) in written.inner_text()
    assert page.get_by_test_id("stat-snapshot read").inner_text() == str(xcom["catalog_info"]["snapshot_before"])
    assert page.get_by_test_id("ti-edges").locator("tbody tr").count() >= 4
    shot(page, "ui-task-lineage")


def test_dark_mode(lakehouse: LakehouseAirflow, chromium: Any) -> None:
    context = chromium.new_context(viewport={"width": 1440, "height": 900}, color_scheme="dark")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    page.add_init_script("localStorage.setItem('theme', 'dark')")
    log_in(page, lakehouse.url, "admin", lakehouse.passwords["admin"])
    page.goto(f"{lakehouse.url}/plugin/lakehouse?lake=main&table=sales.orders")
    page.get_by_test_id("columns-table").wait_for()
    assert "dark" in (page.locator("html").get_attribute("class") or "")
    shot(page, "ui-lake-table-dark")
    context.close()


def test_geometry_preview(page: Any, lakehouse: LakehouseAirflow) -> None:
    """A ``GEOMETRY`` column DuckDB wrote into the lake previews as DuckDB's text of each value (its bytes were
    shown before). The table is dropped again, so the other views keep the example DAGs' tables."""
    con = referee.connect()
    lakehouse.lake.attach(con)
    con.sql("CREATE TABLE lake.main.places (id INTEGER, shape GEOMETRY)")
    try:
        con.sql(
            "INSERT INTO lake.main.places VALUES (1, 'POINT(4.9 52.37)'), (2, 'LINESTRING(0 0, 1.5 -2, 3 4)'), "
            "(3, NULL), (4, 'POLYGON((0 0, 4 0, 4 4, 0 0))'), (5, 'GEOMETRYCOLLECTION Z(POINT Z(1 2 3))')"
        )
        page.goto(f"{lakehouse.url}/plugin/lakehouse?lake=main&table=main.places&tab=preview")
        page.get_by_test_id("preview-rows").wait_for()
        expected = referee.rows(con, "SELECT id, shape::VARCHAR AS shape FROM lake.main.places ORDER BY rowid")
        assert table_texts(page, "preview-rows") == [[js_text(cell(v)) for v in row.values()] for row in expected]
        assert ["1", "POINT (4.9 52.37)"] in table_texts(page, "preview-rows")
        shot(page, "ui-lake-geometry-preview")
    finally:
        con.sql("DROP TABLE lake.main.places")
