"""Provider metadata Airflow reads through the ``apache_airflow_provider`` entry point.

Connection forms are declared here (``conn-fields`` / ``ui-field-behaviour``), the Airflow 3.2+
way: Airflow builds the UI form from this dict without importing the hooks.
"""

from __future__ import annotations

from typing import Any

_POSTGRES_FIELDS_NOTE = "or leave the fields above empty and name an existing Postgres connection"


def _string(label: str, description: str, **schema: Any) -> dict[str, Any]:
    return {"label": label, "description": description, "schema": {"type": ["string", "null"], **schema}}


def _integer(label: str, description: str, default: int, minimum: int = 0) -> dict[str, Any]:
    return {
        "label": label,
        "description": description,
        "schema": {"type": ["integer", "null"], "default": default, "minimum": minimum},
    }


def _number(label: str, description: str, default: float, minimum: float = 0) -> dict[str, Any]:
    return {
        "label": label,
        "description": description,
        "schema": {"type": ["number", "null"], "default": default, "minimum": minimum},
    }


# No null in the enum: the form would offer (and show) the text "null"; an empty field already means libpq's default.
_SSLMODE = _string(
    "SSL mode",
    "libpq sslmode for the Postgres connection (empty: libpq's default, prefer).",
    enum=["disable", "allow", "prefer", "require", "verify-ca", "verify-full"],
)

DATATABLE_CONNECTION: dict[str, Any] = {
    "connection-type": "datatable",
    "hook-class-name": "airflow_provider_lakehouse.hooks.datatable.DataTableHook",
    "hook-name": "Data Table (Postgres)",
    "ui-field-behaviour": {
        "hidden-fields": [],
        "relabeling": {"schema": "Database", "login": "User"},
        "placeholders": {"host": "postgres.internal", "port": "5432", "schema": "datatables"},
    },
    "conn-fields": {
        "postgres_conn_id": _string(
            "Postgres connection id", f"Bring your own Postgres: {_POSTGRES_FIELDS_NOTE} (its fields are used)."
        ),
        "sslmode": _SSLMODE,
    },
}

DUCKLAKE_CONNECTION: dict[str, Any] = {
    "connection-type": "ducklake",
    "hook-class-name": "airflow_provider_lakehouse.hooks.ducklake.DucklakeHook",
    "hook-name": "Ducklake (DuckLake lakehouse)",
    "ui-field-behaviour": {
        "hidden-fields": [],
        "relabeling": {
            "host": "Catalog host (Postgres)",
            "port": "Catalog port",
            "schema": "Catalog database",
            "login": "Catalog user",
            "password": "Catalog password",
        },
        "placeholders": {"host": "postgres.internal", "port": "5432", "schema": "lakehouse_catalog"},
    },
    "conn-fields": {
        "data_path": _string(
            "Data path",
            "Where the Parquet files live: s3://bucket/prefix/ or a filesystem path shared by all Spark nodes.",
            minLength=1,
        ),
        "metadata_schema": _string(
            "Metadata schema", "Postgres schema holding the DuckLake catalog tables (default: public)."
        ),
        "catalog_postgres_conn_id": _string(
            "Catalog Postgres connection id",
            "Keep the catalog in the database of this Postgres connection instead of the catalog fields above.",
        ),
        "catalog_sqlite_path": _string(
            "Catalog SQLite file", "Embedded local lake: a SQLite catalog file instead of Postgres (single host)."
        ),
        "aws_conn_id": _string(
            "AWS connection id",
            "Amazon provider connection with the S3 credentials; its extra may set endpoint_url for S3-compatible stores.",
        ),
        "spark_conn_id": _string(
            "Spark connection id",
            "A 'spark' connection (spark-submit) or 'spark_connect' connection; empty: local Spark.",
        ),
        # A text field: an object-typed field renders as an editor showing "{}" even when nothing is set.
        "spark_conf": _string(
            "Spark conf", 'Extra Spark properties for the job, as a JSON object, e.g. {"spark.executor.memory": "2g"}.'
        ),
        "spark_s3a": {
            "label": "Read S3 with s3a://",
            "description": "Spark reads the lake's S3 files itself with S3A (credentials are set per "
            "session). Empty: when the cluster has hadoop-aws, else executors read them "
            "with pyarrow; true: always; false: never.",
            "schema": {"type": ["boolean", "null"], "default": None},
        },
        "engine": {
            "label": "Engine",
            "description": "Where the lake's SQL runs by default: spark, duckdb (in the worker) or auto (DuckDB "
            "up to the scan threshold below, else Spark). Tasks may choose their own.",
            "schema": {"type": ["string", "null"], "enum": ["spark", "duckdb", "auto", None], "default": None},
        },
        "duckdb_max_scan_bytes": {
            "label": "auto: DuckDB up to (bytes)",
            "description": "With engine auto, scripts scanning at most this many bytes run on DuckDB. Empty: a "
            "quarter of the worker's memory.",
            "schema": {"type": ["integer", "null"], "minimum": 0, "default": None},
        },
        "commit_max_retries": _integer("Commit retries", "How often a conflicting commit is retried.", 10),
        "commit_retry_wait_ms": _integer("Commit retry wait (ms)", "Base wait before a commit retry.", 100),
        "commit_retry_backoff": _number("Commit retry backoff", "Multiplier of the wait per retry.", 1.5, 1.0),
        "catalog_reconnect_timeout_s": _number(
            "Catalog reconnect timeout (s)",
            "How long a catalog that is restarting or unreachable is retried before the task fails.",
            60,
            0,
        ),
        "sslmode": _SSLMODE,
    },
}


def get_provider_info() -> dict[str, Any]:
    """Return the provider's metadata (schema: Airflow's ``provider_info.schema.json``)."""
    return {
        "package-name": "airflow-provider-lakehouse",
        "name": "Lakehouse",
        "description": "Data Tables (managed Postgres), DuckLake lakehouses on Apache Spark, and column-level lineage.",
        "integrations": [
            {
                "integration-name": "Data Tables",
                "external-doc-url": "https://www.postgresql.org/docs/",
                "tags": ["software"],
            },
            {"integration-name": "DuckLake", "external-doc-url": "https://ducklake.select/", "tags": ["software"]},
        ],
        "hooks": [
            {"integration-name": "Data Tables", "python-modules": ["airflow_provider_lakehouse.hooks.datatable"]},
            {"integration-name": "DuckLake", "python-modules": ["airflow_provider_lakehouse.hooks.ducklake"]},
        ],
        "operators": [
            {"integration-name": "Data Tables", "python-modules": ["airflow_provider_lakehouse.operators.datatable"]},
            {"integration-name": "DuckLake", "python-modules": ["airflow_provider_lakehouse.operators.ducklake"]},
        ],
        "connection-types": [DATATABLE_CONNECTION, DUCKLAKE_CONNECTION],
        # The Lakehouse UI plugin is registered through the ``airflow.plugins`` entry point (pyproject.toml), not
        # here: Airflow loads providers' "plugins" only with lazy_load_providers off, the entry point always.
        "extra-links": ["airflow_provider_lakehouse.operators._links.LakehouseLink"],
        "config": {
            "lakehouse": {
                "description": "The Lakehouse views in the Airflow UI.",
                "options": {
                    "listed_connections": {
                        "description": "Lake and Data Table connection ids (ducklake_<name>, datatable_<name>, "
                        "comma-separated) that the Lakehouse home lists although they are kept "
                        "only in a secrets backend, which cannot be listed. Connections in the "
                        "metadata database or in AIRFLOW_CONN_* variables are listed anyway.",
                        "version_added": "0.1.0",
                        "type": "string",
                        "example": "ducklake_finance,datatable_reporting",
                        "default": "",
                    },
                },
            },
        },
        # Airflow 3 reads only "asset-uris"; the legacy "dataset-uris" key served Airflow 2 and is not needed.
        "asset-uris": [
            {
                "schemes": ["datatable"],
                "handler": "airflow_provider_lakehouse.assets.datatable.sanitize_uri",
                "factory": "airflow_provider_lakehouse.assets.datatable.create_asset",
                "to_openlineage_converter": "airflow_provider_lakehouse.assets.datatable.convert_asset_to_openlineage",
            },
            {
                "schemes": ["ducklake"],
                "handler": "airflow_provider_lakehouse.assets.ducklake.sanitize_uri",
                "factory": "airflow_provider_lakehouse.assets.ducklake.create_asset",
                "to_openlineage_converter": "airflow_provider_lakehouse.assets.ducklake.convert_asset_to_openlineage",
            },
        ],
    }
