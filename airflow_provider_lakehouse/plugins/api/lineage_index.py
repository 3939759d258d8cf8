"""Column lineage as Airflow knows it: records the operators kept in asset events, and the SQL of tasks that
have not run (parsed from the serialized DAG).

A run's record wins over the parse-time reading of the same task and output: it saw the rendered SQL.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow_provider_lakehouse.assets.lineage_extra import Edge, LineageRecord

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

log = logging.getLogger(__name__)

#: operators whose SQL is read at parse time, by task type
SQL_OPERATORS = {"DucklakeOperator": "ducklake", "DataTableOperator": "datatable"}
RUN = "run"
PARSE = "parse"
EVENT_SCAN_LIMIT = 20_000  # newest asset events looked at; older runs of the same task add nothing new


@dataclass(frozen=True)
class TaskLineage:
    """What one task wrote into one dataset, with the column edges that produced it."""

    dag_id: str
    task_id: str
    output: str
    record: LineageRecord
    origin: str
    columns_written: tuple[str, ...] = ()
    run_id: str | None = None
    map_index: int = -1
    extra: dict[str, Any] = field(default_factory=dict)

    def edges(self) -> Iterator[tuple[Edge, str | None]]:
        """``(edge, output column)``; dataset-wide edges have no output column."""
        for column, edges in self.record.columns.items():
            for edge in edges:
                yield edge, column
        for edge in self.record.rows:
            yield edge, None

    @property
    def inputs(self) -> set[str]:
        return set(self.record.reads) | {e.source for e, _ in self.edges()}


def run_lineage(
    session: Session,
    *,
    dag_ids: Iterable[str] | None = None,
    run_id: str | None = None,
    task_id: str | None = None,
    map_index: int | None = None,
) -> list[TaskLineage]:
    """Records from asset events, newest first; the latest per (dag, task, output) unless a run is named."""
    from airflow.models.asset import AssetEvent, AssetModel
    from sqlalchemy import select

    query = (
        select(
            AssetEvent.source_dag_id,
            AssetEvent.source_task_id,
            AssetEvent.source_run_id,
            AssetEvent.source_map_index,
            AssetEvent.extra,
            AssetModel.uri,
        )
        .join(AssetModel, AssetModel.id == AssetEvent.asset_id)
        .order_by(AssetEvent.timestamp.desc(), AssetEvent.id.desc())
        .limit(EVENT_SCAN_LIMIT)
    )
    if dag_ids is not None:
        query = query.where(AssetEvent.source_dag_id.in_(list(dag_ids)))
    if run_id is not None:
        query = query.where(AssetEvent.source_run_id == run_id)
    if task_id is not None:
        query = query.where(AssetEvent.source_task_id == task_id)
    if map_index is not None:
        query = query.where(AssetEvent.source_map_index == map_index)
    seen: set[tuple[str, str, str]] = set()
    found = []
    for dag_id, t_id, r_id, m_index, extra, uri in session.execute(query):
        record = LineageRecord.from_extra(extra)
        if record is None or not dag_id or not t_id:
            continue
        key = (dag_id, t_id, uri)
        if key in seen:
            continue
        seen.add(key)
        found.append(
            TaskLineage(
                dag_id,
                t_id,
                uri,
                record,
                RUN,
                tuple(extra.get("columns_written") or ()),
                r_id,
                -1 if m_index is None else int(m_index),
                dict(extra),
            )
        )
    return found


def serialized_dags(session: Session, dag_ids: Iterable[str] | None = None) -> dict[str, Any]:
    """The latest serialized version of each DAG (all, or those named)."""
    from airflow.models.serialized_dag import SerializedDagModel

    if dag_ids is None:
        return SerializedDagModel.read_all_dags(session=session)
    dags = {}
    for dag_id in dag_ids:
        dag = SerializedDagModel.get_dag(dag_id, session=session)
        if dag is not None:
            dags[dag_id] = dag
    return dags


@dataclass(frozen=True)
class ParsedTask:
    """A SQL task's lineage read from its DAG's SQL (``error`` says why there is none)."""

    task_id: str
    operator: str
    store: str | None
    reads: dict[str, tuple[str, ...]]
    writes: dict[str, tuple[str, ...]]
    records: tuple[TaskLineage, ...]
    error: str | None = None


def parse_task(dag_id: str, task: Any) -> ParsedTask | None:
    """Parse-time lineage of one serialized task, or ``None`` when it is not one of this provider's SQL tasks."""
    kind = SQL_OPERATORS.get(getattr(task, "task_type", ""))
    if kind is None:
        return None
    sql = getattr(task, "sql", None)
    try:
        target = _target(kind, task)
    except Exception as exc:  # a templated store name
        return ParsedTask(task.task_id, task.task_type, None, {}, {}, (), f"store not known before the run: {exc}")
    return _parse_cached(
        dag_id,
        task.task_id,
        task.task_type,
        kind,
        target.name,
        target.default_schema,
        target.dialect,
        sql if isinstance(sql, str) else None,
    )


def _target(kind: str, task: Any) -> Any:
    from airflow_provider_lakehouse.hooks._lineage import SqlTarget

    if kind == "datatable":
        from airflow_provider_lakehouse.connections.names import parse_datatable_name

        ref = parse_datatable_name(getattr(task, "datatable", None) or "main")
        return SqlTarget("datatable", ref.name, ref.schema or "public", "postgres")
    lake = getattr(task, "ducklake", None)
    sql = getattr(task, "sql", None)
    if not lake and isinstance(sql, str):
        from airflow_provider_lakehouse.sql.names import attached_lake

        lake = attached_lake(sql)
    if lake and "{{" in str(lake):
        raise ValueError(str(lake))
    return SqlTarget("ducklake", (lake or "main").lower(), "main", getattr(task, "dialect", None) or "duckdb")


@functools.lru_cache(maxsize=4096)
def _parse_cached(
    dag_id: str, task_id: str, operator: str, kind: str, name: str, schema: str, dialect: str, sql: str | None
) -> ParsedTask:
    from airflow_provider_lakehouse.hooks._lineage import SqlTarget, lineage_record, parse_time_lineage

    target = SqlTarget(kind, name, schema, dialect)
    if sql is None:
        return ParsedTask(task_id, operator, target.store, {}, {}, (), "SQL not known before the run")
    try:
        lineage = parse_time_lineage(sql, target)
    except Exception as exc:
        return ParsedTask(task_id, operator, target.store, {}, {}, (), f"SQL could not be analysed: {exc}")
    if lineage is None:
        return ParsedTask(task_id, operator, target.store, {}, {}, (), "SQL known only at run time (a file or Jinja)")
    records = tuple(
        TaskLineage(
            dag_id,
            task_id,
            target.dataset_id(out.dataset),
            lineage_record(lineage, out, target),
            PARSE,
            tuple(out.columns_written),
        )
        for out in lineage.outputs
    )
    return ParsedTask(
        task_id,
        operator,
        target.store,
        reads={target.dataset_id(d.dataset): tuple(d.columns_read) for d in lineage.inputs},
        writes={target.dataset_id(d.dataset): tuple(d.columns_written) for d in lineage.outputs},
        records=records,
    )


def all_lineage(session: Session, dag_ids: set[str]) -> list[TaskLineage]:
    """Run records of ``dag_ids``, plus parse-time records of their tasks with no run record for that output."""
    found = run_lineage(session, dag_ids=dag_ids)
    known = {(t.dag_id, t.task_id, t.output) for t in found}
    known_tasks = {(t.dag_id, t.task_id) for t in found}
    for dag_id, dag in serialized_dags(session, dag_ids).items():
        for task in dag.tasks:
            try:
                parsed = parse_task(dag_id, task)
            except Exception:  # one odd task must not hide the others' lineage
                log.warning("lineage of %s.%s could not be read", dag_id, task.task_id, exc_info=True)
                continue
            if parsed is None:
                continue
            for record in parsed.records:
                # a task that ran but wrote elsewhere (templated SQL) keeps its run records only
                if (dag_id, task.task_id, record.output) not in known and (dag_id, task.task_id) not in known_tasks:
                    found.append(record)
    return found
