"""The API's routes. Each one checks access first (see :mod:`.security`), then reads."""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, status

from airflow_provider_lakehouse.connections.redact import Redactor
from airflow_provider_lakehouse.exceptions import ConnectionNotFoundError, NoSuchSchemaError, NoSuchTableError
from airflow_provider_lakehouse.plugins.api import datatable_views, lake_views, stores
from airflow_provider_lakehouse.plugins.api.lineage_graph import build_graph, page_link
from airflow_provider_lakehouse.plugins.api.models import (
    Changes,
    DagDataFlow,
    DataTableDetail,
    FileEntry,
    LakeTable,
    LineageEdge,
    LineageGraph,
    Overview,
    Preview,
    RecentChange,
    SnapshotEntry,
    StoreSummary,
    TaskDataFlow,
    TaskInstanceLineage,
    TaskOutput,
)
from airflow_provider_lakehouse.plugins.api.security import (
    User,
    can_read_connection,
    readable_dags,
    require_assets,
    require_dag,
    require_store,
)

log = logging.getLogger(__name__)
router = APIRouter()

_TABLE = re.compile(r"^[A-Za-z0-9_$]{1,200}(\.[A-Za-z0-9_$]{1,200})?$")
_LAKE_TTL_S = 60.0
_lakes: dict[stores.StoreRef, tuple[float, Any, Redactor]] = {}
_lakes_lock = threading.Lock()


def _table_name(table: str) -> str:
    if not _TABLE.match(table):
        raise HTTPException(status.HTTP_400_BAD_REQUEST, "A table is named schema.table (letters, digits, _ and $).")
    return table if "." in table else f"main.{table}"


def _ref(kind: stores.StoreKind, name: str) -> stores.StoreRef:
    try:
        return stores.store_ref(kind, name)
    except ValueError as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, str(exc)) from None


def _open_lake(ref: stores.StoreRef) -> tuple[Any, Redactor]:
    """An open lake, kept for a minute: opening reads the catalog's metadata and logs in to Postgres."""
    now = time.monotonic()
    with _lakes_lock:
        cached = _lakes.get(ref)
        if cached and now - cached[0] < _LAKE_TTL_S:
            return cached[1], cached[2]
    spec = stores.lake_spec(ref)
    redactor = Redactor(spec.secrets)
    if isinstance(spec.catalog, str):
        import os

        if not os.path.exists(spec.catalog):
            raise LookupError(f"Lake {ref.name!r} has no catalog yet.")
    try:
        lake = stores.open_lake_readonly(spec)
    except Exception as exc:  # a driver may echo connection details: only redacted text leaves this function
        kind = LookupError if isinstance(exc, LookupError) else RuntimeError
        raise kind(f"Lake {ref.name!r} could not be opened: {_clean(exc, redactor)}") from None
    with _lakes_lock:
        _lakes[ref] = (now, lake, redactor)
    return lake, redactor


@dataclass
class _Guard:
    """What an error message must not show: the secrets of the store the route opened."""

    redactor: Redactor | None = None


@contextmanager
def _errors() -> Iterator[_Guard]:
    """Map the provider's errors to HTTP answers whose text names no secret."""
    guard = _Guard()
    try:
        yield guard
    except HTTPException:
        raise
    except (NoSuchTableError, NoSuchSchemaError, ConnectionNotFoundError, LookupError) as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, _clean(exc, guard.redactor)) from None
    except ValueError as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, _clean(exc, guard.redactor)) from None
    except Exception as exc:
        log.warning("lakehouse view failed", exc_info=True)
        raise HTTPException(status.HTTP_502_BAD_GATEWAY, _clean(exc, guard.redactor)) from None


def _clean(exc: BaseException, redactor: Redactor | None) -> str:
    text = f"{type(exc).__name__}: {exc}" if not isinstance(exc, LookupError) else str(exc)
    text = re.sub(r"\w+://[^\s'\"]*@", "***@", text)  # a URI with credentials, whatever produced it
    return (redactor.redact(text) if redactor else text)[:1000]


# -- home ---------------------------------------------------------------------------------------------
@router.get("/overview", response_model=Overview)
def overview(user: User, recent: Annotated[int, Query(ge=1, le=200)] = 20) -> Overview:
    """Every lake and Data Table the user may read, whether it answers, and the lakes' latest snapshots."""
    summaries: list[StoreSummary] = []
    changes: list[RecentChange] = []
    for ref in stores.list_stores():
        if not can_read_connection(user, ref.conn_id):
            continue
        redactor: Redactor | None = None
        try:
            if ref.kind == "ducklake":
                lake, redactor = _open_lake(ref)
                summaries.append(lake_views.summary(ref.name, ref.conn_id, lake))
                changes += [
                    RecentChange(lake=ref.name, **s.model_dump()) for s in lake_views.recent_snapshots(lake, recent)
                ]
            else:
                spec = stores.datatable_spec(ref)
                redactor = Redactor([spec.password])
                ok, schemas, tables = datatable_views.reachable(spec)
                summaries.append(
                    StoreSummary(
                        kind=ref.kind, name=ref.name, conn_id=ref.conn_id, reachable=ok, schemas=schemas, tables=tables
                    )
                )
        except Exception as exc:
            summaries.append(
                StoreSummary(
                    kind=ref.kind, name=ref.name, conn_id=ref.conn_id, reachable=False, error=_clean(exc, redactor)
                )
            )
    changes.sort(key=lambda c: c.snapshot_time or "", reverse=True)
    return Overview(stores=summaries, recent_changes=changes[:recent])


# -- lakes --------------------------------------------------------------------------------------------
@router.get("/lakes/{lake}/snapshots", response_model=list[SnapshotEntry])
def lake_snapshots(
    lake: str, user: User, offset: Annotated[int, Query(ge=0)] = 0, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> list[SnapshotEntry]:
    """The lake's snapshots, newest first (a page of them)."""
    ref = _ref("ducklake", lake)
    require_store(user, ref)
    with _errors() as guard:
        opened, guard.redactor = _open_lake(ref)
        return lake_views.recent_snapshots(opened, offset + limit)[offset:]


@router.get("/lakes/{lake}/tables/{table}", response_model=LakeTable)
def lake_table(lake: str, table: str, user: User, version: Annotated[int | None, Query(ge=0)] = None) -> LakeTable:
    ref = _ref("ducklake", lake)
    require_store(user, ref)
    name = _table_name(table)
    with _errors() as guard:
        opened, guard.redactor = _open_lake(ref)
        return lake_views.table_page(opened, ref.name, name, version=version)


@router.get("/lakes/{lake}/tables/{table}/files", response_model=list[FileEntry])
def lake_files(
    lake: str,
    table: str,
    user: User,
    version: Annotated[int | None, Query(ge=0)] = None,
    offset: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[FileEntry]:
    """A page of the table's data files with their delete files (paths relative to the table's directory)."""
    ref = _ref("ducklake", lake)
    require_store(user, ref)
    name = _table_name(table)
    with _errors() as guard:
        opened, guard.redactor = _open_lake(ref)
        return lake_views.files_page(opened, name, version=version, offset=offset, limit=limit)


@router.get("/lakes/{lake}/tables/{table}/preview", response_model=Preview)
def lake_preview(
    lake: str,
    table: str,
    user: User,
    version: Annotated[int | None, Query(ge=0, description="snapshot id")] = None,
    timestamp: Annotated[dt.datetime | None, Query(description="latest snapshot at or before this time")] = None,
    columns: Annotated[str | None, Query(description="comma-separated column names")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> Preview:
    """The first rows (by row id) of the table at a snapshot: the rows DuckDB returns for the same snapshot."""
    ref = _ref("ducklake", lake)
    require_store(user, ref)
    name = _table_name(table)
    wanted = [c.strip() for c in columns.split(",") if c.strip()] if columns else None
    with _errors() as guard:
        opened, guard.redactor = _open_lake(ref)
        return lake_views.preview(opened, name, version=version, timestamp=timestamp, columns=wanted, limit=limit)


@router.get("/lakes/{lake}/tables/{table}/changes", response_model=Changes)
def lake_changes(
    lake: str,
    table: str,
    user: User,
    start: Annotated[int, Query(ge=0)],
    end: Annotated[int, Query(ge=0)],
    limit: Annotated[int, Query(ge=1, le=500)] = 200,
) -> Changes:
    """Rows inserted, deleted and updated between two snapshots (``ducklake_table_changes``)."""
    ref = _ref("ducklake", lake)
    require_store(user, ref)
    name = _table_name(table)
    if abs(end - start) > 1000:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, "Compare at most 1000 snapshots at once.")
    with _errors() as guard:
        opened, guard.redactor = _open_lake(ref)
        return lake_views.changes(opened, name, start, end, limit=limit)


# -- data tables --------------------------------------------------------------------------------------
@router.get("/datatables/{name}", response_model=DataTableDetail)
def datatable(name: str, user: User) -> DataTableDetail:
    ref = _ref("datatable", name)
    require_store(user, ref)
    with _errors() as guard:
        spec = stores.datatable_spec(ref)
        guard.redactor = Redactor([spec.password])
        return datatable_views.describe(spec, ref.name)


@router.get("/datatables/{name}/tables/{table}/preview", response_model=Preview)
def datatable_preview(
    name: str, table: str, user: User, columns: str | None = None, limit: Annotated[int, Query(ge=1, le=500)] = 100
) -> Preview:
    ref = _ref("datatable", name)
    require_store(user, ref)
    schema, _, table_name = _table_name(table).partition(".")
    if "." not in table:
        schema = "public"
    wanted = [c.strip() for c in columns.split(",") if c.strip()] if columns else None
    with _errors() as guard:
        spec = stores.datatable_spec(ref)
        guard.redactor = Redactor([spec.password])
        return datatable_views.preview(spec, schema, table_name, columns=wanted, limit=limit)


# -- lineage ------------------------------------------------------------------------------------------
def _session() -> Any:
    from airflow.utils.session import create_session

    return create_session()


def _asset_ids(session: Any, uris: set[str]) -> dict[str, int]:
    from airflow.models.asset import AssetModel
    from sqlalchemy import select

    if not uris:
        return {}
    rows = session.execute(select(AssetModel.uri, AssetModel.id).where(AssetModel.uri.in_(list(uris))))
    return {uri: int(asset_id) for uri, asset_id in rows}


@router.get("/lineage", response_model=LineageGraph)
def lineage(
    user: User,
    dataset: Annotated[str, Query(min_length=3, max_length=2000)],
    depth: Annotated[int, Query(ge=1, le=6)] = 4,
) -> LineageGraph:
    """Upstream and downstream tables of ``dataset`` (an asset URI) with typed column edges, across DAGs."""
    from airflow.models.dag import DagModel
    from sqlalchemy import select

    from airflow_provider_lakehouse.plugins.api.lineage_index import all_lineage

    require_assets(user)
    with _session() as session:
        dag_ids = readable_dags(user, session.scalars(select(DagModel.dag_id)).all())
        records = all_lineage(session, dag_ids)
        graph = build_graph(dataset.strip(), records, max_depth=depth)
        ids = _asset_ids(session, {n.id for n in graph.nodes})
    for node in graph.nodes:
        node.asset_id = ids.get(node.id)
        node.asset_uri = node.id if node.id in ids else None
    return graph


@router.get("/dags/{dag_id}/dataflow", response_model=DagDataFlow)
def dag_dataflow(dag_id: str, user: User) -> DagDataFlow:
    """The DAG's tasks with the tables and files each reads and writes, and the columns (the latest run's
    record where the task ran, else its SQL)."""
    from airflow_provider_lakehouse.plugins.api.lineage_index import RUN, parse_task, run_lineage, serialized_dags

    require_dag(user, dag_id)
    with _session() as session:
        dag = serialized_dags(session, [dag_id]).get(dag_id)
        if dag is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"DAG {dag_id!r} not found.")
        runs = run_lineage(session, dag_ids=[dag_id])
    tasks = []
    for task in sorted(dag.tasks, key=lambda t: t.task_id):
        parsed = parse_task(dag_id, task)
        mine = [r for r in runs if r.task_id == task.task_id]
        reads: dict[str, list[str]] = {}
        writes: dict[str, list[str]] = {}
        origin = "none"
        error = None
        if mine:
            origin = RUN
            for r in mine:
                writes[r.output] = sorted(set(writes.get(r.output, [])) | set(r.columns_written))
                for source, cols in r.record.reads.items():
                    reads[source] = sorted(set(reads.get(source, [])) | set(cols))
        elif parsed is not None:
            origin = "parse" if parsed.error is None else "none"
            error = parsed.error
            reads = {k: list(v) for k, v in parsed.reads.items()}
            writes = {k: list(v) for k, v in parsed.writes.items()}
        else:  # another operator: its declared inlets and outlets, without columns
            reads = {u: [] for u in _uris(getattr(task, "inlets", ()))}
            writes = {u: [] for u in _uris(getattr(task, "outlets", ()))}
            origin = "declared" if reads or writes else "none"
        tasks.append(
            TaskDataFlow(
                task_id=task.task_id,
                operator=task.task_type,
                store=parsed.store if parsed else None,
                reads=reads,
                writes=writes,
                origin=origin,
                downstream=sorted(task.downstream_task_ids),
                error=error,
            )
        )
    return DagDataFlow(dag_id=dag_id, tasks=tasks)


def _uris(items: Any) -> list[str]:
    return [str(u) for u in (getattr(i, "uri", None) for i in items or ()) if u]


@router.get("/dags/{dag_id}/runs/{run_id}/tasks/{task_id}/lineage", response_model=TaskInstanceLineage)
def task_instance_lineage(
    dag_id: str, run_id: str, task_id: str, user: User, map_index: Annotated[int, Query(ge=-1)] = -1
) -> TaskInstanceLineage:
    """What this task instance read and wrote: tables, files, columns, typed edges, snapshots, rows."""
    from airflow_provider_lakehouse.plugins.api.lineage_index import (
        PARSE,
        RUN,
        parse_task,
        run_lineage,
        serialized_dags,
    )

    require_dag(user, dag_id, task_instances=True)
    with _session() as session:
        records = run_lineage(session, dag_ids=[dag_id], run_id=run_id, task_id=task_id, map_index=map_index)
        origin = RUN
        if not records:
            dag = serialized_dags(session, [dag_id]).get(dag_id)
            task = dag.task_dict.get(task_id) if dag is not None else None
            parsed = parse_task(dag_id, task) if task is not None else None
            records = list(parsed.records) if parsed else []
            origin = PARSE if parsed and parsed.error is None else "none"
            reads = {k: list(v) for k, v in parsed.reads.items()} if parsed else {}
        else:
            reads = {}
            for r in records:
                for source, cols in r.record.reads.items():
                    reads[source] = sorted(set(reads.get(source, [])) | set(cols))
    edges = [
        LineageEdge(
            source=e.source,
            source_column=e.column,
            target=r.output,
            target_column=col,
            type=e.type,
            subtype=e.subtype,
            masking=e.masking,
            dag_id=dag_id,
            task_id=task_id,
            origin=r.origin,
        )
        for r in records
        for e, col in r.edges()
    ]
    outputs = [
        TaskOutput(
            dataset=r.output,
            rows_written=r.extra.get("rows_written"),
            snapshot_id=r.extra.get("snapshot_id"),
            columns_written=list(r.columns_written),
            link=page_link(r.output),
        )
        for r in records
    ]
    snapshot_read = next((r.record.snapshot_read for r in records if r.record.snapshot_read is not None), None)
    try_number = next((r.record.try_number for r in records if r.record.try_number is not None), None)
    links = {d: link for d in {*reads, *(r.output for r in records)} if (link := page_link(d))}
    return TaskInstanceLineage(
        dag_id=dag_id,
        run_id=run_id,
        task_id=task_id,
        map_index=map_index,
        try_number=try_number,
        origin=origin,
        snapshot_read=snapshot_read,
        reads=reads,
        outputs=outputs,
        edges=edges,
        links=links,
    )
