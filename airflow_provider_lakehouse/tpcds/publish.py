"""Publish small lake aggregates to a Data Table (replacing its rows in one transaction)."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterable
from typing import Any


def _postgres_type(values: Iterable[Any]) -> str:
    for value in values:
        if value is None:
            continue
        if isinstance(value, bool):
            return "boolean"
        if isinstance(value, int):
            return "bigint"
        if isinstance(value, (float, decimal.Decimal)):
            return "numeric"
        if isinstance(value, (dt.date, str)) and _is_iso_date(value):
            return "date"
        return "text"
    return "text"


def _is_iso_date(value: Any) -> bool:
    if isinstance(value, dt.date):
        return True
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return len(value) == 10


def publish(
    lake: str,
    datatable: str,
    tables: Iterable[str],
    *,
    max_rows: int = 1_000_000,
    spark_conn_id: str | None = None,
    engine: str | None = None,
) -> dict[str, int]:
    """Copy ``agg.<table>`` of ``lake`` into schema ``agg`` of ``datatable``; returns rows per table.

    :param lake: the lake's name.
    :param datatable: the Data Table (``NAME`` or ``NAME:SCHEMA``; the tables go to its schema).
    :param tables: aggregate table names.
    :param max_rows: refuse tables larger than this (a Data Table is for small, operational results).
    :param spark_conn_id: the Spark connection reading the lake (None: the lake's own).
    :param engine: the engine reading the lake (``spark``, ``duckdb``, ``auto``; None: the lake's default).
    """
    from airflow_provider_lakehouse.hooks.datatable import DataTableHook
    from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook
    from airflow_provider_lakehouse.spark.driver import RunOptions

    lake_hook, table_hook = (
        DucklakeHook(ducklake=lake, spark_conn_id=spark_conn_id, engine=engine),
        DataTableHook(datatable=datatable),
    )
    published = {}
    for table in tables:
        response = lake_hook.run(
            f"ATTACH 'ducklake://{lake}' AS dl; USE dl; SELECT * FROM agg.{table}",
            options=RunOptions(max_rows=max_rows),
        )
        command = response["result"]["commands"][-1]
        if command.get("truncated"):
            raise ValueError(f"agg.{table} has {command['row_count']} rows, more than {max_rows}: too big to publish")
        rows, columns = command["rows"], command["columns"]
        names = [c["name"] if isinstance(c, dict) else str(c) for c in columns]
        ddl = ", ".join(f'"{n}" {_postgres_type(r.get(n) for r in rows)}' for n in names)
        table_hook.run(
            f'CREATE TABLE IF NOT EXISTS "{table}" ({ddl}); DELETE FROM "{table}"; '
            f'INSERT INTO "{table}" SELECT * FROM jsonb_populate_recordset(NULL::"{table}", $1::jsonb)',
            [rows],
            fetch="none",
        )
        published[table] = len(rows)
    return published
