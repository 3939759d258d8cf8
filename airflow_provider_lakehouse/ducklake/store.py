"""Catalog databases: PostgreSQL (psycopg 3) and SQLite, behind one small interface.

Catalog SQL in this package is written once, with ``?`` placeholders and ``{M}`` for the
(optionally schema-qualified) table prefix; each store adapts it to its driver.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import sqlite3
import threading
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from airflow_provider_lakehouse.connections.redact import Redactor
from airflow_provider_lakehouse.exceptions import ServiceUnavailableError

if TYPE_CHECKING:
    from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
    from airflow_provider_lakehouse.connections.specs import PostgresSpec

log = logging.getLogger(__name__)
Row = tuple[Any, ...]


def quote_ident(name: str) -> str:
    """Double-quote an identifier for SQL (both backends accept the same quoting)."""
    return '"' + name.replace('"', '""') + '"'


class CatalogConnection(ABC):
    """One open connection to the catalog database; SQL uses ``?`` and ``{M}``."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def sql(self, text: str) -> str:
        return text.replace("{M}", self.prefix)

    @abstractmethod
    def query(self, text: str, params: Sequence[Any] = ()) -> list[Row]: ...

    @abstractmethod
    def execute(self, text: str, params: Sequence[Any] = ()) -> int: ...

    @abstractmethod
    def executemany(self, text: str, rows: Sequence[Sequence[Any]]) -> None: ...

    def execute_batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Run several statements, in order, for their effect (a commit's catalog writes)."""
        for text, params in statements:
            self.execute(text, params)

    @abstractmethod
    def begin(self) -> None:
        """Start a write transaction (SQLite takes the write lock at once)."""

    @abstractmethod
    def commit(self) -> None: ...

    @abstractmethod
    def rollback(self) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def table_exists(self, name: str) -> bool: ...

    @abstractmethod
    def now(self) -> Any:
        """Value to store as ``snapshot_time``/``schedule_start`` (a TIMESTAMPTZ DuckDB can cast)."""

    def one(self, text: str, params: Sequence[Any] = ()) -> Row | None:
        rows = self.query(text, params)
        return rows[0] if rows else None

    @contextmanager
    def transaction(self) -> Iterator[CatalogConnection]:
        self.begin()
        try:
            yield self
        except BaseException:
            self.rollback()
            raise
        self.commit()


#: messages of a server that is going away (PostgreSQL's admin shutdown, a crash, a dropped socket)
def _close_all(connections: list[Any]) -> None:
    while connections:
        try:
            connections.pop().close()
        except Exception:  # already broken: nothing to release
            pass


def _transient_connect_error(exc: BaseException) -> bool:
    """Connection failures worth waiting for: refused, timed out, server starting up or shutting down."""
    sqlstate = str(getattr(getattr(exc, "diag", None), "sqlstate", None) or "")
    text = str(exc).lower()
    if sqlstate.startswith("28") or sqlstate in ("3D000", "3F000", "42501"):
        return False  # authentication, missing database or schema, no permission
    return not ("password" in text or "does not exist" in text or "no pg_hba.conf entry" in text)


class MetadataStore(ABC):
    """Where a lake's catalog lives."""

    #: name of the backend as DuckDB's ATTACH spells it
    kind: str
    metadata_schema: str | None

    @abstractmethod
    def connect(self) -> CatalogConnection: ...

    @abstractmethod
    def column_type(self, ducklake_type: str) -> str:
        """Backend column type for an inlined-data column of this DuckLake type (DuckDB's mapping)."""

    @abstractmethod
    def is_retryable(self, exc: BaseException) -> bool:
        """True for errors a commit retry can get past (unique violations, serialization failures, locks)."""

    def is_connection_lost(self, exc: BaseException, conn: CatalogConnection) -> bool:
        """True when ``exc`` means ``conn`` broke (not that a statement failed on a live connection).

        A file-based catalog has no connection to lose: False unless a store says otherwise.
        """
        return False

    @abstractmethod
    def duckdb_attach(self) -> str:
        """The ``ATTACH 'ducklake:...'`` target DuckDB would use for this catalog (contains no password)."""

    @property
    def prefix(self) -> str:
        return f"{quote_ident(self.metadata_schema)}." if self.metadata_schema else ""

    @contextmanager
    def connection(self) -> Iterator[CatalogConnection]:
        conn = self.connect()
        try:
            yield conn
        finally:
            conn.close()


# -- PostgreSQL -------------------------------------------------------------------------------


class _PostgresConnection(CatalogConnection):
    """A catalog connection that reconnects (through ``store``) when the server went away between reads.

    Only reads outside an explicit transaction are re-run on a new connection: they read fixed snapshot ids, so
    the answer is the same. Inside ``BEGIN ... COMMIT`` a lost connection is the caller's to resolve (a commit
    looks for its own commit id).
    """

    def __init__(self, raw: Any, prefix: str, store: PostgresStore) -> None:
        super().__init__(prefix)
        self.raw = raw
        self.store = store
        self.in_transaction = False

    def _adapt(self, text: str) -> str:
        return self.sql(text).replace("%", "%%").replace("?", "%s")

    def query(self, text: str, params: Sequence[Any] = ()) -> list[Row]:
        try:
            return self._query(text, params)
        except Exception as exc:
            if self.in_transaction or not self.store.is_connection_lost(exc, self):
                raise
        self.raw = self.store.connect_raw()  # within the store's reconnect budget
        return self._query(text, params)

    def _query(self, text: str, params: Sequence[Any]) -> list[Row]:
        with self.raw.cursor() as cur:
            cur.execute(self._adapt(text), tuple(params) or None)
            return list(cur.fetchall()) if cur.description else []

    def execute(self, text: str, params: Sequence[Any] = ()) -> int:
        with self.raw.cursor() as cur:
            cur.execute(self._adapt(text), tuple(params) or None)
            return int(cur.rowcount)

    def executemany(self, text: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            with self.raw.cursor() as cur:
                cur.executemany(self._adapt(text), [tuple(r) for r in rows])

    def execute_batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        # Pipeline mode sends every statement before reading any result: one network round trip for a
        # commit's dozens of catalog writes instead of one each.
        with self.raw.pipeline(), self.raw.cursor() as cur:
            for text, params in statements:
                cur.execute(self._adapt(text), tuple(params) or None)

    def begin(self) -> None:
        if self.raw.closed:  # the server restarted since the last statement: start on a new connection
            self.raw = self.store.connect_raw()
        self.raw.execute("BEGIN")
        self.in_transaction = True

    def commit(self) -> None:
        self.raw.execute("COMMIT")
        self.in_transaction = False

    def rollback(self) -> None:
        self.in_transaction = False
        if not self.raw.closed:
            self.raw.execute("ROLLBACK")

    def close(self) -> None:
        self.store.release(self.raw)

    def table_exists(self, name: str) -> bool:
        schema = self.prefix[1:-2].replace('""', '"') if self.prefix else None
        row = self.one(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ? AND table_schema = "
            + ("?" if schema else "current_schema()"),
            (name, schema) if schema else (name,),
        )
        return bool(row and row[0])

    def now(self) -> Any:
        return dt.datetime.now(dt.UTC)


class PostgresStore(MetadataStore):
    """A catalog in PostgreSQL (the multi-writer choice)."""

    kind = "postgres"

    def __init__(
        self,
        spec: PostgresSpec,
        metadata_schema: str | None = None,
        *,
        reconnect_timeout_s: float = 60.0,
        idle_connections: int = 2,
    ) -> None:
        self.spec = spec
        self.metadata_schema = metadata_schema
        self.reconnect_timeout_s = reconnect_timeout_s
        self.idle_connections = idle_connections
        self.redactor = Redactor([spec.password])
        self._idle: list[Any] = []
        self._idle_pid = os.getpid()
        self._lock = threading.Lock()
        weakref.finalize(self, _close_all, self._idle)  # idle connections close with the store (or at exit)

    def __repr__(self) -> str:
        return f"PostgresStore({self.spec!r}, metadata_schema={self.metadata_schema!r})"

    def __getstate__(self) -> dict[str, Any]:  # pickled into spark-submit job files: no sockets, no lock
        state = dict(self.__dict__)
        state.update(_idle=[], _lock=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.Lock(), _idle_pid=os.getpid())
        weakref.finalize(self, _close_all, self._idle)

    def connect(self) -> CatalogConnection:
        """A connection, reused from the idle ones this process keeps when possible: a new login costs more
        than most of a commit (password hashing, several round trips)."""
        return _PostgresConnection(self._reuse() or self.connect_raw(), self.prefix, self)

    def _reuse(self) -> Any | None:
        with self._lock:
            if self._idle_pid != os.getpid():  # a forked child must neither use nor close its parent's sockets
                self._idle.clear()
                self._idle_pid = os.getpid()
            while self._idle:
                raw = self._idle.pop()
                if not raw.closed:
                    return raw
        return None

    def release(self, raw: Any) -> None:
        """Keep an idle, healthy connection for the next :meth:`connect`; close anything else."""
        import psycopg  # lazily: only Postgres catalogs need the driver (SQLite lakes run without it)

        idle = not raw.closed and raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        with self._lock:
            if idle and self._idle_pid == os.getpid() and len(self._idle) < self.idle_connections:
                self._idle.append(raw)
                return
        raw.close()

    def connect_raw(self) -> Any:
        """A psycopg connection; a catalog that is restarting or briefly unreachable is retried with backoff for
        up to ``reconnect_timeout_s`` seconds. Refusals that waiting cannot fix (a wrong password, a missing
        database) fail at once.

        :raises ServiceUnavailableError: naming the catalog (never its password) and how long it was tried.
        """
        import psycopg  # lazily: only Postgres catalogs need the driver (SQLite lakes run without it)

        started = time.monotonic()
        wait = 0.1
        attempts = 0
        while True:
            attempts += 1
            try:
                # autocommit: transactions are explicit (BEGIN/COMMIT), reads need none.
                return psycopg.connect(**self.spec.connect_kwargs(), autocommit=True)
            except psycopg.Error as exc:
                elapsed = time.monotonic() - started
                if not _transient_connect_error(exc) or elapsed + wait > self.reconnect_timeout_s:
                    tried = f" (tried {attempts} times over {elapsed:.1f} s)" if attempts > 1 else ""
                    raise ServiceUnavailableError(
                        f"Could not connect to the lake catalog at {self.spec.authority}/{self.spec.dbname}{tried}: "
                        f"{self.redactor.redact(str(exc)).strip()}"
                    ) from None
                log.info(
                    "lake catalog at %s unavailable (%s); retrying in %.1f s",
                    self.spec.authority,
                    self.redactor.redact(str(exc)).strip().splitlines()[0],
                    wait,
                )
                time.sleep(wait)
                wait = min(wait * 2, 2.0)

    def column_type(self, ducklake_type: str) -> str:
        return _POSTGRES_INLINE_TYPES.get(ducklake_type) or (
            ducklake_type.replace("decimal", "numeric") if ducklake_type.startswith("decimal") else "character varying"
        )

    def is_retryable(self, exc: BaseException) -> bool:
        import psycopg  # lazily: only Postgres catalogs need the driver (SQLite lakes run without it)

        if not isinstance(exc, psycopg.Error):
            return False
        sqlstate = getattr(exc.diag, "sqlstate", None) or ""
        # 23505 unique violation (the snapshot id race), 40001/40P01 serialization failure/deadlock
        return sqlstate in {"23505", "40001", "40P01"} or any(
            word in str(exc).lower() for word in ("primary key", "unique", "conflict", "concurrent")
        )

    def is_connection_lost(self, exc: BaseException, conn: CatalogConnection) -> bool:
        import psycopg  # lazily, as in is_retryable

        if getattr(getattr(conn, "raw", None), "closed", False):
            return True  # psycopg marks a connection whose server went away (or whose socket broke) as closed
        # psycopg maps each SQLSTATE to its own error class: class 08 (connection exceptions: ConnectionFailure,
        # ConnectionDoesNotExist, ...) and 57P0x (AdminShutdown, CrashShutdown, CannotConnectNow, ...)
        return isinstance(exc, psycopg.Error) and (exc.sqlstate or "").startswith(("08", "57P"))

    def duckdb_attach(self) -> str:
        s = self.spec
        return f"ducklake:postgres:dbname={s.dbname} host={s.host} port={s.port} user={s.user}"


# DuckDB's Postgres mapping for inlined columns (spec 8.3): text-like values are BYTEA.
_POSTGRES_INLINE_TYPES = {
    "boolean": "boolean",
    "int8": "smallint",
    "int16": "smallint",
    "int32": "integer",
    "int64": "bigint",
    "uint8": "integer",
    "uint16": "integer",
    "uint32": "bigint",
    "float32": "real",
    "float64": "double precision",
    "varchar": "bytea",
    "json": "bytea",
    "blob": "bytea",
    "uuid": "uuid",
    "time": "time without time zone",
}


# -- SQLite -----------------------------------------------------------------------------------


class _SqliteConnection(CatalogConnection):
    def __init__(self, raw: sqlite3.Connection, prefix: str) -> None:
        super().__init__(prefix)
        self.raw = raw

    def query(self, text: str, params: Sequence[Any] = ()) -> list[Row]:
        return list(self.raw.execute(self.sql(text), tuple(params)).fetchall())

    def execute(self, text: str, params: Sequence[Any] = ()) -> int:
        return int(self.raw.execute(self.sql(text), tuple(params)).rowcount)

    def executemany(self, text: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self.raw.executemany(self.sql(text), [tuple(r) for r in rows])

    def begin(self) -> None:
        self.raw.execute("BEGIN IMMEDIATE")  # take the write lock now, not at the first write

    def commit(self) -> None:
        self.raw.execute("COMMIT")

    def rollback(self) -> None:
        if self.raw.in_transaction:
            self.raw.execute("ROLLBACK")

    def close(self) -> None:
        self.raw.close()

    def table_exists(self, name: str) -> bool:
        return bool(self.one("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))[0])  # type: ignore[index]

    def now(self) -> Any:
        # DuckDB stores TIMESTAMPTZ in SQLite as text like '2026-01-02 03:04:05.123456+00'
        return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f+00")


class SqliteStore(MetadataStore):
    """A catalog in a SQLite file (an embedded, single-host lake)."""

    kind = "sqlite"
    metadata_schema = None

    def __init__(self, path: str, *, busy_timeout_s: float = 30.0) -> None:
        self.path = path
        self.busy_timeout_s = busy_timeout_s

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"

    def connect(self) -> CatalogConnection:
        try:
            raw = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
        except sqlite3.Error as exc:
            raise ServiceUnavailableError(f"Could not open the lake catalog {self.path}: {exc}") from None
        return _SqliteConnection(raw, "")

    def column_type(self, ducklake_type: str) -> str:
        if ducklake_type in {"boolean", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"}:
            return "BIGINT"
        if ducklake_type == "blob":
            return "BLOB"
        return "VARCHAR"

    def is_retryable(self, exc: BaseException) -> bool:
        if not isinstance(exc, sqlite3.Error):
            return False
        text = str(exc).lower()
        return any(w in text for w in ("unique", "primary key", "locked", "busy", "conflict"))

    def duckdb_attach(self) -> str:
        return f"ducklake:sqlite:{self.path}"


def store_for_spec(spec: DuckLakeSpec, *, reconnect_timeout_s: float | None = None) -> MetadataStore:
    """The metadata store lake ``spec`` keeps its catalog in: a SQLite file or a PostgreSQL database (and schema).

    Nothing is connected or created here; the store connects on first use.

    :param spec: the lake.
    :param reconnect_timeout_s: how long an unreachable PostgreSQL catalog is waited for; default: the spec's
        ``retry.reconnect_timeout_s``.
    """
    if isinstance(spec.catalog, str):
        return SqliteStore(spec.catalog)
    if reconnect_timeout_s is None:
        reconnect_timeout_s = spec.retry.reconnect_timeout_s
    return PostgresStore(spec.catalog, metadata_schema=spec.metadata_schema, reconnect_timeout_s=reconnect_timeout_s)
