"""The Airflow task instance a lake script runs for (what makes its commit retry-safe)."""

from __future__ import annotations

from typing import Any

from airflow_provider_lakehouse.ducklake.task_commits import TaskIdentity


def task_identity(context: Any | None = None) -> TaskIdentity | None:
    """The running task instance and try, from ``context`` or the current task's context; None outside a task.

    The first try of the current clearing generation is ``max_tries - retries + 1``: Airflow raises
    ``max_tries`` by the task's retries when a user clears it (see :mod:`.ducklake.task_commits`).
    """
    if context is None:
        try:
            from airflow.sdk import get_current_context

            context = get_current_context()
        except Exception:  # not inside a running task (a script, a test, the DAG processor)
            return None
    ti = context.get("ti") if hasattr(context, "get") else None
    if ti is None or not getattr(ti, "run_id", None):
        return None
    try_number = int(getattr(ti, "try_number", 1) or 1)
    task = getattr(ti, "task", None)
    retries = int(getattr(task, "retries", 0) or 0)
    max_tries = getattr(ti, "max_tries", None)
    first = int(max_tries) - retries + 1 if max_tries is not None else 1
    map_index = getattr(ti, "map_index", -1)
    return TaskIdentity(
        dag_id=str(ti.dag_id),
        task_id=str(ti.task_id),
        run_id=str(ti.run_id),
        map_index=int(map_index if map_index is not None else -1),
        try_number=try_number,
        first_try_number=max(1, min(first, try_number)),
    )
