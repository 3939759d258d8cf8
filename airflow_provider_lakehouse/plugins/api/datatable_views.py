"""What the Data Table page shows: schemas, tables, columns, approximate row counts and a row preview.

Everything runs in a read-only transaction with a statement timeout; identifiers come from the URL, are
checked against the catalog and quoted; no SQL text from the request is ever run.
"""

from __future__ import annotations

from typing import Any

from airflow_provider_lakehouse.assets.uris import table_asset_uri
from airflow_provider_lakehouse.connections.specs import PostgresSpec
from airflow_provider_lakehouse.plugins.api.models import (
    DataTableColumn,
    DataTableDetail,
    DataTableSchema,
    DataTableTable,
    Preview,
)
from airflow_provider_lakehouse.plugins.api.values import MAX_ROWS, capped_rows

STATEMENT_TIMEOUT_MS = 5_000
_SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "pg_toast")


def _connect(spec: PostgresSpec) -> Any:
    import psycopg

    kwargs = {"connect_timeout": 5, **spec.connect_kwargs()}
    conn = psycopg.connect(**kwargs, autocommit=False)
    conn.execute("SET TRANSACTION READ ONLY")
    conn.execute(f"SET LOCAL statement_timeout = {int(STATEMENT_TIMEOUT_MS)}")
    return conn


def reachable(spec: PostgresSpec) -> tuple[bool, list[str], list[str]]:
    """Whether the Data Table answers, its schemas and tables (``schema.table``)."""
    conn = _connect(spec)
    try:
        rows = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema <> ALL(%s) "
            "AND table_schema NOT LIKE 'pg_temp%%' ORDER BY 1, 2",
            (list(_SYSTEM_SCHEMAS),),
        ).fetchall()
    finally:
        conn.rollback()
        conn.close()
    return True, sorted({r[0] for r in rows}), [f"{r[0]}.{r[1]}" for r in rows]


def describe(spec: PostgresSpec, name: str) -> DataTableDetail:
    conn = _connect(spec)
    try:
        tables = conn.execute(
            # reltuples is -1 until the table is first vacuumed or analysed; the statistics collector counts sooner
            "SELECT n.nspname, c.relname, c.relkind, coalesce(nullif(c.reltuples, -1)::bigint, s.n_live_tup) "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_stat_all_tables s "
            "ON s.relid = c.oid WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname <> ALL(%s) "
            "AND n.nspname NOT LIKE 'pg_temp%%' AND n.nspname NOT LIKE 'pg_toast%%' ORDER BY 1, 2",
            (list(_SYSTEM_SCHEMAS),),
        ).fetchall()
        columns = conn.execute(
            "SELECT table_schema, table_name, column_name, data_type, is_nullable, column_default FROM "
            "information_schema.columns WHERE table_schema <> ALL(%s) ORDER BY table_schema, table_name, "
            "ordinal_position",
            (list(_SYSTEM_SCHEMAS),),
        ).fetchall()
    finally:
        conn.rollback()
        conn.close()
    by_table: dict[tuple[str, str], list[DataTableColumn]] = {}
    for schema, table, column, type_, nullable, default in columns:
        by_table.setdefault((schema, table), []).append(
            DataTableColumn(name=column, type=type_, nullable=nullable == "YES", default=default)
        )
    kinds = {"r": "table", "p": "table", "v": "view", "m": "materialized view", "f": "foreign table"}
    schemas: dict[str, list[DataTableTable]] = {}
    for schema, table, kind, tuples in tables:
        schemas.setdefault(schema, []).append(
            DataTableTable(
                schema_name=schema,
                name=table,
                kind=kinds.get(kind, kind),
                approximate_rows=None if tuples is None or tuples < 0 else int(tuples),
                columns=by_table.get((schema, table), []),
                asset_uri=_uri(name, schema, table),
            )
        )
    return DataTableDetail(name=name, schemas=[DataTableSchema(name=s, tables=t) for s, t in sorted(schemas.items())])


def _uri(name: str, schema: str, table: str) -> str:
    try:
        return table_asset_uri("datatable", name, schema, table)
    except ValueError:  # a name the URI form cannot carry (quoted identifiers with dots, spaces)
        return ""


def preview(
    spec: PostgresSpec, schema: str, table: str, *, columns: list[str] | None = None, limit: int = 100
) -> Preview:
    """The first ``limit`` rows of ``schema.table`` (in the table's physical order, like ``SELECT * LIMIT``).

    :raises LookupError: when the table (or a requested column) does not exist.
    """
    from psycopg import sql

    limit = max(1, min(int(limit), MAX_ROWS))
    conn = _connect(spec)
    try:
        found = conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = %s AND "
            "table_name = %s ORDER BY ordinal_position",
            (schema, table),
        ).fetchall()
        if not found:
            raise LookupError(f"Table {schema}.{table} does not exist.")
        known = dict(found)
        wanted = list(columns) if columns else [c for c, _ in found]
        missing = [c for c in wanted if c not in known]
        if missing:
            raise LookupError(f"Table {schema}.{table} has no column {missing[0]!r}.")
        query = sql.SQL("SELECT {} FROM {}.{} LIMIT {}").format(
            sql.SQL(", ").join(sql.Identifier(c) for c in wanted),
            sql.Identifier(schema),
            sql.Identifier(table),
            sql.Literal(limit),
        )
        rows = conn.execute(query).fetchall()
    finally:
        conn.rollback()
        conn.close()
    capped, truncated = capped_rows(rows)
    return Preview(columns=wanted, types=[known[c] for c in wanted], rows=capped, truncated=truncated, limit=limit)
