"""Who may see what: the same auth manager checks the core REST API makes.

A plugin's FastAPI app is mounted on the api-server without Airflow's authentication, so every route here
depends on one of these functions:

- a lake or Data Table page (catalog, files, snapshots, rows): read access to the **connection** that defines
  it (``ducklake_<name>`` / ``datatable_<name>``): whoever may read the credentials may read the data;
- lineage (a table's graph, a DAG's data flow, a task instance's reads and writes): read access to **assets**
  and to each **DAG** whose tasks are shown (task instances for the task-instance view); edges of DAGs the
  user may not read are left out;
- the home page: any authenticated user; it lists only the lakes and Data Tables whose connection they may read.

Anonymous requests get 401, an invalid token 403 (Airflow's own rules), a user without the permission 403.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated

from airflow.api_fastapi.auth.managers.models.base_user import BaseUser
from airflow.api_fastapi.core_api.security import get_user
from fastapi import Depends, HTTPException, status

if TYPE_CHECKING:
    from airflow_provider_lakehouse.plugins.api.stores import StoreRef

#: the authenticated user (Airflow's own dependency: bearer token or the UI's session cookie)
User = Annotated[BaseUser, Depends(get_user)]


def _manager():
    from airflow.api_fastapi.app import get_auth_manager

    return get_auth_manager()


def can_read_connection(user: BaseUser, conn_id: str) -> bool:
    from airflow.api_fastapi.auth.managers.models.resource_details import ConnectionDetails

    return bool(
        _manager().is_authorized_connection(method="GET", details=ConnectionDetails(conn_id=conn_id), user=user)
    )


def require_store(user: BaseUser, ref: StoreRef) -> None:
    """403 unless ``user`` may read the connection of ``ref``."""
    if not can_read_connection(user, ref.conn_id):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            f"Reading {ref.kind} {ref.name!r} needs read access to connection {ref.conn_id!r}.",
        )


def require_assets(user: BaseUser) -> None:
    if not _manager().is_authorized_asset(method="GET", user=user):
        raise HTTPException(status.HTTP_403_FORBIDDEN, "Lineage needs read access to assets.")


def require_dag(user: BaseUser, dag_id: str, *, task_instances: bool = False) -> None:
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity, DagDetails

    entity = DagAccessEntity.TASK_INSTANCE if task_instances else None
    if not _manager().is_authorized_dag(method="GET", access_entity=entity, details=DagDetails(id=dag_id), user=user):
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"Reading DAG {dag_id!r} is not allowed.")


def readable_dags(user: BaseUser, dag_ids: Iterable[str]) -> set[str]:
    """The subset of ``dag_ids`` the user may read."""
    wanted = set(dag_ids)
    if not wanted:
        return set()
    return set(_manager().filter_authorized_dag_ids(dag_ids=wanted, method="GET", user=user))
