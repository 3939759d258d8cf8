"""Reads Spark cannot do itself, done by executors in Python: one Spark task per piece of work.

Used for lake tables on S3 (the pip PySpark has no hadoop-aws, so Spark cannot open ``s3a://`` itself), for reads
Spark's own Parquet reader cannot do exactly (row ids for UPDATE/DELETE/MERGE, renamed columns with defaults,
files mapped by name), and for ``read_parquet``/``read_csv`` of S3 files.

A read is ``spark.range(n)`` over the pieces, each partition handing its piece to ``mapInArrow``. Unlike a PySpark
Python Data Source, nothing runs in Python on the Spark driver to plan it: a Spark Connect server then needs no
per-session planning workers, which it would start for every Airflow task. The pieces, S3 credentials included,
travel inside the pickled function, never as a Spark option that plans, logs or the UI would show.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import pyarrow as pa

from airflow_provider_lakehouse.spark.tasks import ScanTask, read_task

Piece = TypeVar("Piece")


def partitioned_read(
    spark: Any, pieces: Sequence[Piece], read: Callable[[Piece], Iterator[pa.RecordBatch]], schema: pa.Schema
) -> Any:
    """A DataFrame of what ``read`` yields for each of ``pieces`` (one Spark task per piece), typed ``schema``
    (Spark-compatible Arrow types, see :func:`~.tasks.spark_arrow_schema`)."""
    from airflow_provider_lakehouse.spark.arrow_schema import spark_struct_type

    pieces = list(pieces)
    count = max(1, len(pieces))

    def produce(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                if index < len(pieces):
                    yield from read(pieces[index])

    return spark.range(0, count, 1, count).mapInArrow(produce, spark_struct_type(schema))


def scan_frame(spark: Any, task: ScanTask) -> Any:
    """A DataFrame of ``task``'s rows: one Spark task per group of files, one for the inlined rows."""
    return partitioned_read(spark, task.split(), read_task, task.output_schema())
