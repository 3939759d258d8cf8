"""Creating a catalog: the 28 tables of DuckLake spec 1.0 (see .catalog_tables) with each backend's types, and
its first snapshot."""

from __future__ import annotations

import uuid

from airflow_provider_lakehouse.ducklake.catalog_tables import (
    CATALOG_TABLES,
    METADATA,
    SCHEMA,
    SNAPSHOT,
    SNAPSHOT_CHANGES,
)
from airflow_provider_lakehouse.ducklake.store import CatalogConnection, MetadataStore, quote_ident

# How DuckDB's scanner extensions spell the catalog's types in each backend.
_TYPES = {
    "postgres": {
        "VARCHAR": "VARCHAR",
        "BIGINT": "BIGINT",
        "BOOLEAN": "BOOLEAN",
        "UUID": "UUID",
        "TIMESTAMPTZ": "TIMESTAMPTZ",
    },
    "sqlite": {
        "VARCHAR": "VARCHAR",
        "BIGINT": "BIGINT",
        "BOOLEAN": "BIGINT",
        "UUID": "VARCHAR",
        "TIMESTAMPTZ": "VARCHAR",
    },
}
CREATED_BY = "DuckDB d8cdaa33fd"  # what DuckDB 1.5.5 writes; tools key on DuckDB's own value
SPEC_VERSION = "1.0"


def create_statements(store: MetadataStore) -> list[str]:
    types = _TYPES[store.kind]
    statements = []
    if store.metadata_schema:
        statements.append(f"CREATE SCHEMA IF NOT EXISTS {quote_ident(store.metadata_schema)}")
    for line in CATALOG_TABLES.strip().splitlines():
        name, _, columns = line.partition("(")
        for logical, physical in types.items():
            columns = (
                columns.replace(f" {logical},", f" {physical},")
                .replace(f" {logical})", f" {physical})")
                .replace(f" {logical} ", f" {physical} ")
            )
        statements.append(f"CREATE TABLE {{M}}{name}({columns}")
    return statements


def initialize(conn: CatalogConnection, store: MetadataStore, data_path: str) -> None:
    """Create a new, empty spec 1.0 catalog (snapshot 0 with schema ``main``), in one transaction."""
    with conn.transaction():
        for statement in create_statements(store):
            conn.execute(statement)
        conn.execute(
            *SNAPSHOT.insert(
                snapshot_id=0, snapshot_time=conn.now(), schema_version=0, next_catalog_id=1, next_file_id=0
            )
        )
        conn.execute(*SNAPSHOT_CHANGES.insert(snapshot_id=0, changes_made='created_schema:"main"'))
        conn.executemany(
            METADATA.insert_sql("key", "value"),
            [("version", SPEC_VERSION), ("created_by", CREATED_BY), ("data_path", data_path), ("encrypted", "false")],
        )
        conn.execute(
            *SCHEMA.insert(
                schema_id=0,
                schema_uuid=str(uuid.uuid4()),
                begin_snapshot=0,
                schema_name="main",
                path="main/",
                path_is_relative=True,
            )
        )
