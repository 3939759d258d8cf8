"""The Airflow plugin: the Lakehouse views (a nav entry, a DAG tab, a task-instance tab) and their API.

Registered through the provider's ``plugins`` entry (``get_provider_info``). The FastAPI app is created only
inside the api-server: schedulers and workers load plugins too, and need none of it.
"""

from __future__ import annotations

import sys
from typing import Any

from airflow.plugins_manager import AirflowPlugin

from airflow_provider_lakehouse.plugins.api.app import BUNDLE, URL_PREFIX, create_app

#: names the React bundle registers its component under (``src/main.tsx`` sets the same globals)
NAV_VIEW, DAG_VIEW, TASK_VIEW = "Lakehouse", "Lakehouse data flow", "Lakehouse lineage"
#: the page routes under the UI's ``/plugin/`` (nav) and ``/dags/.../plugin/`` (DAG, task instance)
NAV_ROUTE, DAG_ROUTE, TASK_ROUTE = "lakehouse", "lakehouse-flow", "lakehouse-lineage"


def _running_in_api_server() -> bool:
    argv = " ".join(sys.argv)
    return "api-server" in argv or "api_server" in argv or "uvicorn" in argv or "gunicorn" in argv


def _base_url() -> str:
    """The api-server's base path, so the bundle loads behind a reverse proxy too."""
    from urllib.parse import urlsplit

    from airflow.configuration import conf

    return urlsplit(conf.get("api", "base_url", fallback="/") or "/").path.rstrip("/")


def react_apps() -> list[dict[str, Any]]:
    bundle = f"{_base_url()}{URL_PREFIX}/static/{BUNDLE}"
    return [
        {
            "name": NAV_VIEW,
            "bundle_url": bundle,
            "destination": "nav",
            "url_route": NAV_ROUTE,
            "category": "browse",
            "icon": f"{_base_url()}{URL_PREFIX}/static/lakehouse.svg",
        },
        {"name": DAG_VIEW, "bundle_url": bundle, "destination": "dag", "url_route": DAG_ROUTE},
        {"name": TASK_VIEW, "bundle_url": bundle, "destination": "task_instance", "url_route": TASK_ROUTE},
    ]


def fastapi_apps() -> list[dict[str, Any]]:
    return [{"app": create_app(), "url_prefix": URL_PREFIX, "name": "Lakehouse API"}]


class LakehousePlugin(AirflowPlugin):
    """Lake and Data Table browser, column lineage, DAG data flow and task-instance lineage."""

    name = "lakehouse"
    if _running_in_api_server():
        fastapi_apps = fastapi_apps()
        react_apps = react_apps()
