"""Which earlier commit a retried task instance finds: only a try of the same clearing generation counts."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from airflow_provider_lakehouse.ducklake.catalog import DuckLake
from airflow_provider_lakehouse.ducklake.store import SqliteStore
from airflow_provider_lakehouse.ducklake.task_commits import OUTCOME_FIELD, TaskIdentity, find_committed_try


def _lake(tmp_path: Path) -> DuckLake:
    lake = DuckLake.create(SqliteStore(str(tmp_path / "c.sqlite")), data_path=str(tmp_path / "data"))
    with lake.transaction() as tx:
        tx.create_table("main.t", pa.schema([("id", pa.int64())]))
    return lake


def _commit_as(lake: DuckLake, task: TaskIdentity, rows: int) -> int:
    with lake.transaction(author=task.author, message=task.message) as tx:
        tx.append("main.t", pa.table({"id": list(range(rows))}))
        tx.annotate(
            **task.commit_fields(), **{OUTCOME_FIELD: {"commands": [{"command_index": 1, "affected_rows": rows}]}}
        )
    assert tx.snapshot is not None
    return tx.snapshot.snapshot_id


def test_a_retry_finds_the_commit_of_its_earlier_try(tmp_path: Path) -> None:
    lake = _lake(tmp_path)
    first = TaskIdentity("d", "t", "run_1", map_index=3, try_number=1, first_try_number=1)
    snapshot = _commit_as(lake, first, 5)
    assert find_committed_try(lake, first) is None  # a first try never deduplicates
    retry = TaskIdentity("d", "t", "run_1", map_index=3, try_number=2, first_try_number=1)
    found = find_committed_try(lake, retry)
    assert found is not None and found.snapshot.snapshot_id == snapshot and found.try_number == 1
    assert found.outcome["commands"][0]["affected_rows"] == 5
    assert found.snapshot.author == "d.t" and found.snapshot.commit_message == "airflow d.t run run_1 map 3 try 1"


def test_other_task_instances_and_cleared_runs_run_again(tmp_path: Path) -> None:
    lake = _lake(tmp_path)
    _commit_as(lake, TaskIdentity("d", "t", "run_1", map_index=3, try_number=1), 5)
    for other in (
        TaskIdentity("d", "t", "run_1", map_index=4, try_number=2),  # another map index
        TaskIdentity("d", "t", "run_2", map_index=3, try_number=2),  # another run
        TaskIdentity("d", "t_", "run_1", map_index=3, try_number=2),  # a LIKE wildcard neighbour
        TaskIdentity("d", "t", "run_1", map_index=3, try_number=2, first_try_number=2),
    ):  # cleared
        assert find_committed_try(lake, other) is None, other
    # the retry of a cleared run's first try finds that try, not the one before the clear
    cleared = TaskIdentity("d", "t", "run_1", map_index=3, try_number=2, first_try_number=2)
    snapshot = _commit_as(lake, cleared, 1)
    found = find_committed_try(lake, TaskIdentity("d", "t", "run_1", map_index=3, try_number=3, first_try_number=2))
    assert found is not None and found.snapshot.snapshot_id == snapshot and found.try_number == 2
