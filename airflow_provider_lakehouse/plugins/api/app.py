"""The FastAPI app the plugin mounts on the api-server: JSON under ``/lakehouse/api``, the React bundle
under ``/lakehouse/static``."""

from __future__ import annotations

import mimetypes
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

URL_PREFIX = "/lakehouse"
DIST = Path(__file__).resolve().parent.parent / "www" / "dist"
BUNDLE = "main.umd.cjs"


def create_app() -> FastAPI:
    from airflow_provider_lakehouse.plugins.api.routes import router

    app = FastAPI(title="Lakehouse", description="The Lakehouse views of airflow-provider-lakehouse.", version="1")
    app.include_router(router, prefix="/api")
    # The UI loads the bundle with import(), which browsers refuse unless it is served as JavaScript; Python's
    # mimetypes does not know ".cjs".
    mimetypes.add_type("text/javascript", ".cjs")
    # The bundle is public like Airflow's own UI assets: it holds code, never data.
    app.mount("/static", StaticFiles(directory=DIST, check_dir=False), name="static")
    return app
