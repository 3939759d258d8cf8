"""One readable task-log line per statement: what it was, what it read and wrote, rows, snapshot, seconds.

Replaces the engine's raw output as the place to see what a script did; pure functions over the plan and the
response, so they are tested without Spark.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

_MAX_NAMES = 4


def _names(items: Sequence[str]) -> str:
    """
    >>> _names(["a", "b", "c", "d", "e", "f"])
    'a, b, c, d +2 more'
    """
    unique = list(dict.fromkeys(items))
    shown = ", ".join(unique[:_MAX_NAMES])
    return f"{shown} +{len(unique) - _MAX_NAMES} more" if len(unique) > _MAX_NAMES else shown


def _rows(command: dict[str, Any]) -> str | None:
    if command.get("row_count") is not None:
        return f"{command['row_count']:,} row(s) returned"
    if command.get("affected_rows") is not None:
        return f"{command['affected_rows']:,} row(s) written"
    return None


def lake_statement_lines(plan: Any, response: dict[str, Any]) -> list[str]:
    """Lines for a lake script: ``plan`` is the planner's :class:`~airflow_provider_lakehouse.spark.plan.Plan`.

    >>> from types import SimpleNamespace as N
    >>> step = N(index=2, kind="insert", target="sales.orders", tables=(N(name="sales.raw"),),
    ...          files=(N(paths=("s3://landing/a.parquet",)),))
    >>> plan = N(steps=(N(index=1, kind="attach", target=None, tables=(), files=()), step))
    >>> response = {"result": {"commands": [{"command_index": 1, "kind": "attach"},
    ...     {"command_index": 2, "kind": "insert", "affected_rows": 1200, "snapshot_id": 7, "elapsed_s": 1.52}]}}
    >>> lake_statement_lines(plan, response)
    ['statement 2/2 insert: read sales.raw, s3://landing/a.parquet; wrote sales.orders; 1,200 row(s) written; snapshot 7; 1.5 s']
    """
    commands = {c["command_index"]: c for c in response["result"]["commands"]}
    total = len(plan.steps)
    lines = []
    for step in plan.steps:
        if step.kind in ("attach", "use", "begin", "commit"):
            continue  # boilerplate: the lake and transaction are named once in the commit line
        command = commands.get(step.index, {})
        reads = [t.name for t in step.tables] + [p for f in step.files for p in f.paths]
        parts = [f"statement {step.index}/{total} {step.kind}"]
        details = []
        if reads:
            details.append(f"read {_names(reads)}")
        if step.target and step.kind not in ("select",):
            details.append(
                f"wrote {step.target}" if step.kind not in ("temp_table", "temp_view") else f"temp {step.target}"
            )
        if (rows := _rows(command)) is not None:
            details.append(rows)
        if command.get("snapshot_id") is not None:
            details.append(f"snapshot {command['snapshot_id']}")
        if command.get("status") in ("rolled_back", "exists", "absent"):
            details.append(str(command["status"]).replace("_", " "))
        if command.get("elapsed_s") is not None:
            details.append(f"{command['elapsed_s']:.1f} s")
        lines.append(f"{parts[0]}: {'; '.join(details)}" if details else parts[0])
    return lines


def datatable_statement_lines(statements: Sequence[Any], writes: Mapping[int, Sequence[str]]) -> list[str]:
    """Lines for a Data Table script: runner results and, by statement index, the tables lineage says it wrote.

    >>> from types import SimpleNamespace as N
    >>> datatable_statement_lines([N(index=1, kind="insert", rowcount=3)], {1: ["analytics.customers"]})
    ['statement 1/1 insert: wrote analytics.customers; 3 row(s)']
    """
    total = len(statements)
    lines = []
    for st in statements:
        details = []
        if writes.get(st.index):
            details.append(f"wrote {_names(list(writes[st.index]))}")
        if st.rowcount is not None and st.rowcount >= 0:
            details.append(f"{st.rowcount:,} row(s)")
        lines.append(
            f"statement {st.index}/{total} {st.kind or '?'}: {'; '.join(details)}"
            if details
            else f"statement {st.index}/{total} {st.kind or '?'}"
        )
    return lines
