"""Data Table tables as Spark DataFrames, and Spark's rows into Data Table tables, with the executors doing the
work (see :mod:`airflow_provider_lakehouse.datatables.partitions`).

- A read of a table the script has not changed is split into page ranges that executors read at the snapshot the
  script's transaction exports; a small table, or one the script changed (its changes are visible only inside its
  own transaction), is read by the driver in that transaction.
- A write is staged by the executors, one staging transaction per Spark partition, and moved into place by the
  script's transaction: the target changes only when the script commits, and the rows never gather in the driver.

The Data Table's credentials travel inside the pickled functions, as the lake's S3 credentials do, never as a
Spark option.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from airflow_provider_lakehouse.datatables.partitions import (
    PageRange,
    StagingTable,
    page_ranges,
    read_page_range,
    stage_partition,
)
from airflow_provider_lakehouse.datatables.transaction import DataTableTransactions
from airflow_provider_lakehouse.ducklake.intervals import INTERVAL_TYPE
from airflow_provider_lakehouse.ducklake.types import ducklake_type
from airflow_provider_lakehouse.spark.scans import partitioned_read
from airflow_provider_lakehouse.spark.source_types import UNTYPED_IN_SPARK, tag_types
from airflow_provider_lakehouse.spark.tasks import spark_arrow_schema, to_spark_batch, to_spark_table

#: bytes of a Data Table table above which executors read it in page ranges of about this size
DEFAULT_PARTITION_BYTES = 64 * 1024 * 1024
_PAGE_BYTES = 8192  # Postgres's default block size; only sizes the ranges, which stay exact whatever it is


def datatable_frame(
    spark: Any,
    transactions: DataTableTransactions,
    datatable: str,
    schema: str,
    table: str,
    partition_bytes: int = DEFAULT_PARTITION_BYTES,
) -> tuple[Any, str]:
    """A DataFrame of ``schema.table`` as the script sees it, and how it was read (``driver`` or
    ``executors:N`` for N page ranges)."""
    from airflow_provider_lakehouse.spark.arrow_schema import spark_struct_type

    pages = transactions.table_pages(datatable, schema, table)
    snapshot = transactions.shared_snapshot(datatable) if pages * _PAGE_BYTES > partition_bytes else None
    if snapshot is None:
        rows = transactions.read(datatable, schema, table)
        spark_schema = spark_arrow_schema(rows.schema)
        if rows.num_rows == 0:  # PySpark cannot build a frame from an empty Arrow table with a list column
            empty = spark.createDataFrame([], schema=spark_struct_type(spark_schema))
            return tag_types(empty, _lake_types(rows.schema)), "driver"
        converted = to_spark_table(rows, spark_schema)
        frame = spark.createDataFrame(converted, schema=spark_struct_type(spark_schema))
        return tag_types(frame, _lake_types(rows.schema)), "driver"
    read_schema = transactions.read(datatable, schema, table, limit=0).schema
    spark_schema = spark_arrow_schema(read_schema)
    pieces = page_ranges(
        transactions.spec(datatable), snapshot, schema, table, pages, -(-pages * _PAGE_BYTES // partition_bytes)
    )

    def read(piece: PageRange) -> Iterator[pa.RecordBatch]:
        for batch in read_page_range(piece):
            yield from to_spark_batch(pa.Table.from_batches([batch]), spark_schema)

    frame = partitioned_read(spark, pieces, read, spark_schema)
    return tag_types(frame, _lake_types(read_schema)), f"executors:{len(pieces)}"


def _lake_types(schema: pa.Schema) -> dict[str, str]:
    """The DuckLake types of the columns that Spark holds in another type than DuckDB reads them as (``uuid`` and
    ``time`` as text, an ``oid``'s ``UINTEGER`` as a ``BIGINT``), so that ``CREATE TABLE dl.t AS SELECT * FROM dt.t``
    makes the columns DuckDB's ``postgres`` extension would.

    >>> _lake_types(pa.schema([("u", pa.uuid()), ("t", pa.time64("us")), ("s", pa.string()), ("o", pa.uint32())]))
    {'u': 'uuid', 't': 'time', 'o': 'uint32'}
    """
    kinds = {}
    for column in schema:
        if column.type != INTERVAL_TYPE:  # no DuckLake type on Spark: an interval stays DuckDB's text of it
            kind = ducklake_type(column.type)
            if kind in UNTYPED_IN_SPARK:
                kinds[column.name] = kind
    return kinds


def stage_frame(frame: Any, staging: StagingTable) -> int:
    """Stage every row of ``frame`` into ``staging`` (executors, one transaction per partition); returns the
    rows staged."""

    def stage(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        part = context.partitionId() if context is not None else 0
        staged = stage_partition(staging, part, batches)
        yield pa.record_batch([pa.array([staged], pa.int64())], names=["rows"])

    positional = frame.toDF(*staging.stored_columns)  # a query may repeat a name (count(*), count(*))
    counts = positional.mapInArrow(stage, "rows long").collect()
    return sum(int(row["rows"]) for row in counts)
