"""Stage changes, then commit them as one DuckLake snapshot with DuckDB's protocol (spec section 5).

Data and delete files are written while staging (see :mod:`.staging`); the catalog is touched only by
:meth:`Transaction.commit`, inside one catalog-database transaction that inserts the new snapshot row first (its
primary key is the serialization point between writers). On a collision the commit re-reads what changed since
its base snapshot, fails on a logical conflict (DuckDB's rules) or rebuilds its catalog writes on top with fresh
ids, with backoff and jitter. Files of a commit that certainly failed are deleted; if the outcome is unknown
they are kept.

Reads through the transaction (:meth:`Transaction.scan`, :meth:`Transaction.read`) see the base snapshot plus
everything staged so far, as a DuckDB transaction sees its own changes.
"""

from __future__ import annotations

import copy
import json
import logging
import random
import re
import time
import uuid as uuidlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from airflow_provider_lakehouse.ducklake import changes as changelog
from airflow_provider_lakehouse.ducklake import metadata
from airflow_provider_lakehouse.ducklake.commit_builder import CommitBuilder, CommitRecord
from airflow_provider_lakehouse.ducklake.defaults import check_default, insert_default, stored_default
from airflow_provider_lakehouse.ducklake.model import (
    DataFileInfo,
    PartitionField,
    Snapshot,
    SortKey,
    TableInfo,
    ViewInfo,
    WrittenDeleteFile,
    WrittenFile,
)
from airflow_provider_lakehouse.ducklake.names import find_view, split_name
from airflow_provider_lakehouse.ducklake.operations import (
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
    table_of,
    written_paths,
)
from airflow_provider_lakehouse.ducklake.partitioning import Partitioning, check_transform
from airflow_provider_lakehouse.ducklake.pruning import Predicate, filter_rows, prune_files
from airflow_provider_lakehouse.ducklake.reader import (
    FILE_ID,
    FILE_POS,
    ROWID,
    ScanPlan,
    default_array,
    deleted_positions,
    read_inlined_rows,
    read_schema,
)
from airflow_provider_lakehouse.ducklake.staging import BaseFileDeletes, StagedFile, TableChanges, TableState
from airflow_provider_lakehouse.ducklake.storage import join_path
from airflow_provider_lakehouse.ducklake.store import CatalogConnection
from airflow_provider_lakehouse.ducklake.type_promotion import duckdb_type_name, promotion_allowed, promotion_refused
from airflow_provider_lakehouse.ducklake.types import NESTED, Column, TableSchema, columns_from_arrow, renumber
from airflow_provider_lakehouse.ducklake.writer import write_data_files, write_delete_file
from airflow_provider_lakehouse.exceptions import (
    CommitConflictError,
    CommitStateUnknownError,
    LakehouseError,
    NoSuchSchemaError,
    NoSuchTableError,
    SchemaAlreadyExistsError,
    TableAlreadyExistsError,
)
from airflow_provider_lakehouse.sql.sorted_by import key_columns, key_with_column_renamed

if TYPE_CHECKING:
    from airflow_provider_lakehouse.ducklake.catalog import DuckLake

log = logging.getLogger(__name__)
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
COMMIT_ID_KEY = "lakehouse_commit_id"


def path_for(name: str) -> str:
    """Directory DuckDB gives a schema or table: its name, or a UUID when the name has other characters."""
    return f"{name}/" if _PLAIN_NAME.match(name) else f"{uuidlib.uuid4()}/"


@dataclass(frozen=True)
class Savepoint:
    """What :meth:`Transaction.rollback_to` restores (an explicit ``BEGIN`` inside a script's transaction)."""

    state: Any
    written: int


class Transaction:
    """Changes staged against one lake, committed as one snapshot. Use as a context manager.

    :param author: stored in ``ducklake_snapshot_changes.author``.
    :param message: the commit message.
    :param extra_info: free text for ``commit_extra_info``; default: a JSON object with this commit's id (which
        lets a retry after a lost connection tell whether the commit landed) and whatever :meth:`annotate` adds.
    """

    def __init__(
        self, lake: DuckLake, *, author: str | None = None, message: str | None = None, extra_info: str | None = None
    ) -> None:
        self.lake = lake
        self.author = author
        self.message = message
        self.commit_id = str(uuidlib.uuid4())
        self._free_text_info = extra_info
        self._info: dict[str, Any] = {COMMIT_ID_KEY: self.commit_id}
        self._conn = lake.store.connect()
        try:
            self.base = metadata.latest_snapshot(self._conn)
            self._schemas = {s.name: s for s in metadata.schemas_at(self._conn, self.base.snapshot_id)}
        except BaseException:
            self._conn.close()
            raise
        self._new_schemas: dict[str, str] = {}  # name -> path
        self._tables: dict[tuple[str, str], TableState] = {}
        self._base_views: list[ViewInfo] | None = None  # read from the catalog on first use
        self._ops: list[Operation] = []
        self._written: list[str] = []  # every file this transaction wrote (superseded ones included)
        self._next_temp_id = -1
        self.snapshot: Snapshot | None = None
        self.attempts = 0
        self.closed = False

    # -- context manager ---------------------------------------------------------------------
    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    @property
    def extra_info(self) -> str:
        """What the commit stores in ``commit_extra_info``."""
        if self._free_text_info is not None:
            return self._free_text_info
        return json.dumps(self._info, sort_keys=True, default=str)

    def annotate(self, **fields: Any) -> None:
        """Add JSON fields to the commit's ``commit_extra_info`` (e.g. the task that committed, its outcome)."""
        self._info.update(fields)

    @property
    def has_changes(self) -> bool:
        return bool(self._ops)

    @property
    def connection(self) -> CatalogConnection:
        """The transaction's catalog connection (reads at the base snapshot; do not commit on it)."""
        return self._conn

    # -- name resolution ---------------------------------------------------------------------
    def _schema_exists(self, name: str) -> bool:
        return name in self._new_schemas or (name in self._schemas and not self._schema_dropped(name))

    def _schema_dropped(self, name: str) -> bool:
        return any(isinstance(op, DropSchema) and op.name == name for op in self._ops)

    def _schema_dir(self, name: str) -> str:
        if name in self._new_schemas:
            return join_path(self.lake.data_path, self._new_schemas[name])
        return metadata.schema_path(self.lake.data_path, self._schemas[name])

    def table_state(self, name: str) -> TableState:
        """The transaction's view of ``schema.table``.

        :raises NoSuchTableError: the table does not exist at the base snapshot, or was dropped here.
        """
        schema, table = split_name(name)
        state = self._tables.get((schema, table))
        if state is None:
            state = next(
                (
                    s
                    for (sch, tab), s in self._tables.items()
                    if sch.lower() == schema.lower() and tab.lower() == table.lower()
                ),
                None,
            )
        if state is not None:
            if state.dropped:
                raise NoSuchTableError(f"Table {schema}.{table} was dropped in this transaction.")
            return state
        try:
            info = self.lake.find_table(self._conn, name, self.base.snapshot_id)
        except NoSuchSchemaError:
            raise NoSuchTableError(f"Table {schema}.{table} does not exist (no schema {schema!r}).") from None
        except NoSuchTableError:
            view = self.view(name)
            if view is not None:  # DuckDB: "Can only update base table"
                raise NoSuchTableError(f"{view.qualified_name} is a view: only tables can be changed.") from None
            raise
        state = TableState(
            info.schema_name, info.name, info.columns, self.lake.table_dir(info), info.table_id, info.schema_id, info
        )
        self._tables[(info.schema_name, info.name)] = state
        return state

    def base_files(self, state: TableState) -> dict[int, DataFileInfo]:
        """The table's visible data files at the base snapshot (read from the catalog on first use)."""
        if state.files is None:
            if state.info is None:
                state.files = {}
            else:
                found = metadata.data_files_at(self._conn, state.info, state.table_dir, self.base.snapshot_id)
                state.files = {f.data_file_id: f for f in found}
        return state.files

    def _max_column_id(self, state: TableState) -> int:
        if state.max_column_id is None:
            row = self._conn.one("SELECT max(column_id) FROM {M}ducklake_column WHERE table_id = ?", (state.table_id,))
            state.max_column_id = int(row[0] or 0) if row else 0
        return state.max_column_id

    def table_columns(self, name: str) -> tuple[Column, ...]:
        """Columns of ``name`` as this transaction sees them (after its own ALTERs)."""
        return self.table_state(name).columns

    def table_dir(self, name: str) -> str:
        return self.table_state(name).table_dir

    def table_sort_keys(self, name: str) -> tuple[SortKey, ...]:
        """The order new files of ``name`` are written in (its ``SET SORTED BY``)."""
        return self.table_state(name).sort_keys

    def table_partitioning(self, name: str) -> Partitioning | None:
        """How new rows of ``name`` are split into files, as this transaction sees the table."""
        return self.table_state(name).partitioning()

    def data_files(self, name: str) -> list[DataFileInfo]:
        """Data files of ``name`` as this transaction sees them (base files with staged deletes, staged files)."""
        state = self.table_state(name)
        return self._visible_files(state)

    def touched(self, name: str) -> bool:
        """True when this transaction changed ``name`` (created, altered, wrote or deleted rows)."""
        try:
            state = self.table_state(name)
        except NoSuchTableError:
            return False
        return state.pending or any(table_of(op) is state for op in self._ops)

    # -- DDL ---------------------------------------------------------------------------------
    def create_schema(self, name: str, *, if_not_exists: bool = False) -> None:
        if self._schema_exists(name):
            if if_not_exists:
                return
            raise SchemaAlreadyExistsError(f"Schema {name!r} already exists.")
        self._new_schemas[name] = path_for(name)
        self._ops.append(CreateSchema(name, self._new_schemas[name], if_not_exists))

    def drop_schema(self, name: str, *, if_exists: bool = False) -> None:
        if not self._schema_exists(name):
            if if_exists:
                return
            raise NoSuchSchemaError(f"Schema {name!r} does not exist.")
        dropped = {s.table_id for s in self._tables.values() if s.dropped}
        live: list[TableInfo | TableState] = [
            t
            for t in metadata.tables_at(self._conn, self.base.snapshot_id)
            if t.schema_name == name and t.table_id not in dropped
        ]
        live += [s for s in self._tables.values() if s.schema_name == name and s.pending and not s.dropped]
        if live:
            raise LakehouseError(f"Schema {name!r} is not empty; drop its tables first.")
        if any(v.schema_name == name for v in self.views()):
            raise LakehouseError(f"Schema {name!r} is not empty; drop its views first.")
        if name in self._new_schemas:
            del self._new_schemas[name]
            self._ops = [op for op in self._ops if not (isinstance(op, CreateSchema) and op.name == name)]
            return
        self._ops.append(DropSchema(name, self._schemas[name].schema_id))

    def create_table(
        self, name: str, schema: pa.Schema | Sequence[Column], *, if_not_exists: bool = False, or_replace: bool = False
    ) -> bool:
        """Create ``schema.table`` with the given Arrow schema (or column tree). Returns False if it existed
        and ``if_not_exists`` was set."""
        schema_name, table_name = split_name(name)
        if not self._schema_exists(schema_name):
            raise NoSuchSchemaError(f"Schema {schema_name!r} does not exist; create it first.")
        if self.view(name) is not None:
            raise TableAlreadyExistsError(f"{schema_name}.{table_name} is a view: a table cannot take its name.")
        if self._exists(schema_name, table_name):
            if if_not_exists:
                return False
            if not or_replace:
                raise TableAlreadyExistsError(f"Table {schema_name}.{table_name} already exists.")
            self.drop_table(name)
        columns = columns_from_arrow(schema) if isinstance(schema, pa.Schema) else tuple(schema)
        if not columns:
            raise ValueError(f"Table {schema_name}.{table_name} needs at least one column.")
        names = [c.name.lower() for c in columns]
        if len(set(names)) != len(names):
            raise ValueError(f"Table {schema_name}.{table_name} has duplicate column names.")
        for column in columns:
            check_default(column)
        path = path_for(table_name)
        state = TableState(
            schema_name,
            table_name,
            columns,
            join_path(self._schema_dir(schema_name), path),
            max_column_id=max(c.column_id for top in columns for c in top.walk()),
            pending=True,
        )
        self._tables[(schema_name, table_name)] = state
        self._ops.append(CreateTable(state, path))
        return True

    def _exists(self, schema_name: str, table_name: str) -> bool:
        try:
            self.table_state(f"{schema_name}.{table_name}")
        except (NoSuchTableError, NoSuchSchemaError):
            return False
        return True

    def drop_table(self, name: str, *, if_exists: bool = False) -> bool:
        try:
            state = self.table_state(name)
        except NoSuchTableError:
            view = self.view(name)
            if view is not None:
                raise NoSuchTableError(f"{view.qualified_name} is a view, not a table: DROP VIEW drops it.") from None
            if if_exists:
                return False
            raise
        state.dropped = True
        # staged rows of a dropped table are garbage; its files are removed when the transaction ends
        self._ops = [op for op in self._ops if not (table_of(op) is state and isinstance(op, TableData))]
        state.changes = None
        if state.pending:
            # created and dropped in one transaction: forget both
            self._ops = [op for op in self._ops if table_of(op) is not state]
        else:
            self._ops.append(DropTable(state))
        return True

    def rename_table(self, name: str, new_name: str) -> None:
        state = self.table_state(name)
        if self._exists(state.schema_name, new_name) or self.view(f"{state.schema_name}.{new_name}") is not None:
            raise TableAlreadyExistsError(f"Table {state.schema_name}.{new_name} already exists.")
        del self._tables[(state.schema_name, state.name)]
        old = state.name
        state.name = new_name
        self._tables[(state.schema_name, new_name)] = state
        if not state.pending:
            self._ops.append(RenameTable(state, old))

    # -- views -------------------------------------------------------------------------------
    def views(self) -> list[ViewInfo]:
        """The views as this transaction sees them: the base snapshot's, less those it dropped, plus those it
        created (their ``view_id`` is 0 until the commit allocates one)."""
        if self._base_views is None:
            self._base_views = metadata.views_at(self._conn, self.base.snapshot_id)
        dropped = {op.view.view_id for op in self._ops if isinstance(op, DropView)}
        visible = [v for v in self._base_views if v.view_id not in dropped]
        for op in self._ops:
            if isinstance(op, CreateView):
                visible.append(ViewInfo(0, 0, op.schema_name, op.name, op.sql, column_aliases=op.column_aliases))
        return visible

    def view(self, name: str) -> ViewInfo | None:
        """The view ``schema.view`` as this transaction sees it, or None."""
        return find_view(self.views(), name)

    def create_view(
        self,
        name: str,
        sql: str,
        *,
        column_aliases: Sequence[str] = (),
        or_replace: bool = False,
        if_not_exists: bool = False,
    ) -> bool:
        """``CREATE VIEW``: ``sql`` is the query as DuckDB stores it (DuckDB SQL, the lake's own catalog written
        ``{DUCKLAKE_CATALOG}``). Returns False if the view existed and ``if_not_exists`` was set.

        :raises TableAlreadyExistsError: a table has the name, or a view has it and neither flag was set.
        """
        schema_name, view_name = split_name(name)
        if not self._schema_exists(schema_name):
            raise NoSuchSchemaError(f"Schema {schema_name!r} does not exist; create it first.")
        if self._exists(schema_name, view_name):
            raise TableAlreadyExistsError(
                f"Table {schema_name}.{view_name} already exists; a view cannot take its name."
            )
        existing = self.view(name)
        if existing is not None:
            if if_not_exists:
                return False
            if not or_replace:
                raise TableAlreadyExistsError(f"View {existing.qualified_name} already exists.")
            self.drop_view(name)
        self._ops.append(CreateView(schema_name, view_name, sql, tuple(column_aliases)))
        return True

    def drop_view(self, name: str, *, if_exists: bool = False) -> bool:
        """``DROP VIEW``; returns False if there was no such view and ``if_exists`` was set.

        :raises NoSuchTableError: no view has the name (a table of that name is named as one).
        """
        existing = self.view(name)
        if existing is None:
            schema_name, view_name = split_name(name)
            if self._exists(schema_name, view_name):
                raise NoSuchTableError(f"{schema_name}.{view_name} is a table, not a view: DROP TABLE drops it.")
            if if_exists:
                return False
            raise NoSuchTableError(f"View {schema_name}.{view_name} does not exist.")
        created_here = [
            op
            for op in self._ops
            if isinstance(op, CreateView) and (op.schema_name, op.name) == (existing.schema_name, existing.name)
        ]
        if created_here:  # created and dropped in one transaction: forget both
            self._ops.remove(created_here[-1])
        else:
            self._ops.append(DropView(existing))
        return True

    def add_column(
        self,
        table: str,
        name: str,
        dtype: pa.DataType | pa.Field,
        *,
        default: Any = None,
        if_not_exists: bool = False,
    ) -> None:
        """ALTER TABLE ADD COLUMN; ``default`` (a literal) is what existing rows read.

        :param dtype: the column's Arrow type, or a field whose metadata names its lake type (see
            :data:`~airflow_provider_lakehouse.ducklake.types.LAKE_TYPE_KEY`).
        """
        state = self.table_state(table)
        if any(c.name.lower() == name.lower() for c in state.columns):
            if if_not_exists:
                return
            raise LakehouseError(f"Catalog Error: Column with name {name} already exists!")
        declared = dtype.with_name(name) if isinstance(dtype, pa.Field) else pa.field(name, dtype)
        (template,) = columns_from_arrow(pa.schema([declared]))
        column = renumber(template, iter(range(self._max_column_id(state) + 1, 1 << 62)))
        literal = None if default is None else _literal(default)
        column = replace(column, initial_default=literal, default_value=literal)
        check_default(column)
        state.max_column_id = max(c.column_id for c in column.walk())
        state.columns = (*state.columns, column)
        if not state.pending:  # a CREATE in this transaction writes the final column list
            self._ops.append(AddColumn(state, column))

    def drop_column(self, table: str, name: str, *, if_exists: bool = False) -> None:
        state = self.table_state(table)
        match = [c for c in state.columns if c.name.lower() == name.lower()]
        if not match:
            if if_exists:
                return
            raise LakehouseError(f"Column {name!r} does not exist in {state.qualified_name}.")
        if len(state.columns) == 1:
            raise LakehouseError(f"Cannot drop the only column of {state.qualified_name}.")
        if any(match[0].name.lower() in {c.lower() for c in key_columns(k.expression)} for k in state.sort_keys):
            raise LakehouseError(
                f'Catalog Error: Cannot drop column "{name}" - the table is sorted by this column. Reset or change '
                "the sort order on this table in order to drop this column"
            )
        if any(f.column_id == match[0].column_id for f in state.partition_fields()):
            raise LakehouseError(
                f'Catalog Error: Cannot drop column "{name}" - the table is partitioned by this column. Reset or '
                "change the partitioning on this table in order to drop this column"
            )
        state.columns = tuple(c for c in state.columns if c is not match[0])
        if not state.pending:
            self._ops.append(DropColumn(state, match[0]))

    def rename_column(self, table: str, old: str, new: str) -> None:
        state = self.table_state(table)
        column = self._column(state, old)
        # another column of that name; the column itself may be renamed to its own name in another case (DuckDB)
        taken = [c for c in state.columns if c.name.lower() == new.lower() and c.column_id != column.column_id]
        if taken:
            raise LakehouseError(f"Catalog Error: Column with name {taken[0].name} already exists!")
        self._replace_column(state, column, replace(column, name=new))
        keys = state.sort_keys
        if any(column.name.lower() in {c.lower() for c in key_columns(k.expression)} for k in keys):
            # DuckDB rewrites the sort keys that name the column (a new sort order, in the same snapshot)
            renamed = [replace(k, expression=key_with_column_renamed(k.expression, column.name, new)) for k in keys]
            self.set_sorted_by(table, renamed)

    def change_column_type(self, table: str, name: str, new_type: str) -> None:
        """``ALTER COLUMN … TYPE``: only the widenings DuckDB allows (:func:`.type_promotion.promotion_allowed`);
        files written before keep the old type and every reader casts them. ``new_type`` is a DuckLake type.

        :raises LakehouseError: DuckDB's error for a type it does not widen to; a nested column (DuckDB changes
            the fields of one, this implementation does not).
        """
        state = self.table_state(table)
        column = self._column(state, name)
        if column.type in NESTED or new_type in NESTED:
            raise LakehouseError(
                f"Changing the type of {state.qualified_name}.{column.name} ({duckdb_type_name(column.type)} to "
                f"{duckdb_type_name(new_type)}) is not supported: only columns of a single value are retyped."
            )
        if not promotion_allowed(column.type, new_type):
            raise LakehouseError(promotion_refused(column.name, column.type, new_type))
        if column.type == new_type:  # DuckDB takes it, and changes nothing
            self._replace_column(state, column, column)
            return
        state.retyped_columns.add(column.column_id)
        if state.pending:  # DuckDB records the old type too, for the files already written with it
            self._ops.append(OldColumnType(state, column))
        self._replace_column(state, column, replace(column, type=new_type))

    def set_column_default(self, table: str, name: str, default: Any) -> None:
        """``ALTER COLUMN … SET DEFAULT literal`` (None: ``DROP DEFAULT``); rows already there keep their values.
        Any constant is taken, as DuckDB takes it here (``UINTEGER`` ``SET DEFAULT -1``): an insert that uses a
        default its type cannot hold fails (see :func:`~.defaults.check_default` for ``ADD COLUMN``)."""
        text, is_expression = (None, False) if default is None else stored_default(default)
        self._set_default(table, name, text, is_expression)

    def set_nested_column_default(self, table: str, name: str, expression: str) -> None:
        """``ALTER COLUMN … SET DEFAULT`` on a list, struct or map column, ``expression`` in DuckDB SQL: recorded as
        DuckDB 1.5.5 records it, an expression the inserts of later transactions do not use (they store NULL; see
        :func:`~.defaults.insert_default`). DuckDB's inserts in the same transaction do use it, which this
        implementation does not: :meth:`fresh_nested_defaults` names such columns, for the writer to refuse.

        :raises LakehouseError: for a column of another type (its expression defaults are evaluated per insert,
            which this implementation does not do), and as DuckDB for a column this transaction created.
        """
        state = self.table_state(table)
        column = self._column(state, name)
        if column.type not in NESTED:
            raise LakehouseError(
                f"the default {expression} is not a constant: the Spark engine takes a constant default "
                '(DuckDB\'s engine="duckdb" takes this one).'
            )
        self._set_default(table, name, expression, True)
        state.nested_defaults_set.add(column.column_id)

    def fresh_nested_defaults(self, table: str) -> list[str]:
        """The list, struct and map columns of ``table`` whose default this transaction set (and did not drop): an
        insert that leaves them to their default gets DuckDB's value only in DuckDB, so the writer refuses it."""
        state = self.table_state(table)
        return [
            c.name for c in state.columns if c.column_id in state.nested_defaults_set and c.default_value is not None
        ]

    def _set_default(self, table: str, name: str, text: str | None, is_expression: bool) -> None:
        state = self.table_state(table)
        column = self._column(state, name)
        if is_expression and _new_to_duckdb(state, column):
            # DuckDB 1.5.5 re-adds a column it cannot find by its exact name in the table as committed (created,
            # renamed, or the table renamed, in this transaction), and refuses a typed constant (DATE '2020-01-02',
            # TRUE), which it stores as a cast, as it refuses one in ADD COLUMN
            raise LakehouseError(
                "Not implemented Error: We cannot add a column with a non-literal default value. Add the column and "
                'then explicitly set the default for new values using "ALTER ... SET DEFAULT" (DuckDB\'s error for '
                f"SET DEFAULT {text} on column {name!r}, which this transaction created or renamed, or whose table "
                "it created or renamed: commit that first, or give the default as a plain literal)"
            )
        self._replace_column(
            state,
            column,
            replace(column, default_value=text, default_is_expression=is_expression),
        )

    def set_column_nullable(self, table: str, name: str, nullable: bool, *, nulls: int = 0) -> None:
        """``ALTER COLUMN … DROP NOT NULL`` (``nullable``) or ``SET NOT NULL``, with DuckDB's errors.

        :param nulls: how many rows hold NULL in the column now (the caller counts them): ``SET NOT NULL`` fails
            unless none do.
        """
        state = self.table_state(table)
        column = self._column(state, name)
        if nullable and column.nullable:
            raise LakehouseError(
                f"Catalog Error: Cannot DROP NULL on column {column.name} - it has no NOT NULL constraint defined"
            )
        if not nullable:
            # DuckDB decides from column statistics: none for a table that never held a row, nor for nested columns
            if column.type in NESTED or not self._ever_held_rows(state):
                raise LakehouseError(
                    f"Catalog Error: Cannot SET NOT NULL on table {state.name} - the table has transaction-local "
                    "changes or no stats are available"
                )
            if not column.nullable:
                raise LakehouseError(
                    f"Catalog Error: Cannot SET NOT NULL on column {column.name} - it already has a NOT NULL constraint"
                )
            if nulls:
                raise LakehouseError(
                    f"Catalog Error: Cannot SET NOT NULL on column {column.name} - the column has NULL values"
                )
        self._replace_column(state, column, replace(column, nullable=nullable))

    def _ever_held_rows(self, state: TableState) -> bool:
        """Whether rows were ever inserted into the table (DuckDB keeps its statistics from the first insert on,
        and counts rows this transaction inserted, even if it deleted them again)."""
        if state.changes is not None:
            return True
        if state.table_id is None:
            return False
        row = self._conn.one("SELECT count(*) FROM {M}ducklake_table_stats WHERE table_id = ?", (state.table_id,))
        return bool(row and row[0])

    def _column(self, state: TableState, name: str) -> Column:
        match = [c for c in state.columns if c.name.lower() == name.lower()]
        if not match:
            raise LakehouseError(f"Column {name!r} does not exist in {state.qualified_name}.")
        return match[0]

    def _replace_column(self, state: TableState, old: Column, new: Column) -> None:
        state.columns = tuple(new if c is old else c for c in state.columns)
        if not state.pending:  # a CREATE in this transaction writes the final column list
            self._ops.append(ReplaceColumn(state, old, new))

    def set_partitioned_by(self, table: str, keys: Sequence[tuple[str, str]]) -> None:
        """DuckDB's ``ALTER TABLE … SET PARTITIONED BY``: new rows are written partitioned by ``keys``, each
        ``(column, transform)`` with a transform of ``identity``, ``year``, ``month``, ``day``, ``hour`` or
        ``bucket(N)``; no keys is ``RESET PARTITIONED BY``. Files already written keep their partitioning.

        :raises LakehouseError: for an unknown column or a transform its type does not take.
        """
        state = self.table_state(table)
        by_name = {c.name.lower(): c for c in state.columns}
        fields = []
        for index, (name, transform) in enumerate(keys):
            column = by_name.get(name.lower())
            if column is None:
                raise LakehouseError(f"Cannot partition {state.qualified_name} by {name!r}: no such column.")
            check_transform(state.qualified_name, column, transform)
            fields.append(PartitionField(index, column.column_id, transform))
        if tuple(fields) == state.partition_fields():
            return  # DuckDB records nothing for the spec the table already has
        state.new_partition_fields = tuple(fields)
        state.partition_specs_set += 1
        self._ops = [op for op in self._ops if not (isinstance(op, SetPartitioning) and op.table is state)]
        # before the table's staged rows: the commit registers their files under the spec ids it allocates here
        data = [i for i, staged in enumerate(self._ops) if isinstance(staged, TableData) and staged.table is state]
        self._ops.insert(data[0] if data else len(self._ops), SetPartitioning(state, tuple(fields)))

    def set_sorted_by(self, table: str, keys: Sequence[SortKey], columns: Sequence[str] = ()) -> None:
        """DuckDB's ``ALTER TABLE … SET SORTED BY``: files written from now on are sorted by ``keys``; no keys is
        ``RESET SORTED BY``. Files already written keep their order.

        :param columns: the columns the keys name, in order (DuckDB checks that the table has each).
        :raises LakehouseError: with DuckDB's message, for a column the table does not have.
        """
        state = self.table_state(table)
        known = {c.name.lower() for c in state.columns}
        unmatched = list(dict.fromkeys(c for c in columns if c.lower() not in known))
        if unmatched:
            raise LakehouseError(
                "Binder Error: Columns in the SET SORTED BY statement were not found in the DuckLake table. "
                f"Unmatched columns were: {', '.join(unmatched)}"
            )
        state.new_sort_keys = tuple(keys)
        self._ops = [op for op in self._ops if not (isinstance(op, SetSortOrder) and op.table is state)]
        self._ops.append(SetSortOrder(state, tuple(keys)))

    # -- DML ---------------------------------------------------------------------------------
    def _changes(self, state: TableState) -> TableChanges:
        if state.changes is None:
            state.changes = TableChanges()
            self._ops.append(TableData(state))
        return state.changes

    def wrote(self, path: str) -> None:
        """Record a file written for this transaction: it is deleted if the transaction fails, or after the
        commit if nothing references it any more."""
        if path not in self._written:
            self._written.append(path)

    def append(self, table: str, data: pa.Table | pa.RecordBatch, *, row_ids: np.ndarray | None = None) -> int:
        """Write ``data`` (columns by name; missing nullable columns get their default) as new data files."""
        state = self.table_state(table)
        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        data = _complete(state, data)
        files = write_data_files(
            self.lake.storage,
            state.table_dir,
            state.columns,
            data,
            row_ids=row_ids,
            partitioning=state.partitioning(),
            sort_keys=state.sort_keys,
        )
        self.add_files(table, files)
        return data.num_rows

    def add_files(self, table: str, files: Sequence[WrittenFile]) -> None:
        """Register data files already written (e.g. by Spark executors) under the table's directory."""
        state = self.table_state(table)
        for f in files:
            self.wrote(f.path)
        files = [f for f in files if f.record_count > 0]
        if not files:
            return
        changes = self._changes(state)
        for f in files:
            changes.appended.append(StagedFile(self._next_temp_id, f))
            self._next_temp_id -= 1

    def delete_rows(
        self, table: str, positions: Mapping[int, np.ndarray] | None = None, inlined_row_ids: Sequence[int] = ()
    ) -> int:
        """Delete rows by (data file id -> row positions) and by row id for rows inlined in the catalog.

        File ids are those a scan through this transaction reports: catalog ids for files of the base snapshot,
        negative ids for files appended by this transaction. Returns how many rows were newly deleted.
        """
        state = self.table_state(table)
        count = 0
        for file_id, wanted in (positions or {}).items():
            requested = {int(p) for p in np.asarray(wanted).tolist()}
            if file_id < 0:
                count += self._delete_from_staged(state, file_id, requested)
            else:
                count += self._delete_from_base(state, file_id, requested)
        inlined = {int(r) for r in inlined_row_ids}
        if inlined:
            changes = self._changes(state)
            new = inlined - changes.inlined_deleted
            changes.inlined_deleted |= new
            count += len(new)
        return count

    def _delete_from_staged(self, state: TableState, temp_id: int, requested: set[int]) -> int:
        changes = self._changes(state)
        staged = changes.staged(temp_id)
        if staged is None:
            raise LakehouseError(f"Data file {temp_id} is not visible in {state.qualified_name}.")
        new = requested - staged.deleted
        if not new:
            return 0
        deleted = staged.deleted | new
        if len(deleted) >= staged.file.record_count:
            changes.appended.remove(staged)  # every row gone: the file is never registered
            return len(new)
        written = write_delete_file(
            self.lake.storage, state.table_dir, temp_id, staged.file.path, np.fromiter(sorted(deleted), dtype=np.int64)
        )
        self.wrote(written.path)
        staged.deleted = frozenset(deleted)
        staged.delete_file = written
        return len(new)

    def _delete_from_base(self, state: TableState, file_id: int, requested: set[int]) -> int:
        info = self.base_files(state).get(file_id)
        changes = self._changes(state)
        if info is None or file_id in changes.dropped_files:
            raise LakehouseError(f"Data file {file_id} is not visible in {state.qualified_name}.")
        deletes = changes.base_deletes.get(file_id)
        if deletes is None:
            before = frozenset(deleted_positions(self.lake.storage, info, self.base.snapshot_id).tolist())
            deletes = changes.base_deletes[file_id] = BaseFileDeletes(before)
        new = requested - deletes.before - deletes.new
        if not new:
            return 0
        deletes.new = deletes.new | new
        gone = deletes.before | deletes.new
        if len(gone) >= info.record_count:
            changes.dropped_files.add(file_id)
            deletes.delete_file = None
            return len(new)
        inlined = {p for p, _s in info.inlined_deletes}  # they stay where they are (COUNT(*) subtracts both)
        deletes.delete_file = write_delete_file(
            self.lake.storage, state.table_dir, file_id, info.path, np.fromiter(sorted(gone - inlined), dtype=np.int64)
        )
        self.wrote(deletes.delete_file.path)
        return len(new)

    def delete_where(self, table: str, predicate: Any) -> int:
        """Delete the rows (as this transaction sees them) for which ``predicate`` (a pyarrow compute
        expression) is true."""
        rows = self.read(table, virtual=(ROWID, FILE_ID, FILE_POS)).filter(predicate)
        return self.delete_selected(table, rows)

    def delete_selected(self, table: str, rows: pa.Table) -> int:
        """Delete the rows of ``rows``, identified by their virtual ``rowid`` / file id / file position columns."""
        positions: dict[int, list[int]] = {}
        inlined: list[int] = []
        for file_id, pos, rowid in zip(
            rows.column(FILE_ID).to_pylist(),
            rows.column(FILE_POS).to_pylist(),
            rows.column(ROWID).to_pylist(),
            strict=False,
        ):
            if file_id is None:
                inlined.append(rowid)
            else:
                positions.setdefault(file_id, []).append(pos)
        return self.delete_rows(table, {k: np.array(v) for k, v in positions.items()}, inlined)

    def update_where(self, table: str, predicate: Any, assignments: dict[str, Any]) -> int:
        """UPDATE: rows matching ``predicate`` get ``assignments`` (column -> value, or a callable taking the
        matched rows as an Arrow table and returning an array). Rows keep their row ids."""
        state = self.table_state(table)
        rows = self.read(table, virtual=(ROWID, FILE_ID, FILE_POS)).filter(predicate)
        if rows.num_rows == 0:
            return 0
        new = rows
        for name, value in assignments.items():
            column = next((c for c in state.columns if c.name.lower() == name.lower()), None)
            if column is None:
                raise LakehouseError(f"Column {name!r} does not exist in {state.qualified_name}.")
            array = value(rows) if callable(value) else pa.array([value] * rows.num_rows)
            new = new.set_column(
                new.schema.get_field_index(column.name), column.name, pa.array(array).cast(column.arrow_type)
            )
        self.replace_rows(table, rows, new.select([c.name for c in state.columns]))
        return rows.num_rows

    def replace_rows(self, table: str, old_rows: pa.Table, new_rows: pa.Table) -> None:
        """Delete ``old_rows`` (which carry the virtual ``rowid``/file/position columns) and insert ``new_rows`` in
        their place. Rows of the base snapshot keep their row ids (DuckDB's UPDATE layout); rows appended by this
        transaction have none yet and get fresh ones at commit, as DuckDB's transaction-local rows do."""
        self.delete_selected(table, old_rows)
        row_ids = old_rows.column(ROWID).combine_chunks()
        if row_ids.null_count == 0:
            self.append(table, new_rows, row_ids=row_ids.to_numpy())
            return
        known = row_ids.is_valid()
        if row_ids.null_count < len(row_ids):
            self.append(table, new_rows.filter(known), row_ids=row_ids.filter(known).to_numpy())
        self.append(table, new_rows.filter(pc.invert(known)))

    # -- reads through the transaction -----------------------------------------------------------
    def _visible_files(self, state: TableState) -> list[DataFileInfo]:
        files = self.base_files(state)
        if state.changes is None:
            return list(files.values())
        return state.changes.visible_files(files, self.base.snapshot_id, self._table_id(state))

    def _table_id(self, state: TableState) -> int:
        return state.table_id if state.table_id is not None else -1

    def table_info(self, name: str) -> TableInfo:
        """``name`` as this transaction sees it (columns after its ALTERs; a stand-in for a table created here)."""
        state = self.table_state(name)
        if state.info is not None:
            retyped = state.info.retyped_columns | state.retyped_columns
            return replace(state.info, name=state.name, schema=TableSchema(state.columns), retyped_columns=retyped)
        return TableInfo(
            table_id=-1,
            schema_id=-1,
            schema_name=state.schema_name,
            name=state.name,
            path="",
            path_is_relative=True,
            uuid="",
            schema=TableSchema(state.columns),
            begin_snapshot=self.base.snapshot_id,
            retyped_columns=frozenset(state.retyped_columns),
        )

    def scan(
        self,
        name: str,
        *,
        columns: Sequence[str] | None = None,
        filters: Sequence[Predicate] = (),
        virtual: Sequence[str] = (),
    ) -> ScanPlan:
        """Plan a read of ``name`` as this transaction sees it: the base snapshot plus its staged changes.

        Files appended here carry negative ids; their rows have a NULL ``rowid`` until the commit numbers them.
        """
        state = self.table_state(name)
        info = self.table_info(name)
        try:
            wanted = [info.schema.by_name(n) for n in columns] if columns is not None else list(info.columns)
        except KeyError as exc:
            raise NoSuchTableError(f"Table {info.qualified_name} has no column {exc.args[0]!r}.") from None
        files = self._visible_files(state)
        kept = files
        if filters:
            stats = metadata.file_column_stats(self._conn, state.table_id) if state.table_id is not None else {}
            for staged in state.changes.appended if state.changes else ():
                stats[staged.temp_id] = {
                    s.column_id: (s.value_count, s.null_count, s.min_value, s.max_value, s.contains_nan)
                    for s in staged.file.column_stats
                }
            kept = prune_files(files, info, stats, filters)
        inlined = self._inlined_rows(state, info, wanted, virtual)
        return ScanPlan(
            table=info,
            snapshot_id=self.base.snapshot_id,
            columns=tuple(wanted),
            files=tuple(kept),
            inlined=inlined,
            virtual=tuple(virtual),
            pruned_files=len(files) - len(kept),
        )

    def _inlined_rows(
        self, state: TableState, info: TableInfo, wanted: list[Column], virtual: Sequence[str]
    ) -> pa.Table:
        if state.info is None or not state.info.inlined_tables:
            return read_schema(wanted, virtual).empty_table()
        gone = state.changes.inlined_deleted if state.changes else set()
        with_ids = tuple(virtual) if (not gone or ROWID in virtual) else (*virtual, ROWID)
        rows = read_inlined_rows(
            self._conn,
            replace(state.info, schema=info.schema),
            wanted,
            self.base.snapshot_id,
            virtual=with_ids,
            schema_at_version=self.lake.inlined_schemas(self._conn, state.info),
        )
        if gone:
            keep = pc.invert(pc.is_in(rows.column(ROWID), value_set=pa.array(sorted(gone), pa.int64())))
            rows = rows.filter(keep)
            if ROWID not in virtual:
                rows = rows.drop_columns([ROWID])
        return rows

    def read(
        self,
        name: str,
        *,
        columns: Sequence[str] | None = None,
        filters: Sequence[Predicate] = (),
        virtual: Sequence[str] = (),
    ) -> pa.Table:
        """Read ``name`` as this transaction sees it (filters prune files, then rows)."""
        result = self.lake.read_plan(self.scan(name, columns=columns, filters=filters, virtual=virtual))
        return filter_rows(result, filters, name)

    # -- maintenance staging -------------------------------------------------------------------
    def stage_merge(self, table: str, file: WrittenFile, sources: Sequence[DataFileInfo]) -> None:
        """Replace ``sources`` (base files of ``table``) by ``file``, a partial file keeping their row ids."""
        self.wrote(file.path)
        self._ops.append(MergeFiles(self.table_state(table), file, tuple(sources)))

    def stage_flush(
        self, table: str, file: WrittenFile, delete: WrittenDeleteFile | None, inlined_tables: Sequence[str]
    ) -> None:
        """Replace the inlined rows of ``inlined_tables`` by ``file`` (and ``delete`` for rows already deleted)."""
        self.wrote(file.path)
        if delete is not None:
            self.wrote(delete.path)
        self._ops.append(FlushInlined(self.table_state(table), file, delete, tuple(inlined_tables)))

    # -- savepoints ----------------------------------------------------------------------------
    def savepoint(self) -> Savepoint:
        """Remember the staged state (what ``BEGIN`` inside a script's transaction does)."""
        state = copy.deepcopy((self._new_schemas, self._tables, self._ops, self._next_temp_id))
        return Savepoint(state, len(self._written))

    def rollback_to(self, savepoint: Savepoint) -> None:
        """Forget everything staged since ``savepoint`` and delete the files written for it."""
        restored = copy.deepcopy(savepoint.state)
        self._new_schemas, self._tables, self._ops, self._next_temp_id = restored
        for path in self._written[savepoint.written :]:
            self._delete_file(path)
        del self._written[savepoint.written :]

    # -- commit ------------------------------------------------------------------------------
    def abort(self) -> None:
        """Discard everything staged and delete the files written for it."""
        if self.closed:
            return
        for path in self._written:
            self._delete_file(path)
        self._written.clear()
        self._close()

    def _delete_file(self, path: str) -> None:
        try:
            self.lake.storage.delete(path)
        except OSError:
            pass

    def _close(self) -> None:
        self.closed = True
        try:
            self._conn.close()
        except Exception:  # closing a broken connection must not hide the real error
            pass

    def referenced_paths(self) -> set[str]:
        """Files the commit registers in the catalog."""
        return {path for op in self._ops for path in written_paths(op)}

    def _drop_superseded(self) -> None:
        """After a commit: delete what this transaction wrote but no longer references (delete files replaced
        by later deletes of the same data file, files of rows deleted again, staged rows of dropped tables)."""
        kept = self.referenced_paths()
        for path in self._written:
            if path not in kept:
                self._delete_file(path)
        self._written.clear()

    def commit(self) -> Snapshot | None:
        """Commit everything staged as one snapshot; returns it (None if nothing was staged).

        :raises CommitConflictError: another writer made a conflicting change; nothing landed.
        :raises CommitStateUnknownError: the catalog went away mid-commit; files are kept.
        """
        if self.closed:
            raise LakehouseError("This transaction is already closed.")
        if not self._ops:
            self._drop_superseded()
            self._close()
            return None
        policy = self.lake.retry
        try:
            while True:
                self.attempts += 1
                try:
                    self.snapshot = self._commit_once()
                    break
                except CommitConflictError:
                    raise
                except Exception as exc:
                    if self.lake.store.is_connection_lost(exc, self._conn):
                        reachable, landed = self._find_landed()
                        if landed is not None:
                            self.snapshot = landed
                            break
                        if not reachable:
                            raise CommitStateUnknownError(
                                "Lost the catalog connection while committing; the commit may or may not have "
                                f"landed (commit id {self.commit_id}). Its files were kept."
                            ) from None
                    elif not self.lake.store.is_retryable(exc):
                        raise
                    retry = self.attempts
                    if retry > policy.max_retries:
                        raise CommitConflictError(
                            f"Gave up committing after {policy.max_retries} retries: other writers kept winning "
                            f"the race for the next snapshot id ({type(exc).__name__})."
                        ) from None
                    wait = policy.wait_ms / 1000 * random.uniform(0.5, 1.0) * policy.backoff ** (retry - 1)
                    log.info(
                        "commit %s: attempt %d lost the race for the next snapshot (latest is now %s, based on "
                        "%d): retry %d of %d in %.3f s",
                        self.commit_id,
                        retry,
                        self._latest_id(),
                        self.base.snapshot_id,
                        retry,
                        policy.max_retries,
                        wait,
                    )
                    time.sleep(wait)
        except CommitStateUnknownError:
            self._close()
            raise  # the commit may have landed: its files must stay
        except BaseException:
            self.abort()
            raise
        self._drop_superseded()
        self._close()
        return self.snapshot

    def _latest_id(self) -> int | str:
        try:
            return metadata.latest_snapshot(self._conn).snapshot_id
        except Exception:
            return "unknown"

    def _find_landed(self) -> tuple[bool, Snapshot | None]:
        """After a lost connection: reconnect and look for this commit's id among the latest snapshots.

        Returns (catalog reachable, the snapshot this commit landed as, if it did).
        """
        try:
            self._conn = self.lake.store.connect()
        except Exception:
            return False, None
        for snap in metadata.list_snapshots(self._conn)[-50:]:
            if snap.commit_extra_info and self.commit_id in snap.commit_extra_info:
                return True, snap
        return True, None

    def _commit_once(self) -> Snapshot:
        conn = self._conn
        conn.begin()
        try:
            latest = metadata.latest_snapshot(conn)
            mine = self._changeset()
            if latest.snapshot_id != self.base.snapshot_id:
                self._check_conflicts(conn, latest, mine)
            record = CommitRecord(self.author, self.message, self.extra_info)
            snapshot = CommitBuilder(conn, self.lake.store, self.lake.data_path, latest, mine, record).run(self._ops)
            conn.commit()
        except BaseException:
            try:
                conn.rollback()
            except Exception:
                pass
            raise
        return snapshot

    def _adopt_schemas(self, created: set[str], mine: changelog.ChangeSet) -> None:
        """Scripts of concurrent tasks often start with ``CREATE SCHEMA IF NOT EXISTS``: when another writer
        created the schema first, under the directory this one would have used, use theirs instead of failing.
        (Only plain names: a name with other characters gets a random directory, which files may already use.)"""
        adopted = [op for op in self._ops if _adopted(op, created)]
        for op in adopted:
            self._ops.remove(op)
            self._new_schemas.pop(op.name, None)  # type: ignore[union-attr]
            mine.created_schemas.discard(op.name)  # type: ignore[union-attr]
            log.info("commit %s: schema %s was created concurrently; using it", self.commit_id, op.name)  # type: ignore[union-attr]

    def _changeset(self) -> changelog.ChangeSet:
        c = changelog.ChangeSet()
        for op in self._ops:
            if isinstance(op, CreateSchema):
                c.created_schemas.add(op.name)
            elif isinstance(op, DropSchema):
                c.dropped_schemas.add(op.schema_id)
            elif isinstance(op, (CreateTable, RenameTable)):
                c.created_tables.add((op.table.schema_name, op.table.name))
            elif isinstance(op, DropTable) and op.table.table_id is not None:
                c.dropped_tables.add(op.table.table_id)
            elif isinstance(op, CreateView):
                c.created_views.add((op.schema_name, op.name))
            elif isinstance(op, DropView):
                c.dropped_views.add(op.view.view_id)
            elif (
                isinstance(op, (AddColumn, DropColumn, ReplaceColumn, SetPartitioning, SetSortOrder))
                and op.table.table_id is not None
            ):
                c.altered.add(op.table.table_id)
            elif isinstance(op, TableData) and op.table.table_id is not None and op.table.changes is not None:
                changes, tid = op.table.changes, op.table.table_id
                if changes.inserts:
                    c.inserted.add(tid)
                if changes.deletes_files:
                    c.deleted.add(tid)
                if changes.inlined_deleted:
                    c.inlined_delete.add(tid)
            elif isinstance(op, FlushInlined) and op.table.table_id is not None:
                c.flushed.add(op.table.table_id)
            elif isinstance(op, MergeFiles) and op.table.table_id is not None:
                c.compacted.add(op.table.table_id)
        return c

    def _check_conflicts(self, conn: CatalogConnection, latest: Snapshot, mine: changelog.ChangeSet) -> None:
        base = self.base.snapshot_id
        theirs = changelog.parse(
            r[0]
            for r in conn.query("SELECT changes_made FROM {M}ducklake_snapshot_changes WHERE snapshot_id > ?", (base,))
        )
        self._adopt_schemas(theirs.created_schemas, mine)
        my_files = {
            fid
            for op in self._ops
            if isinstance(op, TableData) and op.table.changes is not None
            for fid in op.table.changes.deleted_base_files()
        }
        their_files = {
            int(r[0])
            for r in conn.query(
                "SELECT data_file_id FROM {M}ducklake_delete_file WHERE begin_snapshot > ? "
                "UNION ALL SELECT data_file_id FROM {M}ducklake_data_file WHERE end_snapshot > ?",
                (base, base),
            )
        }
        used_schema_ids = {t.schema_id for t in self._tables.values() if t.schema_id is not None}
        reason = changelog.conflict(
            mine, theirs, my_deleted_files=my_files, their_deleted_files=their_files, my_schema_ids_used=used_schema_ids
        )
        if reason:
            raise CommitConflictError(
                f"Commit conflicts with snapshot(s) {base + 1}..{latest.snapshot_id}: {reason}. Nothing was committed."
            )


def _adopted(op: Operation, created: set[str]) -> bool:
    """A ``CREATE SCHEMA IF NOT EXISTS`` another writer beat to it, with the same directory: nothing to create."""
    return isinstance(op, CreateSchema) and op.if_not_exists and op.name in created and op.path == f"{op.name}/"


def _literal(value: Any) -> str:
    """A default value as the literal text DuckDB stores (strings single-quoted)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return str(value)


def _complete(state: TableState, data: pa.Table) -> pa.Table:
    """Match ``data``'s columns to the table's (case-insensitively); fill missing ones with their default."""
    by_lower = {n.lower(): n for n in data.column_names}
    unknown = [n for n in data.column_names if n.lower() not in {c.name.lower() for c in state.columns}]
    if unknown:
        raise LakehouseError(f"Table {state.qualified_name} has no column(s) {', '.join(unknown)}.")
    arrays, names = [], []
    for column in state.columns:
        source = by_lower.get(column.name.lower())
        if source is None:
            literal = insert_default(column)
            filler = replace(column, initial_default=literal) if literal is not None else column
            arrays.append(default_array(filler, data.num_rows))
        else:
            arrays.append(data.column(source))
        names.append(column.name)
    return pa.Table.from_arrays(arrays, names=names)


def _new_to_duckdb(state: TableState, column: Column) -> bool:
    """Whether DuckDB 1.5.5 would take ``column`` for one added in this transaction: it looks a column up by its
    exact name (``C0`` is not ``c0``) in the table as committed, under the table's committed name."""
    committed = state.info
    if state.pending or committed is None or committed.name != state.name:
        return True
    return column.name not in {c.name for c in committed.columns}
