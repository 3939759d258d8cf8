"""Connection look-ups shared by the hooks: clear errors for missing names, secrets masked on sight."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
