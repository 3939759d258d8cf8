"""What the lake pages show, read with the provider's pure-Python DuckLake reader (no Spark).

Every function takes an open :class:`~airflow_provider_lakehouse.ducklake.catalog.DuckLake` and returns API
models; none writes to the lake.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from airflow_provider_lakehouse.assets.uris import table_asset_uri
from airflow_provider_lakehouse.ducklake import metadata
from airflow_provider_lakehouse.ducklake.geometry import wkt
from airflow_provider_lakehouse.ducklake.introspect import group_changes
from airflow_provider_lakehouse.ducklake.reader import ROWID, read_data_file, read_inlined_rows
from airflow_provider_lakehouse.ducklake.task_commits import TASK_FIELD
from airflow_provider_lakehouse.plugins.api.models import (
    Changes,
    ColumnEntry,
    FileEntry,
    LakeTable,
    Preview,
    SnapshotEntry,
    StoreSummary,
    TaskRef,
)
from airflow_provider_lakehouse.plugins.api.values import MAX_ROWS, capped_rows

if TYPE_CHECKING:
    from airflow_provider_lakehouse.ducklake.catalog import DuckLake
    from airflow_provider_lakehouse.ducklake.model import Snapshot, TableInfo
    from airflow_provider_lakehouse.ducklake.types import Column


def task_of(extra_info: str | None) -> TaskRef | None:
    """The Airflow task a commit records in ``commit_extra_info`` (see ``ducklake/task_commits.py``).

    >>> task_of('{"airflow_task": {"dag_id": "d", "task_id": "t", "run_id": "r", "map_index": -1, "try_number": 2}}')
    TaskRef(dag_id='d', task_id='t', run_id='r', map_index=-1, try_number=2)
    >>> task_of("not json") is None
    True
    """
    try:
        info = json.loads(extra_info or "")
        task = info.get(TASK_FIELD) if isinstance(info, dict) else None
        if isinstance(task, dict):
            return TaskRef(
                dag_id=str(task["dag_id"]),
                task_id=str(task["task_id"]),
                run_id=str(task["run_id"]),
                map_index=int(task.get("map_index", -1)),
                try_number=task.get("try_number"),
            )
    except (ValueError, KeyError, TypeError):
        pass
    return None


def snapshot_entry(snap: Snapshot, table_names: dict[str, str] | None = None) -> SnapshotEntry:
    """A snapshot for the API; ``table_names`` turns the table ids DuckLake records in changes into names."""
    changes = group_changes(snap.changes)
    if table_names:
        changes = {
            kind: [table_names.get(v, v) if kind in _BY_TABLE_ID else v for v in values]
            for kind, values in changes.items()
        }
    return SnapshotEntry(
        snapshot_id=snap.snapshot_id,
        snapshot_time=_iso(snap.snapshot_time),
        schema_version=snap.schema_version,
        changes=changes,
        author=snap.author,
        commit_message=snap.commit_message,
        task=task_of(snap.commit_extra_info),
    )


#: change kinds whose values are table ids (``inserted_into_table:3``)
_BY_TABLE_ID = {
    "tables_inserted_into",
    "tables_deleted_from",
    "tables_dropped",
    "tables_altered",
    "inlined_insert",
    "inlined_delete",
    "inline_flush",
    "merge_adjacent",
    "rewrite_delete",
}


def table_names(conn: Any) -> dict[str, str]:
    """``{table id: schema.table}`` for every table the catalog has ever had (dropped ones keep their last name)."""
    schemas = {str(sid): name for sid, name in conn.query("SELECT schema_id, schema_name FROM {M}ducklake_schema")}
    return {
        str(tid): f"{schemas.get(str(sid), '?')}.{name}"
        for tid, sid, name in conn.query(
            "SELECT table_id, schema_id, table_name FROM {M}ducklake_table ORDER BY begin_snapshot"
        )
    }


def _iso(value: Any) -> str | None:
    return value.isoformat() if isinstance(value, (dt.datetime, dt.date)) else (None if value is None else str(value))


def summary(name: str, conn_id: str, lake: DuckLake) -> StoreSummary:
    """Schemas, tables, snapshot count and data size of the current snapshot (catalog queries only)."""
    with lake.store.connection() as conn:
        snap = metadata.latest_snapshot(conn).snapshot_id
        schemas = metadata.schemas_at(conn, snap)
        tables = metadata.tables_at(conn, snap)
        count = conn.one("SELECT count(*) FROM {M}ducklake_snapshot")
        size = conn.one(
            "SELECT coalesce(sum(file_size_bytes), 0) FROM {M}ducklake_data_file WHERE begin_snapshot <= ? AND "
            "(end_snapshot IS NULL OR end_snapshot > ?)",
            (snap, snap),
        )
    return StoreSummary(
        kind="ducklake",
        name=name,
        conn_id=conn_id,
        reachable=True,
        schemas=sorted(s.name for s in schemas),
        tables=sorted(t.qualified_name for t in tables),
        snapshot_count=int(count[0]) if count else None,
        data_size_bytes=int(size[0]) if size else None,
    )


def recent_snapshots(lake: DuckLake, limit: int) -> list[SnapshotEntry]:
    with lake.store.connection() as conn:
        rows = conn.query(
            "SELECT s.snapshot_id, s.snapshot_time, s.schema_version, s.next_catalog_id, s.next_file_id, c.changes_made, "
            "c.author, c.commit_message, c.commit_extra_info FROM {M}ducklake_snapshot s LEFT JOIN "
            "{M}ducklake_snapshot_changes c ON c.snapshot_id = s.snapshot_id ORDER BY s.snapshot_id DESC LIMIT ?",
            (int(limit),),
        )
        names = table_names(conn)
    return [snapshot_entry(metadata._snapshot(tuple(r)), names) for r in rows]


def _column_entry(column: Column, stats: dict[int, tuple[Any, ...]]) -> ColumnEntry:
    null, nan, low, high = stats.get(column.column_id, (None, None, None, None))
    return ColumnEntry(
        column_id=column.column_id,
        name=column.name,
        type=column.type,
        nullable=column.nullable,
        default=column.default_value,
        min_value=low,
        max_value=high,
        null_count=null,
        contains_nan=nan,
        children=[_column_entry(c, stats) for c in column.children],
    )


def table_page(
    lake: DuckLake,
    lake_name: str,
    name: str,
    *,
    version: int | None = None,
    snapshot_limit: int = 200,
    file_limit: int = 100,
) -> LakeTable:
    """Columns with statistics, partitioning, sizes, the first ``file_limit`` files (see :func:`files_page` for
    the rest) and the latest ``snapshot_limit`` snapshots that changed the table. Counts and sizes are summed
    by the catalog database: a table may have tens of thousands of files."""
    with lake.store.connection() as conn:
        snap = lake.snapshot(version, conn=conn)
        table = lake.find_table(conn, name, snap.snapshot_id)
        files = metadata.data_files_at(conn, table, lake.table_dir(table), snap.snapshot_id, limit=file_limit)
        totals = _file_totals(conn, table, snap.snapshot_id)
        stats = _column_stats(conn, table, snap.snapshot_id)
        inlined = _inlined_count(lake, conn, table, snap.snapshot_id)
        history = _table_snapshots(conn, table, snapshot_limit)
    by_id = {c.column_id: c.name for top in table.columns for c in top.walk()}
    directory = lake.table_dir(table)
    return LakeTable(
        lake=lake_name,
        schema_name=table.schema_name,
        name=table.name,
        table_id=table.table_id,
        snapshot_id=snap.snapshot_id,
        asset_uri=table_asset_uri("ducklake", lake_name, table.schema_name, table.name),
        columns=[_column_entry(c, stats) for c in table.columns],
        partitioning=[
            f"{p.transform}({by_id.get(p.column_id, p.column_id)})"
            if p.transform != "identity"
            else str(by_id.get(p.column_id, p.column_id))
            for p in table.partition_fields
        ],
        row_count=totals.live_rows + inlined,
        inlined_row_count=inlined,
        file_count=totals.files,
        file_size_bytes=totals.bytes,
        delete_file_count=totals.delete_files,
        files=[_file_entry(f, directory) for f in files],
        snapshots=history,
    )


@dataclass(frozen=True)
class _Totals:
    files: int
    bytes: int
    delete_files: int
    live_rows: int  # in files: records less deleted rows (DuckDB's metadata-only COUNT(*))


def _file_totals(conn: Any, table: TableInfo, snapshot_id: int) -> _Totals:
    s = snapshot_id
    visible = "begin_snapshot <= ? AND (end_snapshot IS NULL OR end_snapshot > ?)"
    files, size, records = conn.one(
        f"SELECT count(*), coalesce(sum(file_size_bytes), 0), coalesce(sum(record_count), 0) "
        f"FROM {{M}}ducklake_data_file WHERE table_id = ? AND {visible}",
        (table.table_id, s, s),
    )
    deletes, deleted = conn.one(
        "SELECT count(*), coalesce(sum(d.delete_count), 0) FROM {M}ducklake_delete_file d "
        "JOIN {M}ducklake_data_file f ON f.data_file_id = d.data_file_id WHERE d.table_id = ? "
        "AND d.begin_snapshot <= ? AND (d.end_snapshot IS NULL OR d.end_snapshot > ?) "
        "AND f.begin_snapshot <= ? AND (f.end_snapshot IS NULL OR f.end_snapshot > ?)",
        (table.table_id, s, s, s, s),
    )
    inlined_table = f"ducklake_inlined_delete_{table.table_id}"
    if conn.table_exists(inlined_table):
        (inlined_deleted,) = conn.one(
            f"SELECT count(*) FROM {{M}}{inlined_table} d JOIN {{M}}ducklake_data_file f ON f.data_file_id = d.file_id "
            f"WHERE d.begin_snapshot <= ? AND f.begin_snapshot <= ? AND (f.end_snapshot IS NULL OR f.end_snapshot > ?)",
            (s, s, s),
        )
        deleted = int(deleted) + int(inlined_deleted)
    return _Totals(int(files), int(size), int(deletes), int(records) - int(deleted))


def files_page(
    lake: DuckLake, name: str, *, version: int | None = None, offset: int = 0, limit: int = 100
) -> list[FileEntry]:
    """A page of the table's visible data files (by file id), each with its delete file."""
    with lake.store.connection() as conn:
        snap = lake.snapshot(version, conn=conn)
        table = lake.find_table(conn, name, snap.snapshot_id)
        files = metadata.data_files_at(conn, table, lake.table_dir(table), snap.snapshot_id, limit=limit, offset=offset)
    directory = lake.table_dir(table)
    return [_file_entry(f, directory) for f in files]


def _relative(path: str, directory: str) -> str:
    return path[len(directory) :] if path.startswith(directory) else path.rsplit("/", 1)[-1]


def _file_entry(f: Any, directory: str) -> FileEntry:
    d = f.delete_file
    return FileEntry(
        data_file_id=f.data_file_id,
        path=_relative(f.path, directory),
        record_count=f.record_count,
        file_size_bytes=f.file_size_bytes,
        begin_snapshot=f.begin_snapshot,
        delete_file=_relative(d.path, directory) if d else None,
        delete_count=d.delete_count if d else 0,
        delete_file_size_bytes=d.file_size_bytes if d else 0,
        inlined_deletes=len(f.inlined_deletes),
    )


def _column_stats(conn: Any, table: TableInfo, snapshot_id: int) -> dict[int, tuple[Any, ...]]:
    """Per column: (null count over the visible files, contains NaN, min, max) from the catalog's statistics;
    the null counts are summed by the catalog database (a table may have tens of thousands of files)."""
    result: dict[int, tuple[Any, ...]] = {}
    for cid, contains_nan, low, high in conn.query(
        "SELECT column_id, contains_nan, min_value, max_value FROM {M}ducklake_table_column_stats WHERE table_id = ?",
        (table.table_id,),
    ):
        result[int(cid)] = (None, None if contains_nan is None else bool(contains_nan), low, high)
    for cid, count in conn.query(
        "SELECT s.column_id, sum(s.null_count) FROM {M}ducklake_file_column_stats s JOIN {M}ducklake_data_file f "
        "ON f.data_file_id = s.data_file_id WHERE s.table_id = ? AND f.begin_snapshot <= ? "
        "AND (f.end_snapshot IS NULL OR f.end_snapshot > ?) GROUP BY s.column_id",
        (table.table_id, snapshot_id, snapshot_id),
    ):
        _, nan, low, high = result.get(int(cid), (None, None, None, None))
        result[int(cid)] = (None if count is None else int(count), nan, low, high)
    return result


def _inlined_count(lake: DuckLake, conn: Any, table: TableInfo, snapshot_id: int) -> int:
    if not table.inlined_tables:
        return 0
    return read_inlined_rows(
        conn, table, table.columns[:1], snapshot_id, schema_at_version=lake.inlined_schemas(conn, table)
    ).num_rows


def _table_snapshots(conn: Any, table: TableInfo, limit: int) -> list[SnapshotEntry]:
    """Snapshots whose changes name this table (by id or by its qualified name), newest first."""
    # the database narrows by text (a table appears in changes by id or quoted name); Python decides exactly
    rows = conn.query(
        "SELECT s.snapshot_id, s.snapshot_time, s.schema_version, s.next_catalog_id, s.next_file_id, c.changes_made, "
        "c.author, c.commit_message, c.commit_extra_info FROM {M}ducklake_snapshot s JOIN {M}ducklake_snapshot_changes c "
        "ON c.snapshot_id = s.snapshot_id WHERE s.snapshot_id >= ? AND (c.changes_made LIKE ? OR c.changes_made LIKE ?) "
        "ORDER BY s.snapshot_id DESC",
        (table.begin_snapshot, f"%:{table.table_id}%", f'%"{table.name}"%'),
    )
    wanted = {str(table.table_id), table.qualified_name}
    names = table_names(conn)
    entries = []
    for row in rows:
        snap = metadata._snapshot(tuple(row))
        if any(v in wanted for values in group_changes(snap.changes).values() for v in values):
            entry = snapshot_entry(snap, names)
            entries.append(entry)
            if len(entries) >= limit:
                break
    return entries


def preview(
    lake: DuckLake,
    name: str,
    *,
    version: int | None = None,
    timestamp: dt.datetime | None = None,
    columns: Sequence[str] | None = None,
    limit: int = 100,
) -> Preview:
    """The first ``limit`` rows in row-id order at a snapshot (DuckDB: ``... AT (VERSION => v) ORDER BY rowid``).

    A table only ever appended to keeps each file's rows at ``row_id_start + position``: the first rows are in
    the first files by row id, so only those are listed and read (in parallel: object storage latency adds up),
    and of a large file only its first row groups; a 10 M-row table previews as fast as a small one. Updates,
    compaction and flushed inlined rows write files that carry older row ids, so a table that had any is read
    whole and sorted, as DuckDB's top-N does.
    """
    limit = max(1, min(int(limit), MAX_ROWS))
    with lake.store.connection() as conn:
        snap = lake.snapshot(version, timestamp, conn)
        table = lake.find_table(conn, name, snap.snapshot_id)
        wanted = lake.columns_named(table, columns)
        if _rows_may_be_renumbered(conn, table, snap.snapshot_id):
            return _preview_of_all(lake, name, snap.snapshot_id, columns, limit)
        inlined = read_inlined_rows(
            conn, table, wanted, snap.snapshot_id, virtual=(ROWID,), schema_at_version=lake.inlined_schemas(conn, table)
        )
        pieces: list[pa.Table] = [inlined] if inlined.num_rows else []
        from_files, offset, batch = 0, 0, 8
        with ThreadPoolExecutor(max_workers=_READERS) as pool:
            while from_files < limit:
                files = metadata.data_files_at(
                    conn, table, lake.table_dir(table), snap.snapshot_id, limit=batch, offset=offset, by_row_id=True
                )
                if not files:
                    break
                maps = {
                    f.mapping_id: metadata.name_mapping(conn, f.mapping_id) for f in files if f.mapping_id is not None
                }
                picked, estimate = [], from_files
                for f in files:  # enough files for ``limit`` live rows by the catalog's counts
                    picked.append(f)
                    estimate += _live_upper_bound(f)
                    if estimate >= limit:
                        break
                offset += len(picked)
                batch *= 4

                def read(f: Any, maps: dict[Any, Any] = maps) -> pa.Table:
                    # a file's first ``limit`` + deleted positions hold at least ``limit`` live rows
                    rows = None if f.partial_max is not None else limit + _deleted_upper_bound(f)
                    return read_data_file(
                        lake.storage,
                        f,
                        wanted,
                        snap.snapshot_id,
                        virtual=(ROWID,),
                        all_columns=table.columns,
                        name_map=maps.get(f.mapping_id),
                        max_rows=rows,
                    )

                for piece in pool.map(read, picked):  # a file read in part alone holds ``limit`` rows
                    from_files += piece.num_rows
                    pieces.append(_first_rows(piece, limit))
    return _preview_table(pieces, inlined, wanted, snap.snapshot_id, limit)


def _first_rows(piece: pa.Table, limit: int) -> pa.Table:
    """The ``limit`` smallest row ids of one file's rows (a file's rows are usually in row-id order already)."""
    ids = piece.column(ROWID).to_numpy(zero_copy_only=False)
    if piece.num_rows <= limit:
        return piece
    if len(ids) > 1 and (ids[1:] >= ids[:-1]).all():
        return piece.slice(0, limit)
    return piece.sort_by(ROWID).slice(0, limit)


#: what a snapshot may do to a table without renumbering rows into a new file
_APPEND_ONLY = {"tables_created", "tables_inserted_into", "inlined_insert", "schemas_created"}


def _rows_may_be_renumbered(conn: Any, table: TableInfo, snapshot_id: int) -> bool:
    """Whether a snapshot up to ``snapshot_id`` did more to the table than append (or some file has no row ids)."""
    unnumbered = conn.one(
        "SELECT count(*) FROM {M}ducklake_data_file WHERE table_id = ? AND row_id_start IS NULL AND "
        "begin_snapshot <= ? AND (end_snapshot IS NULL OR end_snapshot > ?)",
        (table.table_id, snapshot_id, snapshot_id),
    )
    if unnumbered and int(unnumbered[0]):
        return True
    wanted = str(table.table_id)
    for (text,) in conn.query(
        "SELECT changes_made FROM {M}ducklake_snapshot_changes WHERE snapshot_id >= ? AND snapshot_id <= ? "
        "AND changes_made LIKE ?",
        (table.begin_snapshot, snapshot_id, f"%:{wanted}%"),
    ):
        for kind, values in group_changes(text).items():
            if kind not in _APPEND_ONLY and wanted in values:
                return True
    return False


def _live_upper_bound(f: Any) -> int:
    return max(0, f.record_count - (f.delete_file.delete_count if f.delete_file else 0))


def _deleted_upper_bound(f: Any) -> int:
    return (f.delete_file.delete_count if f.delete_file else 0) + len(f.inlined_deletes)


def _preview_of_all(lake: DuckLake, name: str, snapshot_id: int, columns: Sequence[str] | None, limit: int) -> Preview:
    """Files without row ids (registered from outside, staged): read everything and sort."""
    plan = lake.scan(name, columns=columns or None, version=snapshot_id, virtual=(ROWID,))
    return _preview_table([lake.read_plan(plan)], plan.inlined, list(plan.columns), plan.snapshot_id, limit)


def _preview_table(
    pieces: list[pa.Table], empty: pa.Table, wanted: Sequence[Column], snapshot_id: int, limit: int
) -> Preview:
    names = [c.name for c in wanted]
    table = pa.concat_tables(pieces) if pieces else empty
    table = table.sort_by(ROWID).slice(0, limit)
    values = [_shown(c, table.column(c.name).to_pylist()) for c in wanted]
    rows, truncated = capped_rows(zip(*values, strict=False) if names else [])
    return Preview(
        columns=names,
        types=[c.type for c in wanted],
        rows=rows,
        snapshot_id=snapshot_id,
        truncated=truncated,
        limit=limit,
    )


def _shown(column: Column | None, values: list[Any]) -> list[Any]:
    """A column's values as previews and change lists show them: a geometry as DuckDB's text of it (WKT), not its
    bytes (``None``: a change list's own column, shown as it is)."""
    if column is None or column.type != "geometry":
        return values
    return [None if v is None else wkt(v) for v in values]


def changes(lake: DuckLake, name: str, start: int, end: int, *, limit: int = 200) -> Changes:
    """Rows inserted, deleted and updated in snapshots ``start``..``end``, as ``ducklake_table_changes`` gives them."""
    if end < start:
        start, end = end, start
    table = lake.table_changes(name, start, end)
    kinds = table.column("change_type").to_pylist() if table.num_rows else []
    counts: dict[str, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    limit = max(1, min(int(limit), MAX_ROWS))
    order = sorted(
        range(table.num_rows),
        key=lambda i: (
            table.column("snapshot_id")[i].as_py(),
            table.column("rowid")[i].as_py(),
            _KIND_ORDER.get(kinds[i], 9),
        ),
    )
    picked = table.take(pa.array(order[:limit], pa.int64())) if table.num_rows else table
    names = table.column_names
    # the table's columns at ``end`` follow the three change columns, as in ``ducklake_table_changes``
    shown_as = {c.name: c for c in lake.table(name, version=end).columns}
    rows, truncated = capped_rows(
        zip(*(_shown(shown_as.get(n), picked.column(n).to_pylist()) for n in names), strict=False)
        if picked.num_rows
        else []
    )
    return Changes(
        start=start, end=end, columns=names, rows=rows, counts=counts, truncated=truncated or table.num_rows > limit
    )


_READERS = 8  # parallel file reads of a preview
_KIND_ORDER = {"update_preimage": 0, "update_postimage": 1, "delete": 2, "insert": 3}
