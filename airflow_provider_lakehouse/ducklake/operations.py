"""The changes a transaction stages, one frozen dataclass each, applied by :mod:`.commit_builder` in order.

DDL changes are recorded as they happen. Row changes are not recorded one by one: a table's first append or
delete records one :class:`TableData`, and every later change to the table's rows updates that table's
:class:`~.staging.TableChanges`, so the commit writes each table's *net* effect once.
"""

from __future__ import annotations

from dataclasses import dataclass

from airflow_provider_lakehouse.ducklake.model import (
    DataFileInfo,
    PartitionField,
    SortKey,
    ViewInfo,
    WrittenDeleteFile,
    WrittenFile,
)
from airflow_provider_lakehouse.ducklake.staging import TableState
from airflow_provider_lakehouse.ducklake.types import Column


@dataclass(frozen=True)
class CreateSchema:
    """A new schema; ``if_not_exists``: another writer creating it first is no conflict (see the commit)."""

    name: str
    path: str
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropSchema:
    name: str
    schema_id: int


@dataclass(frozen=True)
class CreateTable:
    """A new table; its columns are the state's at commit time (ALTERs in the same transaction fold in)."""

    table: TableState
    path: str


@dataclass(frozen=True)
class DropTable:
    table: TableState


@dataclass(frozen=True)
class RenameTable:
    table: TableState
    old_name: str


@dataclass(frozen=True)
class CreateView:
    """A new view: its query as DuckDB SQL, the lake's catalog written as ``{DUCKLAKE_CATALOG}``."""

    schema_name: str
    name: str
    sql: str
    column_aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class DropView:
    view: ViewInfo


@dataclass(frozen=True)
class AddColumn:
    table: TableState
    column: Column


@dataclass(frozen=True)
class DropColumn:
    table: TableState
    column: Column


@dataclass(frozen=True)
class ReplaceColumn:
    """A column's catalog row replaced by ``column`` (same id): renamed, its type widened, its default or its
    ``NOT NULL`` changed. The old row ends at the commit's snapshot, as DuckDB records every such change."""

    table: TableState
    old: Column
    column: Column


@dataclass(frozen=True)
class OldColumnType:
    """The type ``column`` had in a table created in this transaction before its type was changed: recorded as a
    row that begins and ends at the commit's snapshot (as DuckDB records it), so that readers know files written
    before the change hold the old type."""

    table: TableState
    column: Column


@dataclass(frozen=True)
class SetPartitioning:
    """A new partition spec for the table (no fields: unpartitioned, DuckDB's ``RESET PARTITIONED BY``): the last
    of the ``table.partition_specs_set`` specs its transaction set."""

    table: TableState
    fields: tuple[PartitionField, ...]


@dataclass(frozen=True)
class SetSortOrder:
    """A new sort order for the table's files (no keys: unsorted, DuckDB's ``RESET SORTED BY``)."""

    table: TableState
    keys: tuple[SortKey, ...]


@dataclass(frozen=True)
class TableData:
    """The table's staged row changes (``table.changes``), as they stand at commit."""

    table: TableState


@dataclass(frozen=True)
class MergeFiles:
    """``sources`` (adjacent small files) rewritten as one partial ``file`` that keeps row and snapshot ids."""

    table: TableState
    file: WrittenFile
    sources: tuple[DataFileInfo, ...]


@dataclass(frozen=True)
class FlushInlined:
    """Inlined rows moved to ``file``; ``delete`` records when the rows that were already deleted ended.

    :param inlined_tables: the inlined-data tables emptied by the flush.
    """

    table: TableState
    file: WrittenFile
    delete: WrittenDeleteFile | None
    inlined_tables: tuple[str, ...]


Operation = (
    CreateSchema
    | DropSchema
    | CreateTable
    | DropTable
    | RenameTable
    | CreateView
    | DropView
    | AddColumn
    | DropColumn
    | ReplaceColumn
    | OldColumnType
    | SetPartitioning
    | SetSortOrder
    | TableData
    | MergeFiles
    | FlushInlined
)

#: operations that change the table's schema (a new schema version, DuckDB spec 5.3)
SCHEMA_CHANGES = (
    CreateSchema,
    DropSchema,
    CreateTable,
    DropTable,
    RenameTable,
    CreateView,
    DropView,
    AddColumn,
    DropColumn,
    ReplaceColumn,
    OldColumnType,
    SetPartitioning,
    SetSortOrder,
)


def table_of(op: Operation) -> TableState | None:
    return getattr(op, "table", None)


def written_paths(op: Operation) -> set[str]:
    """Files an operation (other than row changes) registers."""
    if isinstance(op, MergeFiles):
        return {op.file.path}
    if isinstance(op, FlushInlined):
        return {op.file.path} | ({op.delete.path} if op.delete is not None else set())
    if isinstance(op, TableData) and op.table.changes is not None:
        return op.table.changes.referenced_paths()
    return set()
