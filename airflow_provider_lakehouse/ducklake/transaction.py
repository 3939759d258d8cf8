"""Stage changes, then commit them as one DuckLake snapshot with DuckDB's protocol (spec section 5).

Data and delete files are written while staging; the catalog is touched only by :meth:`Transaction.commit`,
inside one catalog-database transaction that inserts the new snapshot row first (its primary key is
the serialization point between writers). On a collision the commit re-reads what changed since its
base snapshot, fails on a logical conflict (DuckDB's rules) or rebuilds its catalog writes on top with
fresh ids, with backoff and jitter. Files of a commit that certainly failed are deleted; if the
outcome is unknown they are kept.
"""

from __future__ import annotations

import json
import random
import re
import time
import uuid as uuidlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from airflow_provider_lakehouse.ducklake import changes as changelog
from airflow_provider_lakehouse.ducklake import metadata
from airflow_provider_lakehouse.ducklake.model import DataFileInfo, Snapshot, TableInfo, WrittenDeleteFile, WrittenFile
from airflow_provider_lakehouse.ducklake.reader import deleted_positions
from airflow_provider_lakehouse.ducklake.stats import merge_bound
from airflow_provider_lakehouse.ducklake.storage import join_path, relative_to, uuid7
from airflow_provider_lakehouse.ducklake.store import CatalogConnection, quote_ident
from airflow_provider_lakehouse.ducklake.types import Column, columns_from_arrow, renumber
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

if TYPE_CHECKING:
    from airflow_provider_lakehouse.ducklake.catalog import DuckLake

_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
COMMIT_ID_KEY = "lakehouse_commit_id"


def path_for(name: str) -> str:
    """Directory DuckDB gives a schema or table: its name, or a UUID when the name has other characters."""
    return f"{name}/" if _PLAIN_NAME.match(name) else f"{uuidlib.uuid4()}/"


@dataclass
class _TableState:
    """The transaction's view of one table (existing at the base snapshot, or created here)."""

    schema_name: str
    name: str
    columns: tuple[Column, ...]
    table_dir: str
    table_id: int | None = None  # None until the commit allocates it (created in this transaction)
    schema_id: int | None = None
    info: TableInfo | None = None
    files: dict[int, DataFileInfo] = field(default_factory=dict)
    max_column_id: int = 0
    pending: int | None = None  # index of the CreateTable op
    dropped: bool = False


@dataclass
class _Op:
    kind: str
    table: _TableState | None = None
    args: dict[str, Any] = field(default_factory=dict)


class Transaction:
    """Changes staged against one lake, committed as one snapshot. Use as a context manager.

    :param author: stored in ``ducklake_snapshot_changes.author``.
    :param message: the commit message.
    :param extra_info: free text for ``commit_extra_info`` (default: a JSON object with this commit's id,
        which lets a retry after a lost connection tell whether the commit landed).
    """

    def __init__(self, lake: DuckLake, *, author: str | None = None, message: str | None = None,
                 extra_info: str | None = None) -> None:
        self.lake = lake
        self.author = author
        self.message = message
        self.commit_id = str(uuidlib.uuid4())
        self.extra_info = extra_info if extra_info is not None else json.dumps({COMMIT_ID_KEY: self.commit_id})
        self._conn = lake.store.connect()
        self.base = metadata.latest_snapshot(self._conn)
        self._schemas = {s.name: s for s in metadata.schemas_at(self._conn, self.base.snapshot_id)}
        self._new_schemas: dict[str, str] = {}  # name -> path
        self._tables: dict[tuple[str, str], _TableState] = {}
        self._ops: list[_Op] = []
        self._written: list[str] = []
        self._inlined_touched: set[int] = set()
        self.snapshot: Snapshot | None = None
        self.closed = False

    # -- context manager ---------------------------------------------------------------------
    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    # -- name resolution ---------------------------------------------------------------------
    def _schema_exists(self, name: str) -> bool:
        return name in self._new_schemas or (name in self._schemas and not self._schema_dropped(name))

    def _schema_dropped(self, name: str) -> bool:
        return any(op.kind == "drop_schema" and op.args["name"] == name for op in self._ops)

    def _schema_dir(self, name: str) -> str:
        if name in self._new_schemas:
            return join_path(self.lake.data_path, self._new_schemas[name])
        return metadata.schema_path(self.lake.data_path, self._schemas[name])

    def _state(self, name: str) -> _TableState:
        from airflow_provider_lakehouse.ducklake.catalog import split_name

        schema, table = split_name(name)
        key = (schema, table)
        state = self._tables.get(key)
        if state is not None:
            if state.dropped:
                raise NoSuchTableError(f"Table {schema}.{table} was dropped in this transaction.")
            return state
        try:
            info = self.lake.find_table(self._conn, name, self.base.snapshot_id)
        except NoSuchSchemaError:
            raise NoSuchTableError(f"Table {schema}.{table} does not exist (no schema {schema!r}).") from None
        table_dir = self.lake.table_dir(info)
        files = {f.data_file_id: f for f in metadata.data_files_at(self._conn, info, table_dir, self.base.snapshot_id)}
        max_id = self._conn.one("SELECT max(column_id) FROM {M}ducklake_column WHERE table_id = ?", (info.table_id,))
        state = _TableState(info.schema_name, info.name, info.columns, table_dir, info.table_id, info.schema_id, info,
                            files, int(max_id[0] or 0) if max_id else 0)
        self._tables[(info.schema_name, info.name)] = state
        return state

    def table_columns(self, name: str) -> tuple[Column, ...]:
        """Columns of ``name`` as this transaction sees them (after its own ALTERs)."""
        return self._state(name).columns

    def table_dir(self, name: str) -> str:
        return self._state(name).table_dir

    def data_files(self, name: str) -> list[DataFileInfo]:
        """Visible data files of ``name`` at the base snapshot (for engines computing delete positions)."""
        return list(self._state(name).files.values())

    # -- DDL ---------------------------------------------------------------------------------
    def create_schema(self, name: str, *, if_not_exists: bool = False) -> None:
        if self._schema_exists(name):
            if if_not_exists:
                return
            raise SchemaAlreadyExistsError(f"Schema {name!r} already exists.")
        self._new_schemas[name] = path_for(name)
        self._ops.append(_Op("create_schema", args={"name": name, "path": self._new_schemas[name]}))

    def drop_schema(self, name: str, *, if_exists: bool = False) -> None:
        if not self._schema_exists(name):
            if if_exists:
                return
            raise NoSuchSchemaError(f"Schema {name!r} does not exist.")
        dropped = {s.table_id for s in self._tables.values() if s.dropped}
        live = [t for t in metadata.tables_at(self._conn, self.base.snapshot_id)
                if t.schema_name == name and t.table_id not in dropped]
        live += [s for s in self._tables.values() if s.schema_name == name and s.pending is not None and not s.dropped]
        if live:
            raise LakehouseError(f"Schema {name!r} is not empty; drop its tables first.")
        if name in self._new_schemas:
            del self._new_schemas[name]
            self._ops = [op for op in self._ops if not (op.kind == "create_schema" and op.args["name"] == name)]
            return
        self._ops.append(_Op("drop_schema", args={"name": name, "schema_id": self._schemas[name].schema_id}))

    def create_table(self, name: str, schema: pa.Schema | Sequence[Column], *, if_not_exists: bool = False,
                     or_replace: bool = False) -> bool:
        """Create ``schema.table`` with the given Arrow schema (or column tree). Returns False if it existed
        and ``if_not_exists`` was set."""
        from airflow_provider_lakehouse.ducklake.catalog import split_name

        schema_name, table_name = split_name(name)
        if not self._schema_exists(schema_name):
            raise NoSuchSchemaError(f"Schema {schema_name!r} does not exist; create it first.")
        exists = self._exists(schema_name, table_name)
        if exists:
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
        path = path_for(table_name)
        state = _TableState(schema_name, table_name, columns, join_path(self._schema_dir(schema_name), path),
                            max_column_id=max(c.column_id for top in columns for c in top.walk()),
                            pending=len(self._ops))
        self._tables[(schema_name, table_name)] = state
        self._ops.append(_Op("create_table", state, {"path": path}))
        return True

    def _exists(self, schema_name: str, table_name: str) -> bool:
        state = self._tables.get((schema_name, table_name))
        if state is not None:
            return not state.dropped
        try:
            self._state(f"{schema_name}.{table_name}")
        except (NoSuchTableError, NoSuchSchemaError):
            return False
        return True

    def drop_table(self, name: str, *, if_exists: bool = False) -> bool:
        try:
            state = self._state(name)
        except NoSuchTableError:
            if if_exists:
                return False
            raise
        state.dropped = True
        if state.pending is not None:
            # created and dropped in one transaction: forget both
            self._ops = [op for op in self._ops if op.table is not state]
        else:
            self._ops.append(_Op("drop_table", state))
        return True

    def rename_table(self, name: str, new_name: str) -> None:
        state = self._state(name)
        if self._exists(state.schema_name, new_name):
            raise TableAlreadyExistsError(f"Table {state.schema_name}.{new_name} already exists.")
        del self._tables[(state.schema_name, state.name)]
        old = state.name
        state.name = new_name
        self._tables[(state.schema_name, new_name)] = state
        if state.pending is None:
            self._ops.append(_Op("rename_table", state, {"old": old}))

    def add_column(self, table: str, name: str, dtype: pa.DataType, *, default: Any = None,
                   if_not_exists: bool = False) -> None:
        """ALTER TABLE ADD COLUMN; ``default`` (a literal) is what existing rows read."""
        state = self._state(table)
        if any(c.name.lower() == name.lower() for c in state.columns):
            if if_not_exists:
                return
            raise LakehouseError(f"Column {name!r} already exists in {state.schema_name}.{state.name}.")
        (template,) = columns_from_arrow(pa.schema([(name, dtype)]))
        column = renumber(template, iter(range(state.max_column_id + 1, 1 << 62)))
        literal = None if default is None else _literal(default)
        column = replace(column, initial_default=literal, default_value=literal)
        state.max_column_id = max(c.column_id for c in column.walk())
        state.columns = (*state.columns, column)
        self._alter(state, "add_column", column=column)

    def drop_column(self, table: str, name: str, *, if_exists: bool = False) -> None:
        state = self._state(table)
        match = [c for c in state.columns if c.name.lower() == name.lower()]
        if not match:
            if if_exists:
                return
            raise LakehouseError(f"Column {name!r} does not exist in {state.schema_name}.{state.name}.")
        if len(state.columns) == 1:
            raise LakehouseError(f"Cannot drop the only column of {state.schema_name}.{state.name}.")
        state.columns = tuple(c for c in state.columns if c is not match[0])
        self._alter(state, "drop_column", column=match[0])

    def rename_column(self, table: str, old: str, new: str) -> None:
        state = self._state(table)
        match = [c for c in state.columns if c.name.lower() == old.lower()]
        if not match:
            raise LakehouseError(f"Column {old!r} does not exist in {state.schema_name}.{state.name}.")
        if any(c.name.lower() == new.lower() for c in state.columns):
            raise LakehouseError(f"Column {new!r} already exists in {state.schema_name}.{state.name}.")
        renamed = replace(match[0], name=new)
        state.columns = tuple(renamed if c is match[0] else c for c in state.columns)
        self._alter(state, "rename_column", old=match[0], column=renamed)

    def _alter(self, state: _TableState, what: str, **args: Any) -> None:
        if state.pending is not None:
            create = self._ops[state.pending]
            create.table = state  # the CREATE writes the final column list
            return
        self._ops.append(_Op(what, state, args))

    # -- DML ---------------------------------------------------------------------------------
    def append(self, table: str, data: pa.Table | pa.RecordBatch, *, row_ids: np.ndarray | None = None) -> int:
        """Write ``data`` (columns by name; missing nullable columns get their default) as new data files."""
        state = self._state(table)
        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        data = _complete(state, data)
        files = write_data_files(self.lake.storage, state.table_dir, state.columns, data, row_ids=row_ids)
        self._written += [f.path for f in files]
        self.add_files(table, files)
        return data.num_rows

    def add_files(self, table: str, files: Sequence[WrittenFile]) -> None:
        """Register data files already written (e.g. by Spark executors) under the table's directory."""
        state = self._state(table)
        files = [f for f in files if f.record_count > 0]
        if files:
            self._written += [f.path for f in files if f.path not in self._written]
            self._ops.append(_Op("append", state, {"files": list(files)}))

    def delete_rows(self, table: str, positions: dict[int, np.ndarray] | None = None,
                    inlined_row_ids: Sequence[int] = ()) -> int:
        """Delete rows by (data file id -> row positions) and by row id for rows inlined in the catalog.

        Returns how many rows were newly deleted.
        """
        state = self._state(table)
        deletes: list[tuple[WrittenDeleteFile, int | None]] = []
        dropped_files: list[int] = []
        count = 0
        for file_id, wanted in (positions or {}).items():
            if file_id not in state.files:
                raise LakehouseError(f"Data file {file_id} is not visible in {state.schema_name}.{state.name}.")
            info = state.files[file_id]
            already = set(deleted_positions(self.lake.storage, info, self.base.snapshot_id).tolist())
            inlined = {p for p, _s in info.inlined_deletes}
            new = {int(p) for p in np.asarray(wanted).tolist()} - already
            if not new:
                continue
            count += len(new)
            in_file = (already | new) - inlined  # inlined deletions stay where they are (COUNT(*) subtracts both)
            if len(already | new) >= info.record_count:
                dropped_files.append(file_id)
                continue
            written = write_delete_file(self.lake.storage, state.table_dir, file_id, info.path,
                                        np.fromiter(sorted(in_file), dtype=np.int64))
            self._written.append(written.path)
            deletes.append((written, info.delete_file.delete_file_id if info.delete_file else None))
        inlined_ids = sorted({int(r) for r in inlined_row_ids})
        count += len(inlined_ids)
        if deletes or dropped_files or inlined_ids:
            self._ops.append(_Op("delete", state, {"deletes": deletes, "dropped_files": dropped_files,
                                                   "inlined": inlined_ids}))
        return count

    def delete_where(self, table: str, predicate: Any) -> int:
        """Delete the rows for which ``predicate`` (a pyarrow compute expression) is true."""
        from airflow_provider_lakehouse.ducklake.reader import FILE_ID, FILE_POS, ROWID

        rows = self.lake.read(table, version=self.base.snapshot_id, virtual=(ROWID, FILE_ID, FILE_POS))
        rows = rows.filter(predicate)
        return self.delete_selected(table, rows)

    def delete_selected(self, table: str, rows: pa.Table) -> int:
        """Delete the rows of ``rows``, identified by their virtual ``rowid`` / file id / file position columns."""
        from airflow_provider_lakehouse.ducklake.reader import FILE_ID, FILE_POS, ROWID

        positions: dict[int, list[int]] = {}
        inlined: list[int] = []
        for file_id, pos, rowid in zip(rows.column(FILE_ID).to_pylist(), rows.column(FILE_POS).to_pylist(),
                                       rows.column(ROWID).to_pylist()):
            if file_id is None:
                inlined.append(rowid)
            else:
                positions.setdefault(file_id, []).append(pos)
        return self.delete_rows(table, {k: np.array(v) for k, v in positions.items()}, inlined)

    def update_where(self, table: str, predicate: Any, assignments: dict[str, Any]) -> int:
        """UPDATE: rows matching ``predicate`` get ``assignments`` (column -> value, or a callable taking the
        matched rows as an Arrow table and returning an array). Rows keep their row ids."""
        from airflow_provider_lakehouse.ducklake.reader import FILE_ID, FILE_POS, ROWID

        state = self._state(table)
        rows = self.lake.read(table, version=self.base.snapshot_id, virtual=(ROWID, FILE_ID, FILE_POS)).filter(predicate)
        if rows.num_rows == 0:
            return 0
        new = rows
        for name, value in assignments.items():
            column = next((c for c in state.columns if c.name.lower() == name.lower()), None)
            if column is None:
                raise LakehouseError(f"Column {name!r} does not exist in {state.schema_name}.{state.name}.")
            array = value(rows) if callable(value) else pa.array([value] * rows.num_rows)
            new = new.set_column(new.schema.get_field_index(column.name), column.name,
                                 pa.array(array).cast(column.arrow_type))
        self.replace_rows(table, rows, new.select([c.name for c in state.columns]))
        return rows.num_rows

    def replace_rows(self, table: str, old_rows: pa.Table, new_rows: pa.Table) -> None:
        """Delete ``old_rows`` (which carry the virtual ``rowid``/file/position columns) and insert
        ``new_rows`` in their place, keeping the row ids (DuckDB's UPDATE layout)."""
        from airflow_provider_lakehouse.ducklake.reader import ROWID

        self.delete_selected(table, old_rows)
        self.append(table, new_rows, row_ids=old_rows.column(ROWID).to_numpy())

    # -- commit ------------------------------------------------------------------------------
    def abort(self) -> None:
        """Discard everything staged and delete the files written for it."""
        if self.closed:
            return
        self._cleanup_files()
        self._close()

    def _close(self) -> None:
        self.closed = True
        try:
            self._conn.close()
        except Exception:  # closing a broken connection must not hide the real error
            pass

    def _cleanup_files(self) -> None:
        for path in self._written:
            try:
                self.lake.storage.delete(path)
            except OSError:
                pass
        self._written.clear()

    def commit(self) -> Snapshot | None:
        """Commit everything staged as one snapshot; returns it (None if nothing was staged).

        :raises CommitConflictError: another writer made a conflicting change; nothing landed.
        :raises CommitStateUnknownError: the catalog went away mid-commit; files are kept.
        """
        if self.closed:
            raise LakehouseError("This transaction is already closed.")
        if not self._ops:
            self._close()
            return None
        policy = self.lake.retry
        attempt = 0
        try:
            while True:
                try:
                    self.snapshot = self._commit_once()
                    self._written.clear()
                    return self.snapshot
                except CommitConflictError:
                    raise
                except Exception as exc:
                    if _connection_lost(exc, self._conn):
                        reachable, landed = self._find_landed()
                        if landed is not None:
                            self.snapshot = landed
                            self._written.clear()
                            return landed
                        if not reachable:
                            raise CommitStateUnknownError(
                                "Lost the catalog connection while committing; the commit may or may not have "
                                f"landed (commit id {self.commit_id}). Its files were kept."
                            ) from None
                    elif not self.lake.store.is_retryable(exc):
                        raise
                    attempt += 1
                    if attempt > policy.max_retries:
                        raise CommitConflictError(
                            f"Gave up committing after {policy.max_retries} retries: other writers kept winning "
                            f"the race for the next snapshot id ({type(exc).__name__})."
                        ) from None
                    wait = policy.wait_ms / 1000 * random.uniform(0.5, 1.0) * policy.backoff ** (attempt - 1)
                    time.sleep(wait)
        except CommitStateUnknownError:
            raise  # the commit may have landed: its files must stay
        except BaseException:
            self._cleanup_files()
            raise
        finally:
            self._close()

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
            snapshot = _Builder(self, conn, latest, mine).run()
            conn.commit()
        except BaseException:
            try:
                conn.rollback()
            except Exception:
                pass
            raise
        return snapshot

    def _changeset(self) -> changelog.ChangeSet:
        c = changelog.ChangeSet()
        for op in self._ops:
            t = op.table
            tid = t.table_id if t else None
            if op.kind == "create_schema":
                c.created_schemas.add(op.args["name"])
            elif op.kind == "drop_schema":
                c.dropped_schemas.add(op.args["schema_id"])
            elif op.kind == "create_table":
                assert t is not None
                c.created_tables.add((t.schema_name, t.name))
            elif op.kind == "rename_table":
                assert t is not None
                c.created_tables.add((t.schema_name, t.name))
            elif op.kind == "drop_table":
                c.dropped_tables.add(tid)  # type: ignore[arg-type]
            elif op.kind in ("add_column", "drop_column", "rename_column"):
                c.altered.add(tid)  # type: ignore[arg-type]
            elif op.kind == "append" and tid is not None:
                c.inserted.add(tid)
            elif op.kind == "delete" and tid is not None:
                if op.args["deletes"] or op.args["dropped_files"]:
                    c.deleted.add(tid)
                if op.args["inlined"]:
                    c.inlined_delete.add(tid)
            elif op.kind in ("flush", "merge"):
                (c.flushed if op.kind == "flush" else c.compacted).add(tid)  # type: ignore[arg-type]
        return c

    def _check_conflicts(self, conn: CatalogConnection, latest: Snapshot, mine: changelog.ChangeSet) -> None:
        base = self.base.snapshot_id
        theirs = changelog.parse(
            r[0] for r in conn.query("SELECT changes_made FROM {M}ducklake_snapshot_changes WHERE snapshot_id > ?", (base,))
        )
        my_files = {d.data_file_id for op in self._ops if op.kind == "delete" for d, _ in op.args["deletes"]}
        my_files |= {f for op in self._ops if op.kind == "delete" for f in op.args["dropped_files"]}
        their_files = {int(r[0]) for r in conn.query(
            "SELECT data_file_id FROM {M}ducklake_delete_file WHERE begin_snapshot > ? "
            "UNION ALL SELECT data_file_id FROM {M}ducklake_data_file WHERE end_snapshot > ?", (base, base))}
        used_schema_ids = {t.schema_id for t in self._tables.values() if t.schema_id is not None}
        reason = changelog.conflict(mine, theirs, my_deleted_files=my_files, their_deleted_files=their_files,
                                    my_schema_ids_used=used_schema_ids)
        if reason:
            raise CommitConflictError(
                f"Commit conflicts with snapshot(s) {base + 1}..{latest.snapshot_id}: {reason}. Nothing was committed."
            )


def _connection_lost(exc: BaseException, conn: CatalogConnection) -> bool:
    raw = getattr(conn, "raw", None)
    closed = getattr(raw, "closed", False)
    name = type(exc).__name__
    return bool(closed) or name in ("OperationalError", "InterfaceError") and "closed" in str(exc).lower()


def _literal(value: Any) -> str:
    """A default value as the literal text DuckDB stores (strings single-quoted)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return str(value)


def _complete(state: _TableState, data: pa.Table) -> pa.Table:
    """Match ``data``'s columns to the table's (case-insensitively); fill missing ones with their default."""
    from airflow_provider_lakehouse.ducklake.reader import default_array

    by_lower = {n.lower(): n for n in data.column_names}
    unknown = [n for n in data.column_names if n.lower() not in {c.name.lower() for c in state.columns}]
    if unknown:
        raise LakehouseError(f"Table {state.schema_name}.{state.name} has no column(s) {', '.join(unknown)}.")
    arrays, names = [], []
    for column in state.columns:
        source = by_lower.get(column.name.lower())
        if source is None:
            literal = column.default_value
            filler = replace(column, initial_default=literal) if literal is not None else column
            arrays.append(default_array(filler, data.num_rows))
        else:
            arrays.append(data.column(source))
        names.append(column.name)
    return pa.Table.from_arrays(arrays, names=names)


class _Builder:
    """Turns the staged operations into catalog writes on top of ``latest`` (rebuilt on every retry)."""

    def __init__(self, tx: Transaction, conn: CatalogConnection, latest: Snapshot, mine: changelog.ChangeSet) -> None:
        self.tx = tx
        self.conn = conn
        self.latest = latest
        # this commit's changes; ids of tables created here are added as the handlers allocate them
        self.changes = changelog.parse([mine.text()])
        self.sid = latest.snapshot_id + 1
        self.next_catalog_id = latest.next_catalog_id
        self.next_file_id = latest.next_file_id
        self.schema_version = latest.schema_version
        self.statements: list[tuple[str, Sequence[Any]]] = []
        self.schema_ids: dict[str, int] = {}
        self.table_ids: dict[int, int] = {}  # id(state) -> table id
        self.altered_tables: set[int] = set()
        self.created_tables: set[int] = set()
        # table stats as this commit leaves them: tid -> (record_count, next_row_id, file_size_bytes)
        self._table_stats: dict[int, tuple[int, int, int]] = {}
        self._column_stats: dict[int, dict[int, list[Any]]] = {}
        self._stats_existed: dict[int, bool] = {}

    def sql(self, text: str, params: Sequence[Any] = ()) -> None:
        self.statements.append((text, params))

    def run(self) -> Snapshot:
        schema_change = False
        for op in self.tx._ops:
            handler = getattr(self, f"_{op.kind}")
            schema_change |= bool(handler(op))
        if schema_change:
            self.schema_version += 1
        for tid in sorted(self._table_stats):
            self._stats_statements(tid)
        for tid in sorted(self.created_tables | self.altered_tables):
            self.sql("INSERT INTO {M}ducklake_schema_versions VALUES (?, ?, ?)", (self.sid, self.schema_version, tid))
        for tid in sorted(self.created_tables | self.altered_tables):
            self._new_inlined_table(tid)
        changes = self.changes.text()
        conn = self.conn
        now = conn.now()
        conn.execute("INSERT INTO {M}ducklake_snapshot VALUES (?, ?, ?, ?, ?)",
                     (self.sid, now, self.schema_version, self.next_catalog_id, self.next_file_id))
        for text, params in self.statements:
            conn.execute(text, params)
        conn.execute("INSERT INTO {M}ducklake_snapshot_changes VALUES (?, ?, ?, ?, ?)",
                     (self.sid, changes, self.tx.author, self.tx.message, self.tx.extra_info))
        return Snapshot(self.sid, metadata.parse_time(now), self.schema_version, self.next_catalog_id,
                        self.next_file_id, changes, self.tx.author, self.tx.message, self.tx.extra_info)

    def _tid(self, state: _TableState) -> int:
        if state.table_id is not None:
            return state.table_id
        return self.table_ids[id(state)]

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

    # -- handlers (return True when the op changes the schema) ---------------------------------
    def _create_schema(self, op: _Op) -> bool:
        sid = self.next_catalog_id
        self.next_catalog_id += 1
        self.schema_ids[op.args["name"]] = sid
        self.sql("INSERT INTO {M}ducklake_schema VALUES (?, ?, ?, NULL, ?, ?, ?)",
                 (sid, str(uuidlib.uuid4()), self.sid, op.args["name"], op.args["path"], True))
        return True

    def _drop_schema(self, op: _Op) -> bool:
        self.sql("UPDATE {M}ducklake_schema SET end_snapshot = ? WHERE schema_id = ? AND end_snapshot IS NULL",
                 (self.sid, op.args["schema_id"]))
        return True

    def _create_table(self, op: _Op) -> bool:
        state = op.table
        assert state is not None
        tid = self.next_catalog_id
        self.next_catalog_id += 1
        self.table_ids[id(state)] = tid
        self.created_tables.add(tid)
        self.sql("INSERT INTO {M}ducklake_table VALUES (?, ?, ?, NULL, ?, ?, ?, ?)",
                 (tid, uuid7(), self.sid, self._schema_id(state.schema_name), state.name, op.args["path"], True))
        self._insert_columns(tid, state.columns)
        return True

    def _insert_columns(self, tid: int, columns: Sequence[Column], parent: int | None = None) -> None:
        for column in columns:
            nested = column.type in ("struct", "list", "map")
            self.sql(
                "INSERT INTO {M}ducklake_column VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'duckdb')",
                (column.column_id, self.sid, tid, column.column_id, column.name, column.type, column.initial_default,
                 column.default_value if column.default_value is not None else "NULL", column.nullable, parent,
                 "" if nested else "literal"),
            )
            self._insert_columns(tid, column.children, column.column_id)

    def _drop_table(self, op: _Op) -> bool:
        tid = self._tid(op.table)  # type: ignore[arg-type]
        for table in ("ducklake_table", "ducklake_partition_info", "ducklake_column", "ducklake_column_tag",
                      "ducklake_data_file", "ducklake_delete_file", "ducklake_sort_info"):
            self.sql(f"UPDATE {{M}}{table} SET end_snapshot = ? WHERE table_id = ? AND end_snapshot IS NULL", (self.sid, tid))
        self.sql("UPDATE {M}ducklake_tag SET end_snapshot = ? WHERE object_id = ? AND end_snapshot IS NULL", (self.sid, tid))
        return True

    def _rename_table(self, op: _Op) -> bool:
        state = op.table
        assert state is not None and state.info is not None
        info = state.info
        self.sql("UPDATE {M}ducklake_table SET end_snapshot = ? WHERE table_id = ? AND end_snapshot IS NULL",
                 (self.sid, info.table_id))
        self.sql("INSERT INTO {M}ducklake_table VALUES (?, ?, ?, NULL, ?, ?, ?, ?)",
                 (info.table_id, info.uuid, self.sid, info.schema_id, state.name, info.path, info.path_is_relative))
        return True

    def _add_column(self, op: _Op) -> bool:
        tid = self._tid(op.table)  # type: ignore[arg-type]
        self._insert_columns(tid, [op.args["column"]])
        self.altered_tables.add(tid)
        return True

    def _drop_column(self, op: _Op) -> bool:
        tid = self._tid(op.table)  # type: ignore[arg-type]
        for column in op.args["column"].walk():
            self.sql("UPDATE {M}ducklake_column SET end_snapshot = ? WHERE table_id = ? AND column_id = ? "
                     "AND end_snapshot IS NULL", (self.sid, tid, column.column_id))
        self.altered_tables.add(tid)
        return True

    def _rename_column(self, op: _Op) -> bool:
        tid = self._tid(op.table)  # type: ignore[arg-type]
        old: Column = op.args["old"]
        new: Column = op.args["column"]
        row = self.conn.one(
            "SELECT parent_column FROM {M}ducklake_column WHERE table_id = ? AND column_id = ? AND end_snapshot IS NULL",
            (tid, old.column_id),
        )
        self.sql("UPDATE {M}ducklake_column SET end_snapshot = ? WHERE table_id = ? AND column_id = ? AND end_snapshot IS NULL",
                 (self.sid, tid, old.column_id))
        nested = new.type in ("struct", "list", "map")
        self.sql(
            "INSERT INTO {M}ducklake_column VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'duckdb')",
            (new.column_id, self.sid, tid, new.column_id, new.name, new.type, new.initial_default,
             new.default_value if new.default_value is not None else "NULL", new.nullable,
             row[0] if row else None, "" if nested else "literal"),
        )
        self.altered_tables.add(tid)
        return True

    def _new_inlined_table(self, tid: int) -> None:
        """Register an (empty) inlined-data table with the current column list, as DuckDB does on CREATE and on
        every column change (spec 12.1 item 9). DuckDB's next small insert goes to the newest one, positionally;
        and a table without one makes DuckDB create it at a schema version it then cannot resolve."""
        state = next(s for s in self.tx._tables.values() if s.table_id == tid or self.table_ids.get(id(s)) == tid)
        name = f"ducklake_inlined_data_{tid}_{self.schema_version}"
        store = self.tx.lake.store
        columns = ", ".join(f"{quote_ident(c.name)} {store.column_type(c.type)}" for c in state.columns)
        self.sql(f"CREATE TABLE IF NOT EXISTS {{M}}{quote_ident(name)}(row_id BIGINT, begin_snapshot BIGINT, "
                 f"end_snapshot BIGINT, {columns})")
        self.sql("INSERT INTO {M}ducklake_inlined_data_tables VALUES (?, ?, ?)", (tid, name, self.schema_version))

    def _append(self, op: _Op) -> bool:
        state = op.table
        assert state is not None
        tid = self._tid(state)
        self.changes.inserted.add(tid)
        files: list[WrittenFile] = op.args["files"]
        if tid not in self._table_stats:  # re-read on every attempt: another writer may have moved them
            row = self.conn.one(
                "SELECT record_count, next_row_id, file_size_bytes FROM {M}ducklake_table_stats WHERE table_id = ?", (tid,))
            self._stats_existed[tid] = row is not None
            self._table_stats[tid] = (int(row[0]), int(row[1]), int(row[2])) if row else (0, 0, 0)
            self._column_stats[tid] = {
                int(r[0]): [r[1], r[2], r[3], r[4]]
                for r in self.conn.query("SELECT column_id, contains_null, contains_nan, min_value, max_value "
                                         "FROM {M}ducklake_table_column_stats WHERE table_id = ?", (tid,))
            }
        record_count, next_row_id, size = self._table_stats[tid]
        column_stats = self._column_stats[tid]
        leaves = {c.column_id: c for top in state.columns for c in top.walk()}
        table_dir = state.table_dir
        for f in files:
            fid = self.next_file_id
            self.next_file_id += 1
            rel = relative_to(table_dir, f.path)
            self.sql(
                "INSERT INTO {M}ducklake_data_file VALUES (?, ?, ?, NULL, NULL, ?, ?, 'parquet', ?, ?, ?, ?, NULL, NULL, NULL, ?)",
                (fid, tid, f.begin_snapshot if f.begin_snapshot is not None and f.partial_max is not None else self.sid,
                 rel if rel is not None else f.path, rel is not None, f.record_count, f.file_size_bytes, f.footer_size,
                 next_row_id, f.partial_max),
            )
            for s in f.column_stats:
                self.sql("INSERT INTO {M}ducklake_file_column_stats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                         (fid, tid, s.column_id, s.column_size_bytes, s.value_count, s.null_count, s.min_value,
                          s.max_value, s.contains_nan))
            if f.partial_max is None:  # partial files (compaction, flush) re-home rows that are already counted
                record_count += f.record_count
                next_row_id += f.record_count
            size += f.file_size_bytes
            for s in f.column_stats:
                column = leaves.get(s.column_id)
                if column is None:
                    continue
                has_null = bool(s.null_count)
                current = column_stats.get(s.column_id)
                if current is None:
                    if not self._stats_existed[tid]:
                        column_stats[s.column_id] = [has_null, s.contains_nan, s.min_value, s.max_value]
                    continue
                current[0] = bool(current[0]) or has_null
                current[1] = None if current[1] is None and s.contains_nan is None else bool(current[1]) or bool(s.contains_nan)
                current[2] = merge_bound(current[2], s.min_value, column, take_max=False)
                current[3] = merge_bound(current[3], s.max_value, column, take_max=True)
        self._table_stats[tid] = (record_count, next_row_id, size)
        return False

    def _stats_statements(self, tid: int) -> None:
        """Write ``ducklake_table_stats`` / ``_table_column_stats`` as this commit leaves them (spec 5.2)."""
        record_count, next_row_id, size = self._table_stats[tid]
        if self._stats_existed[tid]:
            self.sql("UPDATE {M}ducklake_table_stats SET record_count = ?, next_row_id = ?, file_size_bytes = ? "
                     "WHERE table_id = ?", (record_count, next_row_id, size, tid))
            for cid, (has_null, has_nan, lo, hi) in sorted(self._column_stats[tid].items()):
                self.sql("UPDATE {M}ducklake_table_column_stats SET contains_null = ?, contains_nan = ?, min_value = ?, "
                         "max_value = ? WHERE table_id = ? AND column_id = ?", (has_null, has_nan, lo, hi, tid, cid))
        else:
            self.sql("INSERT INTO {M}ducklake_table_stats VALUES (?, ?, ?, ?)", (tid, record_count, next_row_id, size))
            for cid, (has_null, has_nan, lo, hi) in sorted(self._column_stats[tid].items()):
                self.sql("INSERT INTO {M}ducklake_table_column_stats VALUES (?, ?, ?, ?, ?, ?, NULL)",
                         (tid, cid, has_null, has_nan, lo, hi))

    def _merge(self, op: _Op) -> bool:
        state = op.table
        assert state is not None
        sources: list[DataFileInfo] = op.args["sources"]
        partition = sources[0].partition_id
        fid = _register_partial_file(self, state, op.args["file"], min(s.row_id_start or 0 for s in sources), partition)
        tid = self._tid(state)
        now = self.conn.now()
        # one partition per merge group: the merged file takes the first source's partition values
        self.sql("INSERT INTO {M}ducklake_file_partition_value SELECT ?, table_id, partition_key_index, partition_value "
                 "FROM {M}ducklake_file_partition_value WHERE data_file_id = ?", (fid, sources[0].data_file_id))
        for src in sources:
            for t in ("ducklake_data_file", "ducklake_file_column_stats", "ducklake_file_partition_value"):
                self.sql(f"DELETE FROM {{M}}{t} WHERE data_file_id = ? AND table_id = ?", (src.data_file_id, tid))
            rel = relative_to(self.tx.lake.data_path, src.path)
            self.sql("INSERT INTO {M}ducklake_files_scheduled_for_deletion VALUES (?, ?, ?, ?)",
                     (src.data_file_id, rel if rel is not None else src.path, rel is not None, now))
        return False


    def _flush(self, op: _Op) -> bool:
        state = op.table
        assert state is not None
        written: WrittenFile = op.args["file"]
        fid = _register_partial_file(self, state, written, 0)
        ended: list[tuple[int, int]] = op.args["ended"]
        if ended:
            delete = write_delete_file(self.tx.lake.storage, state.table_dir, fid, written.path,
                                       np.array([p for p, _ in ended], dtype=np.int64),
                                       snapshots=np.array([s for _, s in ended], dtype=np.int64))
            self.tx._written.append(delete.path)
            did = self.next_file_id
            self.next_file_id += 1
            rel = relative_to(state.table_dir, delete.path)
            self.sql("INSERT INTO {M}ducklake_delete_file VALUES (?, ?, ?, NULL, ?, ?, ?, 'parquet', ?, ?, ?, NULL, ?)",
                     (did, self._tid(state), delete.begin_snapshot, fid, rel if rel is not None else delete.path,
                      rel is not None, delete.delete_count, delete.file_size_bytes, delete.footer_size, delete.partial_max))
        for name in op.args["tables"]:
            self.sql(f"DELETE FROM {{M}}{quote_ident(name)}")
        return False

    def _delete(self, op: _Op) -> bool:
        state = op.table
        assert state is not None
        tid = self._tid(state)
        for written, old_id in op.args["deletes"]:
            did = self.next_file_id
            self.next_file_id += 1
            if old_id is not None:
                self.sql("UPDATE {M}ducklake_delete_file SET end_snapshot = ? WHERE delete_file_id = ? AND end_snapshot IS NULL",
                         (self.sid, old_id))
            rel = relative_to(state.table_dir, written.path)
            self.sql("INSERT INTO {M}ducklake_delete_file VALUES (?, ?, ?, NULL, ?, ?, ?, 'parquet', ?, ?, ?, NULL, ?)",
                     (did, tid, self.sid, written.data_file_id, rel if rel is not None else written.path, rel is not None,
                      written.delete_count, written.file_size_bytes, written.footer_size, written.partial_max))
        for fid in op.args["dropped_files"]:
            self.sql("UPDATE {M}ducklake_data_file SET end_snapshot = ? WHERE data_file_id = ? AND end_snapshot IS NULL",
                     (self.sid, fid))
            self.sql("UPDATE {M}ducklake_delete_file SET end_snapshot = ? WHERE data_file_id = ? AND end_snapshot IS NULL",
                     (self.sid, fid))
        if op.args["inlined"]:
            info = state.info
            ids = op.args["inlined"]
            for name, _version in (info.inlined_tables if info else ()):
                if not self.conn.table_exists(name):
                    continue
                for start in range(0, len(ids), 500):
                    chunk = ids[start:start + 500]
                    self.sql(f"UPDATE {{M}}{quote_ident(name)} SET end_snapshot = ? WHERE end_snapshot IS NULL "
                             f"AND row_id IN ({', '.join('?' * len(chunk))})", (self.sid, *chunk))
        return False


def _register_partial_file(builder: _Builder, state: _TableState, written: WrittenFile, row_id_start: int,
                           partition_id: int | None = None) -> int:
    """Insert a data file row for a partial file (embedded row and snapshot ids); returns its id."""
    tid = builder._tid(state)
    fid = builder.next_file_id
    builder.next_file_id += 1
    rel = relative_to(state.table_dir, written.path)
    builder.sql(
        "INSERT INTO {M}ducklake_data_file VALUES (?, ?, ?, NULL, NULL, ?, ?, 'parquet', ?, ?, ?, ?, ?, NULL, NULL, ?)",
        (fid, tid, written.begin_snapshot, rel if rel is not None else written.path, rel is not None, written.record_count,
         written.file_size_bytes, written.footer_size, row_id_start, partition_id, written.partial_max),
    )
    for s in written.column_stats:
        builder.sql("INSERT INTO {M}ducklake_file_column_stats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                    (fid, tid, s.column_id, s.column_size_bytes, s.value_count, s.null_count, s.min_value, s.max_value,
                     s.contains_nan))
    return fid
