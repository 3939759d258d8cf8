"""DuckDB 1.5.5 with its ducklake extension, loaded offline from the extension wheels: the interop referee."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from airflow_provider_lakehouse.connections.lake import S3Spec
from airflow_provider_lakehouse.connections.specs import PostgresSpec
from airflow_provider_lakehouse.devstack.stack import default_state_dir
from airflow_provider_lakehouse.duckdb_engine.extensions import offline_connection
from airflow_provider_lakehouse.ducklake.catalog import DuckLake
from airflow_provider_lakehouse.ducklake.storage import Storage
from airflow_provider_lakehouse.ducklake.store import MetadataStore, PostgresStore, SqliteStore
from airflow_provider_lakehouse.exceptions import NoSuchTableError

EXTENSIONS = ("ducklake", "postgres", "httpfs", "sqlite")


def extension_dir() -> str:
    path = default_state_dir() / "duckdb_extensions"
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def connect() -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the extensions installed from their wheels (no network); DuckDB loads each when a
    statement first needs it, as DuckDB does by default."""
    con: duckdb.DuckDBPyConnection = offline_connection(extension_dir(), EXTENSIONS)
    return con


def _conninfo_value(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def postgres_conninfo(pg: PostgresSpec) -> str:
    """``pg`` as a libpq connection string (what DuckDB's ``postgres`` and ``ducklake`` extensions attach)."""
    return (
        f"dbname={pg.dbname} host={pg.host} port={pg.port} user={pg.user} password={_conninfo_value(pg.password or '')}"
    )


def sql_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@dataclass
class LakeSetup:
    """One lake for a test: how we open it and how DuckDB attaches it."""

    store: MetadataStore
    data_path: str
    s3: S3Spec | None = None
    pg: PostgresSpec | None = None

    def create(self) -> DuckLake:
        return DuckLake.create(self.store, data_path=self.data_path, s3=self.s3)

    def open(self) -> DuckLake:
        return DuckLake(self.store, s3=self.s3)

    def file_uris(self) -> list[str]:
        """Every file under the data path, listed from storage alone (the catalog may not exist yet)."""
        return [entry.uri for entry in Storage(self.data_path, self.s3).list_files(self.data_path)]

    def attach(self, con: duckdb.DuckDBPyConnection, alias: str = "lake", **options: Any) -> None:
        """ATTACH the lake in DuckDB (creating it if it does not exist yet)."""
        opts = [f"DATA_PATH {sql_literal(self.data_path)}"]
        if self.s3 is not None:
            endpoint = (self.s3.endpoint_url or "").split("://", 1)[-1]
            con.sql(
                f"CREATE OR REPLACE SECRET lake_s3 (TYPE s3, KEY_ID {sql_literal(self.s3.access_key or '')}, "
                f"SECRET {sql_literal(self.s3.secret_key or '')}, ENDPOINT {sql_literal(endpoint)}, "
                "URL_STYLE 'path', USE_SSL false, REGION 'us-east-1')"
            )
        if isinstance(self.store, PostgresStore):
            pg = self.store.spec
            target = f"ducklake:postgres:{postgres_conninfo(pg)}"
            if self.store.metadata_schema:
                opts.append(f"METADATA_SCHEMA {sql_literal(self.store.metadata_schema)}")
            # only the metadata schema's tables, as the duckdb engine attaches: by default DuckDB's postgres
            # extension reads every schema of the database, about 2 s with the suite's lakes in it
            opts.append(f"META_SCHEMA {sql_literal(self.store.metadata_schema or 'public')}")
        else:
            target = f"ducklake:sqlite:{self.store.path}"  # type: ignore[attr-defined]
        for key, value in options.items():
            opts.append(f"{key.upper()} {value}")
        con.sql(f"ATTACH {sql_literal(target)} AS {alias} ({', '.join(opts)})")


def sqlite_lake(tmp_path: Path) -> LakeSetup:
    return LakeSetup(SqliteStore(str(tmp_path / "catalog.sqlite")), str(tmp_path / "data") + "/")


def sqlite_lake_made_by_duckdb(tmp_path: Path, statements: list[str]) -> LakeSetup:
    """A SQLite-catalog lake whose tables DuckDB's ``ducklake`` extension created and filled with ``statements``."""
    setup = sqlite_lake(tmp_path)
    con = connect()
    setup.attach(con)
    con.sql("USE lake")
    for statement in statements:
        con.sql(statement)
    con.close()
    return setup


def described_again(con: Any, lake: LakeSetup, *tables: str) -> list[list[tuple[str, str]]]:
    """``(column, type)`` of each of ``tables`` in ``lake``, attached again first: DuckDB keeps the catalog it read
    at the attach, and would not see a table another engine created since."""
    con.sql("USE memory")
    con.sql("DETACH lake")
    lake.attach(con)
    con.sql("USE lake")
    return [con.sql(f"SELECT column_name, column_type FROM (DESCRIBE {table})").fetchall() for table in tables]


def postgres_spec(conn: dict[str, Any]) -> PostgresSpec:
    """The Postgres fields of a connection in the stack's ``AIRFLOW_CONN_*`` JSON form."""
    return PostgresSpec(
        host=conn["host"], port=int(conn["port"]), user=conn["login"], dbname=conn["schema"], password=conn["password"]
    )


def s3_spec(aws: dict[str, Any]) -> S3Spec:
    """The S3 spec of the stack's ``aws`` connection (``AIRFLOW_CONN_LAKEHOUSE_S3`` JSON)."""
    return S3Spec(access_key=aws["login"], secret_key=aws["password"], endpoint_url=aws["extra"]["endpoint_url"])


def postgres_lake(stack: Any) -> LakeSetup:
    """A fresh lake in the stack's Postgres (own metadata schema) with data on SeaweedFS S3."""
    import json

    spec = postgres_spec(json.loads(os.environ["AIRFLOW_CONN_DUCKLAKE_MAIN"]))
    s3 = s3_spec(json.loads(os.environ["AIRFLOW_CONN_LAKEHOUSE_S3"]))
    name = f"t_{uuid.uuid4().hex[:10]}"
    return made_in_stack(
        LakeSetup(PostgresStore(spec, metadata_schema=name), f"s3://lakehouse/tests/{name}/", s3=s3, pg=spec)
    )


@dataclass(frozen=True)
class MadeLake:
    """What dropping a lake takes: its catalog schema and its data path. Not its store: a store keeps idle
    catalog connections open for as long as it lives, and a session makes about 2,000 lakes (held until the
    session ends, they took the server past its connection limit)."""

    data_path: str
    s3: S3Spec | None = None
    pg: PostgresSpec | None = None
    metadata_schema: str | None = None

    @classmethod
    def of(cls, setup: LakeSetup) -> MadeLake:
        store = setup.store
        if isinstance(store, PostgresStore):
            return cls(setup.data_path, setup.s3, store.spec, store.metadata_schema)
        return cls(setup.data_path, setup.s3)


#: lakes this process made in the stack (a catalog schema, data under a prefix of its own), dropped at the end of
#: the session (see tests/conftest.py): a developer's stack outlives test sessions, and the suite leaves about 2,000
#: schemas and a gigabyte of objects behind in each otherwise
_MADE_IN_STACK: list[MadeLake] = []


def made_in_stack(setup: LakeSetup) -> LakeSetup:
    """Remember ``setup`` (a Postgres-catalogued lake of its own schema and data prefix) for :func:`drop_made_lakes`."""
    _MADE_IN_STACK.append(MadeLake.of(setup))
    return setup


def drop_made_lakes() -> int:
    """Drop every lake :func:`made_in_stack` remembered (see :func:`drop_lakes`); how many."""
    made = list(_MADE_IN_STACK)
    _MADE_IN_STACK.clear()
    return drop_lakes(made)


def drop_lakes(lakes: list[LakeSetup] | list[MadeLake]) -> int:
    """Drop each lake's catalog schema and delete everything under its data path; how many."""
    import psycopg

    for lake in lakes:
        made = lake if isinstance(lake, MadeLake) else MadeLake.of(lake)
        if made.pg is not None and made.metadata_schema:
            with psycopg.connect(postgres_conninfo(made.pg), autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{made.metadata_schema}" CASCADE')
        storage = Storage(made.data_path, made.s3)
        try:
            storage.fs.delete_dir(storage.fs_path(made.data_path))
        except (FileNotFoundError, OSError):  # nothing was written, or already gone
            pass
    return len(lakes)


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    return con.sql(sql).to_arrow_table().to_pylist()


def assert_same_at_every_snapshot(lake: DuckLake, con: Any, table: str, order: str = "id") -> int:
    """DuckDB and we return identical rows for ``table`` at every snapshot where it exists."""
    compared = 0
    for snap in lake_snapshots(lake):
        try:
            ours = lake.read(table, version=snap).sort_by(order).to_pylist()
        except LookupError:
            continue
        theirs = rows(con, f"FROM lake.{table} AT (VERSION => {snap}) ORDER BY {order}")
        assert theirs == ours, f"snapshot {snap} differs"
        compared += 1
    assert compared
    return compared


def same_at_every_snapshot(lake: DuckLake, theirs: Callable[[int], Any], ours: Callable[[int], Any]) -> int:
    """``ours(snapshot) == theirs(snapshot)`` at every snapshot of ``lake``; where DuckDB has no table to read
    (``theirs`` raises), ``ours`` raises :class:`NoSuchTableError`. How many snapshots compared."""
    import pytest

    compared = 0
    for snapshot in lake_snapshots(lake):
        try:
            expected = theirs(snapshot)
        except Exception:  # before the table existed: DuckDB has nothing to read, neither have we
            with pytest.raises(NoSuchTableError):
                ours(snapshot)
            continue
        assert ours(snapshot) == expected, snapshot
        compared += 1
    return compared


def lake_snapshots(lake: DuckLake) -> list[int]:
    from airflow_provider_lakehouse.ducklake import metadata

    with lake.store.connection() as conn:
        return [s.snapshot_id for s in metadata.list_snapshots(conn)]
