"""Read the catalog at a snapshot: snapshots, schemas, tables with their column trees, files.

Every versioned row is visible at snapshot S when ``begin_snapshot <= S < end_snapshot`` (or the
end is NULL); that predicate is :data:`VISIBLE`.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any

from airflow_provider_lakehouse.ducklake.inline_codec import parse_timestamp
from airflow_provider_lakehouse.ducklake.model import (
    DataFileInfo,
    DeleteFileInfo,
    PartitionField,
    SchemaInfo,
    Snapshot,
    SortKey,
    TableInfo,
    ViewInfo,
)
from airflow_provider_lakehouse.ducklake.storage import join_path
from airflow_provider_lakehouse.ducklake.store import CatalogConnection
from airflow_provider_lakehouse.ducklake.types import Column, TableSchema
from airflow_provider_lakehouse.exceptions import SnapshotNotFoundError, SpecVersionError

VISIBLE = "(? >= {a}begin_snapshot AND (? < {a}end_snapshot OR {a}end_snapshot IS NULL))"
SUPPORTED_VERSION = "1.0"


def visible(alias: str = "") -> str:
    return VISIBLE.format(a=f"{alias}." if alias else "")


def parse_time(value: Any) -> dt.datetime | None:
    """``snapshot_time`` as an aware datetime (PG gives datetimes, SQLite text like ``...+00``)."""
    if value is None or isinstance(value, dt.datetime):
        return value
    return parse_timestamp(str(value), with_tz=True)


def read_metadata(conn: CatalogConnection) -> dict[str, str]:
    return {str(k): str(v) for k, v in conn.query("SELECT key, value FROM {M}ducklake_metadata WHERE scope IS NULL")}


def check_version(metadata: dict[str, str]) -> None:
    version = metadata.get("version")
    if version != SUPPORTED_VERSION:
        raise SpecVersionError(
            f"This lake's catalog is DuckLake spec {version!r}; only spec {SUPPORTED_VERSION} (DuckDB 1.5.x) is "
            "supported. Migrate it with DuckDB (ATTACH ... (AUTOMATIC_MIGRATION TRUE)) first."
        )


def _snapshot(row: tuple[Any, ...]) -> Snapshot:
    return Snapshot(int(row[0]), parse_time(row[1]), int(row[2]), int(row[3]), int(row[4]), *row[5:])


_SNAPSHOT_COLUMNS = "s.snapshot_id, s.snapshot_time, s.schema_version, s.next_catalog_id, s.next_file_id"


def latest_snapshot(conn: CatalogConnection) -> Snapshot:
    row = conn.one(
        f"SELECT {_SNAPSHOT_COLUMNS} FROM {{M}}ducklake_snapshot s "
        "WHERE s.snapshot_id = (SELECT max(snapshot_id) FROM {M}ducklake_snapshot)"
    )
    if row is None:
        raise SnapshotNotFoundError("The catalog has no snapshot.")
    return _snapshot(row)


_WITH_CHANGES = (
    f"SELECT {_SNAPSHOT_COLUMNS}, c.changes_made, c.author, c.commit_message, c.commit_extra_info "
    "FROM {M}ducklake_snapshot s LEFT JOIN {M}ducklake_snapshot_changes c USING (snapshot_id)"
)


def snapshot_by_id(conn: CatalogConnection, snapshot_id: int) -> Snapshot:
    """Snapshot ``snapshot_id`` with its changes, author, message and extra info."""
    row = conn.one(f"{_WITH_CHANGES} WHERE s.snapshot_id = ?", (snapshot_id,))
    if row is None:
        raise SnapshotNotFoundError(f"No snapshot with id {snapshot_id} (it may have been expired).")
    return _snapshot(row)


def snapshot_at_time(conn: CatalogConnection, when: dt.datetime) -> Snapshot:
    """The latest snapshot committed at or before ``when``."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    best: Snapshot | None = None
    # Compared in Python: SQLite stores the times as text, and text order is not time order across offsets.
    for row in conn.query(f"SELECT {_SNAPSHOT_COLUMNS} FROM {{M}}ducklake_snapshot s"):
        snap = _snapshot(row)
        if snap.snapshot_time and snap.snapshot_time <= when and (best is None or snap.snapshot_id > best.snapshot_id):
            best = snap
    if best is None:
        raise SnapshotNotFoundError(f"No snapshot at or before {when.isoformat()}.")
    return best


def list_snapshots(conn: CatalogConnection) -> list[Snapshot]:
    return [_snapshot(r) for r in conn.query(f"{_WITH_CHANGES} ORDER BY s.snapshot_id")]


def snapshots_with_extra_info_like(conn: CatalogConnection, pattern: str) -> list[Snapshot]:
    """Snapshots whose ``commit_extra_info`` matches the SQL ``LIKE`` ``pattern``, newest first."""
    rows = conn.query(f"{_WITH_CHANGES} WHERE c.commit_extra_info LIKE ? ORDER BY s.snapshot_id DESC", (pattern,))
    return [_snapshot(r) for r in rows]


def schemas_at(conn: CatalogConnection, snapshot_id: int) -> list[SchemaInfo]:
    rows = conn.query(
        f"SELECT schema_id, schema_name, path, path_is_relative, schema_uuid FROM {{M}}ducklake_schema WHERE {visible()} "
        "ORDER BY schema_id",
        (snapshot_id, snapshot_id),
    )
    return [
        SchemaInfo(int(r[0]), str(r[1]), r[2] or "", bool(r[3]) if r[3] is not None else True, str(r[4] or ""))
        for r in rows
    ]


def tables_named(
    conn: CatalogConnection, snapshot_id: int, schema_name: str, table_name: str
) -> list[tuple[int, str, str]]:
    """``(table id, schema name, table name)`` of the tables visible at ``snapshot_id`` whose names match
    case-insensitively (the caller prefers an exact match)."""
    s = snapshot_id
    rows = conn.query(
        f"SELECT t.table_id, sc.schema_name, t.table_name FROM {{M}}ducklake_table t JOIN {{M}}ducklake_schema sc "
        f"ON t.schema_id = sc.schema_id WHERE {visible('t')} AND {visible('sc')} "
        "AND lower(sc.schema_name) = lower(?) AND lower(t.table_name) = lower(?)",
        (s, s, s, s, schema_name, table_name),
    )
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]


def views_at(conn: CatalogConnection, snapshot_id: int) -> list[ViewInfo]:
    """Every view visible at ``snapshot_id``."""
    s = snapshot_id
    rows = conn.query(
        "SELECT v.view_id, v.schema_id, sc.schema_name, v.view_name, v.sql, v.dialect, v.column_aliases, "
        f"v.view_uuid, v.begin_snapshot FROM {{M}}ducklake_view v JOIN {{M}}ducklake_schema sc "
        f"ON v.schema_id = sc.schema_id WHERE {visible('v')} AND {visible('sc')} ORDER BY v.view_id",
        (s, s, s, s),
    )
    return [
        ViewInfo(
            view_id=int(r[0]),
            schema_id=int(r[1]),
            schema_name=str(r[2]),
            name=str(r[3]),
            sql=str(r[4] or ""),
            dialect=str(r[5] or "duckdb"),
            column_aliases=parse_quoted_list(str(r[6] or "")),
            uuid=str(r[7] or ""),
            begin_snapshot=int(r[8]),
        )
        for r in rows
    ]


def parse_quoted_list(text: str) -> tuple[str, ...]:
    """DuckLake's quoted name list (``"a","b""c"``, DuckDB's ``ToQuotedList``) as names.

    >>> parse_quoted_list('"a","b""c",""')
    ('a', 'b"c', '')
    >>> parse_quoted_list("")
    ()
    """
    names: list[str] = []
    i = 0
    while i < len(text):
        if text[i] != '"':
            raise ValueError(f"not a quoted name list: {text!r}")
        current: list[str] = []
        i += 1
        while i < len(text):
            if text[i] == '"' and text[i + 1 : i + 2] == '"':
                current.append('"')
                i += 2
            elif text[i] == '"':
                i += 1
                break
            else:
                current.append(text[i])
                i += 1
        names.append("".join(current))
        if i < len(text) and text[i] == ",":
            i += 1
    return tuple(names)


def quoted_list(names: tuple[str, ...] | list[str]) -> str:
    """The inverse of :func:`parse_quoted_list`.

    >>> quoted_list(["a", 'b"c'])
    '"a","b""c"'
    """
    return ",".join('"' + name.replace('"', '""') + '"' for name in names)


def tables_at(conn: CatalogConnection, snapshot_id: int, table_id: int | None = None) -> list[TableInfo]:
    """Every table visible at ``snapshot_id`` (or just ``table_id``), with columns, partitioning and inlined tables."""
    s = snapshot_id
    schema_by_id = {sc.schema_id: sc for sc in schemas_at(conn, s)}
    filter_sql, filter_params = (" AND table_id = ?", (table_id,)) if table_id is not None else ("", ())
    tables = conn.query(
        f"SELECT table_id, schema_id, table_name, path, path_is_relative, table_uuid, begin_snapshot "
        f"FROM {{M}}ducklake_table WHERE {visible()}{filter_sql} ORDER BY table_id",
        (s, s, *filter_params),
    )
    if not tables:
        return []
    columns = defaultdict(list)
    for row in conn.query(
        f"SELECT table_id, column_id, column_order, column_name, column_type, initial_default, default_value, "
        f"nulls_allowed, parent_column, default_value_type FROM {{M}}ducklake_column WHERE {visible()}{filter_sql} "
        "ORDER BY table_id, column_order",
        (s, s, *filter_params),
    ):
        columns[int(row[0])].append(row)
    partitions: dict[int, tuple[int | None, list[PartitionField]]] = {}
    for row in conn.query(
        f"SELECT p.partition_id, p.table_id, c.partition_key_index, c.column_id, c.transform "
        f"FROM {{M}}ducklake_partition_info p JOIN {{M}}ducklake_partition_column c "
        f"ON p.partition_id = c.partition_id AND p.table_id = c.table_id WHERE {visible('p')}"
        f"{filter_sql.replace('table_id', 'p.table_id')} ORDER BY p.table_id, p.partition_id, c.partition_key_index",
        (s, s, *filter_params),
    ):
        pid, tid = int(row[0]), int(row[1])
        partitions.setdefault(tid, (pid, []))[1].append(PartitionField(int(row[2]), int(row[3]), str(row[4])))
    sorts: dict[int, list[SortKey]] = defaultdict(list)
    for row in conn.query(
        f"SELECT i.table_id, e.expression, e.sort_direction, e.null_order FROM {{M}}ducklake_sort_info i "
        f"JOIN {{M}}ducklake_sort_expression e ON e.sort_id = i.sort_id AND e.table_id = i.table_id "
        f"WHERE {visible('i')}{filter_sql.replace('table_id', 'i.table_id')} ORDER BY i.table_id, e.sort_key_index",
        (s, s, *filter_params),
    ):
        sorts[int(row[0])].append(
            SortKey(str(row[1]), str(row[2]).upper() == "DESC", str(row[3]).upper() == "NULLS_FIRST")
        )
    retyped: dict[int, set[int]] = defaultdict(set)
    for tid, cid in conn.query(
        f"SELECT table_id, column_id FROM {{M}}ducklake_column WHERE begin_snapshot <= ?{filter_sql} "
        "GROUP BY table_id, column_id HAVING count(DISTINCT column_type) > 1",
        (s, *filter_params),
    ):
        retyped[int(tid)].add(int(cid))
    inlined = defaultdict(list)
    for row in conn.query(
        "SELECT table_id, table_name, schema_version FROM {M}ducklake_inlined_data_tables "
        f"WHERE true{filter_sql} ORDER BY schema_version",
        filter_params,
    ):
        inlined[int(row[0])].append((str(row[1]), int(row[2])))

    result = []
    for tid, sid, name, path, rel, tuuid, begin in tables:
        schema = schema_by_id.get(int(sid))
        if schema is None:
            continue
        partition_id, pfields = partitions.get(int(tid), (None, []))
        result.append(
            TableInfo(
                table_id=int(tid),
                schema_id=int(sid),
                schema_name=schema.name,
                name=str(name),
                path=path or "",
                path_is_relative=bool(rel) if rel is not None else True,
                uuid=str(tuuid or ""),
                schema=TableSchema(_column_tree(columns[int(tid)])),
                begin_snapshot=int(begin),
                partition_id=partition_id,
                partition_fields=tuple(pfields),
                sort_keys=tuple(sorts[int(tid)]),
                inlined_tables=tuple(inlined[int(tid)]),
                schema_path=schema.path,
                schema_path_is_relative=schema.path_is_relative,
                retyped_columns=frozenset(retyped[int(tid)]),
            )
        )
    return result


def _column_tree(rows: list[tuple[Any, ...]]) -> tuple[Column, ...]:
    by_parent: dict[int | None, list[tuple[Any, ...]]] = defaultdict(list)
    for row in rows:
        by_parent[int(row[8]) if row[8] is not None else None].append(row)

    def build(parent: int | None) -> tuple[Column, ...]:
        out = []
        for _tid, cid, _order, name, ctype, initial, default, nulls, _parent, default_type in sorted(
            by_parent[parent], key=lambda r: r[2]
        ):
            out.append(
                Column(
                    column_id=int(cid),
                    name=str(name),
                    type=str(ctype),
                    nullable=bool(nulls) if nulls is not None else True,
                    children=build(int(cid)),
                    initial_default=initial,
                    default_value=None if default in (None, "NULL") else str(default),
                    default_is_expression=default_type == "expression",
                )
            )
        return tuple(out)

    return build(None)


def resolve_path(base: str, path: str | None, relative: Any) -> str:
    """A stored path under its parent's: relative paths join ``base``, absolute ones stand alone, and an
    empty path means the parent itself (spec 4.3)."""
    if not path:
        return base
    return join_path(base, path) if relative is None or bool(relative) else path


def schema_path(data_path: str, schema: SchemaInfo) -> str:
    return resolve_path(data_path, schema.path, schema.path_is_relative)


def table_path(data_path: str, table: TableInfo) -> str:
    """The directory of ``table``'s files (data path / schema path / table path)."""
    schema_dir = resolve_path(data_path, table.schema_path, table.schema_path_is_relative)
    return resolve_path(schema_dir, table.path, table.path_is_relative)


def all_table_dirs(conn: CatalogConnection, data_path: str) -> dict[int, str]:
    """Directory of every table id the catalog still has rows for, dropped ones included (for maintenance)."""
    schemas = {
        int(sid): resolve_path(data_path, path, rel)
        for sid, path, rel in conn.query("SELECT schema_id, path, path_is_relative FROM {M}ducklake_schema")
    }
    return {
        int(tid): resolve_path(schemas.get(int(sid), data_path), path, rel)
        for tid, sid, path, rel in conn.query(
            "SELECT table_id, schema_id, path, path_is_relative FROM {M}ducklake_table ORDER BY begin_snapshot"
        )
    }


#: the ``ducklake_data_file`` columns :func:`data_file_from_row` reads, in its order
DATA_FILE_COLUMNS = (
    "data_file_id, path, path_is_relative, record_count, file_size_bytes, footer_size, row_id_start, "
    "begin_snapshot, partial_max, mapping_id, partition_id"
)


def data_file_from_row(
    row: Any,
    table: TableInfo,
    table_dir: str,
    *,
    delete_file: DeleteFileInfo | None = None,
    inlined_deletes: tuple[tuple[int, int], ...] = (),
    other_delete_files: tuple[DeleteFileInfo, ...] = (),
) -> DataFileInfo:
    """A data file from a catalog row whose first columns are :data:`DATA_FILE_COLUMNS`."""
    return DataFileInfo(
        data_file_id=int(row[0]),
        table_id=table.table_id,
        path=resolve_path(table_dir, row[1], row[2]),
        record_count=int(row[3]),
        file_size_bytes=int(row[4]),
        footer_size=_optional_int(row[5]),
        row_id_start=_optional_int(row[6]),
        begin_snapshot=int(row[7]),
        partial_max=_optional_int(row[8]),
        mapping_id=_optional_int(row[9]),
        partition_id=_optional_int(row[10]),
        delete_file=delete_file,
        inlined_deletes=inlined_deletes,
        other_delete_files=other_delete_files,
    )


def _optional_int(value: Any) -> int | None:
    return int(value) if value is not None else None


def data_files_at(
    conn: CatalogConnection,
    table: TableInfo,
    table_dir: str,
    snapshot_id: int,
    *,
    limit: int | None = None,
    offset: int = 0,
    by_row_id: bool = False,
) -> list[DataFileInfo]:
    """Visible data files of ``table`` with their visible delete file and inlined deletions; ``limit`` and
    ``offset`` page through them (by file id, or by first row id), for tables with very many files."""
    s = snapshot_id
    deletes: dict[int, list[DeleteFileInfo]] = defaultdict(list)
    for row in conn.query(
        f"SELECT delete_file_id, data_file_id, path, path_is_relative, format, delete_count, file_size_bytes, footer_size, "
        f"begin_snapshot, partial_max FROM {{M}}ducklake_delete_file WHERE table_id = ? AND {visible()}",
        (table.table_id, s, s),
    ):
        deletes[int(row[1])].append(
            DeleteFileInfo(
                int(row[0]),
                int(row[1]),
                resolve_path(table_dir, row[2], row[3]),
                str(row[4]),
                int(row[5]),
                int(row[6]),
                int(row[7]) if row[7] is not None else None,
                int(row[8]),
                int(row[9]) if row[9] is not None else None,
            )
        )
    inlined_deletes: dict[int, list[tuple[int, int]]] = defaultdict(list)
    inlined_delete_table = f"ducklake_inlined_delete_{table.table_id}"
    if conn.table_exists(inlined_delete_table):
        for file_id, pos, begin in conn.query(
            f"SELECT file_id, row_id, begin_snapshot FROM {{M}}{inlined_delete_table} WHERE begin_snapshot <= ?", (s,)
        ):
            inlined_deletes[int(file_id)].append((int(pos), int(begin)))
    files = []
    for row in conn.query(
        f"SELECT {DATA_FILE_COLUMNS} FROM {{M}}ducklake_data_file "
        f"WHERE table_id = ? AND {visible()} ORDER BY {'row_id_start, ' if by_row_id else ''}data_file_id"
        + (" LIMIT ? OFFSET ?" if limit is not None else ""),
        (table.table_id, s, s, *((int(limit), int(offset)) if limit is not None else ())),
    ):
        fid = int(row[0])
        live = _newest_last(deletes.get(fid, []))
        files.append(
            data_file_from_row(
                row,
                table,
                table_dir,
                delete_file=live[-1] if live else None,
                inlined_deletes=tuple(sorted(inlined_deletes.get(fid, ()))),
                other_delete_files=tuple(live[:-1]),
            )
        )
    return files


def _newest_last(delete_files: list[DeleteFileInfo]) -> list[DeleteFileInfo]:
    """A data file's live delete files, the newest (the one DuckDB writes each later delete against) last."""
    return sorted(delete_files, key=lambda d: (d.begin_snapshot, d.delete_file_id))


def file_column_stats(conn: CatalogConnection, table_id: int) -> dict[int, dict[int, tuple[Any, ...]]]:
    """``{data_file_id: {column_id: (value_count, null_count, min, max, contains_nan)}}`` for pruning."""
    stats: dict[int, dict[int, tuple[Any, ...]]] = defaultdict(dict)
    for fid, cid, vc, nc, mn, mx, nan in conn.query(
        "SELECT data_file_id, column_id, value_count, null_count, min_value, max_value, contains_nan "
        "FROM {M}ducklake_file_column_stats WHERE table_id = ?",
        (table_id,),
    ):
        stats[int(fid)][int(cid)] = (vc, nc, mn, mx, nan)
    return stats


def name_mapping(conn: CatalogConnection, mapping_id: int) -> dict[int, tuple[str, int, int | None, bool]]:
    """``{local id: (source_name, target_field_id, parent local id, is_partition)}`` of a ``map_by_name`` mapping."""
    return {
        int(r[0]): (str(r[1]), int(r[2]), int(r[3]) if r[3] is not None else None, bool(r[4]))
        for r in conn.query(
            "SELECT column_id, source_name, target_field_id, parent_column, is_partition FROM {M}ducklake_name_mapping "
            "WHERE mapping_id = ?",
            (mapping_id,),
        )
    }


def file_partition_values(conn: CatalogConnection, table_id: int) -> dict[int, tuple[str | None, ...]]:
    """Each of the table's data files' partition values (in key order), by data file id."""
    found: dict[int, list[str | None]] = {}
    for fid, _index, value in conn.query(
        "SELECT data_file_id, partition_key_index, partition_value FROM {M}ducklake_file_partition_value "
        "WHERE table_id = ? ORDER BY data_file_id, partition_key_index",
        (table_id,),
    ):
        found.setdefault(int(fid), []).append(value)
    return {fid: tuple(values) for fid, values in found.items()}
