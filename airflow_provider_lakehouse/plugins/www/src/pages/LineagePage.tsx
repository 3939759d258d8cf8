import { Text } from "@chakra-ui/react";

import { useApi } from "../api";
import { Loading, Section } from "../components/ui";
import { LineageGraphView } from "../lineage/LineageGraphView";
import type { Route } from "../nav";
import type { LineageGraph } from "../types";

export const LineagePage = ({ dataset, column, go }: { dataset: string; column?: string; go: (r: Route) => void }) => {
  const state = useApi<LineageGraph>(`lineage?dataset=${encodeURIComponent(dataset)}`);
  return (
    <Section title={`Column lineage of ${dataset}`}>
      <Loading state={state}>
        {(graph) =>
          graph.edges.length === 0 ? (
            <Text color="fg.muted">No task reads or writes this table's columns yet (recorded by runs, or in the DAGs' SQL).</Text>
          ) : (
            <LineageGraphView graph={graph} go={go} initialColumn={column} />
          )
        }
      </Loading>
    </Section>
  );
};
