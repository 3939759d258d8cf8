"""Scheduled on a lake table: runs after any task (of any DAG, on any engine) changed ``sales.orders``.

``example_ducklake_operations`` writes that table; its asset events carry the DuckLake snapshot id and the
rows written, which this DAG reads.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import Asset, dag, task

ORDERS = Asset("ducklake://main/sales.orders")


@dag(schedule=[ORDERS], start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), catchup=False, tags=["lineage", "example"])
def example_lineage_consumer() -> None:
    @task(inlets=[ORDERS])
    def report_change(*, inlet_events: dict) -> dict:
        """Which snapshot of the lake table triggered this run, and how many rows changed."""
        event = inlet_events[ORDERS][-1]
        return {"snapshot_id": event.extra.get("snapshot_id"), "rows_written": event.extra.get("rows_written")}

    report_change()


example_lineage_consumer()
