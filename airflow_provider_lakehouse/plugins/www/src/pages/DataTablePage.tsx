import { Badge, Box, Button, Flex, Heading, Input, Table, Text } from "@chakra-ui/react";
import { useState } from "react";

import { useApi } from "../api";
import { HeaderRow, InternalLink, Loading, RowsTable, Section } from "../components/ui";
import { formatCount } from "../format";
import type { Route } from "../nav";
import type { DataTableDetail, DataTableTable, Preview } from "../types";

const TablePreview = ({ name, table }: { name: string; table: DataTableTable }) => {
  const [limit, setLimit] = useState("100");
  const base = `datatables/${encodeURIComponent(name)}/tables/${encodeURIComponent(`${table.schema_name}.${table.name}`)}/preview`;
  const [query, setQuery] = useState(`${base}?limit=100`);
  const state = useApi<Preview>(query);
  return (
    <Box mt={3}>
      <Flex gap={2} align="end" mb={2}>
        <Box>
          <Text fontSize="xs" color="fg.muted">Rows</Text>
          <Input size="sm" type="number" min={1} max={500} width="90px" aria-label="preview rows" value={limit}
            onChange={(e) => setLimit(e.currentTarget.value)} />
        </Box>
        <Button size="sm" onClick={() => setQuery(`${base}?limit=${limit || "100"}`)}>Show</Button>
      </Flex>
      <Loading state={state}>
        {(preview) => (
          <>
            <Text fontSize="sm" color="fg.muted" mb={2} data-testid="preview-caption">
              First {preview.rows.length} row(s), read in a read-only transaction
            </Text>
            <RowsTable columns={preview.columns} rows={preview.rows} testId="datatable-preview-rows" />
          </>
        )}
      </Loading>
    </Box>
  );
};

export const DataTablePage = ({ datatable, table, go }: { datatable: string; table?: string; go: (r: Route) => void }) => {
  const state = useApi<DataTableDetail>(`datatables/${encodeURIComponent(datatable)}`);
  return (
    <Loading state={state}>
      {(detail) => (
        <>
          {detail.schemas.map((schema) => (
            <Section key={schema.name} title={`Data Table ${detail.name} · schema ${schema.name}`}>
              <Table.Root size="sm" data-testid={`datatable-schema-${schema.name}`}>
                <HeaderRow names={["Table", "Kind", "Rows (approx.)", "Columns", ""]} />
                <Table.Body>
                  {schema.tables.map((t) => {
                    const qualified = `${t.schema_name}.${t.name}`;
                    const open = table === qualified;
                    return (
                      <Table.Row key={qualified} data-testid={`datatable-table-${qualified}`} verticalAlign="top">
                        <Table.Cell fontFamily="mono">
                          <InternalLink onClick={() => go({ page: "datatable", datatable, table: open ? undefined : qualified })}>
                            {t.name}
                          </InternalLink>
                        </Table.Cell>
                        <Table.Cell><Badge variant="outline">{t.kind}</Badge></Table.Cell>
                        <Table.Cell>{formatCount(t.approximate_rows)}</Table.Cell>
                        <Table.Cell>
                          <Flex gap={1} wrap="wrap">
                            {t.columns.map((c) => (
                              <Badge key={c.name} variant="subtle" fontFamily="mono" title={`${c.type}${c.nullable ? "" : " not null"}`}>
                                {c.name}: {c.type}
                              </Badge>
                            ))}
                          </Flex>
                          {open ? <TablePreview name={datatable} table={t} /> : null}
                        </Table.Cell>
                        <Table.Cell>
                          {t.asset_uri ? (
                            <InternalLink onClick={() => go({ page: "lineage", dataset: t.asset_uri })}>lineage</InternalLink>
                          ) : null}
                        </Table.Cell>
                      </Table.Row>
                    );
                  })}
                </Table.Body>
              </Table.Root>
            </Section>
          ))}
          {detail.schemas.length === 0 ? <Heading size="sm">This Data Table has no tables yet.</Heading> : null}
        </>
      )}
    </Loading>
  );
};
