import { Badge, Box, Flex, Link, Table, Text } from "@chakra-ui/react";

import { useApi } from "../api";
import { ColumnBadges, HeaderRow, Loading, Section, Stat } from "../components/ui";
import { formatCount } from "../format";
import type { TaskInstanceLineage } from "../types";
import { datasetLink } from "./DagFlow";

const DatasetName = ({ dataset }: { dataset: string }) => {
  const href = datasetLink(dataset);
  return href ? <Link href={href} color="fg.info" fontFamily="mono" fontSize="sm">{dataset}</Link> : <Text fontFamily="mono" fontSize="sm">{dataset}</Text>;
};

export const TaskLineage = ({ dagId, runId, taskId, mapIndex }: { dagId: string; runId: string; taskId: string; mapIndex?: string }) => {
  const index = mapIndex && Number(mapIndex) >= 0 ? Number(mapIndex) : -1;
  const state = useApi<TaskInstanceLineage>(
    `dags/${encodeURIComponent(dagId)}/runs/${encodeURIComponent(runId)}/tasks/${encodeURIComponent(taskId)}/lineage?map_index=${index}`,
  );
  return (
    <Loading state={state}>
      {(ti) => (
        <>
          <Section title="What this task instance read and wrote">
            <Flex gap={6} wrap="wrap" mb={3}>
              <Stat label="source" value={ti.origin === "run" ? "recorded by this run" : ti.origin === "parse" ? "the DAG's SQL (no record of this run)" : "unknown"} />
              <Stat label="try" value={ti.try_number ?? "–"} />
              <Stat label="snapshot read" value={ti.snapshot_read ?? "–"} />
            </Flex>
            <Table.Root size="sm" data-testid="ti-datasets">
              <HeaderRow names={["Dataset", "Access", "Columns", "Rows written", "Snapshot created"]} />
              <Table.Body>
                {Object.entries(ti.reads).map(([d, cols]) => (
                  <Table.Row key={`r-${d}`} data-dataset={d} data-access="read">
                    <Table.Cell><DatasetName dataset={d} /></Table.Cell>
                    <Table.Cell><Badge colorPalette="blue">read</Badge></Table.Cell>
                    <Table.Cell><ColumnBadges columns={cols} palette="blue" label="columns read" /></Table.Cell>
                    <Table.Cell />
                    <Table.Cell />
                  </Table.Row>
                ))}
                {ti.outputs.map((o) => (
                  <Table.Row key={`w-${o.dataset}`} data-dataset={o.dataset} data-access="written">
                    <Table.Cell><DatasetName dataset={o.dataset} /></Table.Cell>
                    <Table.Cell><Badge colorPalette="green">written</Badge></Table.Cell>
                    <Table.Cell><ColumnBadges columns={o.columns_written} palette="green" label="columns written" /></Table.Cell>
                    <Table.Cell>{formatCount(o.rows_written)}</Table.Cell>
                    <Table.Cell>{o.snapshot_id ?? "–"}</Table.Cell>
                  </Table.Row>
                ))}
              </Table.Body>
            </Table.Root>
          </Section>
          <Section title="Column edges">
            <Table.Root size="sm" data-testid="ti-edges">
              <HeaderRow names={["Input", "Column", "Output", "Column", "Transformation"]} />
              <Table.Body>
                {ti.edges.map((e, i) => (
                  <Table.Row key={i} data-edge-row={`${e.source}.${e.source_column}->${e.target}.${e.target_column ?? "*"}`}>
                    <Table.Cell fontFamily="mono" fontSize="xs">{e.source}</Table.Cell>
                    <Table.Cell fontFamily="mono">{e.source_column}</Table.Cell>
                    <Table.Cell fontFamily="mono" fontSize="xs">{e.target}</Table.Cell>
                    <Table.Cell fontFamily="mono">{e.target_column ?? "(every row)"}</Table.Cell>
                    <Table.Cell><Badge colorPalette={e.type === "DIRECT" ? "blue" : "gray"}>{`${e.type} ${e.subtype}`}</Badge></Table.Cell>
                  </Table.Row>
                ))}
              </Table.Body>
            </Table.Root>
            {ti.edges.length === 0 ? <Box color="fg.muted" fontSize="sm">No column edges.</Box> : null}
          </Section>
        </>
      )}
    </Loading>
  );
};
