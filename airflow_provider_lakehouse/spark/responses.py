"""The response of a lake script, whichever engine ran it: per-statement results, the snapshots it made, and
what a commit records of it so that a retry can answer with the same outcome."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow_provider_lakehouse.ducklake.task_commits import find_committed_try
from airflow_provider_lakehouse.spark.steps import WRITE_KINDS

if TYPE_CHECKING:
    from airflow_provider_lakehouse.ducklake.catalog import DuckLake
    from airflow_provider_lakehouse.ducklake.task_commits import CommittedTry, TaskIdentity
    from airflow_provider_lakehouse.spark.plan import Plan

log = logging.getLogger(__name__)

#: statement kinds that change a table (``tables_touched`` in a response)
TABLE_WRITES = frozenset({"create_table", "ctas", "drop_table", "alter", "insert", "delete", "update", "merge"})


@dataclass
class StepResult:
    """One statement's result: its index, kind and what the response shows of it (counts, rows, status ...)."""

    index: int
    kind: str
    data: dict[str, Any] = field(default_factory=dict)

    def as_command(self) -> dict[str, Any]:
        """The statement's entry in ``result.commands`` (its target is shown in ``tables_touched``)."""
        return {"command_index": self.index, "kind": self.kind, **{k: v for k, v in self.data.items() if k != "target"}}


def build_response(
    lake: str, results: Sequence[StepResult], before: int, committed: Sequence[int], started: float
) -> dict[str, Any]:
    """A run's response: ``status``, ``result`` (the commands), ``catalog_info`` (snapshots, tables touched).

    :param before: the snapshot the script read first.
    :param committed: the snapshots it made, in order.
    """
    touched = _tables_touched(
        (r.kind, r.data.get("target"), r.data.get("status"), r.data.get("affected_rows"), r.data.get("snapshot_id"))
        for r in results
    )
    return {
        "status": "ok",
        "result": {"command_count": len(results), "commands": [r.as_command() for r in results]},
        "catalog_info": {
            "lake": lake,
            "snapshot_before": before,
            "snapshot_after": committed[-1] if committed else before,
            "snapshots_created": list(committed),
            "tables_touched": touched,
        },
        "elapsed_s": round(time.monotonic() - started, 3),
    }


def _tables_touched(writes: Iterable[tuple[Any, Any, Any, Any, int | None]]) -> list[dict[str, Any]]:
    """``tables_touched`` from (kind, target, status, affected rows, snapshot id) per statement: rows written per
    table and the snapshot that holds them; rolled-back statements and non-table targets do not count."""
    touched: dict[str, dict[str, Any]] = {}
    for kind, target, status, affected, snapshot_id in writes:
        if not target or kind not in TABLE_WRITES or status == "rolled_back":
            continue
        entry = touched.setdefault(target, {"table": target, "rows_written": 0})
        entry["rows_written"] += int(affected or 0)
        if snapshot_id is not None:
            entry["snapshot_id"] = snapshot_id
    return sorted(touched.values(), key=lambda t: t["table"])


def outcome_of(results: Iterable[StepResult]) -> dict[str, Any]:
    """What a commit records of its script: each statement's kind and counts (no result rows)."""
    kept = ("affected_rows", "row_count", "status", "target")
    return {
        "commands": [
            {"command_index": r.index, "kind": r.kind, **{k: r.data[k] for k in kept if k in r.data}} for r in results
        ]
    }


def response_of_earlier_try(
    lake: DuckLake, task: TaskIdentity | None, plan: Plan, started: float
) -> dict[str, Any] | None:
    """The recorded response when an earlier try of ``task`` already committed this script, else None (no task,
    or an ``autocommit`` script, which a retry runs again)."""
    if task is None or plan.autocommit:
        return None
    earlier = find_committed_try(lake, task)
    if earlier is None:
        return None
    log.info(
        "task %s try %d: try %d already committed snapshot %d; not committing again",
        task.key,
        task.try_number,
        earlier.try_number,
        earlier.snapshot.snapshot_id,
    )
    return recorded_response(plan, earlier, started)


def recorded_response(plan: Plan, earlier: CommittedTry, started: float) -> dict[str, Any]:
    """The response of a retry whose earlier try already committed: that commit's recorded outcome."""
    snapshot_id = earlier.snapshot.snapshot_id
    commands, writes = [], []
    for command in earlier.outcome.get("commands", []):
        command = dict(command)
        target = command.pop("target", None)
        if command.get("kind") in WRITE_KINDS and command.get("status") != "rolled_back":
            command["snapshot_id"] = snapshot_id
        writes.append((command.get("kind"), target, command.get("status"), command.get("affected_rows"), snapshot_id))
        commands.append(command)
    return {
        "status": "ok",
        "deduplicated": {"snapshot_id": snapshot_id, "committed_by_try": earlier.try_number},
        "result": {"command_count": len(commands), "commands": commands},
        "catalog_info": {
            "lake": plan.lake,
            "snapshot_before": snapshot_id - 1,
            "snapshot_after": snapshot_id,
            "snapshots_created": [],
            "tables_touched": _tables_touched(writes),
        },
        "elapsed_s": round(time.monotonic() - started, 3),
    }
