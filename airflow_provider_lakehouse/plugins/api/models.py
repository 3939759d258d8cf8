"""Response models of the Lakehouse API (their OpenAPI schema is what the React app is typed against)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class TaskRef(BaseModel):
    """The Airflow task instance (and try) that committed a snapshot or wrote an asset event."""

    dag_id: str
    task_id: str
    run_id: str
    map_index: int = -1
    try_number: int | None = None


class StoreSummary(BaseModel):
    kind: str  # ducklake | datatable
    name: str
    conn_id: str
    reachable: bool
    error: str | None = None
    schemas: list[str] = []
    tables: list[str] = []
    snapshot_count: int | None = None
    data_size_bytes: int | None = None


class SnapshotEntry(BaseModel):
    snapshot_id: int
    snapshot_time: str | None
    schema_version: int
    changes: dict[str, list[str]]
    author: str | None = None
    commit_message: str | None = None
    task: TaskRef | None = None


class RecentChange(SnapshotEntry):
    lake: str


class Overview(BaseModel):
    stores: list[StoreSummary]
    recent_changes: list[RecentChange]


class ColumnEntry(BaseModel):
    column_id: int
    name: str
    type: str
    nullable: bool
    default: str | None = None
    min_value: str | None = None
    max_value: str | None = None
    null_count: int | None = None
    contains_nan: bool | None = None
    children: list[ColumnEntry] = []


class FileEntry(BaseModel):
    data_file_id: int
    path: str  # relative to the table's directory: never a presigned or credentialed URL
    record_count: int
    file_size_bytes: int
    begin_snapshot: int
    delete_file: str | None = None
    delete_count: int = 0
    delete_file_size_bytes: int = 0
    inlined_deletes: int = 0


class LakeTable(BaseModel):
    lake: str
    schema_name: str
    name: str
    table_id: int
    snapshot_id: int
    asset_uri: str
    columns: list[ColumnEntry]
    partitioning: list[str]
    row_count: int
    inlined_row_count: int
    file_count: int
    file_size_bytes: int
    delete_file_count: int
    files: list[FileEntry]  # the first ones; all of them page by page from .../files
    snapshots: list[SnapshotEntry]  # the snapshots that changed this table, newest first


class Preview(BaseModel):
    columns: list[str]
    types: list[str]
    rows: list[list[Any]]
    snapshot_id: int | None = None
    truncated: bool = False
    limit: int


class Changes(BaseModel):
    start: int
    end: int
    columns: list[str]
    rows: list[list[Any]]
    counts: dict[str, int]
    truncated: bool = False


class DataTableColumn(BaseModel):
    name: str
    type: str
    nullable: bool
    default: str | None = None


class DataTableTable(BaseModel):
    schema_name: str
    name: str
    kind: str
    approximate_rows: int | None
    columns: list[DataTableColumn]
    asset_uri: str


class DataTableSchema(BaseModel):
    name: str
    tables: list[DataTableTable]


class DataTableDetail(BaseModel):
    name: str
    schemas: list[DataTableSchema]


class LineageEdge(BaseModel):
    source: str
    source_column: str
    target: str
    target_column: str | None  # None: the edge decides every row of the target (join, filter, grouping)
    type: str
    subtype: str
    masking: bool = False
    dag_id: str | None = None
    task_id: str | None = None
    origin: str  # "run" (recorded by a task run) or "parse" (from the DAG's SQL; the task has not run)


class LineageNode(BaseModel):
    id: str  # asset URI (or the dataset key when there is none)
    label: str
    kind: str  # table | file
    columns: list[str]
    link: str | None = None  # the Lakehouse page of the table
    asset_uri: str | None = None
    asset_id: int | None = None  # Airflow's asset page: /assets/<id>
    depth: int = 0  # < 0 upstream, > 0 downstream of the focus


class LineageGraph(BaseModel):
    focus: str
    nodes: list[LineageNode]
    edges: list[LineageEdge]


class TaskDataFlow(BaseModel):
    task_id: str
    operator: str
    store: str | None
    reads: dict[str, list[str]]  # dataset id -> columns read
    writes: dict[str, list[str]]  # dataset id -> columns written
    origin: str
    downstream: list[str]
    error: str | None = None


class DagDataFlow(BaseModel):
    dag_id: str
    tasks: list[TaskDataFlow]


class TaskOutput(BaseModel):
    dataset: str
    rows_written: int | None = None
    snapshot_id: int | None = None
    columns_written: list[str] = []
    link: str | None = None


class TaskInstanceLineage(BaseModel):
    dag_id: str
    run_id: str
    task_id: str
    map_index: int
    try_number: int | None
    origin: str  # run | parse | none
    snapshot_read: int | None = None
    reads: dict[str, list[str]]
    outputs: list[TaskOutput]
    edges: list[LineageEdge]
    links: dict[str, str]  # dataset id -> Lakehouse page


ColumnEntry.model_rebuild()
