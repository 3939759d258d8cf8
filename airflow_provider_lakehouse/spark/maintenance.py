"""The catalog table functions (``ducklake_snapshots()`` ...) and maintenance CALLs, on the driver."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa

from airflow_provider_lakehouse.ducklake.catalog import DuckLake
from airflow_provider_lakehouse.exceptions import LakehouseError
from airflow_provider_lakehouse.spark.plan import CatalogRef
from airflow_provider_lakehouse.spark.steps import Call


def catalog_function(lake: DuckLake, ref: CatalogRef) -> pa.Table:
    """The rows of ``ref.function`` as DuckDB's ``ducklake`` extension returns them (same column names)."""
    args = list(ref.args[1:])  # the first argument names the attached catalog
    if ref.function == "ducklake_snapshots":
        rows = [
            {
                "snapshot_id": s.snapshot_id,
                "snapshot_time": s.snapshot_time,
                "schema_version": s.schema_version,
                "changes": json.dumps(s.changes),
                "author": s.author,
                "commit_message": s.commit_message,
                "commit_extra_info": s.commit_extra_info,
            }
            for s in lake.snapshots()
        ]
        schema = pa.schema(
            [
                ("snapshot_id", pa.int64()),
                ("snapshot_time", pa.timestamp("us", tz="UTC")),
                ("schema_version", pa.int64()),
                ("changes", pa.string()),
                ("author", pa.string()),
                ("commit_message", pa.string()),
                ("commit_extra_info", pa.string()),
            ]
        )
        return pa.Table.from_pylist(rows, schema=schema)
    if ref.function == "ducklake_table_info":
        # DuckDB 1.5's columns, in its order: no schema name, no row count (a query naming them fails there)
        rows = [
            {
                "table_name": t.table_name,
                "schema_id": t.schema_id,
                "table_id": t.table_id,
                "table_uuid": t.table_uuid,
                "file_count": t.file_count,
                "file_size_bytes": t.file_size_bytes,
                "delete_file_count": t.delete_file_count,
                "delete_file_size_bytes": t.delete_file_size_bytes,
            }
            for t in lake.table_info()
        ]
        schema = pa.schema(
            [
                ("table_name", pa.string()),
                ("schema_id", pa.int64()),
                ("table_id", pa.int64()),
                ("table_uuid", pa.string()),
                ("file_count", pa.int64()),
                ("file_size_bytes", pa.int64()),
                ("delete_file_count", pa.int64()),
                ("delete_file_size_bytes", pa.int64()),
            ]
        )
        return pa.Table.from_pylist(rows, schema=schema)
    if ref.function == "ducklake_table_changes":
        if len(args) != 4:
            raise LakehouseError(
                "ducklake_table_changes(catalog, schema, table, start_snapshot, end_snapshot) takes five arguments."
            )
        schema_name, table, start, end = args
        return lake.table_changes(f"{schema_name}.{table}", int(start), int(end))
    raise LakehouseError(f"Unknown catalog function {ref.function}.")


def run_call(
    lake: DuckLake,
    name: str,
    call: Call,
    evaluate: Callable[[str], Any],
    *,
    author: str | None = None,
    message: str | None = None,
    annotations: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Run the maintenance CALL of function ``name``; ``call``'s named arguments are Spark SQL expressions,
    evaluated with ``evaluate``.

    Snapshots it commits (merging files, flushing inlined rows) carry ``author``, ``message`` and the JSON
    fields ``annotations`` (the task that ran it); their ids are returned under ``snapshot_ids``.
    """
    named = {k: evaluate(v) for k, v in call.named.items()}
    positional = list(call.positional)
    older_than = _instant(named.pop("older_than", None))
    dry_run = bool(named.pop("dry_run", False))
    if name == "ducklake_expire_snapshots":
        versions = named.pop("versions", None)
        report = lake.expire_snapshots(
            older_than=older_than, versions=list(versions) if versions else None, dry_run=dry_run
        )
        _no_more(name, named)
        return {"snapshots_expired": report.snapshots_expired, "dry_run": dry_run}
    if name == "ducklake_cleanup_old_files":
        cleanup_all = bool(named.pop("cleanup_all", False))
        _no_more(name, named)
        report = lake.cleanup_old_files(older_than=older_than, cleanup_all=cleanup_all, dry_run=dry_run)
        return {"files_deleted": report.files_deleted or report.files_scheduled, "dry_run": dry_run}
    if name == "ducklake_delete_orphaned_files":
        _no_more(name, named)
        report = lake.delete_orphaned_files(older_than=older_than, dry_run=dry_run)
        return {"files_deleted": report.files_deleted, "dry_run": dry_run}
    tables = _tables(lake, positional, named)
    _no_more(name, named)
    if name == "ducklake_merge_adjacent_files":
        reports = {
            t: lake.merge_adjacent_files(t, author=author, message=message, annotations=annotations) for t in tables
        }
        merged = {t: r.files_merged for t, r in reports.items()}
        return {"files_merged": sum(merged.values()), "tables": merged, "snapshot_ids": _created(reports)}
    if name == "ducklake_flush_inlined_data":
        reports = {
            t: lake.flush_inlined_data(t, author=author, message=message, annotations=annotations) for t in tables
        }
        flushed = {t: r.rows_flushed for t, r in reports.items()}
        return {"rows_flushed": sum(flushed.values()), "tables": flushed, "snapshot_ids": _created(reports)}
    raise LakehouseError(f"Unknown maintenance call {name}.")


def _created(reports: dict[str, Any]) -> list[int]:
    return [r.snapshot_id for r in reports.values() if r.snapshot_id is not None]


def _tables(lake: DuckLake, positional: list[Any], named: dict[str, Any]) -> list[str]:
    schema = named.pop("schema_name", None) or named.pop("schema", None)
    table = named.pop("table_name", None) or (positional[0] if positional else None)
    if table:
        return [f"{schema or 'main'}.{table}" if "." not in str(table) else str(table)]
    return [t.qualified_name for t in lake.tables() if schema is None or t.schema_name == schema]


def _instant(value: Any) -> dt.datetime | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time(), tzinfo=dt.UTC)
    return dt.datetime.fromisoformat(str(value))


def _no_more(name: str | None, named: dict[str, Any]) -> None:
    if named:
        raise LakehouseError(f"{name}: unsupported argument(s) {', '.join(sorted(named))}.")
