"""Read a filesystem lake's table with Spark's own Parquet reader (columns matched by field id)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from airflow_provider_lakehouse.ducklake.reader import ScanPlan, deleted_positions, output_schema
from airflow_provider_lakehouse.ducklake.storage import Storage
from airflow_provider_lakehouse.ducklake.types import Column
from airflow_provider_lakehouse.spark.frames import quoted
from airflow_provider_lakehouse.spark.tasks import spark_arrow_schema, to_spark_table

#: Column types whose Parquet storage Spark reads exactly as DuckLake means them.
NATIVE_TYPES = frozenset(
    {
        "boolean",
        "int8",
        "int16",
        "int32",
        "int64",
        "float32",
        "float64",
        "varchar",
        "json",
        "blob",
        "date",
        "timestamp",
        "timestamp_us",
        "timestamptz",
        "struct",
        "list",
        "map",
    }
)


def native_readable(plan: ScanPlan) -> bool:
    """True when Spark's reader gives exactly what the DuckLake reader would for ``plan``."""
    if any(
        f.mapping_id is not None or (f.partial_max is not None and f.partial_max > plan.snapshot_id) for f in plan.files
    ):
        return False
    return all(_natively_typed(c) and not _retyped(plan, c) for c in plan.columns)


def _retyped(plan: ScanPlan, column: Column) -> bool:
    """Whether files may hold ``column`` (or a field of it) in an earlier type: Spark's reader widens some types
    wrongly (an unsigned or decimal INT32 read as DOUBLE gives the raw integer) and fails on others, where the
    DuckLake reader casts each file's values as DuckDB does."""
    return any(c.column_id in plan.table.retyped_columns for c in column.walk())


def _natively_typed(column: Column) -> bool:
    return column.initial_default is None and all(_native_type(n) for n in column.walk())


def _native_type(column: Column) -> bool:
    return column.type in NATIVE_TYPES or column.type.startswith("decimal")


def native_frame(spark: Any, plan: ScanPlan, storage: Storage, table_columns: Sequence[Column] = ()) -> Any:
    """A DataFrame of ``plan``'s rows: Spark reads the files, deleted positions are anti-joined away, inlined
    rows (from the catalog) are appended. ``s3://`` files are read as ``s3a://`` (the cluster needs hadoop-aws
    and S3A credentials in its own configuration).

    :param table_columns: all of the table's columns. Spark sizes a file relation by its files' whole size, and
        scales that down only by a projection above the relation: reading with every column Spark can read and
        selecting ``plan``'s gives its join planning an estimate that counts the columns read (a 22 MB
        ``customer`` read for its key becomes small enough to broadcast, as Iceberg's estimate makes it). Spark
        still reads only the selected columns.
    """
    from airflow_provider_lakehouse.spark.arrow_schema import spark_struct_type

    read = _columns_to_read(plan, table_columns)
    widened = len(read) > len(plan.columns)
    arrow_schema = spark_arrow_schema(plan.output_schema())
    schema = _schema_with_ids(spark_struct_type(arrow_schema), plan.columns)
    names = [quoted(c.name) for c in plan.columns]
    read_schema = (
        _schema_with_ids(spark_struct_type(spark_arrow_schema(output_schema(read))), read) if widened else schema
    )
    frame = spark.read.schema(read_schema).parquet(*[spark_path(f.path) for f in plan.files])
    deleted = _deleted_rows(storage, plan)
    if deleted is not None:
        # SQL text, not pyspark.sql.functions: a Connect client process has no SparkContext, and functions.col
        # asserts one unless PySpark's process-wide Connect flag is set (see session.connect_session, which
        # clears it so a later local session can start).
        located = frame.selectExpr(*names, "_metadata.file_path AS __lh_path", "_metadata.row_index AS __lh_pos")
        gone = spark.createDataFrame(deleted)
        frame = located.join(gone, on=["__lh_path", "__lh_pos"], how="left_anti")
    if widened or deleted is not None:
        frame = frame.select(*names)
    if plan.inlined.num_rows:
        frame = frame.unionByName(spark.createDataFrame(to_spark_table(plan.inlined, arrow_schema), schema=schema))
    return frame


def _columns_to_read(plan: ScanPlan, table_columns: Sequence[Column]) -> list[Column]:
    """``plan``'s columns and every other column of the table Spark reads natively (see :func:`native_frame`);
    just ``plan``'s when the table's columns are not given."""
    wanted = {c.column_id for c in plan.columns}
    read = [c for c in table_columns if c.column_id in wanted or (_natively_typed(c) and not _retyped(plan, c))]
    return read if not wanted - {c.column_id for c in read} else list(plan.columns)


def spark_path(path: str) -> str:
    """The path Spark's own readers use: ``s3a://`` for S3."""
    return "s3a://" + path[len("s3://") :] if path.startswith("s3://") else path


def _schema_with_ids(schema: Any, columns: Sequence[Column]) -> Any:
    for struct_field, column in zip(schema.fields, columns, strict=False):
        _attach_ids(struct_field, column)
    return schema


def _attach_ids(struct_field: Any, column: Column) -> None:
    """Spark matches Parquet columns by the ``parquet.field.id`` metadata of each struct field."""
    struct_field.metadata = {**(struct_field.metadata or {}), "parquet.field.id": column.column_id}
    if column.type == "struct":
        for child_field, child in zip(struct_field.dataType.fields, column.children, strict=False):
            _attach_ids(child_field, child)


def _deleted_rows(storage: Storage, plan: ScanPlan) -> pa.Table | None:
    paths: list[str] = []
    positions: list[int] = []
    for f in plan.files:
        if not f.has_deletes:
            continue
        gone = deleted_positions(storage, f, plan.snapshot_id)
        paths += [spark_path(f.path) if "://" in f.path else "file:" + f.path] * len(gone)
        positions += gone.tolist()
    if not positions:
        return None
    return pa.table({"__lh_path": pa.array(paths, pa.string()), "__lh_pos": pa.array(positions, pa.int64())})
