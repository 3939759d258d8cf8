"""Names to typed, validated connection specs. Imports no Airflow: hooks hand in connection objects."""

from __future__ import annotations

from airflow_provider_lakehouse.connections.names import DataTableName, datatable_conn_id, parse_datatable_name
from airflow_provider_lakehouse.connections.redact import Redactor
from airflow_provider_lakehouse.connections.specs import PostgresSpec, postgres_spec_from_connection

__all__ = [
    "DataTableName",
    "PostgresSpec",
    "Redactor",
    "datatable_conn_id",
    "parse_datatable_name",
    "postgres_spec_from_connection",
]
