/** Response types of the Lakehouse API (plugins/api/models.py). */

export type TaskRef = {
  dag_id: string;
  task_id: string;
  run_id: string;
  map_index: number;
  try_number: number | null;
};

export type StoreSummary = {
  kind: "ducklake" | "datatable";
  name: string;
  conn_id: string;
  reachable: boolean;
  error: string | null;
  schemas: string[];
  tables: string[];
  snapshot_count: number | null;
  data_size_bytes: number | null;
};

export type SnapshotEntry = {
  snapshot_id: number;
  snapshot_time: string | null;
  schema_version: number;
  changes: Record<string, string[]>;
  author: string | null;
  commit_message: string | null;
  task: TaskRef | null;
};

export type RecentChange = SnapshotEntry & { lake: string };

export type Overview = { stores: StoreSummary[]; recent_changes: RecentChange[] };

export type ColumnEntry = {
  column_id: number;
  name: string;
  type: string;
  nullable: boolean;
  default: string | null;
  min_value: string | null;
  max_value: string | null;
  null_count: number | null;
  contains_nan: boolean | null;
  children: ColumnEntry[];
};

export type FileEntry = {
  data_file_id: number;
  path: string;
  record_count: number;
  file_size_bytes: number;
  begin_snapshot: number;
  delete_file: string | null;
  delete_count: number;
  delete_file_size_bytes: number;
  inlined_deletes: number;
};

export type LakeTable = {
  lake: string;
  schema_name: string;
  name: string;
  table_id: number;
  snapshot_id: number;
  asset_uri: string;
  columns: ColumnEntry[];
  partitioning: string[];
  row_count: number;
  inlined_row_count: number;
  file_count: number;
  file_size_bytes: number;
  delete_file_count: number;
  files: FileEntry[];
  snapshots: SnapshotEntry[];
};

export type Cell = string | number | boolean | null | Cell[] | { [key: string]: Cell };

export type Preview = {
  columns: string[];
  types: string[];
  rows: Cell[][];
  snapshot_id: number | null;
  truncated: boolean;
  limit: number;
};

export type Changes = {
  start: number;
  end: number;
  columns: string[];
  rows: Cell[][];
  counts: Record<string, number>;
  truncated: boolean;
};

export type DataTableColumn = { name: string; type: string; nullable: boolean; default: string | null };
export type DataTableTable = {
  schema_name: string;
  name: string;
  kind: string;
  approximate_rows: number | null;
  columns: DataTableColumn[];
  asset_uri: string;
};
export type DataTableDetail = { name: string; schemas: { name: string; tables: DataTableTable[] }[] };

export type LineageEdge = {
  source: string;
  source_column: string;
  target: string;
  target_column: string | null;
  type: string;
  subtype: string;
  masking: boolean;
  dag_id: string | null;
  task_id: string | null;
  origin: string;
};

export type LineageNode = {
  id: string;
  label: string;
  kind: string;
  columns: string[];
  link: string | null;
  asset_uri: string | null;
  asset_id: number | null;
  depth: number;
};

export type LineageGraph = { focus: string; nodes: LineageNode[]; edges: LineageEdge[] };

export type TaskDataFlow = {
  task_id: string;
  operator: string;
  store: string | null;
  reads: Record<string, string[]>;
  writes: Record<string, string[]>;
  origin: string;
  downstream: string[];
  error: string | null;
};

export type DagDataFlow = { dag_id: string; tasks: TaskDataFlow[] };

export type TaskOutput = {
  dataset: string;
  rows_written: number | null;
  snapshot_id: number | null;
  columns_written: string[];
  link: string | null;
};

export type TaskInstanceLineage = {
  dag_id: string;
  run_id: string;
  task_id: string;
  map_index: number;
  try_number: number | null;
  origin: string;
  snapshot_read: number | null;
  reads: Record<string, string[]>;
  outputs: TaskOutput[];
  edges: LineageEdge[];
  links: Record<string, string>;
};
