import { Badge, Box, Flex, Heading, Link, Text } from "@chakra-ui/react";

import { useApi } from "../api";
import { ColumnBadges, Loading, Section } from "../components/ui";
import { levels } from "../lineage/levels";
import { lakehousePath } from "../nav";
import type { DagDataFlow, TaskDataFlow } from "../types";

export const datasetLink = (dataset: string): string | null => {
  for (const [scheme, param] of [["ducklake://", "lake"], ["datatable://", "datatable"]] as const) {
    if (dataset.startsWith(scheme)) {
      const [store, table] = dataset.slice(scheme.length).split("/");
      return table ? `${lakehousePath()}?${param}=${encodeURIComponent(store)}&table=${encodeURIComponent(table)}` : null;
    }
  }
  return null;
};

const DatasetLine = ({ dataset, columns, kind }: { dataset: string; columns: string[]; kind: "read" | "written" }) => {
  const href = datasetLink(dataset);
  return (
    <Box mb={1} data-dataset={dataset} data-access={kind}>
      <Flex align="center" gap={1}>
        <Text fontSize="xs" color="fg.muted">{kind === "read" ? "reads" : "writes"}</Text>
        {href ? <Link href={href} fontFamily="mono" fontSize="xs" color="fg.info">{dataset}</Link> : <Text fontFamily="mono" fontSize="xs">{dataset}</Text>}
      </Flex>
      <ColumnBadges columns={columns} palette={kind === "read" ? "blue" : "green"} label={`columns ${kind}`} />
    </Box>
  );
};

const TaskCard = ({ task }: { task: TaskDataFlow }) => (
  <Box borderWidth="1px" borderColor="border" borderRadius="md" p={3} minW="260px" maxW="420px" bg="bg.panel" data-task={task.task_id}>
    <Flex align="center" gap={2} mb={2} wrap="wrap">
      <Heading size="sm" fontFamily="mono">{task.task_id}</Heading>
      <Badge variant="outline">{task.operator}</Badge>
      <Badge colorPalette={task.origin === "run" ? "green" : task.origin === "parse" ? "blue" : "gray"} title={
        task.origin === "run" ? "recorded by the latest run" : task.origin === "parse" ? "from the DAG's SQL (not run yet)" : ""}>
        {task.origin === "run" ? "last run" : task.origin === "parse" ? "from SQL" : task.origin}
      </Badge>
    </Flex>
    {Object.entries(task.reads).map(([d, cols]) => <DatasetLine key={`r-${d}`} dataset={d} columns={cols} kind="read" />)}
    {Object.entries(task.writes).map(([d, cols]) => <DatasetLine key={`w-${d}`} dataset={d} columns={cols} kind="written" />)}
    {task.error ? <Text fontSize="xs" color="fg.muted">{task.error}</Text> : null}
    {task.downstream.length ? <Text fontSize="xs" color="fg.muted" mt={1}>→ {task.downstream.join(", ")}</Text> : null}
  </Box>
);

export const DagFlow = ({ dagId }: { dagId: string }) => {
  const state = useApi<DagDataFlow>(`dags/${encodeURIComponent(dagId)}/dataflow`);
  return (
    <Section title="Data flow: what each task reads and writes, down to columns">
      <Loading state={state}>
        {(flow) => (
          <Flex gap={6} align="start" overflowX="auto" pb={2} data-testid="dag-dataflow">
            {levels(flow.tasks).map((group, i) => (
              <Flex key={i} direction="column" gap={3}>
                {group.map((t) => <TaskCard key={t.task_id} task={t} />)}
              </Flex>
            ))}
          </Flex>
        )}
      </Loading>
    </Section>
  );
};
