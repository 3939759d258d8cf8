"""Introspection: snapshot history and table sizes (a table's changes: :mod:`.change_feed`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_provider_lakehouse.ducklake import changes as changelog
from airflow_provider_lakehouse.ducklake import metadata
from airflow_provider_lakehouse.ducklake.model import Snapshot
from airflow_provider_lakehouse.ducklake.reader import read_inlined_rows

if TYPE_CHECKING:
    from airflow_provider_lakehouse.ducklake.catalog import DuckLake

# DuckDB's ducklake_snapshots() keys for each change token
_SNAPSHOT_KEYS = {
    "created_schema": "schemas_created",
    "dropped_schema": "schemas_dropped",
    "created_table": "tables_created",
    "dropped_table": "tables_dropped",
    "created_view": "views_created",
    "dropped_view": "views_dropped",
    "inserted_into_table": "tables_inserted_into",
    "deleted_from_table": "tables_deleted_from",
    "altered_table": "tables_altered",
    "altered_view": "views_altered",
    "inlined_insert": "inlined_insert",
    "inlined_delete": "inlined_delete",
    "inline_flush": "inline_flush",
    "flushed_inlined": "inline_flush",
    "merge_adjacent": "merge_adjacent",
    "rewrite_delete": "rewrite_delete",
    "compacted_table": "merge_adjacent",
}


@dataclass(frozen=True)
class SnapshotInfo:
    """A snapshot with its changes grouped like DuckDB's ``ducklake_snapshots()``."""

    snapshot_id: int
    snapshot_time: Any
    schema_version: int
    changes: dict[str, list[str]]
    author: str | None
    commit_message: str | None
    commit_extra_info: str | None


@dataclass(frozen=True)
class TableStats:
    """What ``ducklake_table_info()`` reports, plus the schema's name and the live row count."""

    schema_name: str
    table_name: str
    table_id: int
    file_count: int
    file_size_bytes: int
    delete_file_count: int
    delete_file_size_bytes: int
    row_count: int
    inlined_row_count: int
    schema_id: int = 0
    table_uuid: str = ""


def group_changes(text: str | None) -> dict[str, list[str]]:
    """``changes_made`` grouped the way ``ducklake_snapshots()`` shows it.

    >>> group_changes('created_table:"main"."t",inserted_into_table:1')
    {'tables_created': ['main.t'], 'tables_inserted_into': ['1']}
    """
    grouped: dict[str, list[str]] = {}
    for token in changelog._split(text or ""):
        kind, _, value = token.partition(":")
        if kind in ("created_schema", "created_table", "created_view"):
            value = ".".join(changelog._unquote_parts(value))
        grouped.setdefault(_SNAPSHOT_KEYS.get(kind, kind), []).append(value)
    return grouped


def snapshots(lake: DuckLake) -> list[SnapshotInfo]:
    with lake.store.connection() as conn:
        snaps: list[Snapshot] = metadata.list_snapshots(conn)
    return [
        SnapshotInfo(
            s.snapshot_id,
            s.snapshot_time,
            s.schema_version,
            group_changes(s.changes),
            s.author,
            s.commit_message,
            s.commit_extra_info,
        )
        for s in snaps
    ]


def table_info(lake: DuckLake, *, version: int | None = None) -> list[TableStats]:
    """Visible files, bytes and live rows of every table (rows: DuckDB's metadata-only COUNT(*) formula)."""
    result = []
    with lake.store.connection() as conn:
        snap = lake.snapshot(version, conn=conn).snapshot_id
        for table in metadata.tables_at(conn, snap):
            files = metadata.data_files_at(conn, table, lake.table_dir(table), snap)
            # every live delete file counts, as in DuckDB's formula (a DuckDB lake can have two for one file)
            deletes = [d for f in files for d in f.live_delete_files]
            inlined = read_inlined_rows(
                conn, table, table.columns[:1], snap, schema_at_version=lake.inlined_schemas(conn, table)
            ).num_rows
            live = sum(f.record_count for f in files) - sum(d.delete_count for d in deletes)
            live -= sum(1 for f in files for _p, s in f.inlined_deletes if s <= snap)
            result.append(
                TableStats(
                    table.schema_name,
                    table.name,
                    table.table_id,
                    len(files),
                    sum(f.file_size_bytes for f in files),
                    len(deletes),
                    sum(d.file_size_bytes for d in deletes),
                    live + inlined,
                    inlined,
                    schema_id=table.schema_id,
                    table_uuid=table.uuid,
                )
            )
    return result
