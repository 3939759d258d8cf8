"""Airflow connection look-ups shared by the hooks and the asset handlers: clear errors for missing names, secrets
masked on sight, and a Data Table's connection resolved to its Postgres target.

It sits below both ``hooks`` and ``assets`` so that the ``datatable://`` OpenLineage converter can name a table
without importing a hook. Airflow is imported inside the functions: Airflow loads the asset handlers that import
this module at start-up, and loading them stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from airflow_provider_lakehouse.connections.names import datatable_conn_id
from airflow_provider_lakehouse.connections.specs import PostgresSpec, postgres_spec_from_connection
from airflow_provider_lakehouse.exceptions import ConnectionNotFoundError

if TYPE_CHECKING:
    from airflow.sdk import Connection


def get_connection(conn_id: str, *, kind: str, name: str) -> Connection:
    """Fetch ``conn_id`` or raise :class:`ConnectionNotFoundError` naming the id that was looked for."""
    from airflow.sdk import BaseHook
    from airflow.sdk.exceptions import AirflowNotFoundException

    try:
        conn = BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        raise ConnectionNotFoundError(kind, name, conn_id) from None
    mask(conn.password)
    return conn


def mask(secret: str | None) -> None:
    """Register ``secret`` with Airflow's secrets masker, so task logs show ``***`` instead."""
    if not secret:
        return
    from airflow.sdk.log import mask_secret

    mask_secret(secret)


def datatable_postgres_spec(name: str) -> PostgresSpec:
    """The Postgres target of Data Table ``name``: connection ``datatable_<name>``, or the Postgres connection its
    extra ``postgres_conn_id`` names ("bring your own Postgres"). Its password is registered with the masker.

    :param name: the Data Table's name (no schema).
    :raises ConnectionNotFoundError: a connection is missing.
    :raises InvalidConnectionError: the connection's fields do not make a Postgres target.
    """
    conn = get_connection(datatable_conn_id(name), kind="datatable", name=name)
    referenced = (conn.extra_dejson or {}).get("postgres_conn_id")
    if referenced:
        conn = get_connection(str(referenced), kind="postgres connection", name=str(referenced))
    spec = postgres_spec_from_connection(conn)
    mask(spec.password)
    return spec
