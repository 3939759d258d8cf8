"""The Postgres side of a lake script that attaches Data Tables: one transaction per Data Table, committed
together with the lake's snapshot.

Every read of a Data Table table and every change to one runs in the script's transaction on that Data Table
(``READ COMMITTED``, Postgres's default and ``DataTableOperator``'s: each statement sees what is committed, plus
the script's own changes). Many workers can share that view: reads of a table the script has not changed run on
the snapshot the transaction exports, and rows written by workers are staged, then moved into place by the
transaction (see :mod:`.partitions`). At the end,
:meth:`DataTableTransactions.commit` makes the two stores one unit:

1. ``PREPARE TRANSACTION`` on each changed Data Table (Postgres has then written everything to disk and can
   only be told to commit or roll back);
2. commit the lake snapshot; if that fails, ``ROLLBACK PREPARED``: neither store changed;
3. ``COMMIT PREPARED``.

The one window left is a crash between 2 and 3: the lake snapshot exists and the prepared Postgres transaction
waits (holding its locks). Its id starts with ``lakehouse:<task>:``, so the task's retry finds it:
:func:`resolve_earlier_tries` commits it when the earlier try's snapshot landed, and rolls it back otherwise.
A server with ``max_prepared_transactions = 0`` cannot prepare: the transaction then stays open across the lake
commit and commits right after it, and the window is a Postgres failure in that last commit (the task fails,
the lake keeps its snapshot; the log says so).
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from airflow_provider_lakehouse.datatables.arrow import (
    ResultColumns,
    csv_chunks,
    csv_writable,
    postgres_type,
    prepare_cursor,
    rows_of,
)
from airflow_provider_lakehouse.datatables.partitions import PART_COLUMN, StagingTable
from airflow_provider_lakehouse.datatables.runner import adapt_value
from airflow_provider_lakehouse.exceptions import LakehouseError, ServiceUnavailableError

if TYPE_CHECKING:
    import psycopg

    from airflow_provider_lakehouse.connections.specs import PostgresSpec

log = logging.getLogger(__name__)
T = TypeVar("T")
GID_PREFIX = "lakehouse:"
STAGING_SCHEMA = "lakehouse_staging"  # where workers stage rows (committed, so every worker sees the table)
_FETCH_ROWS = 50_000
_SAVEPOINT = "lakehouse_block"


def task_gid_prefix(task_key: str | None) -> str:
    """The prepared-transaction id prefix of a task instance's tries (``lakehouse:-:`` outside a task).

    >>> prefix = task_gid_prefix("d/t/manual__1/-1")
    >>> prefix.startswith("lakehouse:"), len(prefix), prefix == task_gid_prefix("d/t/manual__1/-1")
    (True, 27, True)
    """
    if task_key is None:
        return f"{GID_PREFIX}-:"
    return f"{GID_PREFIX}{hashlib.sha256(task_key.encode()).hexdigest()[:16]}:"


@dataclass
class _Connection:
    """One Data Table's connection and what the script did in its transaction."""

    name: str
    conn: psycopg.Connection[Any]
    gid: str | None  # the two-phase id, when the server can prepare
    spec: PostgresSpec
    changed: bool = False
    prepared: bool = False


class DataTableTransactions:
    """The script's transactions on the Data Tables it attaches, opened at first use.

    :param specs: the Postgres connection of each Data Table, by name (resolved by the hook; never logged).
    :param gid_prefix: :func:`task_gid_prefix` of the running task.
    :param redact: applied to every error message.
    """

    def __init__(
        self,
        specs: Mapping[str, PostgresSpec],
        gid_prefix: str = f"{GID_PREFIX}-:",
        redact: Callable[[str], str] = lambda text: text,
    ) -> None:
        self.specs = dict(specs)
        self.gid_prefix = gid_prefix
        self.redact = redact
        self._open: dict[str, _Connection] = {}
        self._run = uuid.uuid4().hex[:12]
        self._staging: list[StagingTable] = []
        self._exporters: list[psycopg.Connection[Any]] = []  # hold the snapshots workers read at
        self._in_savepoint: set[str] = set()  # the Data Tables open when the block's SAVEPOINT was taken

    # -- reads and changes ---------------------------------------------------------------------
    def read(self, datatable: str, schema: str, table: str, *, limit: int | None = None) -> pa.Table:
        """Every row of ``schema.table`` (at most ``limit``), as the script's transaction sees it."""
        from psycopg import sql

        conn = self._connection(datatable).conn
        query = sql.SQL("SELECT * FROM {}.{}").format(sql.Identifier(schema), sql.Identifier(table))
        if limit is not None:
            query = sql.SQL("{} LIMIT {}").format(query, sql.Literal(limit))
        with conn.cursor(name=f"lakehouse_read_{uuid.uuid4().hex[:8]}") as cur:
            cur.itersize = _FETCH_ROWS
            prepare_cursor(cur)
            cur.execute(query)
            columns = ResultColumns.of(cur.description or [])
            batches = []
            while rows := cur.fetchmany(_FETCH_ROWS):
                batches.append(columns.batch(rows))
        return pa.Table.from_batches(batches, schema=columns.schema)

    # -- work shared with other processes (Spark executors) -------------------------------------------
    def spec(self, datatable: str) -> PostgresSpec:
        """The Data Table's connection (for work that travels to workers inside pickled functions)."""
        return self._connection(datatable).spec

    def shared_snapshot(self, datatable: str) -> str | None:
        """A snapshot other sessions can read at (``pg_export_snapshot``), showing what the script sees now; None
        once the script changed this Data Table (its own changes are invisible to other sessions).

        The script reads committed data (``READ COMMITTED``), so a snapshot taken now on a connection of its own
        shows the same; that connection stays open until the script ends. (The script's transaction cannot
        export it: Postgres refuses to prepare a transaction that exported a snapshot.)
        """
        import psycopg

        connection = self._connection(datatable)
        if connection.changed:
            return None
        exporter = psycopg.connect(**connection.spec.connect_kwargs())
        exporter.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        self._exporters.append(exporter)
        return str(exporter.execute("SELECT pg_export_snapshot()").fetchone()[0])  # type: ignore[index]

    def table_pages(self, datatable: str, schema: str, table: str) -> int:
        """The table's size in pages (what the workers' page ranges split)."""
        row = (
            self._connection(datatable)
            .conn.execute(
                "SELECT pg_relation_size(format('%%I.%%I', %s::text, %s::text)::regclass) "
                "/ current_setting('block_size')::int",
                (schema, table),
            )
            .fetchone()
        )
        return int(row[0]) if row else 0

    def open_staging(self, datatable: str, columns: pa.Schema) -> StagingTable:
        """An ``UNLOGGED`` table workers stage ``columns`` into (created and committed on a connection of its own,
        so every worker sees it; dropped when the script's transaction ends, whichever way)."""
        from psycopg import sql

        spec = self._connection(datatable).spec
        name = f"stage_{self._run}_{len(self._staging)}"
        definition = sql.SQL(", ").join(
            [
                sql.SQL("{} {}").format(sql.Identifier(f"c{i}"), sql.SQL(postgres_type(f.type)))
                for i, f in enumerate(columns)
            ]
            + [sql.SQL("{} INTEGER NOT NULL").format(sql.Identifier(PART_COLUMN))]
        )
        staging = StagingTable(spec, STAGING_SCHEMA, name, tuple(columns.names))
        with self._autocommit(spec) as conn:
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(STAGING_SCHEMA)))
            conn.execute(
                sql.SQL("CREATE UNLOGGED TABLE {}.{} ({})").format(
                    sql.Identifier(STAGING_SCHEMA), sql.Identifier(name), definition
                )
            )
        self._staging.append(staging)
        return staging

    def create_schema(self, datatable: str, schema: str) -> None:
        """``CREATE SCHEMA IF NOT EXISTS`` (in the script's transaction: it goes if the script fails)."""
        from psycopg import sql

        connection = self._connection(datatable)
        connection.changed = True
        connection.conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))

    def insert(
        self,
        datatable: str,
        schema: str,
        table: str,
        rows: pa.Table | StagingTable,
        columns: Sequence[str] | None = None,
        by_name: bool = False,
    ) -> int:
        """Append ``rows`` (in hand, or staged by workers) to ``schema.table``: into ``columns`` when listed, by
        name with ``by_name``, else into the table's first columns by position (as DuckDB's
        ``INSERT INTO t SELECT``).

        :raises LakehouseError: the column counts or names do not match (nothing was written).
        """
        connection = self._connection(datatable)
        connection.changed = True
        names = list(rows.columns if isinstance(rows, StagingTable) else rows.column_names)
        target = self._insert_columns(connection.conn, schema, table, names, columns, by_name)
        return self._fill(connection.conn, schema, table, target, rows)

    def create_as(
        self,
        datatable: str,
        schema: str,
        table: str,
        rows: pa.Table | StagingTable,
        columns: pa.Schema,
        *,
        or_replace: bool = False,
        if_not_exists: bool = False,
    ) -> int:
        """``CREATE TABLE schema.table`` with ``columns`` (see :func:`.arrow.postgres_type`), then fill it with
        ``rows`` (in hand, or staged by workers)."""
        connection = self._connection(datatable)
        if not self._create_table(connection, schema, table, columns, or_replace, if_not_exists):
            return 0
        return self._fill(connection.conn, schema, table, list(columns.names), rows)

    def execute(self, datatable: str, statement: str, parameters: Mapping[str, Any] | None = None) -> int:
        """Run one statement Postgres understands (``%(name)s`` parameters); returns the rows it affected."""
        connection = self._connection(datatable)
        connection.changed = True
        values = {k: adapt_value(v) for k, v in parameters.items()} if parameters else None
        with connection.conn.cursor() as cur:
            cur.execute(statement, values)  # the planner built it from the user's SQL
            return max(cur.rowcount, 0)

    # -- BEGIN ... ROLLBACK inside a script ------------------------------------------------------------
    def savepoint(self) -> None:
        """``BEGIN`` inside the script: mark where a ``ROLLBACK`` returns to."""
        for connection in self._open.values():
            connection.conn.execute(f"SAVEPOINT {_SAVEPOINT}")
        self._in_savepoint = set(self._open)

    def rollback_to_savepoint(self) -> None:
        """Undo what the block did; a Data Table first touched inside the block is rolled back whole."""
        for name in list(self._open):
            if name in self._in_savepoint:
                self._open[name].conn.execute(f"ROLLBACK TO SAVEPOINT {_SAVEPOINT}")
            else:
                self._discard(name)

    # -- the end of the script -------------------------------------------------------------------
    def commit(self, lake_commit: Callable[[], T] | None = None) -> T | None:
        """Commit the Data Tables' changes and, between prepare and commit, ``lake_commit`` (see the module
        docstring); returns what ``lake_commit`` returned. Read-only transactions just end.

        :raises Exception: whatever ``lake_commit`` raised (then no Data Table changed), or a Postgres failure
            (before the lake commit: nothing changed; after it: named as such).
        """
        try:
            return self._commit(lake_commit)
        finally:
            self._drop_staging()

    def _commit(self, lake_commit: Callable[[], T] | None) -> T | None:
        changed = [c for c in self._open.values() if c.changed]
        for connection in [c for c in self._open.values() if not c.changed]:
            self._discard(connection.name)
        if not changed:
            return lake_commit() if lake_commit is not None else None
        try:
            for connection in changed:
                if connection.gid is not None:
                    connection.conn.tpc_prepare()
                    connection.prepared = True
            result = lake_commit() if lake_commit is not None else None
        except BaseException:
            self.rollback()
            raise
        for connection in changed:
            try:
                if connection.prepared:
                    connection.conn.tpc_commit()
                else:
                    connection.conn.commit()
            except Exception as exc:
                self.rollback()
                raise LakehouseError(
                    f"Data Table {connection.name!r} did not commit after the lake's snapshot had: "
                    f"{self.redact(str(exc).strip())}"
                    + (f" (prepared transaction {connection.gid} stays for the retry)" if connection.prepared else "")
                ) from None
            self._open.pop(connection.name, None)
            connection.conn.close()
        return result

    def rollback(self) -> None:
        """Undo every Data Table change (prepared ones included) and close the connections."""
        for name in list(self._open):
            self._discard(name)
        self._drop_staging()

    def close(self) -> None:
        self.rollback()

    # -- internals -------------------------------------------------------------------------------
    def _connection(self, datatable: str) -> _Connection:
        key = datatable.lower()
        if key in self._open:
            return self._open[key]
        spec = next((s for n, s in self.specs.items() if n.lower() == key), None)
        if spec is None:
            raise LakehouseError(f"Data Table {datatable!r} was not resolved for this script.")
        import psycopg

        try:
            conn = psycopg.connect(**spec.connect_kwargs(), autocommit=True)
        except psycopg.Error as exc:
            raise ServiceUnavailableError(
                f"Could not connect to Data Table {datatable!r} at {spec.authority}/{spec.dbname}: "
                f"{self.redact(str(exc).strip())}"
            ) from None
        prepared_allowed = int(conn.execute("SHOW max_prepared_transactions").fetchone()[0]) > 0  # type: ignore[index]
        conn.autocommit = False
        gid = f"{self.gid_prefix}{self._run}:{key}" if prepared_allowed else None
        if gid is not None:
            conn.tpc_begin(gid)
        connection = _Connection(key, conn, gid, spec)
        self._open[key] = connection
        return connection

    def _discard(self, name: str) -> None:
        connection = self._open.pop(name, None)
        if connection is None:
            return
        try:
            if connection.gid is not None:  # prepared or not, a two-phase transaction ends so
                connection.conn.tpc_rollback()
            elif not connection.conn.closed:
                connection.conn.rollback()
        except Exception as exc:  # the connection is gone: Postgres rolls back what was not prepared
            log.warning("Data Table %s: rollback failed: %s", name, self.redact(str(exc).strip()))
        finally:
            connection.conn.close()

    def _create_table(
        self,
        connection: _Connection,
        schema: str,
        table: str,
        columns: pa.Schema,
        or_replace: bool,
        if_not_exists: bool,
    ) -> bool:
        """``CREATE [OR REPLACE] TABLE [IF NOT EXISTS]`` with ``columns``; False when it existed and stays."""
        from psycopg import sql

        conn = connection.conn
        name = sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(table))
        exists = self._table_exists(conn, schema, table)
        if exists and if_not_exists:
            return False
        connection.changed = True
        if exists and or_replace:
            conn.execute(sql.SQL("DROP TABLE {}").format(name))
        definition = sql.SQL(", ").join(
            sql.SQL("{} {}").format(sql.Identifier(f.name), sql.SQL(postgres_type(f.type))) for f in columns
        )
        conn.execute(sql.SQL("CREATE TABLE {} ({})").format(name, definition))
        return True

    def _fill(
        self, conn: psycopg.Connection[Any], schema: str, table: str, target: list[str], rows: pa.Table | StagingTable
    ) -> int:
        if isinstance(rows, StagingTable):
            return self._move_staged(conn, schema, table, target, rows)
        return self._copy(conn, schema, table, target, rows)

    @staticmethod
    def _move_staged(
        conn: psycopg.Connection[Any], schema: str, table: str, target: list[str], staging: StagingTable
    ) -> int:
        """One ``INSERT ... SELECT`` from the staging table, in the script's transaction."""
        from psycopg import sql

        statement = sql.SQL("INSERT INTO {}.{} ({}) SELECT {} FROM {}.{}").format(
            sql.Identifier(schema),
            sql.Identifier(table),
            sql.SQL(", ").join(map(sql.Identifier, target)),
            sql.SQL(", ").join(map(sql.Identifier, staging.stored_columns)),
            sql.Identifier(staging.schema),
            sql.Identifier(staging.name),
        )
        with conn.cursor() as cur:
            cur.execute(statement)
            return max(cur.rowcount, 0)

    def _drop_staging(self) -> None:
        """Drop this script's staging tables (their rows moved, or the script failed) and end the snapshots it
        shared."""
        from psycopg import sql

        while self._exporters:
            self._exporters.pop().close()

        while self._staging:
            staging = self._staging.pop()
            try:
                with self._autocommit(staging.spec) as conn:
                    conn.execute(
                        sql.SQL("DROP TABLE IF EXISTS {}.{}").format(
                            sql.Identifier(staging.schema), sql.Identifier(staging.name)
                        )
                    )
            except Exception as exc:  # the server is gone: the table is unlogged and empty after a crash anyway
                log.warning("could not drop staging table %s: %s", staging.name, self.redact(str(exc).strip()))

    @staticmethod
    @contextmanager
    def _autocommit(spec: PostgresSpec) -> Iterator[psycopg.Connection[Any]]:
        import psycopg

        with psycopg.connect(**spec.connect_kwargs(), autocommit=True) as conn:
            yield conn

    @staticmethod
    def _table_exists(conn: psycopg.Connection[Any], schema: str, table: str) -> bool:
        row = conn.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s", (schema, table)
        ).fetchone()
        return row is not None

    @staticmethod
    def _table_columns(conn: psycopg.Connection[Any], schema: str, table: str) -> list[str]:
        rows = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND table_name = %s "
            "ORDER BY ordinal_position",
            (schema, table),
        ).fetchall()
        if not rows:
            raise LakehouseError(f"Table {schema}.{table} does not exist in the Data Table.")
        return [r[0] for r in rows]

    def _insert_columns(
        self,
        conn: psycopg.Connection[Any],
        schema: str,
        table: str,
        names: Sequence[str],
        columns: Sequence[str] | None,
        by_name: bool,
    ) -> list[str]:
        """The target columns for rows with columns ``names``: by name, listed, or the table's by position."""
        existing = self._table_columns(conn, schema, table)
        if by_name:
            lookup = {c.lower(): c for c in existing}
            missing = [n for n in names if n.lower() not in lookup]
            if missing:
                raise LakehouseError(f"Table {schema}.{table} has no column {missing[0]!r} (INSERT ... BY NAME).")
            return [lookup[n.lower()] for n in names]
        target = list(columns) if columns is not None else existing
        if len(target) != len(names):
            raise LakehouseError(
                f"Table {schema}.{table} has {len(target)} columns but {len(names)} values were supplied."
            )
        return target

    @staticmethod
    def _copy(conn: psycopg.Connection[Any], schema: str, table: str, columns: list[str], rows: pa.Table) -> int:
        from psycopg import sql

        statement = sql.SQL("COPY {}.{} ({}) FROM STDIN").format(
            sql.Identifier(schema), sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
        )
        if csv_writable(rows.schema):  # Arrow's CSV writer: about 10x faster than a Python row per row
            statement = sql.SQL("{} (FORMAT csv)").format(statement)
            with conn.cursor() as cur, cur.copy(statement) as copy:
                for chunk in csv_chunks(rows):
                    copy.write(chunk)
            return rows.num_rows
        with conn.cursor() as cur, cur.copy(statement) as copy:
            for row in rows_of(rows):
                copy.write_row(row)
        return rows.num_rows


def resolve_earlier_tries(specs: Mapping[str, PostgresSpec], task_key: str | None, lake_committed: bool) -> list[str]:
    """Finish the prepared transactions an earlier try of the task left on ``specs``' Data Tables (it crashed
    between preparing and committing): commit them when that try's lake snapshot landed, roll them back when it
    did not. Outside a task (``task_key`` None) there is no earlier try to tell apart: nothing is touched.

    :returns: what was done, one line per transaction (for the task log).
    """
    import psycopg
    from psycopg import sql

    if task_key is None:
        return []
    gid_prefix = task_gid_prefix(task_key)
    done = []
    for name, spec in specs.items():
        with psycopg.connect(**spec.connect_kwargs(), autocommit=True) as conn:
            if int(conn.execute("SHOW max_prepared_transactions").fetchone()[0]) == 0:  # type: ignore[index]
                continue
            gids = [
                row[0]
                for row in conn.execute(
                    "SELECT gid FROM pg_prepared_xacts WHERE database = current_database() AND starts_with(gid, %s)",
                    (gid_prefix,),
                ).fetchall()
            ]
            verb = "COMMIT PREPARED" if lake_committed else "ROLLBACK PREPARED"
            for gid in gids:
                conn.execute(sql.SQL(verb + " {}").format(sql.Literal(gid)))  # a utility statement binds nothing
                done.append(f"Data Table {name}: {verb.lower()} {gid} (left by an earlier try)")
    return done
