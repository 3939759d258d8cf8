"""Which lakes and Data Tables exist, and how to open them read-only, on the api-server.

Connections are looked up the way the api-server looks up any connection (secrets backends, environment
variables ``AIRFLOW_CONN_*``, the metadata database). Listing sees the last two by itself; secrets backends
cannot be listed (Airflow's backends only answer "get this id"), so connections kept only there are listed
when named in ``[lakehouse] listed_connections``.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from airflow_provider_lakehouse.connections.lake import (
    DuckLakeSpec,
    ducklake_conn_id,
    ducklake_spec_from_connection,
    s3_spec_from_aws_connection,
)
from airflow_provider_lakehouse.connections.names import datatable_conn_id
from airflow_provider_lakehouse.connections.specs import (
    PostgresSpec,
    postgres_spec_from_connection,
)
from airflow_provider_lakehouse.exceptions import ConnectionNotFoundError

if TYPE_CHECKING:
    from airflow_provider_lakehouse.ducklake.catalog import DuckLake

log = logging.getLogger(__name__)
StoreKind = Literal["ducklake", "datatable"]
_NAME = re.compile(r"^[A-Za-z0-9_]{1,200}$")
_PREFIX = {"ducklake": "ducklake_", "datatable": "datatable_"}


@dataclass(frozen=True)
class StoreRef:
    """A lake or Data Table by name, with the connection that defines it (what access is checked on)."""

    kind: StoreKind
    name: str

    @property
    def conn_id(self) -> str:
        return ducklake_conn_id(self.name) if self.kind == "ducklake" else datatable_conn_id(self.name)


def store_ref(kind: StoreKind, name: str) -> StoreRef:
    """Validate a name from a URL: the same characters connection ids of lakes and Data Tables allow.

    >>> store_ref("ducklake", "main").conn_id
    'ducklake_main'
    >>> store_ref("ducklake", "main; drop")
    Traceback (most recent call last):
    ...
    ValueError: invalid ducklake name 'main; drop'
    """
    if not _NAME.match(name):
        raise ValueError(f"invalid {kind} name {name!r}")
    return StoreRef(kind, name.lower())


def list_stores() -> list[StoreRef]:
    """Lakes and Data Tables defined in the environment or the metadata database, sorted."""
    found: set[StoreRef] = set()
    for key, value in os.environ.items():
        if not key.startswith("AIRFLOW_CONN_"):
            continue
        conn_id = key[len("AIRFLOW_CONN_") :].lower()
        kind = _kind_of(conn_id, _conn_type_of_env(value))
        if kind:
            found.add(StoreRef(kind, conn_id[len(_PREFIX[kind]) :]))
    try:
        from airflow.models.connection import Connection
        from airflow.utils.session import create_session
        from sqlalchemy import select

        with create_session() as session:
            for conn_id, conn_type in session.execute(select(Connection.conn_id, Connection.conn_type)):
                kind = _kind_of(conn_id.lower(), conn_type)
                if kind:
                    found.add(StoreRef(kind, conn_id.lower()[len(_PREFIX[kind]) :]))
    except Exception:  # a database hiccup must not hide the environment's lakes
        pass
    for conn_id in listed_connections():
        kind = _kind_of(conn_id, None)
        if kind:
            found.add(StoreRef(kind, conn_id[len(_PREFIX[kind]) :]))
        else:
            log.warning(
                "[lakehouse] listed_connections: %r is neither ducklake_<name> nor datatable_<name>; not listed",
                conn_id,
            )
    return sorted(found, key=lambda r: (r.kind, r.name))


def listed_connections() -> list[str]:
    """The connection ids named in ``[lakehouse] listed_connections`` (comma-separated), lower-cased.

    >>> import os; os.environ["AIRFLOW__LAKEHOUSE__LISTED_CONNECTIONS"] = " ducklake_Finance, datatable_ops,"
    >>> listed_connections()
    ['ducklake_finance', 'datatable_ops']
    >>> del os.environ["AIRFLOW__LAKEHOUSE__LISTED_CONNECTIONS"]
    """
    try:
        from airflow.configuration import conf

        value = conf.get("lakehouse", "listed_connections", fallback="") or ""
    except Exception:
        return []
    return [part.strip().lower() for part in value.split(",") if part.strip()]


def _kind_of(conn_id: str, conn_type: str | None) -> StoreKind | None:
    for kind, prefix in _PREFIX.items():
        if conn_id.startswith(prefix) and _NAME.match(conn_id[len(prefix) :]) and conn_type in (None, kind):
            return kind  # type: ignore[return-value]
    return None


def _conn_type_of_env(value: str) -> str | None:
    import json

    text = value.strip()
    if text.startswith("{"):
        try:
            return str(json.loads(text).get("conn_type") or "") or None
        except ValueError:
            return None
    return text.split("://", 1)[0].replace("-", "_") if "://" in text else None


def _connection(conn_id: str, kind: str, name: str) -> Any:
    from airflow.exceptions import AirflowNotFoundException
    from airflow.models.connection import Connection

    try:
        return Connection.get_connection_from_secrets(conn_id)
    except AirflowNotFoundException:
        raise ConnectionNotFoundError(kind, name, conn_id) from None


def lake_spec(ref: StoreRef) -> DuckLakeSpec:
    """The lake's spec, resolved from its connection and the connections it names."""
    conn = _connection(ref.conn_id, "ducklake", ref.name)
    extra = conn.extra_dejson or {}
    catalog_conn = None
    if extra.get("catalog_postgres_conn_id"):
        other = str(extra["catalog_postgres_conn_id"])
        catalog_conn = _connection(other, "postgres connection", other)
    s3 = None
    if extra.get("aws_conn_id"):
        other = str(extra["aws_conn_id"])
        s3 = s3_spec_from_aws_connection(_connection(other, "aws connection", other))
    return ducklake_spec_from_connection(ref.name, conn, catalog_conn=catalog_conn, s3=s3)


def datatable_spec(ref: StoreRef) -> PostgresSpec:
    conn = _connection(ref.conn_id, "datatable", ref.name)
    referenced = (conn.extra_dejson or {}).get("postgres_conn_id")
    if referenced:
        conn = _connection(str(referenced), "postgres connection", str(referenced))
    return postgres_spec_from_connection(conn)


#: how long a page waits for an unreachable catalog (seconds, not a task's minute)
PAGE_RECONNECT_TIMEOUT_S = 2.0


def open_lake_readonly(spec: DuckLakeSpec) -> DuckLake:
    """Open an existing lake without creating anything, waiting at most seconds for its catalog.

    :raises CatalogNotFoundError: when the lake has no catalog.
    """
    # imported here: the api-server loads this plugin at start, the lake (and pyarrow) only with a lake page
    from airflow_provider_lakehouse.ducklake.catalog import DuckLake

    return DuckLake.from_spec(spec, reconnect_timeout_s=PAGE_RECONNECT_TIMEOUT_S)
