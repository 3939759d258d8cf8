"""Immutable views of catalog rows."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from airflow_provider_lakehouse.ducklake.types import Column, TableSchema
from airflow_provider_lakehouse.sql.sort_key import SortKey


@dataclass(frozen=True)
class Snapshot:
    """One row of ``ducklake_snapshot`` (plus its changes, when loaded)."""

    snapshot_id: int
    snapshot_time: dt.datetime | None
    schema_version: int
    next_catalog_id: int
    next_file_id: int
    changes: str | None = None
    author: str | None = None
    commit_message: str | None = None
    commit_extra_info: str | None = None


@dataclass(frozen=True)
class SchemaInfo:
    schema_id: int
    name: str
    path: str
    path_is_relative: bool
    uuid: str = ""


@dataclass(frozen=True)
class PartitionField:
    key_index: int
    column_id: int
    transform: str


@dataclass(frozen=True)
class TableInfo:
    """A table as visible at one snapshot."""

    table_id: int
    schema_id: int
    schema_name: str
    name: str
    path: str
    path_is_relative: bool
    uuid: str
    schema: TableSchema
    begin_snapshot: int
    partition_id: int | None = None
    partition_fields: tuple[PartitionField, ...] = ()
    sort_keys: tuple[SortKey, ...] = ()
    inlined_tables: tuple[tuple[str, int], ...] = ()  # (table name, schema_version), oldest first
    schema_path: str = ""  # the schema's stored path, so the table directory needs no catalog query
    schema_path_is_relative: bool = True
    #: ids of columns (at any depth) whose type was changed (``ALTER COLUMN ... TYPE``): older files and inlined
    #: rows hold them in an earlier type, to be cast to the current one as DuckDB casts it
    retyped_columns: frozenset[int] = frozenset()

    @property
    def qualified_name(self) -> str:
        return f"{self.schema_name}.{self.name}"

    @property
    def columns(self) -> tuple[Column, ...]:
        return self.schema.columns


@dataclass(frozen=True)
class ViewInfo:
    """A view as visible at one snapshot (``ducklake_view``).

    :param sql: the view's query as stored: DuckDB SQL, the lake's own catalog name written as
        :data:`~.names.VIEW_CATALOG_PLACEHOLDER`; unqualified table names resolve in the view's schema.
    :param column_aliases: names given to the query's first columns (``CREATE VIEW v (a, b) AS ...``).
    """

    view_id: int
    schema_id: int
    schema_name: str
    name: str
    sql: str
    dialect: str = "duckdb"
    column_aliases: tuple[str, ...] = ()
    uuid: str = ""
    begin_snapshot: int = 0

    @property
    def qualified_name(self) -> str:
        return f"{self.schema_name}.{self.name}"


@dataclass(frozen=True)
class DeleteFileInfo:
    delete_file_id: int
    data_file_id: int
    path: str  # absolute
    format: str
    delete_count: int
    file_size_bytes: int
    footer_size: int | None
    begin_snapshot: int
    partial_max: int | None = None


@dataclass(frozen=True)
class DataFileInfo:
    """A visible data file of a table at one snapshot, with what deletes apply to it."""

    data_file_id: int
    table_id: int
    path: str  # absolute (data_path/schema/table/file resolved)
    record_count: int
    file_size_bytes: int
    footer_size: int | None
    row_id_start: int | None
    begin_snapshot: int
    partial_max: int | None = None
    mapping_id: int | None = None
    partition_id: int | None = None
    delete_file: DeleteFileInfo | None = None
    inlined_deletes: tuple[tuple[int, int], ...] = ()  # (position, snapshot) from ducklake_inlined_delete_T
    # other delete files live at the same snapshot: DuckDB 1.5.5 leaves one behind when it flushes a file's inlined
    # deletions in a transaction that also deletes from it (docs/ducklake.md, Known limits); their rows are gone too
    other_delete_files: tuple[DeleteFileInfo, ...] = ()

    @property
    def live_delete_files(self) -> tuple[DeleteFileInfo, ...]:
        """Every delete file live at this snapshot, the newest last (usually one, or none)."""
        return (*self.other_delete_files, *((self.delete_file,) if self.delete_file is not None else ()))

    @property
    def has_deletes(self) -> bool:
        return bool(self.live_delete_files) or bool(self.inlined_deletes)


@dataclass(frozen=True)
class ColumnStats:
    """Min/max as DuckDB's stats strings; ``None`` means unknown."""

    column_id: int
    value_count: int | None = None
    null_count: int | None = None
    min_value: str | None = None
    max_value: str | None = None
    contains_nan: bool | None = None
    column_size_bytes: int | None = None
    #: DuckDB's JSON statistics of a geometry column (its bounding box and types; see .geometry)
    extra_stats: str | None = None


@dataclass(frozen=True)
class FilePartition:
    """Where one data file sits in its table's partitioning.

    :param partition_id: the spec's id; None for a spec set in the same transaction (the commit knows its id).
    :param values: each key's value as DuckDB's text, None for NULL, in key order.
    :param pending_spec: for a spec set in the same transaction, which one (0 for the first ``SET PARTITIONED
        BY`` of the table in it): a later ``SET`` replaces the spec, but files written before it keep theirs.
    """

    partition_id: int | None
    values: tuple[str | None, ...]
    pending_spec: int | None = None


@dataclass(frozen=True)
class WrittenFile:
    """A Parquet data file written for a pending commit (the catalog does not know it yet)."""

    path: str  # absolute
    record_count: int
    file_size_bytes: int
    footer_size: int
    column_stats: tuple[ColumnStats, ...] = ()
    has_row_ids: bool = False
    partial_max: int | None = None
    begin_snapshot: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    partition: FilePartition | None = None  # None: written unpartitioned


@dataclass(frozen=True)
class WrittenDeleteFile:
    """A positional delete file written for a pending commit."""

    path: str
    data_file_id: int
    delete_count: int
    file_size_bytes: int
    footer_size: int
    partial_max: int | None = None
    begin_snapshot: int | None = None
