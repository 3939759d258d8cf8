import { Badge, Box, Button, Flex, Heading, HStack, Input, Link, NativeSelect, Table, Tabs, Text } from "@chakra-ui/react";
import { Fragment, useState } from "react";

import { airflowUrl, getJson, useApi } from "../api";
import { TaskLink } from "../components/TaskLink";
import { ErrorBox, HeaderRow, InternalLink, Loading, RowsTable, Section, Stat } from "../components/ui";
import { describeChanges, formatBytes, formatCount, formatTime } from "../format";
import type { Route } from "../nav";
import type { Changes, ColumnEntry, FileEntry, LakeTable, Preview, SnapshotEntry } from "../types";

const ColumnRows = ({ columns, depth = 0 }: { columns: ColumnEntry[]; depth?: number }) => (
  <>
    {columns.map((c) => (
      <Fragment key={c.column_id}>
        <Table.Row data-testid={`column-${c.name}`}>
          <Table.Cell fontFamily="mono" pl={`${12 + depth * 16}px`}>
            {c.name}
          </Table.Cell>
          <Table.Cell fontFamily="mono">{c.type}</Table.Cell>
          <Table.Cell>{c.nullable ? "yes" : "no"}</Table.Cell>
          <Table.Cell fontFamily="mono">{c.default ?? ""}</Table.Cell>
          <Table.Cell fontFamily="mono">{c.column_id}</Table.Cell>
          <Table.Cell fontFamily="mono">{c.min_value ?? ""}</Table.Cell>
          <Table.Cell fontFamily="mono">{c.max_value ?? ""}</Table.Cell>
          <Table.Cell fontFamily="mono">{c.null_count ?? ""}</Table.Cell>
        </Table.Row>
        {c.children.length > 0 ? <ColumnRows columns={c.children} depth={depth + 1} /> : null}
      </Fragment>
    ))}
  </>
);

const SnapshotSelect = ({ snapshots, value, onChange, label, allowCurrent }: {
  snapshots: SnapshotEntry[]; value: string; onChange: (v: string) => void; label: string; allowCurrent?: boolean;
}) => (
  <NativeSelect.Root size="sm" width="260px">
    <NativeSelect.Field aria-label={label} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
      {allowCurrent ? <option value="">current snapshot</option> : null}
      {snapshots.map((s) => (
        <option key={s.snapshot_id} value={String(s.snapshot_id)}>
          {`snapshot ${s.snapshot_id} · ${formatTime(s.snapshot_time)}`}
        </option>
      ))}
    </NativeSelect.Field>
    <NativeSelect.Indicator />
  </NativeSelect.Root>
);

const PreviewPanel = ({ lake, table, info }: { lake: string; table: string; info: LakeTable }) => {
  const [version, setVersion] = useState("");
  const [time, setTime] = useState("");
  const [columns, setColumns] = useState("");
  const [limit, setLimit] = useState("100");
  const [query, setQuery] = useState<string>(`lakes/${lake}/tables/${table}/preview?limit=100`);
  const state = useApi<Preview>(query);
  const apply = () => {
    const params = new URLSearchParams({ limit: limit || "100" });
    if (version) params.set("version", version);
    else if (time) params.set("timestamp", new Date(time).toISOString());
    if (columns.trim()) params.set("columns", columns.trim());
    setQuery(`lakes/${lake}/tables/${table}/preview?${params.toString()}`);
  };
  return (
    <>
      <Flex gap={3} wrap="wrap" align="end" mb={3}>
        <Box>
          <Text fontSize="xs" color="fg.muted">Version</Text>
          <SnapshotSelect snapshots={info.snapshots} value={version} onChange={setVersion} label="preview snapshot" allowCurrent />
        </Box>
        <Box>
          <Text fontSize="xs" color="fg.muted">or time (latest snapshot at or before)</Text>
          <Input size="sm" type="datetime-local" step="1" aria-label="preview time" value={time} onChange={(e) => setTime(e.currentTarget.value)} width="220px" />
        </Box>
        <Box>
          <Text fontSize="xs" color="fg.muted">Columns (comma-separated, empty: all)</Text>
          <Input size="sm" aria-label="preview columns" value={columns} onChange={(e) => setColumns(e.currentTarget.value)} width="240px"
            placeholder={info.columns.map((c) => c.name).slice(0, 3).join(", ")} />
        </Box>
        <Box>
          <Text fontSize="xs" color="fg.muted">Rows</Text>
          <Input size="sm" type="number" min={1} max={500} aria-label="preview rows" value={limit} onChange={(e) => setLimit(e.currentTarget.value)} width="90px" />
        </Box>
        <Button size="sm" onClick={apply} data-testid="preview-apply">Show</Button>
      </Flex>
      <Loading state={state}>
        {(preview) => (
          <>
            <Text fontSize="sm" color="fg.muted" mb={2} data-testid="preview-caption">
              First {preview.rows.length} row(s) by row id at snapshot {preview.snapshot_id}
              {preview.truncated ? " (cut to keep the page small)" : ""}
            </Text>
            <RowsTable columns={preview.columns} rows={preview.rows} testId="preview-rows" />
          </>
        )}
      </Loading>
    </>
  );
};

const ChangesPanel = ({ lake, table, info }: { lake: string; table: string; info: LakeTable }) => {
  const ids = info.snapshots.map((s) => s.snapshot_id).sort((a, b) => a - b);
  const [start, setStart] = useState(String(ids.length > 1 ? ids[ids.length - 2] : (ids[0] ?? 0)));
  const [end, setEnd] = useState(String(ids[ids.length - 1] ?? 0));
  const [query, setQuery] = useState<string | null>(null);
  const state = useApi<Changes>(query);
  return (
    <>
      <Flex gap={3} wrap="wrap" align="end" mb={3}>
        <Box>
          <Text fontSize="xs" color="fg.muted">From (exclusive: changes made after it)</Text>
          <SnapshotSelect snapshots={info.snapshots} value={start} onChange={setStart} label="changes from" />
        </Box>
        <Box>
          <Text fontSize="xs" color="fg.muted">To</Text>
          <SnapshotSelect snapshots={info.snapshots} value={end} onChange={setEnd} label="changes to" />
        </Box>
        <Button size="sm" data-testid="changes-apply"
          onClick={() => setQuery(`lakes/${lake}/tables/${table}/changes?start=${Number(start) + 1}&end=${end}`)}>
          Compare
        </Button>
      </Flex>
      {query === null ? (
        <Text color="fg.muted" fontSize="sm">
          Pick two snapshots: the rows inserted, deleted and updated between them are listed as DuckDB's
          ducklake_table_changes lists them; a row changed twice by one task's script appears once per step.
        </Text>
      ) : (
        <Loading state={state}>
          {(changes) => (
            <>
              <HStack gap={2} mb={2} data-testid="changes-counts">
                {Object.entries(changes.counts).map(([kind, n]) => (
                  <Badge key={kind} colorPalette={kind === "insert" ? "green" : kind === "delete" ? "red" : "orange"}>
                    {kind}: {n}
                  </Badge>
                ))}
                {Object.keys(changes.counts).length === 0 ? <Text color="fg.muted">No row changed.</Text> : null}
              </HStack>
              <RowsTable columns={changes.columns} rows={changes.rows} testId="changes-rows" />
            </>
          )}
        </Loading>
      )}
    </>
  );
};

const FileRow = ({ file: f }: { file: FileEntry }) => (
  <Table.Row>
    <Table.Cell fontFamily="mono">{f.data_file_id}</Table.Cell>
    <Table.Cell fontFamily="mono" fontSize="xs">{f.path}</Table.Cell>
    <Table.Cell>{formatCount(f.record_count)}</Table.Cell>
    <Table.Cell>{formatBytes(f.file_size_bytes)}</Table.Cell>
    <Table.Cell>{f.begin_snapshot}</Table.Cell>
    <Table.Cell fontFamily="mono" fontSize="xs">{f.delete_file ?? ""}</Table.Cell>
    <Table.Cell>{f.delete_count || ""}</Table.Cell>
    <Table.Cell>{f.inlined_deletes || ""}</Table.Cell>
  </Table.Row>
);

/** The table page lists the first files; the rest come a page at a time. */
const MoreFiles = ({ lake, table, shown, total }: { lake: string; table: string; shown: number; total: number }) => {
  const [pages, setPages] = useState<FileEntry[]>([]);
  const [error, setError] = useState<Error | null>(null);
  const next = shown + pages.length;
  if (next >= total) return null;
  const load = () =>
    getJson<FileEntry[]>(`lakes/${encodeURIComponent(lake)}/tables/${encodeURIComponent(table)}/files?offset=${next}&limit=500`)
      .then((more) => setPages((previous) => [...previous, ...more]))
      .catch(setError);
  return (
    <Box mt={2}>
      {pages.length > 0 ? (
        <Table.Root size="sm">
          <Table.Body>
            {pages.map((f) => <FileRow key={f.data_file_id} file={f} />)}
          </Table.Body>
        </Table.Root>
      ) : null}
      <Button size="xs" variant="outline" mt={2} onClick={load} data-testid="more-files">
        Show more files ({formatCount(total - next)} not shown)
      </Button>
      {error ? <ErrorBox error={error} /> : null}
    </Box>
  );
};

export const LakeTablePage = ({ lake, table, tab, go }: { lake: string; table: string; tab?: string; go: (r: Route) => void }) => {
  const state = useApi<LakeTable>(`lakes/${encodeURIComponent(lake)}/tables/${encodeURIComponent(table)}`);
  const current = tab ?? "columns";
  return (
    <Loading state={state}>
      {(info) => (
        <>
          <Section
            title={`${info.lake} · ${info.schema_name}.${info.name}`}
            right={
              <HStack gap={3}>
                <InternalLink testId="open-lineage" onClick={() => go({ page: "lineage", dataset: info.asset_uri })}>Column lineage</InternalLink>
                <Link href={airflowUrl(`assets?search=${encodeURIComponent(info.asset_uri)}`)} color="fg.info" fontSize="sm">Airflow assets</Link>
              </HStack>
            }
          >
            <Flex gap={6} wrap="wrap">
              <Stat label="rows" value={formatCount(info.row_count)} />
              <Stat label="snapshot" value={info.snapshot_id} />
              <Stat label="files" value={formatCount(info.file_count)} />
              <Stat label="size" value={formatBytes(info.file_size_bytes)} />
              <Stat label="delete files" value={formatCount(info.delete_file_count)} />
              <Stat label="inlined rows" value={formatCount(info.inlined_row_count)} />
              <Stat label="partitioning" value={info.partitioning.length ? info.partitioning.join(", ") : "none"} />
            </Flex>
            <Text fontSize="xs" color="fg.muted" mt={2} fontFamily="mono">{info.asset_uri}</Text>
          </Section>
          <Tabs.Root value={current} onValueChange={(d) => go({ page: "lake", lake, table, tab: d.value })} variant="enclosed" lazyMount>
            <Tabs.List mb={3}>
              <Tabs.Trigger value="columns">Columns</Tabs.Trigger>
              <Tabs.Trigger value="snapshots">Snapshots ({info.snapshots.length})</Tabs.Trigger>
              <Tabs.Trigger value="files">Files ({formatCount(info.file_count)})</Tabs.Trigger>
              <Tabs.Trigger value="preview">Preview</Tabs.Trigger>
              <Tabs.Trigger value="changes">Changes</Tabs.Trigger>
            </Tabs.List>
            <Tabs.Content value="columns">
              <Table.Root size="sm" data-testid="columns-table">
                <HeaderRow names={["Column", "Type", "Nullable", "Default", "Column id", "Min", "Max", "Nulls"]} />
                <Table.Body>
                  <ColumnRows columns={info.columns} />
                </Table.Body>
              </Table.Root>
            </Tabs.Content>
            <Tabs.Content value="snapshots">
              <Table.Root size="sm" data-testid="snapshot-timeline">
                <HeaderRow names={["Snapshot", "Time", "Changes", "Author", "Message", "Committed by task"]} />
                <Table.Body>
                  {info.snapshots.map((s) => (
                    <Table.Row key={s.snapshot_id} data-snapshot={s.snapshot_id}>
                      <Table.Cell fontFamily="mono">{s.snapshot_id}</Table.Cell>
                      <Table.Cell whiteSpace="nowrap">{formatTime(s.snapshot_time)}</Table.Cell>
                      <Table.Cell fontSize="xs">{describeChanges(s.changes)}</Table.Cell>
                      <Table.Cell fontSize="xs">{s.author ?? "–"}</Table.Cell>
                      <Table.Cell fontSize="xs">{s.commit_message ?? ""}</Table.Cell>
                      <Table.Cell><TaskLink task={s.task} /></Table.Cell>
                    </Table.Row>
                  ))}
                </Table.Body>
              </Table.Root>
            </Tabs.Content>
            <Tabs.Content value="files">
              <Table.Root size="sm" data-testid="files-table">
                <HeaderRow names={["File id", "Path (in the table's directory)", "Rows", "Size", "Since snapshot", "Delete file", "Deleted rows", "Inlined deletes"]} />
                <Table.Body>
                  {info.files.map((f) => <FileRow key={f.data_file_id} file={f} />)}
                </Table.Body>
              </Table.Root>
              <MoreFiles lake={lake} table={table} shown={info.files.length} total={info.file_count} />
              {info.inlined_row_count > 0 ? (
                <Text fontSize="sm" color="fg.muted" mt={2}>
                  Plus {formatCount(info.inlined_row_count)} row(s) inlined in the catalog (not yet in a file).
                </Text>
              ) : null}
            </Tabs.Content>
            <Tabs.Content value="preview">
              <PreviewPanel lake={lake} table={table} info={info} />
            </Tabs.Content>
            <Tabs.Content value="changes">
              <ChangesPanel lake={lake} table={table} info={info} />
            </Tabs.Content>
          </Tabs.Root>
          <Heading size="xs" color="fg.muted" mt={4}>Data is read with the provider's DuckLake reader (no Spark).</Heading>
        </>
      )}
    </Loading>
  );
};
