"""The public entry point: :class:`DuckLake`, one lake (catalog + data files)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from airflow_provider_lakehouse.connections.lake import RetryPolicy
from airflow_provider_lakehouse.ducklake import change_feed, ddl, introspect, maintenance, metadata
from airflow_provider_lakehouse.ducklake.model import SchemaInfo, Snapshot, TableInfo, ViewInfo
from airflow_provider_lakehouse.ducklake.names import find_view, split_name
from airflow_provider_lakehouse.ducklake.pruning import Predicate, filter_rows, prune_files
from airflow_provider_lakehouse.ducklake.reader import ScanPlan, read_data_file, read_inlined_rows
from airflow_provider_lakehouse.ducklake.storage import Storage
from airflow_provider_lakehouse.ducklake.store import CatalogConnection, MetadataStore, SqliteStore, store_for_spec
from airflow_provider_lakehouse.ducklake.transaction import Transaction
from airflow_provider_lakehouse.ducklake.types import Column
from airflow_provider_lakehouse.exceptions import CatalogNotFoundError, NoSuchSchemaError, NoSuchTableError

if TYPE_CHECKING:
    from airflow_provider_lakehouse.connections.lake import DuckLakeSpec, S3Spec

__all__ = ["DuckLake", "split_name"]  # split_name lives in .names; still importable from here


class DuckLake:
    """A DuckLake lake: read tables at any snapshot, commit changes, inspect and maintain it.

    :param store: the catalog database.
    :param s3: credentials for ``s3://`` data paths.
    :param data_path: override the stored data path (e.g. a different mount point); default: the stored one.
    :param retry: how conflicting commits are retried.

    >>> import tempfile, os, pyarrow as pa
    >>> from airflow_provider_lakehouse.ducklake.store import SqliteStore
    >>> root = tempfile.mkdtemp()
    >>> lake = DuckLake.create(SqliteStore(os.path.join(root, "cat.db")), data_path=os.path.join(root, "data"))
    >>> with lake.transaction() as tx:
    ...     _ = tx.create_table("main.events", pa.schema([("id", pa.int64()), ("kind", pa.string())]))
    ...     _ = tx.append("main.events", pa.table({"id": [1, 2], "kind": ["a", "b"]}))
    >>> lake.read("events").to_pylist()
    [{'id': 1, 'kind': 'a'}, {'id': 2, 'kind': 'b'}]
    """

    def __init__(
        self,
        store: MetadataStore,
        *,
        s3: S3Spec | None = None,
        data_path: str | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.store = store
        self.retry = retry or RetryPolicy()
        with store.connection() as conn:
            meta = _read_catalog_metadata(conn)
        if not meta:
            raise CatalogNotFoundError(f"{store!r} holds no DuckLake catalog; use DuckLake.create().")
        metadata.check_version(meta)
        self.metadata = meta
        stored = meta.get("data_path", "")
        self.data_path = data_path or stored
        if not self.data_path.endswith("/"):
            self.data_path += "/"
        if meta.get("encrypted") == "true":
            raise metadata.SpecVersionError("Encrypted DuckLake catalogs are not supported.")
        self.storage = Storage(self.data_path, s3)

    @classmethod
    def create(
        cls, store: MetadataStore, *, data_path: str, s3: S3Spec | None = None, retry: RetryPolicy | None = None
    ) -> DuckLake:
        """Open the lake in ``store``, creating an empty spec 1.0 catalog first if there is none."""
        if not data_path.endswith("/"):
            data_path += "/"
        with store.connection() as conn:
            if not conn.table_exists("ducklake_metadata"):
                try:
                    ddl.initialize(conn, store, data_path)
                except Exception:
                    # Tasks that start together on a new lake all try to create it; Postgres lets one win and
                    # fails the others on its unique indexes once the winner committed. Use the winner's catalog.
                    with store.connection() as fresh:
                        if not fresh.table_exists("ducklake_metadata"):
                            raise
        return cls(store, s3=s3, retry=retry)

    @classmethod
    def from_spec(
        cls, spec: DuckLakeSpec, *, create: bool = False, reconnect_timeout_s: float | None = None
    ) -> DuckLake:
        """Open the lake ``spec`` describes, with its storage credentials and retry policy.

        Reads open an existing lake and change nothing; only a write that may be the lake's first (a task's
        script) passes ``create=True``.

        :param spec: the lake: its catalog, data path, credentials and retry policy.
        :param create: create an empty catalog at ``spec.data_path`` when the store holds none.
        :param reconnect_timeout_s: how long an unreachable PostgreSQL catalog is waited for; default: the spec's
            ``retry.reconnect_timeout_s`` (a web page waits less than a task).
        :raises CatalogNotFoundError: without ``create``, when the store holds no catalog (for a SQLite catalog
            whose file does not exist, without creating the file).

        >>> import tempfile, os
        >>> from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
        >>> root = tempfile.mkdtemp()
        >>> spec = DuckLakeSpec("demo", os.path.join(root, "cat.db"), os.path.join(root, "data"))
        >>> DuckLake.from_spec(spec)
        Traceback (most recent call last):
        ...
        airflow_provider_lakehouse.exceptions.CatalogNotFoundError: SqliteStore('.../cat.db') holds no DuckLake catalog; use DuckLake.create().
        >>> DuckLake.from_spec(spec, create=True).current_snapshot_id()
        0
        >>> DuckLake.from_spec(spec).current_snapshot_id()
        0
        """
        store = store_for_spec(spec, reconnect_timeout_s=reconnect_timeout_s)
        if create:
            return cls.create(store, data_path=spec.data_path, s3=spec.s3, retry=spec.retry)
        if isinstance(store, SqliteStore) and not os.path.exists(store.path):
            # connecting would leave an empty database file behind: a read must not change the disk
            raise CatalogNotFoundError(f"{store!r} holds no DuckLake catalog; use DuckLake.create().")
        return cls(store, s3=spec.s3, retry=spec.retry)

    def __repr__(self) -> str:
        return f"DuckLake({self.store!r}, data_path={self.data_path!r})"

    # -- snapshots ----------------------------------------------------------------------------
    def snapshot(
        self, version: int | None = None, timestamp: dt.datetime | None = None, conn: CatalogConnection | None = None
    ) -> Snapshot:
        """The current snapshot, or the one with id ``version``, or the latest at or before ``timestamp``."""
        if conn is None:
            with self.store.connection() as own:
                return self.snapshot(version, timestamp, own)
        if version is not None:
            return metadata.snapshot_by_id(conn, int(version))
        if timestamp is not None:
            return metadata.snapshot_at_time(conn, timestamp)
        return metadata.latest_snapshot(conn)

    def current_snapshot_id(self) -> int:
        return self.snapshot().snapshot_id

    # -- catalog ------------------------------------------------------------------------------
    def schemas(self, *, version: int | None = None) -> list[SchemaInfo]:
        with self.store.connection() as conn:
            return metadata.schemas_at(conn, self.snapshot(version, conn=conn).snapshot_id)

    def tables(self, *, version: int | None = None) -> list[TableInfo]:
        with self.store.connection() as conn:
            return metadata.tables_at(conn, self.snapshot(version, conn=conn).snapshot_id)

    def table(
        self,
        name: str,
        *,
        version: int | None = None,
        timestamp: dt.datetime | None = None,
        conn: CatalogConnection | None = None,
    ) -> TableInfo:
        """Look up ``schema.table`` (or ``table`` in ``main``) at a snapshot.

        :raises NoSuchTableError: naming the table and the snapshot.
        """
        if conn is None:
            with self.store.connection() as own:
                return self.table(name, version=version, timestamp=timestamp, conn=own)
        snap = self.snapshot(version, timestamp, conn)
        return self.find_table(conn, name, snap.snapshot_id)

    def find_table(self, conn: CatalogConnection, name: str, snapshot_id: int) -> TableInfo:
        schema_name, table_name = split_name(name)
        named = metadata.tables_named(conn, snapshot_id, schema_name, table_name)
        for candidates in ([t for t in named if (t[1], t[2]) == (schema_name, table_name)], named):
            if len(candidates) == 1:
                return metadata.tables_at(conn, snapshot_id, candidates[0][0])[0]
        if not any(s.name.lower() == schema_name.lower() for s in metadata.schemas_at(conn, snapshot_id)):
            raise NoSuchSchemaError(f"Schema {schema_name!r} does not exist in lake at snapshot {snapshot_id}.")
        raise NoSuchTableError(f"Table {schema_name}.{table_name} does not exist at snapshot {snapshot_id}.")

    def views(self, *, version: int | None = None) -> list[ViewInfo]:
        """Every view of the lake at a snapshot (default: the latest)."""
        with self.store.connection() as conn:
            return metadata.views_at(conn, self.snapshot(version, conn=conn).snapshot_id)

    def view(self, name: str, *, version: int | None = None, conn: CatalogConnection | None = None) -> ViewInfo | None:
        """The view ``schema.view`` (or ``view`` in ``main``) at a snapshot, or None when no view has that name
        (names match case-insensitively, an exact match first, as tables' do)."""
        if conn is None:
            with self.store.connection() as own:
                return self.view(name, version=version, conn=own)
        return find_view(metadata.views_at(conn, self.snapshot(version, conn=conn).snapshot_id), name)

    def table_dir(self, table: TableInfo) -> str:
        """Directory of ``table``'s files."""
        return metadata.table_path(self.data_path, table)

    # -- reads --------------------------------------------------------------------------------
    def scan(
        self,
        name: str,
        *,
        columns: Sequence[str] | None = None,
        version: int | None = None,
        timestamp: dt.datetime | None = None,
        filters: Sequence[Predicate] = (),
        virtual: Sequence[str] = (),
    ) -> ScanPlan:
        """Plan a read of ``name``: visible files (pruned by ``filters`` using file statistics) and inlined rows.

        :param filters: ``(column, op, value)`` predicates used only to skip files; apply them to the rows yourself
            (or use :meth:`read`).
        :param virtual: extra columns: ``rowid``, ``__ducklake_file_id``, ``__ducklake_file_pos``, ``__ducklake_row_snapshot``.
        """
        with self.store.connection() as conn:
            snap = self.snapshot(version, timestamp, conn)
            table = self.find_table(conn, name, snap.snapshot_id)
            wanted = self.columns_named(table, columns)
            files = metadata.data_files_at(conn, table, self.table_dir(table), snap.snapshot_id)
            kept = files
            if filters:
                kept = prune_files(files, table, metadata.file_column_stats(conn, table.table_id), filters)
            inlined = read_inlined_rows(
                conn,
                table,
                wanted,
                snap.snapshot_id,
                virtual=virtual,
                schema_at_version=self.inlined_schemas(conn, table),
            )
        return ScanPlan(
            table=table,
            snapshot_id=snap.snapshot_id,
            columns=tuple(wanted),
            files=tuple(kept),
            inlined=inlined,
            virtual=tuple(virtual),
            pruned_files=len(files) - len(kept),
        )

    def read_plan(self, plan: ScanPlan) -> pa.Table:
        """Execute a :class:`ScanPlan` in this process."""
        name_maps = self.name_maps(plan)
        pieces = [
            read_data_file(
                self.storage,
                f,
                plan.columns,
                plan.snapshot_id,
                virtual=plan.virtual,
                all_columns=plan.table.columns,
                name_map=name_maps.get(f.mapping_id) if f.mapping_id is not None else None,
            )
            for f in plan.files
        ]
        pieces.append(plan.inlined)
        return pa.concat_tables(pieces) if len(pieces) > 1 else pieces[0]

    def read(
        self,
        name: str,
        *,
        columns: Sequence[str] | None = None,
        version: int | None = None,
        timestamp: dt.datetime | None = None,
        filters: Sequence[Predicate] = (),
        virtual: Sequence[str] = (),
    ) -> pa.Table:
        """Read ``name`` at a snapshot as an Arrow table (filters prune files and then rows)."""
        plan = self.scan(name, columns=columns, version=version, timestamp=timestamp, filters=filters, virtual=virtual)
        return filter_rows(self.read_plan(plan), filters, name)

    def columns_named(self, table: TableInfo, names: Sequence[str] | None) -> list[Column]:
        """The table's columns called ``names``, in that order (all of them for ``None``).

        :raises NoSuchTableError: when the table has no column of one of the names.
        """
        if names is None:
            return list(table.columns)
        try:
            return [table.schema.by_name(n) for n in names]
        except KeyError as exc:
            raise NoSuchTableError(f"Table {table.qualified_name} has no column {exc.args[0]!r}.") from None

    def inlined_schemas(self, conn: CatalogConnection, table: TableInfo) -> dict[int, Sequence[Column]]:
        """The table's columns at each schema version that has an inlined-data table (to map old names by id)."""
        result: dict[int, Sequence[Column]] = {}
        if not table.inlined_tables:
            return result
        versions = conn.query(
            "SELECT schema_version, begin_snapshot FROM {M}ducklake_schema_versions WHERE table_id = ? ORDER BY schema_version",
            (table.table_id,),
        )
        for _name, version in table.inlined_tables:
            begin = max((int(b) for v, b in versions if int(v) <= version), default=table.begin_snapshot)
            found = metadata.tables_at(conn, begin, table.table_id)
            result[version] = found[0].columns if found else table.columns
        return result

    def name_maps(self, plan: ScanPlan) -> dict[int, Any]:
        """The ``map_by_name`` mappings of ``plan``'s files (files registered from outside DuckLake), by id."""
        ids = {f.mapping_id for f in plan.files if f.mapping_id is not None}
        if not ids:
            return {}
        with self.store.connection() as conn:
            return {mid: metadata.name_mapping(conn, mid) for mid in ids}

    # -- writes -------------------------------------------------------------------------------
    def transaction(
        self, *, author: str | None = None, message: str | None = None, extra_info: str | None = None
    ) -> Transaction:
        """Start a transaction; everything staged in it lands as one snapshot on commit."""
        return Transaction(self, author=author, message=message, extra_info=extra_info)

    # -- introspection and maintenance ----------------------------------------------------------
    def snapshots(self) -> list[Any]:
        """Every snapshot with its changes, author and message (like ``ducklake_snapshots()``)."""
        return introspect.snapshots(self)

    def table_info(self, *, version: int | None = None) -> list[Any]:
        """Files, bytes and live rows per table (like ``ducklake_table_info()``)."""
        return introspect.table_info(self, version=version)

    def table_changes(self, name: str, start: int, end: int) -> pa.Table:
        """Inserts, deletes and update pre/post images between two snapshots (like ``ducklake_table_changes()``)."""
        return change_feed.table_changes(self, name, start, end)

    def expire_snapshots(self, **kwargs: Any) -> Any:
        """See :func:`airflow_provider_lakehouse.ducklake.maintenance.expire_snapshots`."""
        return maintenance.expire_snapshots(self, **kwargs)

    def cleanup_old_files(self, **kwargs: Any) -> Any:
        """See :func:`airflow_provider_lakehouse.ducklake.maintenance.cleanup_old_files` (dry run by default)."""
        return maintenance.cleanup_old_files(self, **kwargs)

    def delete_orphaned_files(self, **kwargs: Any) -> Any:
        """See :func:`airflow_provider_lakehouse.ducklake.maintenance.delete_orphaned_files` (dry run by default)."""
        return maintenance.delete_orphaned_files(self, **kwargs)

    def merge_adjacent_files(self, table: str, **kwargs: Any) -> Any:
        """See :func:`airflow_provider_lakehouse.ducklake.maintenance.merge_adjacent_files`."""
        return maintenance.merge_adjacent_files(self, table, **kwargs)

    def flush_inlined_data(self, table: str, **kwargs: Any) -> Any:
        """See :func:`airflow_provider_lakehouse.ducklake.maintenance.flush_inlined_data`."""
        return maintenance.flush_inlined_data(self, table, **kwargs)


def _read_catalog_metadata(conn: CatalogConnection) -> dict[str, str]:
    """The catalog's global metadata (version, data path, ...), or ``{}`` when the store holds no catalog.

    The metadata is read first and the catalog table looked for only when that fails, so that opening a lake
    costs one query: an empty database or schema has no catalog tables at all, which deserves "no catalog"
    rather than the database's "no such table".
    """
    try:
        return metadata.read_metadata(conn)
    except Exception:
        if conn.table_exists("ducklake_metadata"):
            raise  # the catalog is there: the read failed for another reason (a lost connection, permissions)
        return {}
