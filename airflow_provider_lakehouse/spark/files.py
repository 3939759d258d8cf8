"""Files outside the lake: ``read_parquet`` / ``read_csv`` / ``FROM 'path'`` reads and ``COPY ... TO``.

Local Parquet is read by Spark itself; S3 paths (and CSV, for DuckDB-compatible parsing) go through pyarrow,
in executors, with credentials carried inside the pickled task.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from airflow_provider_lakehouse.connections.lake import S3Spec
from airflow_provider_lakehouse.ducklake.parquet_pages import read_columns
from airflow_provider_lakehouse.ducklake.storage import DUCKDB_PARQUET_LAYOUT, Storage
from airflow_provider_lakehouse.exceptions import LakehouseError
from airflow_provider_lakehouse.spark.frames import map_in_arrow
from airflow_provider_lakehouse.spark.plan import FileRef
from airflow_provider_lakehouse.spark.tasks import spark_arrow_schema, to_spark_batch


def storage_for(path: str, s3: S3Spec | None) -> Storage:
    root = path.split("://", 1)[0] + "://" if "://" in path else "/"
    return Storage(root, s3 if root.startswith("s3") else None)


def expand(paths: Sequence[str], s3: S3Spec | None) -> list[str]:
    """Expand globs (``*``, ``?``, ``**``) against the file system; a path matching nothing is an error."""
    found: list[str] = []
    for path in paths:
        if not any(ch in path for ch in "*?["):
            found.append(path)
            continue
        storage = storage_for(path, s3)
        scheme = path.split("://", 1)[0] + "://" if "://" in path else ""
        fixed = path[: min(path.index(ch) for ch in "*?[" if ch in path)]
        base = fixed.rsplit("/", 1)[0]
        selector = pafs.FileSelector(
            storage.fs_path(base), recursive="**" in path or path.count("/") > fixed.count("/"), allow_not_found=True
        )
        pattern = storage.fs_path(path)
        matches = sorted(
            scheme + info.path
            for info in storage.fs.get_file_info(selector)
            if info.type == pafs.FileType.File and fnmatch.fnmatch(info.path, pattern)
        )
        if not matches:
            raise LakehouseError(f"No file matches {path!r}.")
        found += matches
    return found


@dataclass(frozen=True)
class FileTask:
    paths: tuple[str, ...]
    format: str
    options: Mapping[str, Any] = field(default_factory=dict)
    s3: S3Spec | None = None
    schema: pa.Schema | None = None


def read_file(task: FileTask, path: str) -> pa.Table:
    storage = storage_for(path, task.s3)
    if task.format == "parquet":
        with storage.open_input(path) as handle:
            return read_columns(handle, pq.ParquetFile(handle), path)
    options = {k.lower(): v for k, v in task.options.items()}
    delimiter = options.get("delim") or options.get("sep") or options.get("delimiter") or ","
    header = options.get("header", True)
    names = options.get("names") or options.get("column_names")
    read = pacsv.ReadOptions(
        column_names=list(names) if names else None, autogenerate_column_names=not header and not names
    )
    if names and header:
        read = pacsv.ReadOptions(column_names=list(names), skip_rows=1)
    parse = pacsv.ParseOptions(delimiter=str(delimiter), quote_char=options.get("quote", '"') or False)
    convert = pacsv.ConvertOptions(
        null_values=[options.get("nullstr", "")], strings_can_be_null=True, quoted_strings_can_be_null=False
    )
    with storage.fs.open_input_stream(storage.fs_path(path)) as handle:
        return pacsv.read_csv(handle, read_options=read, parse_options=parse, convert_options=convert)


def _read_partition(task: FileTask, paths: Sequence[str]) -> Iterator[pa.RecordBatch]:
    assert task.schema is not None
    for path in paths:
        table = read_file(task, path)
        if table.column_names != task.schema.names:
            raise LakehouseError(
                f"{path}: columns {table.column_names} differ from the first file's {task.schema.names}."
            )
        yield from to_spark_batch(table, task.schema)


def read_files(spark: Any, ref: FileRef, s3: S3Spec | None) -> Any:
    """A DataFrame over the files of ``ref`` (schema from the first file)."""
    paths = expand(ref.paths, s3)
    if ref.format == "parquet" and not any(p.startswith(("s3://", "s3a://")) for p in paths):
        return spark.read.parquet(*paths)
    if ref.format == "parquet":  # the footer holds the schema: no need to read the rows on the driver
        with storage_for(paths[0], s3).open_input(paths[0]) as handle:
            schema = pq.read_schema(handle)
    else:
        schema = read_file(FileTask(tuple(paths), ref.format, ref.options, s3), paths[0]).schema
    task = FileTask(tuple(paths), ref.format, ref.options, s3, spark_arrow_schema(schema))
    return _register(spark, task)


def _register(spark: Any, task: FileTask) -> Any:
    """One Spark task per file, read by an executor with pyarrow (see :mod:`.scans`)."""
    from airflow_provider_lakehouse.spark.scans import partitioned_read

    assert task.schema is not None
    return partitioned_read(spark, [(p,) for p in task.paths], lambda paths: _read_partition(task, paths), task.schema)


def write_single_file(frame: Any, path: str, fmt: str, options: Mapping[str, Any], s3: S3Spec | None) -> int:
    """``COPY (query) TO path``: one file, written by one executor task; returns the row count."""
    from airflow_provider_lakehouse.spark.arrow_schema import to_arrow_schema

    schema = to_arrow_schema(frame.schema, "UTC")  # the session's zone (driver.SESSION_CONF)

    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        storage = storage_for(path, s3)
        rows = 0
        with storage.fs.open_output_stream(storage.fs_path(path)) as sink:
            writer = (
                pq.ParquetWriter(sink, schema, compression="snappy", **DUCKDB_PARQUET_LAYOUT)
                if fmt == "parquet"
                else pacsv.CSVWriter(
                    sink, schema, write_options=pacsv.WriteOptions(delimiter=str(options.get("delim", ",")))
                )
            )
            for batch in batches:
                if not batch.schema.equals(schema):  # Spark marks a literal's column NOT NULL; the file's is nullable
                    batch = pa.RecordBatch.from_arrays(batch.columns, schema=schema)
                writer.write_batch(batch)
                rows += batch.num_rows
            writer.close()  # an empty result still gives a valid file (schema only, or a CSV header)
        yield pa.RecordBatch.from_pydict({"rows": [rows]})

    counts = map_in_arrow(frame.coalesce(1), write, "rows long").toArrow()
    return int(sum(counts.column("rows").to_pylist()))
