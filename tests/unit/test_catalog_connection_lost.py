"""Which errors mean the catalog connection broke, decided by exception type (not by message text)."""

from __future__ import annotations

from typing import Any

import pytest
from psycopg import errors

from airflow_provider_lakehouse.connections.specs import PostgresSpec
from airflow_provider_lakehouse.ducklake.store import PostgresStore, SqliteStore


class _Connection:
    """What is_connection_lost looks at on a connection: its psycopg connection's ``closed``."""

    def __init__(self, closed: bool) -> None:
        self.raw = type("Raw", (), {"closed": closed})()


def _postgres() -> PostgresStore:
    return PostgresStore(PostgresSpec(host="127.0.0.1", port=1, user="u", dbname="d", password="p"))


@pytest.mark.parametrize(
    "exc",
    [
        errors.AdminShutdown("terminating connection due to administrator command"),
        errors.CrashShutdown("crash"),
        errors.CannotConnectNow("the database system is starting up"),
        errors.ConnectionFailure("connection failure"),
        errors.ConnectionException("connection exception"),
    ],
)
def test_server_going_away_is_a_lost_connection(exc: Exception) -> None:
    assert _postgres().is_connection_lost(exc, _Connection(closed=False))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "exc",
    [
        errors.QueryCanceled("canceling statement due to statement timeout"),
        errors.UniqueViolation("duplicate key"),
        errors.SyntaxError("closed"),  # the message says "closed"; the type says a statement failed
        ValueError("connection reset"),
    ],
)
def test_a_failed_statement_on_a_live_connection_is_not(exc: Exception) -> None:
    assert not _postgres().is_connection_lost(exc, _Connection(closed=False))  # type: ignore[arg-type]


def test_any_error_on_a_connection_psycopg_marked_closed_is() -> None:
    lost: Any = _Connection(closed=True)
    assert _postgres().is_connection_lost(errors.OperationalError("consuming input failed"), lost)


def test_a_sqlite_catalog_has_no_connection_to_lose(tmp_path: Any) -> None:
    store = SqliteStore(str(tmp_path / "c.sqlite"))
    assert not store.is_connection_lost(errors.AdminShutdown("x"), _Connection(closed=True))  # type: ignore[arg-type]
