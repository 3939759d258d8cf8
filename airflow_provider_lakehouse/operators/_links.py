"""The "Open in Lakehouse" button on DucklakeOperator and DataTableOperator task instances."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from airflow.sdk import BaseOperatorLink

if TYPE_CHECKING:
    from airflow.sdk.types import TaskInstanceKey

#: the task-instance tab of the Lakehouse plugin (``plugins/lakehouse.py``: TASK_ROUTE)
TASK_ROUTE = "lakehouse-lineage"


class LakehouseLink(BaseOperatorLink):
    """Links a task instance to its Lakehouse lineage tab: the tables and files it read and wrote, each linked
    to its Lakehouse page, with the snapshot read and created."""

    name = "Open in Lakehouse"

    def get_link(self, operator: Any, *, ti_key: TaskInstanceKey) -> str:
        mapped = f"/mapped/{ti_key.map_index}" if ti_key.map_index >= 0 else ""
        return (
            f"{_base_path()}/dags/{quote(ti_key.dag_id, safe='')}/runs/{quote(ti_key.run_id, safe='')}/tasks/"
            f"{quote(ti_key.task_id, safe='')}{mapped}/plugin/{TASK_ROUTE}"
        )


def _base_path() -> str:
    from airflow.configuration import conf

    return urlsplit(conf.get("api", "base_url", fallback="/") or "/").path.rstrip("/")
