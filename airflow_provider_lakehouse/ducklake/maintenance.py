"""Maintenance: expire snapshots, clean up unreferenced files, merge small files, flush inlined rows.

Destructive calls default to ``dry_run=True`` where DuckDB's do too and return a report of what they
did (or would do).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from airflow_provider_lakehouse.ducklake import metadata
from airflow_provider_lakehouse.ducklake.catalog_tables import FILES_SCHEDULED_FOR_DELETION
from airflow_provider_lakehouse.ducklake.inline_codec import decode_value
from airflow_provider_lakehouse.ducklake.partitioning import iter_slices
from airflow_provider_lakehouse.ducklake.reader import ROW_SNAPSHOT, ROWID, read_data_file
from airflow_provider_lakehouse.ducklake.store import CatalogConnection, quote_ident
from airflow_provider_lakehouse.ducklake.writer import write_data_file, write_delete_file

if TYPE_CHECKING:
    from airflow_provider_lakehouse.ducklake.catalog import DuckLake

DEFAULT_DELETE_OLDER_THAN = dt.timedelta(days=2)  # DuckDB's delete_older_than default


@dataclass
class MaintenanceReport:
    """What a maintenance call did (or, in a dry run, would do)."""

    dry_run: bool
    snapshots_expired: list[int] = field(default_factory=list)
    files_scheduled: list[str] = field(default_factory=list)
    files_deleted: list[str] = field(default_factory=list)
    files_merged: int = 0
    files_written: list[str] = field(default_factory=list)
    rows_flushed: int = 0
    snapshot_id: int | None = None


def _dead(begin: int, end: int | None, remaining: list[int]) -> bool:
    """A row valid in [begin, end) is dead when no remaining snapshot falls in that interval."""
    if end is None:
        return False
    return not any(begin <= s < end for s in remaining)


def expire_snapshots(
    lake: DuckLake,
    *,
    older_than: dt.datetime | None = None,
    keep_last: int | None = None,
    versions: list[int] | None = None,
    dry_run: bool = False,
) -> MaintenanceReport:
    """Forget old snapshots (never the latest) and the catalog rows only they could see.

    Data and delete files that no remaining snapshot can see are scheduled for deletion
    (``ducklake_files_scheduled_for_deletion``); :func:`cleanup_old_files` removes them later.
    """
    report = MaintenanceReport(dry_run=dry_run)
    with lake.store.connection() as conn:
        conn.begin()
        try:
            snaps = metadata.list_snapshots(conn)
            latest = snaps[-1].snapshot_id
            chosen = set()
            for i, s in enumerate(snaps):
                if s.snapshot_id == latest:
                    continue
                if versions is not None and s.snapshot_id in versions:
                    chosen.add(s.snapshot_id)
                if older_than is not None and s.snapshot_time and s.snapshot_time < _aware(older_than):
                    chosen.add(s.snapshot_id)
                if keep_last is not None and i < len(snaps) - max(1, keep_last):
                    chosen.add(s.snapshot_id)
            report.snapshots_expired = sorted(chosen)
            if not chosen:
                conn.rollback()
                return report
            remaining = [s.snapshot_id for s in snaps if s.snapshot_id not in chosen]
            report.files_scheduled = _purge(conn, lake, remaining, dry_run)
            if dry_run:
                conn.rollback()
                return report
            for sid in chosen:
                conn.execute("DELETE FROM {M}ducklake_snapshot WHERE snapshot_id = ?", (sid,))
                conn.execute("DELETE FROM {M}ducklake_snapshot_changes WHERE snapshot_id = ?", (sid,))
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
    return report


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def _purge(conn: CatalogConnection, lake: DuckLake, remaining: list[int], dry_run: bool) -> list[str]:
    scheduled: list[str] = []
    now = conn.now()
    table_dirs = metadata.all_table_dirs(conn, lake.data_path)

    def schedule(file_id: int, tid: int, path: str, relative: Any) -> None:
        full = metadata.resolve_path(table_dirs.get(tid, lake.data_path), path, relative)
        scheduled.append(full)
        rel = full[len(lake.data_path) :] if full.startswith(lake.data_path) else None
        if not dry_run:
            conn.execute(
                *FILES_SCHEDULED_FOR_DELETION.insert(
                    data_file_id=file_id,
                    path=rel if rel is not None else full,
                    path_is_relative=rel is not None,
                    schedule_start=now,
                )
            )

    for fid, tid, begin, end, path, rel in conn.query(
        "SELECT data_file_id, table_id, begin_snapshot, end_snapshot, path, path_is_relative FROM {M}ducklake_data_file "
        "WHERE end_snapshot IS NOT NULL"
    ):
        if _dead(int(begin), int(end), remaining):
            schedule(int(fid), int(tid), path, rel)
            if not dry_run:
                for t in (
                    "ducklake_data_file",
                    "ducklake_file_column_stats",
                    "ducklake_file_partition_value",
                    "ducklake_file_variant_stats",
                ):
                    conn.execute(f"DELETE FROM {{M}}{t} WHERE data_file_id = ?", (int(fid),))
    for did, tid, begin, end, path, rel in conn.query(
        "SELECT delete_file_id, table_id, begin_snapshot, end_snapshot, path, path_is_relative FROM {M}ducklake_delete_file "
        "WHERE end_snapshot IS NOT NULL"
    ):
        if _dead(int(begin), int(end), remaining):
            schedule(int(did), int(tid), path, rel)
            if not dry_run:
                conn.execute("DELETE FROM {M}ducklake_delete_file WHERE delete_file_id = ?", (int(did),))
    if dry_run:
        return scheduled
    # catalog rows only expired snapshots could see
    for table, key in (
        ("ducklake_column", "column_id"),
        ("ducklake_partition_info", "partition_id"),
        ("ducklake_tag", "object_id"),
        ("ducklake_column_tag", "column_id"),
        ("ducklake_view", "view_id"),
        ("ducklake_sort_info", "sort_id"),
    ):
        for row in conn.query(
            f"SELECT {key}, begin_snapshot, end_snapshot FROM {{M}}{table} WHERE end_snapshot IS NOT NULL"
        ):
            if _dead(int(row[1]), int(row[2]), remaining):
                conn.execute(
                    f"DELETE FROM {{M}}{table} WHERE {key} = ? AND begin_snapshot = ? AND end_snapshot = ?", row
                )
    for tid, begin, end in conn.query(
        "SELECT table_id, begin_snapshot, end_snapshot FROM {M}ducklake_table WHERE end_snapshot IS NOT NULL"
    ):
        if not _dead(int(begin), int(end), remaining):
            continue
        conn.execute(
            "DELETE FROM {M}ducklake_table WHERE table_id = ? AND begin_snapshot = ? AND end_snapshot = ?",
            (tid, begin, end),
        )
        if conn.one("SELECT count(*) FROM {M}ducklake_table WHERE table_id = ?", (tid,))[0] == 0:  # type: ignore[index]
            _drop_table_metadata(conn, int(tid))
    for sid, begin, end in conn.query(
        "SELECT schema_id, begin_snapshot, end_snapshot FROM {M}ducklake_schema WHERE end_snapshot IS NOT NULL"
    ):
        if _dead(int(begin), int(end), remaining):
            conn.execute("DELETE FROM {M}ducklake_schema WHERE schema_id = ?", (sid,))
    # inlined rows no remaining snapshot sees
    for _tid, name, _sv in conn.query(
        "SELECT table_id, table_name, schema_version FROM {M}ducklake_inlined_data_tables"
    ):
        if conn.table_exists(name):
            for row_id, begin, end in conn.query(
                f"SELECT row_id, begin_snapshot, end_snapshot FROM {{M}}{quote_ident(name)} WHERE end_snapshot IS NOT NULL"
            ):
                if _dead(int(begin), int(end), remaining):
                    conn.execute(
                        f"DELETE FROM {{M}}{quote_ident(name)} WHERE row_id = ? AND begin_snapshot = ?", (row_id, begin)
                    )
    return scheduled


def _drop_table_metadata(conn: CatalogConnection, tid: int) -> None:
    for t in (
        "ducklake_column",
        "ducklake_table_stats",
        "ducklake_table_column_stats",
        "ducklake_schema_versions",
        "ducklake_partition_info",
        "ducklake_partition_column",
        "ducklake_column_tag",
        "ducklake_sort_info",
        "ducklake_sort_expression",
        "ducklake_column_mapping",
    ):
        conn.execute(f"DELETE FROM {{M}}{t} WHERE table_id = ?", (tid,))
    for (name,) in conn.query("SELECT table_name FROM {M}ducklake_inlined_data_tables WHERE table_id = ?", (tid,)):
        conn.execute(f"DROP TABLE IF EXISTS {{M}}{quote_ident(name)}")
    conn.execute("DELETE FROM {M}ducklake_inlined_data_tables WHERE table_id = ?", (tid,))
    conn.execute(f"DROP TABLE IF EXISTS {{M}}{quote_ident(f'ducklake_inlined_delete_{tid}')}")


def cleanup_old_files(
    lake: DuckLake, *, older_than: dt.datetime | None = None, cleanup_all: bool = False, dry_run: bool = True
) -> MaintenanceReport:
    """Delete files scheduled for deletion (by :func:`expire_snapshots` or DuckDB) from storage.

    :param older_than: only files scheduled before this time (default: two days ago, DuckDB's default).
    :param cleanup_all: every scheduled file regardless of age.
    """
    report = MaintenanceReport(dry_run=dry_run)
    cutoff = _aware(older_than) if older_than else dt.datetime.now(dt.UTC) - DEFAULT_DELETE_OLDER_THAN
    with lake.store.connection() as conn:
        rows = conn.query(
            "SELECT data_file_id, path, path_is_relative, schedule_start FROM {M}ducklake_files_scheduled_for_deletion"
        )
        chosen = [r for r in rows if cleanup_all or (metadata.parse_time(r[3]) or cutoff) < cutoff]
        for fid, path, rel, _start in chosen:
            full = metadata.resolve_path(lake.data_path, path, rel)
            report.files_deleted.append(full)
            if not dry_run:
                lake.storage.delete(full)
                conn.execute(
                    "DELETE FROM {M}ducklake_files_scheduled_for_deletion WHERE data_file_id = ? AND path = ?",
                    (fid, path),
                )
    return report


def referenced_files(lake: DuckLake) -> set[str]:
    """Every file a catalog row references: data and delete files of any snapshot, and files scheduled for
    deletion (as URIs under the lake's data path)."""
    known: set[str] = set()
    with lake.store.connection() as conn:
        table_dirs = metadata.all_table_dirs(conn, lake.data_path)
        for table in ("ducklake_data_file", "ducklake_delete_file"):
            for tid, path, rel in conn.query(f"SELECT table_id, path, path_is_relative FROM {{M}}{table}"):
                known.add(metadata.resolve_path(table_dirs.get(int(tid), lake.data_path), path, rel))
        for path, rel in conn.query("SELECT path, path_is_relative FROM {M}ducklake_files_scheduled_for_deletion"):
            known.add(metadata.resolve_path(lake.data_path, path, rel))
    return known


def orphaned_files(lake: DuckLake, *, older_than: dt.datetime | None = None) -> list[str]:
    """``*.parquet`` files under the data path that no catalog row references (e.g. from a writer killed
    before its commit). Files newer than ``older_than`` (default: two days ago) are left out: they may belong
    to a commit in flight."""
    cutoff = _aware(older_than) if older_than else dt.datetime.now(dt.UTC) - DEFAULT_DELETE_OLDER_THAN
    known = referenced_files(lake)
    orphans = []
    for entry in lake.storage.list_files(lake.data_path):
        if not entry.uri.endswith(".parquet") or entry.uri in known:
            continue
        mtime = dt.datetime.fromtimestamp((entry.mtime_ns or 0) / 1e9, dt.UTC)
        if mtime < cutoff:
            orphans.append(entry.uri)
    return sorted(orphans)


def delete_orphaned_files(
    lake: DuckLake, *, older_than: dt.datetime | None = None, dry_run: bool = True
) -> MaintenanceReport:
    report = MaintenanceReport(dry_run=dry_run, files_deleted=orphaned_files(lake, older_than=older_than))
    if not dry_run:
        for uri in report.files_deleted:
            lake.storage.delete(uri)
    return report


def merge_adjacent_files(
    lake: DuckLake,
    table: str,
    *,
    max_file_size: int = 64 * 1024 * 1024,
    min_files: int = 2,
    author: str | None = None,
    message: str | None = None,
    annotations: Mapping[str, Any] | None = None,
) -> MaintenanceReport:
    """Merge a table's small files (no deletes, same partition) into one *partial* file that keeps every row's
    row id and snapshot id, so time travel still works; the sources are scheduled for deletion.

    :param author: the snapshot's author (e.g. the task that ran the merge); ``message`` its commit message.
    :param annotations: JSON fields for the snapshot's ``commit_extra_info`` (e.g. the Airflow task).
    """
    report = MaintenanceReport(dry_run=False)
    with lake.transaction(author=author, message=message or "merge adjacent files") as tx:
        tx.annotate(**(annotations or {}))
        state = tx.table_state(table)
        candidates = [
            f
            for f in tx.base_files(state).values()
            if f.delete_file is None
            and not f.inlined_deletes
            and f.file_size_bytes < max_file_size
            and f.mapping_id is None
        ]
        # a merged file has one set of partition values: files of different partitions never merge (pruning
        # by the first file's values would skip the other files' rows)
        partition_values = metadata.file_partition_values(tx.connection, state.table_id) if state.table_id else {}
        groups: dict[Any, list[Any]] = {}
        for f in candidates:
            groups.setdefault((f.partition_id, partition_values.get(f.data_file_id, ())), []).append(f)
        merged = [g for g in groups.values() if len(g) >= min_files]
        for group in merged:
            pieces = [
                read_data_file(lake.storage, f, state.columns, tx.base.snapshot_id, virtual=(ROWID, ROW_SNAPSHOT))
                for f in sorted(group, key=lambda f: f.data_file_id)
            ]
            data = pa.concat_tables(pieces)
            written = write_data_file(
                lake.storage,
                state.table_dir,
                state.columns,
                data.select([c.name for c in state.columns]),
                row_ids=data.column(ROWID).to_numpy(),
                row_snapshots=data.column(ROW_SNAPSHOT).to_numpy(),
                directory=_directory_in_table(state.table_dir, group[0].path),
            )
            tx.stage_merge(table, written, group)
            report.files_merged += len(group)
            report.files_written.append(written.path)
    report.snapshot_id = tx.snapshot.snapshot_id if tx.snapshot else None
    return report


def _directory_in_table(table_dir: str, path: str) -> str:
    """The sub-directory of ``table_dir`` holding ``path`` (a partition's hive directory), "" for none.

    >>> _directory_in_table("s3://b/lake/main/t/", "s3://b/lake/main/t/k=a/year=2020/ducklake-1.parquet")
    'k=a/year=2020'
    >>> _directory_in_table("s3://b/lake/main/t/", "s3://b/elsewhere/f.parquet")
    ''
    """
    prefix = table_dir.rstrip("/") + "/"
    if not path.startswith(prefix):
        return ""
    return path[len(prefix) :].rpartition("/")[0]


def flush_inlined_data(
    lake: DuckLake,
    table: str,
    *,
    author: str | None = None,
    message: str | None = None,
    annotations: Mapping[str, Any] | None = None,
) -> MaintenanceReport:
    """Write a table's inlined rows (kept in the catalog database) to a Parquet file, preserving row ids
    and the snapshots that inserted and deleted them, then remove them from the catalog.

    :param author: the snapshot's author; ``message`` its commit message.
    :param annotations: JSON fields for the snapshot's ``commit_extra_info`` (e.g. the Airflow task).
    """
    report = MaintenanceReport(dry_run=False)
    with lake.transaction(author=author, message=message or "flush inlined data") as tx:
        tx.annotate(**(annotations or {}))
        state = tx.table_state(table)
        info = state.info
        if info is None or not info.inlined_tables:
            return report
        conn = tx.connection
        schemas = lake.inlined_schemas(conn, info)
        rows: list[tuple[int, int, int | None, dict[str, Any]]] = []
        flushed_tables = []
        for name, version in info.inlined_tables:
            if not conn.table_exists(name):
                continue
            old = list(schemas.get(version) or info.columns)
            select = ", ".join(quote_ident(c.name) for c in old)
            found = conn.query(f"SELECT row_id, begin_snapshot, end_snapshot, {select} FROM {{M}}{quote_ident(name)}")
            if found:
                flushed_tables.append(name)
            by_id = {c.column_id: (i, c) for i, c in enumerate(old)}
            for r in found:
                values = {}
                for column in state.columns:
                    hit = by_id.get(column.column_id)
                    values[column.name] = decode_value(r[3 + hit[0]], hit[1]) if hit else None
                rows.append((int(r[0]), int(r[1]), int(r[2]) if r[2] is not None else None, values))
        if not rows:
            return report
        rows.sort(key=lambda r: r[0])
        data = pa.Table.from_pylist(
            [r[3] for r in rows], schema=pa.schema([pa.field(c.name, c.arrow_type) for c in state.columns])
        )
        row_ids = np.array([r[0] for r in rows])
        row_snapshots = np.array([r[1] for r in rows])
        row_ends = [r[2] for r in rows]
        pieces = list(iter_slices(state.partitioning(), data))
        for number, (piece, piece_data) in enumerate(pieces):
            # one file per partition, as DuckDB flushes a partitioned table
            positions = np.arange(len(rows)) if piece.rows is None else piece.rows
            written = write_data_file(
                lake.storage,
                state.table_dir,
                state.columns,
                piece_data,
                row_ids=piece.select(row_ids),
                row_snapshots=piece.select(row_snapshots),
                partition=piece.partition,
                directory=piece.directory,
            )
            ended = [(i, row_ends[p]) for i, p in enumerate(positions) if row_ends[p] is not None]
            # rows already deleted keep the snapshot that deleted them, in a delete file written now (while staging)
            delete = (
                write_delete_file(
                    lake.storage,
                    state.table_dir,
                    -1,
                    written.path,
                    np.array([p for p, _ in ended], dtype=np.int64),
                    snapshots=np.array([s for _, s in ended], dtype=np.int64),
                )
                if ended
                else None
            )
            # the inlined tables are emptied once, with the last file
            tx.stage_flush(table, written, delete, flushed_tables if number == len(pieces) - 1 else [])
            report.files_written.append(written.path)
        report.rows_flushed = len(rows)
    report.snapshot_id = tx.snapshot.snapshot_id if tx.snapshot else None
    return report
