"""A statement that changes a Data Table, run the same way by both engines: the engine supplies the rows of its
query (an Arrow table, or a staging table its workers filled) and the script's Postgres transactions do the rest.
Pure: no Spark, no DuckDB."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa

from airflow_provider_lakehouse.datatables.partitions import StagingTable
from airflow_provider_lakehouse.datatables.transaction import DataTableTransactions
from airflow_provider_lakehouse.spark import steps

#: the rows of a step's query: in hand, or staged by the workers (with their Arrow schema)
QueryRows = tuple[pa.Table | StagingTable, pa.Schema]


def change_datatable(
    transactions: DataTableTransactions,
    details: steps.DataTableChange,
    parameters: Mapping[str, Any],
    query_rows: Callable[[], QueryRows],
) -> int:
    """Run one Data Table change in the script's transaction on it; returns the rows it affected.

    :param query_rows: computes the rows ``INSERT`` and ``CREATE TABLE AS`` write (not called for the statements
        Postgres runs itself).
    """
    if details.create_schema:
        transactions.create_schema(details.datatable, details.create_schema)
    if isinstance(details, steps.DataTableSql):
        return transactions.execute(details.datatable, details.sql, {n: parameters[n] for n in details.parameters})
    rows, columns = query_rows()
    if isinstance(details, steps.DataTableInsert):
        return transactions.insert(
            details.datatable, details.schema, details.table, rows, details.columns, details.by_name
        )
    assert isinstance(details, steps.DataTableCtas)
    return transactions.create_as(
        details.datatable,
        details.schema,
        details.table,
        rows,
        columns,
        or_replace=details.or_replace,
        if_not_exists=details.if_not_exists,
    )
