"""Parquet files into a lake table without the JVM touching their rows.

``CREATE TABLE t AS SELECT * FROM read_parquet(...)`` applies no Spark operator to the rows, yet running it as a
query makes Spark decode the Parquet pages into rows and convert them to Arrow for the Python writers: about
2.5 s per million TPC-DS fact rows on 2 cores, most of a load. Here Spark only distributes work items (a file
and some of its row groups); each executor task reads its row groups with pyarrow and writes them as lake files
with the same writer as every other write. The driver takes this path only when the files' Arrow types are
exactly the ones Spark's reader would hand over, so the table and its files are the same either way.

(Not named ``copy``: spark-submit runs ``job.py`` with this folder first on ``sys.path``, where a ``copy.py``
would hide the standard library's.)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from airflow_provider_lakehouse.connections.lake import S3Spec
from airflow_provider_lakehouse.ducklake.parquet_pages import has_delta_packed_32_bit_columns, read_columns
from airflow_provider_lakehouse.exceptions import LakehouseError
from airflow_provider_lakehouse.spark.files import storage_for
from airflow_provider_lakehouse.spark.plan import FileRef, Step
from airflow_provider_lakehouse.spark.steps import Ctas
from airflow_provider_lakehouse.spark.tasks import WriteTask, spark_arrow_type, write_batches

# Uncompressed bytes of row groups per work item, and so per lake file: Spark's own split size. A large file still
# gives several items to keep every core busy; 16 MB items left TPC-DS SF 10's store_sales in 78 files, and
# every later scan paid per file on S3 (with 25 files: validate 81 -> 36 s, ingest 111 -> 92 s).
PIECE_BYTES = 128 * 1024 * 1024


@dataclass(frozen=True)
class CopyTask:
    """What every executor task needs: the lake write (its S3 credentials also read the source files) and the
    schema each file must have."""

    write: WriteTask
    schema: pa.Schema


def plain_parquet_copy(step: Step) -> FileRef | None:
    """The Parquet files of a ``CREATE TABLE ... AS SELECT * FROM <files>`` step, or None for anything else."""
    if not isinstance(step.details, Ctas) or step.tables or step.catalog or step.parameters or len(step.files) != 1:
        return None
    ref = step.files[0]
    if ref.format != "parquet" or ref.options:
        return None
    return ref if step.query == f"SELECT * FROM {ref.view} AS {ref.view}" else None


def same_as_spark(schema: pa.Schema, spark_schema: pa.Schema) -> bool:
    """True if Spark's reader would hand over exactly these columns and types (no conversion to reproduce)."""
    return schema.names == spark_schema.names and all(
        spark_arrow_type(f.type) == f.type == s.type for f, s in zip(schema, spark_schema, strict=False)
    )


def work_items(paths: Sequence[str], s3: S3Spec | None) -> tuple[pa.Schema, pa.Table]:
    """The first file's Arrow schema, and one row per work item: a file and a run of its row groups of about
    :data:`PIECE_BYTES` (every footer is read once, here)."""
    files, groups = [], []
    schema = None
    for path in paths:
        with storage_for(path, s3).open_input(path) as handle:
            parquet = pq.ParquetFile(handle)
            meta = parquet.metadata
            schema = schema or parquet.schema_arrow
        piece: list[int] = []
        size = 0
        for index in range(meta.num_row_groups):
            piece.append(index)
            size += meta.row_group(index).total_byte_size
            if size >= PIECE_BYTES:
                files.append(path)
                groups.append(piece)
                piece, size = [], 0
        if piece or not files or files[-1] != path:
            files.append(path)
            groups.append(piece)
    if schema is None:
        raise LakehouseError("No Parquet file to copy.")
    return schema, pa.table(
        {"path": pa.array(files, pa.string()), "row_groups": pa.array(groups, pa.list_(pa.int32()))}
    )


def copy_pieces(task: CopyTask, items: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Executor side: read each work item's row groups and write them as lake files (one metadata row each)."""
    for batch in items:
        for path, row_groups in zip(
            batch.column("path").to_pylist(), batch.column("row_groups").to_pylist(), strict=False
        ):
            with storage_for(path, task.write.s3).open_input(path) as handle:
                parquet = pq.ParquetFile(handle)
                if parquet.schema_arrow.names != task.schema.names or not parquet.schema_arrow.equals(
                    task.schema, check_metadata=False
                ):
                    raise LakehouseError(
                        f"{path}: columns {parquet.schema_arrow} differ from the first file's {task.schema}."
                    )
                if not row_groups:  # a file without rows still has its schema checked
                    continue
                if has_delta_packed_32_bit_columns(parquet):  # a row group at a time, decoded where pyarrow refuses
                    batches: Iterable[pa.RecordBatch] = (
                        batch
                        for g in row_groups
                        for batch in read_columns(handle, parquet, path, None, [g]).to_batches()
                    )
                else:
                    batches = parquet.iter_batches(row_groups=row_groups)
                yield from write_batches(task.write, batches)
