"""A DuckDB connection for one lake: the extensions loaded offline, the credentials as DuckDB secrets.

Credentials never appear in the SQL a user sees: they go into ``CREATE SECRET`` statements this module runs
itself (never logged), and the ``ATTACH`` target names no password. DuckDB's errors are redacted by the runner.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from airflow_provider_lakehouse.connections.lake import DuckLakeSpec, S3Spec
from airflow_provider_lakehouse.connections.specs import PostgresSpec
from airflow_provider_lakehouse.duckdb_engine.extensions import DuckDBNotInstalledError, offline_connection

#: the extensions a lake script may need: the format, its Postgres catalog, S3, SQLite catalogs (installed with
#: every connection, loaded by DuckDB when a statement first needs one)
EXTENSIONS = ("ducklake", "postgres", "httpfs", "sqlite")
EXTENSION_DIR_ENV = "LAKEHOUSE_DUCKDB_EXTENSIONS"


def extension_dir() -> str:
    """Where DuckDB keeps the extensions: ``$LAKEHOUSE_DUCKDB_EXTENSIONS``, else ``~/.lakehouse/duckdb_extensions``."""
    path = Path(os.environ.get(EXTENSION_DIR_ENV) or Path.home() / ".lakehouse" / "duckdb_extensions")
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def connect(temp_directory: str | None = None) -> Any:
    """An in-memory DuckDB connection with the lake extensions installed from their wheels the first time (no
    network: ``autoinstall_known_extensions`` is off); DuckDB loads each when a statement first needs it.

    :param temp_directory: where DuckDB spills joins, sorts and aggregates larger than its memory limit (an
        in-memory database spills only when given one).

    :raises DuckDBNotInstalledError: without DuckDB or an extension wheel.
    """
    try:
        import duckdb  # noqa: F401
        import duckdb_extensions  # noqa: F401  (the wheels' installer, used the first time)
    except ImportError as exc:
        raise DuckDBNotInstalledError(
            "The duckdb engine needs DuckDB and its extensions: pip install 'airflow-provider-lakehouse[duckdb]'."
        ) from exc
    config = {"temp_directory": temp_directory} if temp_directory else None
    con = offline_connection(extension_dir(), EXTENSIONS, config=config)
    con.execute("SET TimeZone = 'UTC'")  # as the Spark engine's session time zone
    con.execute("SET enable_progress_bar = false")  # a task log is no terminal
    return con


def quote_literal(value: str) -> str:
    """A SQL string literal.

    >>> quote_literal("it's")
    "'it''s'"
    """
    return "'" + value.replace("'", "''") + "'"


def quote_identifier(name: str) -> str:
    """A SQL identifier, always quoted (inner double quotes doubled).

    >>> print(quote_identifier("My Lake"))
    "My Lake"
    """
    return '"' + name.replace('"', '""') + '"'


def create_s3_secret(con: Any, s3: S3Spec, name: str = "lakehouse_s3") -> None:
    """The lake's S3 credentials as a DuckDB secret (path-style URLs, as the project's S3 servers expect)."""
    options = [f"REGION {quote_literal(s3.region or 'us-east-1')}"]
    if s3.access_key:
        options.append(f"KEY_ID {quote_literal(s3.access_key)}")
        options.append(f"SECRET {quote_literal(s3.secret_key or '')}")
    if s3.session_token:
        options.append(f"SESSION_TOKEN {quote_literal(s3.session_token)}")
    if s3.endpoint_url:
        endpoint = urlsplit(s3.endpoint_url if "://" in s3.endpoint_url else "http://" + s3.endpoint_url)
        options.append(f"ENDPOINT {quote_literal(endpoint.netloc)}")
        options.append(f"USE_SSL {'true' if endpoint.scheme == 'https' else 'false'}")
        options.append("URL_STYLE 'path'")
    con.execute(f"CREATE OR REPLACE SECRET {name} (TYPE s3, {', '.join(options)})")


def create_postgres_secret(con: Any, pg: PostgresSpec, name: str = "__default_postgres") -> None:
    """A Postgres connection's fields as a DuckDB secret, so no ``ATTACH`` carries the password (the default
    name makes it the one DuckDB's postgres extension uses for a connection string that names no password)."""
    options = [
        f"HOST {quote_literal(pg.host)}",
        f"PORT {int(pg.port)}",
        f"DATABASE {quote_literal(pg.dbname)}",
        f"USER {quote_literal(pg.user)}",
    ]
    if pg.password:
        options.append(f"PASSWORD {quote_literal(pg.password)}")
    con.execute(f"CREATE OR REPLACE SECRET {name} (TYPE postgres, {', '.join(options)})")


def attach_lake(con: Any, spec: DuckLakeSpec, alias: str) -> None:
    """``ATTACH`` lake ``spec`` as ``alias`` with DuckDB's ``ducklake`` extension."""
    if spec.s3 is not None:
        create_s3_secret(con, spec.s3)
    options = [f"DATA_PATH {quote_literal(spec.data_path)}"]
    if isinstance(spec.catalog, PostgresSpec):
        create_postgres_secret(con, spec.catalog)
        target = f"ducklake:postgres:dbname={spec.catalog.dbname}"  # host, user and password: from the secret
        if spec.metadata_schema:
            options.append(f"METADATA_SCHEMA {quote_literal(spec.metadata_schema)}")
        # Load only the metadata schema's tables: by default DuckDB's postgres extension reads every schema of
        # the catalog database when attaching (1.9 s instead of 0.17 s with the test suite's lakes in one database)
        options.append(f"META_SCHEMA {quote_literal(spec.metadata_schema or 'public')}")
    else:
        target = f"ducklake:sqlite:{spec.catalog}"
    con.execute(f"ATTACH {quote_literal(target)} AS {quote_identifier(alias)} ({', '.join(options)})")
