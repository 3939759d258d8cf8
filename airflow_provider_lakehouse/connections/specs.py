"""Typed connection specs. Secrets never appear in their ``repr``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from airflow_provider_lakehouse.exceptions import InvalidConnectionError

# Extras passed through to libpq; anything else in a connection's extra is ignored on purpose
# (an allow-list keeps unrelated keys such as UI hints out of the driver call).
LIBPQ_EXTRAS = ("sslmode", "sslrootcert", "sslcert", "sslkey", "connect_timeout", "application_name", "options")


class ConnectionLike(Protocol):
    """What the specs read from an Airflow ``Connection`` (kept structural: no Airflow import)."""

    # Read-only properties, not attributes: Airflow's Connection declares some of them narrower (``conn_id: str``),
    # which a read-only member accepts and a mutable one would not.
    @property
    def conn_id(self) -> str | None: ...
    @property
    def conn_type(self) -> str | None: ...
    @property
    def host(self) -> str | None: ...
    @property
    def port(self) -> int | None: ...
    @property
    def login(self) -> str | None: ...
    @property
    def password(self) -> str | None: ...
    @property
    def schema(self) -> str | None: ...

    @property
    def extra_dejson(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class PostgresSpec:
    """Where and how to connect to a PostgreSQL database.

    >>> PostgresSpec(host="db", port=5432, user="u", password="hunter2", dbname="d")
    PostgresSpec(host='db', port=5432, user='u', dbname='d', password='***')
    """

    host: str
    port: int
    user: str
    dbname: str
    password: str | None = field(default=None, repr=False)
    options: Mapping[str, str] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:  # dataclass repr would omit the field silently; say it is set
        shown = "'***'" if self.password else "None"
        return (
            f"PostgresSpec(host={self.host!r}, port={self.port!r}, user={self.user!r}, "
            f"dbname={self.dbname!r}, password={shown})"
        )

    def connect_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``psycopg.connect``.

        Passed as separate keywords rather than a DSN string, so quotes, ``@``, ``%`` and spaces in
        a password need no escaping and cannot break the connection string.
        """
        kwargs: dict[str, Any] = {"host": self.host, "port": self.port, "user": self.user, "dbname": self.dbname}
        if self.password:
            kwargs["password"] = self.password
        kwargs.update(self.options)
        return kwargs

    @property
    def authority(self) -> str:
        """``host:port``, as OpenLineage's Postgres namespace spells it."""
        return f"{self.host}:{self.port}"


def postgres_spec_from_connection(conn: ConnectionLike, *, default_dbname: str | None = None) -> PostgresSpec:
    """Build a :class:`PostgresSpec` from a connection's Postgres fields.

    The connection's ``schema`` field is the database name (Airflow's Postgres convention).

    :param conn: an Airflow ``Connection`` or anything with the same attributes.
    :param default_dbname: database used when the connection names none.
    :raises InvalidConnectionError: if host, user or database are missing.
    """
    extra = conn.extra_dejson or {}
    dbname = extra.get("database") or conn.schema or default_dbname
    missing = [n for n, v in (("host", conn.host), ("login", conn.login), ("database (schema field)", dbname)) if not v]
    if missing:
        raise InvalidConnectionError(f"Connection {conn.conn_id!r} has no {', '.join(missing)}.")
    try:
        port = int(conn.port or 5432)
    except (TypeError, ValueError):
        raise InvalidConnectionError(f"Connection {conn.conn_id!r} has a non-numeric port.") from None
    options = {k: str(extra[k]) for k in LIBPQ_EXTRAS if extra.get(k) not in (None, "")}
    return PostgresSpec(
        host=str(conn.host),
        port=port,
        user=str(conn.login),
        dbname=str(dbname),
        password=conn.password or None,
        options=options,
    )
