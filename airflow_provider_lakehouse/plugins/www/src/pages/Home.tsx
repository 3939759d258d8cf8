import { Badge, Box, Flex, Heading, Table, Text } from "@chakra-ui/react";

import { useApi } from "../api";
import { HeaderRow, InternalLink, Loading, Section } from "../components/ui";
import { TaskLink } from "../components/TaskLink";
import { describeChanges, formatBytes, formatCount, formatTime } from "../format";
import type { Route } from "../nav";
import type { Overview, StoreSummary } from "../types";

const StoreCard = ({ store, go }: { store: StoreSummary; go: (r: Route) => void }) => (
  <Box borderWidth="1px" borderColor="border" borderRadius="md" p={3} data-testid={`store-${store.kind}-${store.name}`}>
    <Flex align="center" gap={2} mb={2} wrap="wrap">
      <Badge colorPalette={store.kind === "ducklake" ? "yellow" : "blue"}>{store.kind === "ducklake" ? "Lake" : "Data Table"}</Badge>
      <Heading size="sm" fontFamily="mono">
        {store.kind === "datatable" ? (
          <InternalLink onClick={() => go({ page: "datatable", datatable: store.name })}>{store.name}</InternalLink>
        ) : (
          store.name
        )}
      </Heading>
      <Badge colorPalette={store.reachable ? "green" : "red"} variant="outline">
        {store.reachable ? "reachable" : "unreachable"}
      </Badge>
      <Text color="fg.muted" fontSize="xs">
        connection {store.conn_id}
      </Text>
    </Flex>
    {store.error ? (
      <Text color="fg.error" fontSize="sm">
        {store.error}
      </Text>
    ) : null}
    {store.kind === "ducklake" && store.reachable ? (
      <Text fontSize="sm" color="fg.muted" mb={2}>
        {store.schemas.length} schema(s) · {store.tables.length} table(s) · {formatCount(store.snapshot_count)} snapshots ·{" "}
        {formatBytes(store.data_size_bytes)} of data
      </Text>
    ) : null}
    <Flex gap={2} wrap="wrap">
      {store.tables.map((table) => (
        <InternalLink
          key={table}
          testId={`table-link-${store.name}-${table}`}
          onClick={() =>
            go(store.kind === "ducklake" ? { page: "lake", lake: store.name, table } : { page: "datatable", datatable: store.name, table })
          }
        >
          <Text as="span" fontFamily="mono" fontSize="sm">
            {table}
          </Text>
        </InternalLink>
      ))}
    </Flex>
  </Box>
);

export const Home = ({ go }: { go: (r: Route) => void }) => {
  const state = useApi<Overview>("overview?recent=15");
  return (
    <Loading state={state}>
      {(overview) => (
        <>
          <Section title="Lakes and Data Tables">
            {overview.stores.length === 0 ? (
              <Text color="fg.muted">No lake or Data Table connection you may read (connections ducklake_NAME and datatable_NAME).</Text>
            ) : (
              <Flex direction="column" gap={3}>
                {overview.stores.map((s) => (
                  <StoreCard key={`${s.kind}-${s.name}`} store={s} go={go} />
                ))}
              </Flex>
            )}
          </Section>
          <Section title="Recent lake changes">
            <Table.Root size="sm" data-testid="recent-changes">
              <HeaderRow names={["Lake", "Snapshot", "Time", "Changes", "Author / message", "Task"]} />
              <Table.Body>
                {overview.recent_changes.map((c) => (
                  <Table.Row key={`${c.lake}-${c.snapshot_id}`}>
                    <Table.Cell fontFamily="mono">{c.lake}</Table.Cell>
                    <Table.Cell fontFamily="mono">{c.snapshot_id}</Table.Cell>
                    <Table.Cell whiteSpace="nowrap">{formatTime(c.snapshot_time)}</Table.Cell>
                    <Table.Cell fontSize="xs">{describeChanges(c.changes)}</Table.Cell>
                    <Table.Cell fontSize="xs">
                      {c.author ?? "–"}
                      {c.commit_message ? <Text color="fg.muted">{c.commit_message}</Text> : null}
                    </Table.Cell>
                    <Table.Cell>
                      <TaskLink task={c.task} />
                    </Table.Cell>
                  </Table.Row>
                ))}
              </Table.Body>
            </Table.Root>
          </Section>
        </>
      )}
    </Loading>
  );
};
