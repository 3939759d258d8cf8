"""Exactly-once commits per Airflow task instance: who committed a snapshot, and what it reported.

A script's commit records the task instance that made it (dag id, task id, run id, map index, try number) and
its per-statement outcome in ``commit_extra_info``. When Airflow retries a task whose earlier try committed and
then failed or died (a worker killed after the commit, before it could report success), the retry finds that
commit and returns its recorded outcome instead of applying the changes again.

Only tries of the same *clearing generation* count: Airflow numbers tries on across clears, and sets
``max_tries = try_number + retries`` when a user clears a task, so the first try of the current generation is
``max_tries - retries + 1`` (the same rule Airflow's task runner uses to find a task's first try). A task that
succeeded and was cleared runs again; a retry after a committed try does not.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from airflow_provider_lakehouse.ducklake import metadata
from airflow_provider_lakehouse.ducklake.model import Snapshot

if TYPE_CHECKING:
    from airflow_provider_lakehouse.ducklake.catalog import DuckLake

TASK_KEY = "airflow_task_key"
TASK_FIELD = "airflow_task"
OUTCOME_FIELD = "outcome"


@dataclass(frozen=True)
class TaskIdentity:
    """The Airflow task instance (and try) a script runs for.

    :param first_try_number: the first try of the current clearing generation (``max_tries - retries + 1``).
    """

    dag_id: str
    task_id: str
    run_id: str
    map_index: int = -1
    try_number: int = 1
    first_try_number: int = 1

    @property
    def key(self) -> str:
        """Identifies the task instance across its tries.

        >>> TaskIdentity("d", "t", "manual__1", 3, try_number=2).key
        'd/t/manual__1/3'
        """
        return f"{self.dag_id}/{self.task_id}/{self.run_id}/{self.map_index}"

    @property
    def author(self) -> str:
        return f"{self.dag_id}.{self.task_id}"

    @property
    def message(self) -> str:
        """The commit message of the task's snapshots.

        >>> TaskIdentity("d", "t", "manual__1", try_number=2).message
        'airflow d.t run manual__1 try 2'
        """
        mapped = f" map {self.map_index}" if self.map_index >= 0 else ""
        return f"airflow {self.author} run {self.run_id}{mapped} try {self.try_number}"

    def commit_fields(self) -> dict[str, Any]:
        """What :meth:`~airflow_provider_lakehouse.ducklake.transaction.Transaction.annotate` records for the
        script's commit: the task and the key a retry deduplicates on."""
        return {TASK_KEY: self.key, **self.attribution_fields()}

    def attribution_fields(self) -> dict[str, Any]:
        """The task alone, for snapshots it made that are not its script's commit (maintenance): shown as the
        committing task, never taken for an earlier try's commit."""
        return {TASK_FIELD: asdict(self)}

    @property
    def is_retry(self) -> bool:
        """True when an earlier try of this clearing generation exists."""
        return self.try_number > self.first_try_number


@dataclass(frozen=True)
class CommittedTry:
    """A snapshot an earlier try of the same task instance committed, with the outcome it recorded."""

    snapshot: Snapshot
    try_number: int
    outcome: dict[str, Any]


def find_committed_try(lake: DuckLake, task: TaskIdentity) -> CommittedTry | None:
    """The latest snapshot committed by an earlier try of ``task`` in its clearing generation, if any."""
    if not task.is_retry:
        return None
    pattern = f"%{json.dumps(task.key)}%"  # a prefilter (LIKE wildcards may match more); decided below
    with lake.store.connection() as conn:
        candidates = metadata.snapshots_with_extra_info_like(conn, pattern)
    for snapshot in candidates:
        try:
            info = json.loads(snapshot.commit_extra_info or "")
        except ValueError:
            continue
        if not isinstance(info, dict) or info.get(TASK_KEY) != task.key:
            continue
        committed_try = int((info.get(TASK_FIELD) or {}).get("try_number", 0))
        if task.first_try_number <= committed_try < task.try_number:
            return CommittedTry(snapshot, committed_try, dict(info.get(OUTCOME_FIELD) or {}))
    return None
