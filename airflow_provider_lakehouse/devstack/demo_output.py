"""What the demo command prints while and after a DAG runs: progress, one result line per task, lineage lines.

Pure functions plus a read-only look at the demo's SQLite metadata database, so the demo says where a
minutes-long run is (tasks done / total, the running task, elapsed time) without importing Airflow.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class RunProgress:
    done: int
    total: int
    running: tuple[str, ...]
    failed: int = 0

    def line(self, dag_id: str, elapsed_s: float) -> str:
        """
        >>> RunProgress(12, 52, ("load.store_sales",)).line("tpcds_pipeline", 190)
        'tpcds_pipeline: 12/52 tasks done, running load.store_sales, 3 min 10 s'
        """
        running = f", running {', '.join(self.running[:3])}" if self.running else ""
        more = f" +{len(self.running) - 3}" if len(self.running) > 3 else ""
        failed = f", {self.failed} failed" if self.failed else ""
        return f"{dag_id}: {self.done}/{self.total} tasks done{failed}{running}{more}, {_duration(elapsed_s)}"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


def read_only(db_path: Path, timeout_s: float) -> sqlite3.Connection:
    """The SQLite metadata DB at ``db_path``, opened read-only (close it: ``contextlib.closing``)."""
    return sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=timeout_s)


def latest_run_id(conn: sqlite3.Connection, dag_id: str) -> str | None:
    """The ``run_id`` of the newest run of ``dag_id`` (``None`` before there is one)."""
    row = conn.execute("SELECT run_id FROM dag_run WHERE dag_id = ? ORDER BY id DESC LIMIT 1", (dag_id,)).fetchone()
    return None if row is None else str(row[0])


def run_progress(db_path: Path, dag_id: str) -> RunProgress | None:
    """The latest run of ``dag_id`` in the SQLite metadata DB (read-only; ``None`` before it exists)."""
    if not db_path.exists():
        return None
    try:
        with closing(read_only(db_path, timeout_s=2)) as conn:
            run_id = latest_run_id(conn, dag_id)
            if run_id is None:
                return None
            states = conn.execute(
                "SELECT task_id, map_index, state FROM task_instance WHERE dag_id = ? AND run_id = ? ORDER BY start_date",
                (dag_id, run_id),
            ).fetchall()
    except sqlite3.Error:  # locked or mid-migration: try again at the next poll
        return None
    finished = {"success", "skipped", "failed", "upstream_failed", "removed"}
    return RunProgress(
        done=sum(1 for _t, _m, s in states if s in finished),
        total=len(states),
        running=tuple(t if m < 0 else f"{t}[{m}]" for t, m, s in states if s == "running"),
        failed=sum(1 for _t, _m, s in states if s in ("failed", "upstream_failed")),
    )


def result_line(task_id: str, value: Any) -> str:
    """The useful part of a task's return value: for lake tasks the statements, rows written, snapshot created,
    tables written and seconds, not the ATTACH/USE boilerplate.

    >>> response = {"status": "ok", "engine": "local", "elapsed_s": 4.2, "result": {"commands": [
    ...     {"command_index": 1, "kind": "attach"}, {"command_index": 2, "kind": "use"},
    ...     {"command_index": 3, "kind": "ctas", "affected_rows": 1000}]},
    ...     "catalog_info": {"lake": "main", "snapshot_before": 3, "snapshot_after": 4, "snapshots_created": [4],
    ...                      "tables_touched": [{"table": "sales.orders", "rows_written": 1000, "snapshot_id": 4}]}}
    >>> result_line("load_orders", response)
    'load_orders: ctas; wrote sales.orders (1,000 rows); snapshot 4; 4.2 s'
    >>> result_line("count", [{"n": 3}])
    'count: 1 row: [{"n": 3}]'
    """
    import json

    if isinstance(value, dict) and "catalog_info" in value:
        commands = [c for c in value.get("result", {}).get("commands", []) if c.get("kind") not in ("attach", "use")]
        kinds = ", ".join(c["kind"] for c in commands) or "nothing"
        info = value["catalog_info"]
        parts = [kinds]
        touched = info.get("tables_touched") or []
        if touched:
            parts.append("wrote " + ", ".join(f"{t['table']} ({t.get('rows_written', 0):,} rows)" for t in touched))
        selects = [c for c in commands if c.get("row_count") is not None]
        if selects:
            parts.append(f"returned {selects[-1]['row_count']:,} row(s)")
        created = info.get("snapshots_created") or []
        if value.get("deduplicated"):
            parts.append(f"snapshot {value['deduplicated']['snapshot_id']} (committed by an earlier try)")
        elif created:
            parts.append(f"snapshot {', '.join(str(s) for s in created)}")
        if value.get("elapsed_s") is not None:
            parts.append(f"{value['elapsed_s']:.1f} s")
        return f"{task_id}: {'; '.join(parts)}"
    if isinstance(value, list):
        text = json.dumps(value, default=str)
        return (
            f"{task_id}: {len(value)} row{'s' if len(value) != 1 else ''}: {text[:200]}{'…' if len(text) > 200 else ''}"
        )
    text = json.dumps(value, default=str)
    return f"{task_id}: {text[:240]}{'…' if len(text) > 240 else ''}"


def dataset_uri(namespace: str, name: str) -> str:
    """An OpenLineage dataset as one URI: ``file`` + ``/p`` is ``file:///p``, not ``file//p``.

    >>> dataset_uri("file", "/tmp/x.parquet"), dataset_uri("s3://landing", "a/b.parquet")
    ('file:///tmp/x.parquet', 's3://landing/a/b.parquet')
    >>> dataset_uri("ducklake://main", "sales.orders")
    'ducklake://main/sales.orders'
    """
    if "://" not in namespace:
        return f"{namespace}://{name}" if name.startswith("/") else f"{namespace}:{name}"
    return f"{namespace.rstrip('/')}/{name.lstrip('/')}"
