"""The executor side of a lake write and its lease, on a real filesystem: no file of a failed or abandoned write
survives, whichever side notices the failure first (the Spark integration tests cover the same on S3)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pyarrow as pa
import pytest

from airflow_provider_lakehouse.ducklake.types import Column
from airflow_provider_lakehouse.spark.tasks import (
    META_COLUMN,
    WriteAbandonedError,
    WriteLease,
    WriteTask,
    write_batches,
)

COLUMNS = (Column(1, "id", "int64", nullable=False), Column(2, "name", "varchar"))


def _task(tmp_path: Path, *, target_file_bytes: int = 1) -> WriteTask:
    # target_file_bytes=1: every batch becomes its own file, so a later batch can fail after an earlier file.
    return WriteTask(
        data_path=str(tmp_path),
        s3=None,
        table_dir=str(tmp_path / "main" / "t"),
        columns=COLUMNS,
        tag="0123456789ab",
        target_file_bytes=target_file_bytes,
    )


def _batch(ids: list[int | None]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids]})


def _files(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.rglob("*") if p.is_file())


def test_a_leased_write_reports_every_file_and_release_leaves_only_them(tmp_path: Path) -> None:
    task = _task(tmp_path)
    lease = WriteLease(task)
    lease.take()
    rows = [row for batch in write_batches(task, [_batch([1, 2]), _batch([3])]) for row in batch.column(0)]
    lease.release()
    reported = sorted(Path(pickle.loads(row.as_py()).path).name for row in rows)
    assert len(reported) == 2
    assert _files(tmp_path) == reported
    assert all(name.endswith("-0123456789ab.parquet") for name in reported)


def test_an_executor_that_finishes_after_the_driver_abandoned_the_write_removes_its_file(tmp_path: Path) -> None:
    task = _task(tmp_path)
    lease = WriteLease(task)
    lease.take()
    assert lease.abandon() == 0  # the job failed before this executor finished its file
    with pytest.raises(WriteAbandonedError, match="abandoned"):
        list(write_batches(task, [_batch([1, 2])]))
    assert _files(tmp_path) == []


def test_a_failing_task_attempt_removes_the_files_it_already_wrote(tmp_path: Path) -> None:
    task = _task(tmp_path)
    WriteLease(task).take()
    produced = write_batches(task, [_batch([1, 2]), _batch([3, None])])
    assert next(produced).num_rows == 1  # the first file is complete and reported
    with pytest.raises(ValueError, match="NOT NULL"):
        next(produced)
    assert _files(tmp_path) == ["ducklake-write-0123456789ab.lease"]


def test_abandon_removes_the_lease_and_the_files_already_complete_but_not_other_writes(tmp_path: Path) -> None:
    task = _task(tmp_path)
    other = WriteTask(task.data_path, None, task.table_dir, COLUMNS, tag="ba9876543210")
    for write in (task, other):
        WriteLease(write).take()
        list(write_batches(write, [_batch([1])]))
    assert WriteLease(task).abandon() == 1
    remaining = _files(tmp_path)
    assert [name for name in remaining if "0123456789ab" in name] == []
    assert len([name for name in remaining if name.endswith("-ba9876543210.parquet")]) == 1


def test_meta_rows_carry_the_written_file(tmp_path: Path) -> None:
    task = _task(tmp_path, target_file_bytes=1 << 20)
    WriteLease(task).take()
    (batch,) = list(write_batches(task, [_batch([1, 2]), _batch([3])]))
    assert batch.schema.names == [META_COLUMN]
    assert pickle.loads(batch.column(0)[0].as_py()).record_count == 3
