"""A PySpark Python Data Source that reads one lake table at one snapshot through pyarrow.

Used for lakes on S3 (the pip PySpark has no hadoop-aws, so Spark cannot open ``s3a://`` itself) and for
reads Spark's own Parquet reader cannot do (row ids for UPDATE/DELETE/MERGE, renamed columns with defaults,
files mapped by name). Each registration is its own class carrying its :class:`ScanTask` as a class attribute,
so the task (with storage credentials) travels pickled to the executors, never as a Spark option that plans,
logs or the UI would show.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema

from airflow_provider_lakehouse.spark.tasks import ScanTask, read_task

_counter = itertools.count(1)
class _TaskPartition(InputPartition):
    def __init__(self, task: ScanTask) -> None:
        super().__init__(task.files[0].data_file_id if task.files else -1)
        self.task = task


class LakeTableReader(DataSourceReader):
    """One partition per group of files (already pruned by the planner's predicates), one for inlined rows."""

    def __init__(self, task: ScanTask) -> None:
        self.task = task

    def partitions(self) -> Sequence[InputPartition]:
        tasks = self.task.split()
        return [_TaskPartition(t) for t in tasks] or [_TaskPartition(replace(self.task, files=(), inlined_ipc=b""))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        yield from read_task(partition.task)  # type: ignore[attr-defined]


class LakeTableSource(DataSource):
    """Base class; :func:`register_scan` makes one subclass per scan."""

    task: ScanTask
    source_name = "lakehouse_scan"

    @classmethod
    def name(cls) -> str:
        return cls.source_name

    def schema(self) -> Any:
        return from_arrow_schema(self.task.output_schema())

    def reader(self, schema: Any) -> DataSourceReader:
        return LakeTableReader(self.task)


def register_scan(spark: Any, task: ScanTask) -> Any:
    """Register a data source for ``task`` and return a DataFrame reading it."""
    name = f"lakehouse_scan_{next(_counter)}"
    source = type(f"LakeTableSource_{name}", (LakeTableSource,), {"task": task, "source_name": name,
                                                                   "__module__": __name__})
    spark.dataSource.register(source)
    return spark.read.format(name).load()
