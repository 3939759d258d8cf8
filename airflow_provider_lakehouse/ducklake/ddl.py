"""The 28 catalog tables of DuckLake spec 1.0, exactly as DuckDB 1.5 creates them, per backend."""

from __future__ import annotations

import uuid

from airflow_provider_lakehouse.ducklake.store import CatalogConnection, MetadataStore, quote_ident

CATALOG_TABLES = """
ducklake_metadata("key" VARCHAR NOT NULL, "value" VARCHAR NOT NULL, "scope" VARCHAR, scope_id BIGINT)
ducklake_snapshot(snapshot_id BIGINT PRIMARY KEY, snapshot_time TIMESTAMPTZ, schema_version BIGINT, next_catalog_id BIGINT, next_file_id BIGINT)
ducklake_snapshot_changes(snapshot_id BIGINT PRIMARY KEY, changes_made VARCHAR, author VARCHAR, commit_message VARCHAR, commit_extra_info VARCHAR)
ducklake_schema(schema_id BIGINT PRIMARY KEY, schema_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN)
ducklake_table(table_id BIGINT, table_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_id BIGINT, table_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN)
ducklake_view(view_id BIGINT, view_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_id BIGINT, view_name VARCHAR, dialect VARCHAR, "sql" VARCHAR, column_aliases VARCHAR)
ducklake_tag(object_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, "key" VARCHAR, "value" VARCHAR)
ducklake_column_tag(table_id BIGINT, column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, "key" VARCHAR, "value" VARCHAR)
ducklake_data_file(data_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, file_order BIGINT, path VARCHAR, path_is_relative BOOLEAN, file_format VARCHAR, record_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, row_id_start BIGINT, partition_id BIGINT, encryption_key VARCHAR, mapping_id BIGINT, partial_max BIGINT)
ducklake_file_column_stats(data_file_id BIGINT, table_id BIGINT, column_id BIGINT, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN, extra_stats VARCHAR)
ducklake_file_variant_stats(data_file_id BIGINT, table_id BIGINT, column_id BIGINT, variant_path VARCHAR, shredded_type VARCHAR, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN, extra_stats VARCHAR)
ducklake_delete_file(delete_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, data_file_id BIGINT, path VARCHAR, path_is_relative BOOLEAN, format VARCHAR, delete_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, encryption_key VARCHAR, partial_max BIGINT)
ducklake_column(column_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, table_id BIGINT, column_order BIGINT, column_name VARCHAR, column_type VARCHAR, initial_default VARCHAR, default_value VARCHAR, nulls_allowed BOOLEAN, parent_column BIGINT, default_value_type VARCHAR, default_value_dialect VARCHAR)
ducklake_table_stats(table_id BIGINT, record_count BIGINT, next_row_id BIGINT, file_size_bytes BIGINT)
ducklake_table_column_stats(table_id BIGINT, column_id BIGINT, contains_null BOOLEAN, contains_nan BOOLEAN, min_value VARCHAR, max_value VARCHAR, extra_stats VARCHAR)
ducklake_partition_info(partition_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT)
ducklake_partition_column(partition_id BIGINT, table_id BIGINT, partition_key_index BIGINT, column_id BIGINT, "transform" VARCHAR)
ducklake_file_partition_value(data_file_id BIGINT, table_id BIGINT, partition_key_index BIGINT, partition_value VARCHAR)
ducklake_files_scheduled_for_deletion(data_file_id BIGINT, path VARCHAR, path_is_relative BOOLEAN, schedule_start TIMESTAMPTZ)
ducklake_inlined_data_tables(table_id BIGINT, table_name VARCHAR, schema_version BIGINT)
ducklake_column_mapping(mapping_id BIGINT, table_id BIGINT, "type" VARCHAR)
ducklake_name_mapping(mapping_id BIGINT, column_id BIGINT, source_name VARCHAR, target_field_id BIGINT, parent_column BIGINT, is_partition BOOLEAN)
ducklake_schema_versions(begin_snapshot BIGINT, schema_version BIGINT, table_id BIGINT)
ducklake_macro(schema_id BIGINT, macro_id BIGINT, macro_name VARCHAR, begin_snapshot BIGINT, end_snapshot BIGINT)
ducklake_macro_impl(macro_id BIGINT, impl_id BIGINT, dialect VARCHAR, "sql" VARCHAR, "type" VARCHAR)
ducklake_macro_parameters(macro_id BIGINT, impl_id BIGINT, column_id BIGINT, parameter_name VARCHAR, parameter_type VARCHAR, default_value VARCHAR, default_value_type VARCHAR)
ducklake_sort_info(sort_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT)
ducklake_sort_expression(sort_id BIGINT, table_id BIGINT, sort_key_index BIGINT, expression VARCHAR, dialect VARCHAR, sort_direction VARCHAR, null_order VARCHAR)
"""

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
        conn.execute("INSERT INTO {M}ducklake_snapshot VALUES (0, ?, 0, 1, 0)", (conn.now(),))
        conn.execute("INSERT INTO {M}ducklake_snapshot_changes VALUES (0, 'created_schema:\"main\"', NULL, NULL, NULL)")
        conn.executemany(
            'INSERT INTO {M}ducklake_metadata ("key", "value") VALUES (?, ?)',
            [("version", SPEC_VERSION), ("created_by", CREATED_BY), ("data_path", data_path), ("encrypted", "false")],
        )
        conn.execute(
            "INSERT INTO {M}ducklake_schema VALUES (0, ?, 0, NULL, 'main', 'main/', ?)", (str(uuid.uuid4()), True)
        )
