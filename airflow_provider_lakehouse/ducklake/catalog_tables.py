"""The catalog's tables, each described once: the DDL text and, parsed from it, a row writer per table.

Every row the provider writes goes through :meth:`CatalogTable.insert`, which names its columns. A positional
``INSERT ... VALUES (?, ?, NULL, ...)`` would silently put values in the wrong columns if a spec revision added
one; named columns fail loudly instead, and each table's column list is written down only here.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: the 28 catalog tables of DuckLake spec 1.0, exactly as DuckDB 1.5 creates them (logical types; see .ddl)
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


@dataclass(frozen=True)
class CatalogTable:
    """One catalog table: its name and its columns in DDL order (as the DDL spells them, quoted or not).

    >>> t = TABLES["ducklake_schema_versions"]
    >>> t.insert(begin_snapshot=3, table_id=7, schema_version=2)
    ('INSERT INTO {M}ducklake_schema_versions (begin_snapshot, schema_version, table_id) VALUES (?, ?, ?)', (3, 2, 7))
    >>> TABLES["ducklake_tag"].insert(object_id=1, key="k", value="v")[0]
    'INSERT INTO {M}ducklake_tag (object_id, begin_snapshot, end_snapshot, "key", "value") VALUES (?, NULL, NULL, ?, ?)'
    >>> t.insert(table=7)
    Traceback (most recent call last):
    ...
    ValueError: ducklake_schema_versions has no column 'table' (columns: begin_snapshot, schema_version, table_id)
    """

    name: str
    #: column names as written in SQL: ``"key"`` for the names the DDL quotes
    column_sql: tuple[str, ...]

    @property
    def columns(self) -> tuple[str, ...]:
        """The column names, unquoted."""
        return tuple(c.strip('"') for c in self.column_sql)

    def column_list(self) -> str:
        """``(col, col, ...)``: every column, for ``INSERT INTO t (...) SELECT ...``."""
        return f"({', '.join(self.column_sql)})"

    def insert(self, **values: Any) -> tuple[str, tuple[Any, ...]]:
        """The statement and parameters that insert one row; columns not given are NULL.

        :param values: column name -> value (``None`` is a NULL parameter).
        :returns: ``(sql, params)`` for ``conn.execute(*...)`` or a commit's statement batch.
        :raises ValueError: for a name that is not a column of the table.
        """
        unknown = values.keys() - set(self.columns)
        if unknown:
            raise ValueError(f"{self.name} has no column {sorted(unknown)[0]!r} (columns: {', '.join(self.columns)})")
        given = tuple(c for c in self.columns if c in values)
        return _insert_sql(self, given), tuple(values[c] for c in given)

    def insert_sql(self, *given: str) -> str:
        """``INSERT INTO {M}<table> (every column) VALUES (...)``: ``?`` for the columns ``given``, NULL for the
        rest (for ``executemany``)."""
        return _insert_sql(self, tuple(c for c in self.columns if c in given))


@functools.cache
def _insert_sql(table: CatalogTable, given: tuple[str, ...]) -> str:
    # every column is named (NULL where not given) so each table's statements all read alike in logs
    slots = ", ".join("?" if name in given else "NULL" for name in table.columns)
    return f"INSERT INTO {{M}}{table.name} {table.column_list()} VALUES ({slots})"


def _parse(ddl: str) -> Mapping[str, CatalogTable]:
    tables = {}
    for line in ddl.strip().splitlines():
        name, _, rest = line.partition("(")
        definitions = rest.rstrip()[:-1].split(", ")
        tables[name] = CatalogTable(name, tuple(d.split(" ", 1)[0] for d in definitions))
    return tables


#: every catalog table by name
TABLES: Mapping[str, CatalogTable] = _parse(CATALOG_TABLES)

METADATA = TABLES["ducklake_metadata"]
SNAPSHOT = TABLES["ducklake_snapshot"]
SNAPSHOT_CHANGES = TABLES["ducklake_snapshot_changes"]
SCHEMA = TABLES["ducklake_schema"]
TABLE = TABLES["ducklake_table"]
COLUMN = TABLES["ducklake_column"]
DATA_FILE = TABLES["ducklake_data_file"]
DELETE_FILE = TABLES["ducklake_delete_file"]
FILE_COLUMN_STATS = TABLES["ducklake_file_column_stats"]
FILE_PARTITION_VALUE = TABLES["ducklake_file_partition_value"]
PARTITION_INFO = TABLES["ducklake_partition_info"]
PARTITION_COLUMN = TABLES["ducklake_partition_column"]
SORT_INFO = TABLES["ducklake_sort_info"]
SORT_EXPRESSION = TABLES["ducklake_sort_expression"]
TABLE_STATS = TABLES["ducklake_table_stats"]
TABLE_COLUMN_STATS = TABLES["ducklake_table_column_stats"]
SCHEMA_VERSIONS = TABLES["ducklake_schema_versions"]
INLINED_DATA_TABLES = TABLES["ducklake_inlined_data_tables"]
FILES_SCHEDULED_FOR_DELETION = TABLES["ducklake_files_scheduled_for_deletion"]
VIEW = TABLES["ducklake_view"]
