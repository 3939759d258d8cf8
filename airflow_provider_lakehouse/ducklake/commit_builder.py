"""Turn a transaction's staged operations into catalog writes on top of the latest snapshot (spec section 5).

A :class:`CommitBuilder` is made fresh for every commit attempt: ids (snapshot, catalog objects, files) and
table statistics are taken from the snapshot the attempt builds on, so a retry after another writer won the
race rebuilds everything with new ids. It writes no file: every Parquet file was written while staging.
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import singledispatchmethod
from typing import Any

from airflow_provider_lakehouse.ducklake import changes as changelog
from airflow_provider_lakehouse.ducklake import metadata
from airflow_provider_lakehouse.ducklake.catalog_tables import (
    COLUMN,
    DATA_FILE,
    DELETE_FILE,
    FILE_COLUMN_STATS,
    FILE_PARTITION_VALUE,
    FILES_SCHEDULED_FOR_DELETION,
    INLINED_DATA_TABLES,
    PARTITION_COLUMN,
    PARTITION_INFO,
    SCHEMA,
    SCHEMA_VERSIONS,
    SNAPSHOT,
    SNAPSHOT_CHANGES,
    SORT_EXPRESSION,
    SORT_INFO,
    TABLE,
    TABLE_COLUMN_STATS,
    TABLE_STATS,
    VIEW,
    CatalogTable,
)
from airflow_provider_lakehouse.ducklake.geometry import merge_geometry_stats
from airflow_provider_lakehouse.ducklake.model import (
    ColumnStats,
    FilePartition,
    Snapshot,
    WrittenDeleteFile,
    WrittenFile,
)
from airflow_provider_lakehouse.ducklake.operations import (
    SCHEMA_CHANGES,
    AddColumn,
    CreateSchema,
    CreateTable,
    CreateView,
    DropColumn,
    DropSchema,
    DropTable,
    DropView,
    FlushInlined,
    MergeFiles,
    OldColumnType,
    Operation,
    RenameTable,
    ReplaceColumn,
    SetPartitioning,
    SetSortOrder,
    TableData,
)
from airflow_provider_lakehouse.ducklake.pruning import parse_stat
from airflow_provider_lakehouse.ducklake.staging import TableState
from airflow_provider_lakehouse.ducklake.stats import merge_bound
from airflow_provider_lakehouse.ducklake.storage import relative_to, uuid7
from airflow_provider_lakehouse.ducklake.store import CatalogConnection, MetadataStore, quote_ident
from airflow_provider_lakehouse.ducklake.types import NESTED, Column
from airflow_provider_lakehouse.exceptions import CommitConflictError


@dataclass(frozen=True)
class CommitRecord:
    """What the snapshot row and its ``ducklake_snapshot_changes`` row say about the commit."""

    author: str | None
    message: str | None
    extra_info: str | None


class CommitBuilder:
    """Catalog writes for one commit attempt; :meth:`run` executes them on ``conn`` (inside its transaction).

    :param latest: the snapshot this attempt builds on (the new one is ``latest + 1``).
    :param mine: the change tokens of this commit (ids of tables created here are added as they are allocated).
    """

    def __init__(
        self,
        conn: CatalogConnection,
        store: MetadataStore,
        data_path: str,
        latest: Snapshot,
        mine: changelog.ChangeSet,
        record: CommitRecord,
    ) -> None:
        self.conn = conn
        self.store = store
        self.data_path = data_path
        self.latest = latest
        self.record = record
        self.changes = changelog.parse([mine.text()])
        self.sid = latest.snapshot_id + 1
        self.next_catalog_id = latest.next_catalog_id
        self.next_file_id = latest.next_file_id
        self.schema_version = latest.schema_version
        self.statements: list[tuple[str, Sequence[Any]]] = []
        self.schema_ids: dict[str, int] = {}
        self.table_ids: dict[int, int] = {}  # id(state) -> table id allocated here
        self.states: dict[int, TableState] = {}  # table id -> state, for the inlined-data tables of changed tables
        self.altered_tables: set[int] = set()
        # (table id, which spec the transaction set: 0 for its first) -> the spec's catalog id
        self.partition_ids: dict[tuple[int, int], int] = {}
        self.created_tables: set[int] = set()
        # table stats as this commit leaves them: tid -> (record_count, next_row_id, file_size_bytes)
        self._table_stats: dict[int, tuple[int, int, int]] = {}
        self._column_stats: dict[int, dict[int, list[Any]]] = {}
        self._stats_existed: dict[int, bool] = {}

    def sql(self, text: str, params: Sequence[Any] = ()) -> None:
        """Queue a statement; :meth:`run` sends them all in one batch."""
        self.statements.append((text, params))

    def insert(self, table: CatalogTable, **values: Any) -> None:
        """Queue one row of a catalog table (columns by name; the others NULL)."""
        self.sql(*table.insert(**values))

    def run(self, operations: Iterable[Operation]) -> Snapshot:
        schema_change = False
        for op in operations:
            self.apply(op)
            schema_change |= isinstance(op, SCHEMA_CHANGES)
        if schema_change:
            self.schema_version += 1
        for tid in sorted(self._table_stats):
            self._stats_statements(tid)
        for tid in sorted(self.created_tables | self.altered_tables):
            self.insert(SCHEMA_VERSIONS, begin_snapshot=self.sid, schema_version=self.schema_version, table_id=tid)
        for tid in sorted(self.created_tables | self.altered_tables):
            self._new_inlined_table(tid)
        changes = self.changes.text()
        conn = self.conn
        now = conn.now()
        # the snapshot row first: its primary key is where concurrent writers collide
        conn.execute(
            *SNAPSHOT.insert(
                snapshot_id=self.sid,
                snapshot_time=now,
                schema_version=self.schema_version,
                next_catalog_id=self.next_catalog_id,
                next_file_id=self.next_file_id,
            )
        )
        conn.execute_batch(
            [
                *self.statements,
                SNAPSHOT_CHANGES.insert(
                    snapshot_id=self.sid,
                    changes_made=changes,
                    author=self.record.author,
                    commit_message=self.record.message,
                    commit_extra_info=self.record.extra_info,
                ),
            ]
        )
        return Snapshot(
            self.sid,
            metadata.parse_time(now),
            self.schema_version,
            self.next_catalog_id,
            self.next_file_id,
            changes,
            self.record.author,
            self.record.message,
            self.record.extra_info,
        )

    # -- ids ---------------------------------------------------------------------------------
    def tid(self, state: TableState) -> int:
        if state.table_id is not None:
            return state.table_id
        return self.table_ids[id(state)]

    def _new_file_id(self) -> int:
        fid = self.next_file_id
        self.next_file_id += 1
        return fid

    def _schema_id(self, name: str) -> int:
        if name in self.schema_ids:
            return self.schema_ids[name]
        row = self.conn.one(
            f"SELECT schema_id FROM {{M}}ducklake_schema WHERE schema_name = ? AND {metadata.visible()}",
            (name, self.latest.snapshot_id, self.latest.snapshot_id),
        )
        if row is None:
            raise CommitConflictError(f"Schema {name!r} no longer exists. Nothing was committed.")
        return int(row[0])

    def _relative(self, state: TableState, path: str) -> tuple[str, bool]:
        rel = relative_to(state.table_dir, path)
        return (rel, True) if rel is not None else (path, False)

    # -- operations --------------------------------------------------------------------------
    @singledispatchmethod
    def apply(self, op: Operation) -> None:
        raise TypeError(f"No catalog writes for {type(op).__name__}.")

    @apply.register
    def _(self, op: CreateSchema) -> None:
        sid = self.next_catalog_id
        self.next_catalog_id += 1
        self.schema_ids[op.name] = sid
        self.insert(
            SCHEMA,
            schema_id=sid,
            schema_uuid=str(uuidlib.uuid4()),
            begin_snapshot=self.sid,
            schema_name=op.name,
            path=op.path,
            path_is_relative=True,
        )

    @apply.register
    def _(self, op: DropSchema) -> None:
        self.sql(
            "UPDATE {M}ducklake_schema SET end_snapshot = ? WHERE schema_id = ? AND end_snapshot IS NULL",
            (self.sid, op.schema_id),
        )

    @apply.register
    def _(self, op: CreateTable) -> None:
        state = op.table
        tid = self.next_catalog_id
        self.next_catalog_id += 1
        self.table_ids[id(state)] = tid
        self.states[tid] = state
        self.created_tables.add(tid)
        self._insert_table(tid, uuid7(), self._schema_id(state.schema_name), state.name, op.path, True)
        self._insert_columns(tid, state.columns)

    def _insert_table(
        self, tid: int, table_uuid: str, schema_id: int, name: str, path: str, path_is_relative: bool
    ) -> None:
        """A ``ducklake_table`` row that begins with this commit (a new table, or a renamed one's new name)."""
        self.insert(
            TABLE,
            table_id=tid,
            table_uuid=table_uuid,
            begin_snapshot=self.sid,
            schema_id=schema_id,
            table_name=name,
            path=path,
            path_is_relative=path_is_relative,
        )

    def _insert_columns(self, tid: int, columns: Sequence[Column], parent: int | None = None) -> None:
        for column in columns:
            self._insert_column(tid, column, parent)
            self._insert_columns(tid, column.children, column.column_id)

    def _insert_column(self, tid: int, column: Column, parent: int | None, *, ended: bool = False) -> None:
        """One ``ducklake_column`` row from this snapshot on (``ended``: for this snapshot only)."""
        nested = column.type in NESTED
        self.insert(
            COLUMN,
            column_id=column.column_id,
            begin_snapshot=self.sid,
            end_snapshot=self.sid if ended else None,
            table_id=tid,
            column_order=column.column_id,
            column_name=column.name,
            column_type=column.type,
            initial_default=column.initial_default,
            # DuckDB writes the text NULL for "no default", not a NULL
            default_value=column.default_value if column.default_value is not None else "NULL",
            nulls_allowed=column.nullable,
            parent_column=parent,
            default_value_type="" if nested else "expression" if column.default_is_expression else "literal",
            default_value_dialect="duckdb",
        )

    @apply.register
    def _(self, op: DropTable) -> None:
        tid = self.tid(op.table)
        for table in (
            "ducklake_table",
            "ducklake_partition_info",
            "ducklake_column",
            "ducklake_column_tag",
            "ducklake_data_file",
            "ducklake_delete_file",
            "ducklake_sort_info",
        ):
            self.sql(
                f"UPDATE {{M}}{table} SET end_snapshot = ? WHERE table_id = ? AND end_snapshot IS NULL", (self.sid, tid)
            )
        self.sql(
            "UPDATE {M}ducklake_tag SET end_snapshot = ? WHERE object_id = ? AND end_snapshot IS NULL", (self.sid, tid)
        )

    @apply.register
    def _(self, op: CreateView) -> None:
        vid = self.next_catalog_id
        self.next_catalog_id += 1
        self.insert(
            VIEW,
            view_id=vid,
            view_uuid=str(uuidlib.uuid4()),
            begin_snapshot=self.sid,
            schema_id=self._schema_id(op.schema_name),
            view_name=op.name,
            dialect="duckdb",
            sql=op.sql,
            column_aliases=metadata.quoted_list(op.column_aliases),
        )

    @apply.register
    def _(self, op: DropView) -> None:
        vid = op.view.view_id
        self.sql(
            "UPDATE {M}ducklake_view SET end_snapshot = ? WHERE view_id = ? AND end_snapshot IS NULL", (self.sid, vid)
        )
        self.sql(
            "UPDATE {M}ducklake_tag SET end_snapshot = ? WHERE object_id = ? AND end_snapshot IS NULL", (self.sid, vid)
        )

    @apply.register
    def _(self, op: RenameTable) -> None:
        info = op.table.info
        assert info is not None  # only tables of the base snapshot record a rename
        self.sql(
            "UPDATE {M}ducklake_table SET end_snapshot = ? WHERE table_id = ? AND end_snapshot IS NULL",
            (self.sid, info.table_id),
        )
        self._insert_table(info.table_id, info.uuid, info.schema_id, op.table.name, info.path, info.path_is_relative)

    @apply.register
    def _(self, op: AddColumn) -> None:
        tid = self._altered(op.table)
        self._insert_columns(tid, [op.column])

    @apply.register
    def _(self, op: DropColumn) -> None:
        tid = self._altered(op.table)
        for column in op.column.walk():
            self.sql(
                "UPDATE {M}ducklake_column SET end_snapshot = ? WHERE table_id = ? AND column_id = ? "
                "AND end_snapshot IS NULL",
                (self.sid, tid, column.column_id),
            )

    @apply.register
    def _(self, op: ReplaceColumn) -> None:
        tid = self._altered(op.table)
        row = self.conn.one(
            "SELECT parent_column FROM {M}ducklake_column WHERE table_id = ? AND column_id = ? AND end_snapshot IS NULL",
            (tid, op.old.column_id),
        )
        self.sql(
            "UPDATE {M}ducklake_column SET end_snapshot = ? WHERE table_id = ? AND column_id = ? "
            "AND end_snapshot IS NULL",
            (self.sid, tid, op.old.column_id),
        )
        self._insert_column(tid, op.column, row[0] if row else None)

    @apply.register
    def _(self, op: OldColumnType) -> None:
        # only a top-level column's type changes (Transaction.change_column_type): it has no parent
        self._insert_column(self.tid(op.table), op.column, None, ended=True)

    def _altered(self, state: TableState) -> int:
        tid = self.tid(state)
        self.altered_tables.add(tid)
        self.states[tid] = state
        return tid

    @apply.register
    def _(self, op: SetPartitioning) -> None:
        """A new spec (DuckDB's ``SET``/``RESET PARTITIONED BY``): the visible one ends, a new one begins with
        a new catalog id; a reset is a spec with no keys. As DuckDB, every spec the transaction set takes an id
        (files written under a replaced one name it), and a transaction that ends on the spec it began with (a
        ``SET`` then a ``RESET`` of an unpartitioned table) writes no spec rows, only the table's alteration."""
        tid = self._altered(op.table)
        for spec in range(op.table.partition_specs_set):
            self.partition_ids[(tid, spec)] = self.next_catalog_id
            self.next_catalog_id += 1
        if op.fields == (op.table.info.partition_fields if op.table.info is not None else ()):
            return
        self.sql(
            "UPDATE {M}ducklake_partition_info SET end_snapshot = ? WHERE table_id = ? AND end_snapshot IS NULL",
            (self.sid, tid),
        )
        partition_id = self.partition_ids[(tid, op.table.partition_specs_set - 1)]
        self.insert(PARTITION_INFO, partition_id=partition_id, table_id=tid, begin_snapshot=self.sid)
        for f in op.fields:
            self.insert(
                PARTITION_COLUMN,
                partition_id=partition_id,
                table_id=tid,
                partition_key_index=f.key_index,
                column_id=f.column_id,
                transform=f.transform,
            )

    @apply.register
    def _(self, op: SetSortOrder) -> None:
        """A new sort order (DuckDB's ``SET``/``RESET SORTED BY``): the visible one ends; a new one, with a new
        catalog id, begins unless it is a reset (DuckDB writes no row for an unsorted table)."""
        tid = self._altered(op.table)
        self.sql(
            "UPDATE {M}ducklake_sort_info SET end_snapshot = ? WHERE table_id = ? AND end_snapshot IS NULL",
            (self.sid, tid),
        )
        if not op.keys:
            return
        sort_id = self.next_catalog_id
        self.next_catalog_id += 1
        self.insert(SORT_INFO, sort_id=sort_id, table_id=tid, begin_snapshot=self.sid)
        for index, key in enumerate(op.keys):
            self.insert(
                SORT_EXPRESSION,
                sort_id=sort_id,
                table_id=tid,
                sort_key_index=index,
                expression=key.expression,
                dialect="duckdb",
                sort_direction="DESC" if key.descending else "ASC",
                null_order="NULLS_FIRST" if key.nulls_first else "NULLS_LAST",
            )

    @apply.register
    def _(self, op: TableData) -> None:
        state = op.table
        changes = state.changes
        if changes is None:
            return
        tid = self.tid(state)
        if changes.appended:
            self.changes.inserted.add(tid)
            for staged in changes.appended:
                (fid,) = self._register_files(state, [staged.file])
                if staged.delete_file is not None:
                    self._insert_delete_file(state, staged.delete_file, fid, begin=self.sid)
        for fid, deletes in sorted(changes.base_deletes.items()):
            if fid in changes.dropped_files or deletes.delete_file is None:
                continue
            base = (state.files or {})[fid]  # loaded: deleting from a base file read them
            # the new delete file holds every live one's positions (a DuckDB lake can have two live), so all end
            for old in base.live_delete_files:
                self.sql(
                    "UPDATE {M}ducklake_delete_file SET end_snapshot = ? WHERE delete_file_id = ? "
                    "AND end_snapshot IS NULL",
                    (self.sid, old.delete_file_id),
                )
            self._insert_delete_file(state, deletes.delete_file, fid, begin=self.sid)
        for fid in sorted(changes.dropped_files):
            self.sql(
                "UPDATE {M}ducklake_data_file SET end_snapshot = ? WHERE data_file_id = ? AND end_snapshot IS NULL",
                (self.sid, fid),
            )
            self.sql(
                "UPDATE {M}ducklake_delete_file SET end_snapshot = ? WHERE data_file_id = ? AND end_snapshot IS NULL",
                (self.sid, fid),
            )
        if changes.inlined_deleted:
            self._end_inlined_rows(state, sorted(changes.inlined_deleted))

    def _end_inlined_rows(self, state: TableState, row_ids: list[int]) -> None:
        for name, _version in state.info.inlined_tables if state.info else ():
            if not self.conn.table_exists(name):
                continue
            for start in range(0, len(row_ids), 500):
                chunk = row_ids[start : start + 500]
                self.sql(
                    f"UPDATE {{M}}{quote_ident(name)} SET end_snapshot = ? WHERE end_snapshot IS NULL "
                    f"AND row_id IN ({', '.join('?' * len(chunk))})",
                    (self.sid, *chunk),
                )

    @apply.register
    def _(self, op: MergeFiles) -> None:
        state = op.table
        sources = op.sources
        fid = self._register_partial_file(
            state, op.file, min(s.row_id_start or 0 for s in sources), sources[0].partition_id
        )
        tid = self.tid(state)
        self.changes.compacted.add(tid)
        now = self.conn.now()
        # one partition per merge group: the merged file takes the first source's partition values
        self.sql(
            f"INSERT INTO {{M}}ducklake_file_partition_value {FILE_PARTITION_VALUE.column_list()} "
            "SELECT ?, table_id, partition_key_index, partition_value FROM {M}ducklake_file_partition_value "
            "WHERE data_file_id = ?",
            (fid, sources[0].data_file_id),
        )
        for src in sources:
            for t in ("ducklake_data_file", "ducklake_file_column_stats", "ducklake_file_partition_value"):
                self.sql(f"DELETE FROM {{M}}{t} WHERE data_file_id = ? AND table_id = ?", (src.data_file_id, tid))
            rel = relative_to(self.data_path, src.path)
            self.insert(
                FILES_SCHEDULED_FOR_DELETION,
                data_file_id=src.data_file_id,
                path=rel if rel is not None else src.path,
                path_is_relative=rel is not None,
                schedule_start=now,
            )

    @apply.register
    def _(self, op: FlushInlined) -> None:
        state = op.table
        fid = self._register_partial_file(state, op.file, 0)
        self.changes.flushed.add(self.tid(state))
        if op.delete is not None:
            self._insert_delete_file(state, op.delete, fid, begin=op.delete.begin_snapshot)
        for name in op.inlined_tables:
            self.sql(f"DELETE FROM {{M}}{quote_ident(name)}")

    # -- files ---------------------------------------------------------------------------------
    def _insert_delete_file(
        self, state: TableState, written: WrittenDeleteFile, data_file_id: int, begin: int | None
    ) -> None:
        path, relative = self._relative(state, written.path)
        self.insert(
            DELETE_FILE,
            delete_file_id=self._new_file_id(),
            table_id=self.tid(state),
            begin_snapshot=begin,
            data_file_id=data_file_id,
            path=path,
            path_is_relative=relative,
            format="parquet",
            delete_count=written.delete_count,
            file_size_bytes=written.file_size_bytes,
            footer_size=written.footer_size,
            partial_max=written.partial_max,
        )

    def _insert_file_stats(self, fid: int, tid: int, stats: Iterable[ColumnStats]) -> None:
        for s in stats:
            self.insert(
                FILE_COLUMN_STATS,
                data_file_id=fid,
                table_id=tid,
                column_id=s.column_id,
                column_size_bytes=s.column_size_bytes,
                value_count=s.value_count,
                null_count=s.null_count,
                min_value=s.min_value,
                max_value=s.max_value,
                contains_nan=s.contains_nan,
                extra_stats=s.extra_stats,
            )

    def _register_partial_file(
        self, state: TableState, written: WrittenFile, row_id_start: int, partition_id: int | None = None
    ) -> int:
        """A data file row for a partial file (embedded row and snapshot ids); returns its id."""
        fid = self._insert_data_file(state, written, written.begin_snapshot, row_id_start, partition_id)
        self._insert_file_stats(fid, self.tid(state), written.column_stats)
        return fid

    def _insert_data_file(
        self,
        state: TableState,
        written: WrittenFile,
        begin: int | None,
        row_id_start: int,
        partition_id: int | None = None,
    ) -> int:
        """A ``ducklake_data_file`` row for ``written`` with a new file id; returns the id."""
        fid = self._new_file_id()
        path, relative = self._relative(state, written.path)
        if written.partition is not None:
            partition_id = self._partition_id_of(state, written.partition)
            for index, value in enumerate(written.partition.values):
                self.insert(
                    FILE_PARTITION_VALUE,
                    data_file_id=fid,
                    table_id=self.tid(state),
                    partition_key_index=index,
                    partition_value=value,
                )
        self.insert(
            DATA_FILE,
            data_file_id=fid,
            table_id=self.tid(state),
            begin_snapshot=begin,
            path=path,
            path_is_relative=relative,
            file_format="parquet",
            record_count=written.record_count,
            file_size_bytes=written.file_size_bytes,
            footer_size=written.footer_size,
            row_id_start=row_id_start,
            partition_id=partition_id,
            partial_max=written.partial_max,
        )
        return fid

    def _partition_id_of(self, state: TableState, partition: FilePartition) -> int:
        """The catalog id of the spec a file was written under (one set in this commit has its id only now)."""
        if partition.partition_id is not None:
            return partition.partition_id
        return self.partition_ids[(self.tid(state), partition.pending_spec or 0)]

    def _register_files(self, state: TableState, files: Sequence[WrittenFile]) -> list[int]:
        """Data file rows for newly written files, with row ids from the table's ``next_row_id``; the table and
        column statistics are updated as DuckDB does (spec 5.2)."""
        tid = self.tid(state)
        record_count, next_row_id, size = self._stats_for(tid)
        column_stats = self._column_stats[tid]
        leaves = {c.column_id: c for top in state.columns for c in top.walk()}
        ids = []
        for f in files:
            fid = self._insert_data_file(state, f, self.sid, next_row_id)
            ids.append(fid)
            self._insert_file_stats(fid, tid, f.column_stats)
            record_count += f.record_count
            next_row_id += f.record_count
            size += f.file_size_bytes
            for s in f.column_stats:
                column = leaves.get(s.column_id)
                if column is not None:
                    self._merge_column_stats(tid, column_stats, column, s, record_count - f.record_count)
        self._table_stats[tid] = (record_count, next_row_id, size)
        return ids

    def _stats_for(self, tid: int) -> tuple[int, int, int]:
        if tid not in self._table_stats:  # read on every attempt: another writer may have moved them
            row = self.conn.one(
                "SELECT record_count, next_row_id, file_size_bytes FROM {M}ducklake_table_stats WHERE table_id = ?",
                (tid,),
            )
            self._stats_existed[tid] = row is not None
            self._table_stats[tid] = (int(row[0]), int(row[1]), int(row[2])) if row else (0, 0, 0)
            self._column_stats[tid] = {
                int(r[0]): [r[1], r[2], r[3], r[4], r[5]]
                for r in self.conn.query(
                    "SELECT column_id, contains_null, contains_nan, min_value, max_value, extra_stats "
                    "FROM {M}ducklake_table_column_stats WHERE table_id = ?",
                    (tid,),
                )
            }
        return self._table_stats[tid]

    def _merge_column_stats(
        self, tid: int, column_stats: dict[int, list[Any]], column: Column, s: ColumnStats, earlier_rows: int
    ) -> None:
        has_null = bool(s.null_count)
        current = column_stats.get(s.column_id)
        if current is None:
            if not self._stats_existed[tid]:
                entry = [has_null, s.contains_nan, s.min_value, s.max_value, s.extra_stats]
                if earlier_rows:
                    _cover_initial_default(entry, column)
                column_stats[s.column_id] = entry
            return
        current[0] = bool(current[0]) or has_null
        current[1] = None if current[1] is None and s.contains_nan is None else bool(current[1]) or bool(s.contains_nan)
        if s.value_count != 0 or s.min_value is not None or s.max_value is not None:
            # a file with only NULLs in the column has no bounds to add: DuckDB keeps the table's
            current[2] = merge_bound(current[2], s.min_value, column, take_max=False)
            current[3] = merge_bound(current[3], s.max_value, column, take_max=True)
        if column.type == "geometry":
            current[4] = merge_geometry_stats(current[4], s.extra_stats)

    def _stats_statements(self, tid: int) -> None:
        """Write ``ducklake_table_stats`` / ``_table_column_stats`` as this commit leaves them (spec 5.2)."""
        record_count, next_row_id, size = self._table_stats[tid]
        if self._stats_existed[tid]:
            self.sql(
                "UPDATE {M}ducklake_table_stats SET record_count = ?, next_row_id = ?, file_size_bytes = ? "
                "WHERE table_id = ?",
                (record_count, next_row_id, size, tid),
            )
            for cid, (has_null, has_nan, lo, hi, extra) in sorted(self._column_stats[tid].items()):
                self.sql(
                    "UPDATE {M}ducklake_table_column_stats SET contains_null = ?, contains_nan = ?, min_value = ?, "
                    "max_value = ?, extra_stats = ? WHERE table_id = ? AND column_id = ?",
                    (has_null, has_nan, lo, hi, extra, tid, cid),
                )
        else:
            self.insert(
                TABLE_STATS, table_id=tid, record_count=record_count, next_row_id=next_row_id, file_size_bytes=size
            )
            for cid, (has_null, has_nan, lo, hi, extra) in sorted(self._column_stats[tid].items()):
                self.insert(
                    TABLE_COLUMN_STATS,
                    table_id=tid,
                    column_id=cid,
                    contains_null=has_null,
                    contains_nan=has_nan,
                    min_value=lo,
                    max_value=hi,
                    extra_stats=extra,
                )

    def _new_inlined_table(self, tid: int) -> None:
        """Register an (empty) inlined-data table with the current column list, as DuckDB does on CREATE and on
        every column change (spec 12.1 item 9). DuckDB's next small insert goes to the newest one, positionally;
        and a table without one makes DuckDB create it at a schema version it then cannot resolve."""
        state = self.states[tid]
        name = f"ducklake_inlined_data_{tid}_{self.schema_version}"
        columns = ", ".join(f"{quote_ident(c.name)} {self.store.column_type(c.type)}" for c in state.columns)
        self.sql(
            f"CREATE TABLE IF NOT EXISTS {{M}}{quote_ident(name)}(row_id BIGINT, begin_snapshot BIGINT, "
            f"end_snapshot BIGINT, {columns})"
        )
        self.insert(INLINED_DATA_TABLES, table_id=tid, table_name=name, schema_version=self.schema_version)


def _cover_initial_default(entry: list[Any], column: Column) -> None:
    """Table column stats (``[contains_null, contains_nan, min, max, extra]``) first made from a file written after
    the column was added, in the commit that added it, that must also cover the rows written before: they read
    the column's initial default. A NULL default is a NULL; a number widens the bounds; the bounds of another
    type are left unknown. (DuckDB 1.5 writes the file's bounds alone there, and then reads those rows as another
    value: -443 for a DEFAULT -699; seed 38002 of the DML fuzzer.)"""
    default = column.initial_default
    if default is None:
        entry[0] = True
        return
    numeric = column.type.startswith(("int", "uint", "float", "decimal"))
    if not numeric or parse_stat(default, column) is None:
        entry[2] = entry[3] = None
        return
    entry[2] = default if entry[2] is None else merge_bound(entry[2], default, column, take_max=False)
    entry[3] = default if entry[3] is None else merge_bound(entry[3], default, column, take_max=True)
