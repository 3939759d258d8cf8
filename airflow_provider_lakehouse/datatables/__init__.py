"""Run SQL scripts against a Postgres Data Table (psycopg 3; no Airflow import)."""

from __future__ import annotations

from airflow_provider_lakehouse.datatables.runner import FETCH_MODES, ScriptResult, StatementResult, run_script
from airflow_provider_lakehouse.jsonsafe import to_json_safe

__all__ = ["FETCH_MODES", "ScriptResult", "StatementResult", "run_script", "to_json_safe"]
