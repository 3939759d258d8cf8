import { Box, Flex, Heading, Text } from "@chakra-ui/react";

import { InternalLink } from "./components/ui";
import { useRoute } from "./nav";
import { DagFlow } from "./pages/DagFlow";
import { DataTablePage } from "./pages/DataTablePage";
import { Home } from "./pages/Home";
import { LakeTablePage } from "./pages/LakeTablePage";
import { LineagePage } from "./pages/LineagePage";
import { TaskLineage } from "./pages/TaskLineage";

/** What Airflow passes a plugin view: the identifiers of the page it is shown on. */
export type PluginProps = { dagId?: string; runId?: string; taskId?: string; mapIndex?: string };

const Lakehouse = () => {
  const [route, go] = useRoute();
  const crumbs =
    route.page === "home"
      ? null
      : route.page === "lake"
        ? `lake ${route.lake} › ${route.table}`
        : route.page === "datatable"
          ? `Data Table ${route.datatable}`
          : "column lineage";
  return (
    <Box p={4} data-testid="lakehouse">
      <Flex align="baseline" gap={3} mb={4}>
        <Heading size="lg">
          <InternalLink testId="lakehouse-home" onClick={() => go({ page: "home" })}>Lakehouse</InternalLink>
        </Heading>
        {crumbs ? <Text color="fg.muted">› {crumbs}</Text> : null}
      </Flex>
      {route.page === "home" ? <Home go={go} /> : null}
      {route.page === "lake" ? <LakeTablePage key={`${route.lake}/${route.table}`} lake={route.lake} table={route.table} tab={route.tab} go={go} /> : null}
      {route.page === "datatable" ? <DataTablePage datatable={route.datatable} table={route.table} go={go} /> : null}
      {route.page === "lineage" ? <LineagePage key={route.dataset} dataset={route.dataset} column={route.column} go={go} /> : null}
    </Box>
  );
};

/** One component for the three places the plugin appears; the props say which page it is on. */
export const LakehouseView = ({ dagId, runId, taskId, mapIndex }: PluginProps) => {
  if (dagId && runId && taskId) {
    return (
      <Box p={2} data-testid="lakehouse-task">
        <TaskLineage dagId={dagId} runId={runId} taskId={taskId} mapIndex={mapIndex} />
      </Box>
    );
  }
  if (dagId) {
    return (
      <Box p={2} data-testid="lakehouse-dag">
        <DagFlow dagId={dagId} />
      </Box>
    );
  }
  return <Lakehouse />;
};
