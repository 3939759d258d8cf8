import { Badge, Box, Flex, Link, Table, Text } from "@chakra-ui/react";
import { useMemo, useState } from "react";

import { airflowUrl } from "../api";
import { HeaderRow, InternalLink } from "../components/ui";
import type { Route } from "../nav";
import type { LineageGraph } from "../types";
import { columnKey, edgeKey, impact } from "./impact";
import { edgePath, HEADER_HEIGHT, layout, NODE_WIDTH, ROW_HEIGHT } from "./layout";

const routeOf = (link: string | null): Route | null => {
  if (!link) return null;
  const params = new URLSearchParams(link);
  const lake = params.get("lake");
  const datatable = params.get("datatable");
  const table = params.get("table") ?? "";
  if (lake) return { page: "lake", lake, table };
  if (datatable) return { page: "datatable", datatable, table };
  return null;
};

/**
 * Tables as boxes with their columns, edges from input columns to output columns (solid: DIRECT, dashed:
 * INDIRECT, which joins the target's header). Clicking a column highlights everything upstream and
 * downstream of it.
 */
export const LineageGraphView = ({ graph, go, initialColumn }: { graph: LineageGraph; go: (r: Route) => void; initialColumn?: string }) => {
  const [selected, setSelected] = useState<{ dataset: string; column: string } | null>(
    initialColumn ? { dataset: graph.focus, column: initialColumn } : null,
  );
  const placed = useMemo(() => layout(graph), [graph]);
  const columnsOf = useMemo(() => {
    const byId = new Map(graph.nodes.map((n) => [n.id, n.columns]));
    return (id: string) => byId.get(id) ?? [];
  }, [graph]);
  const hit = useMemo(() => (selected ? impact(graph.edges, selected, columnsOf) : null), [graph, selected, columnsOf]);
  const state = (dataset: string, column: string): "selected" | "upstream" | "downstream" | "dim" | "plain" => {
    if (!selected || !hit) return "plain";
    const key = columnKey(dataset, column);
    if (selected.dataset === dataset && selected.column === column) return "selected";
    if (hit.upstream.has(key)) return "upstream";
    if (hit.downstream.has(key)) return "downstream";
    return "dim";
  };
  const fills = { selected: "#f6ad55", upstream: "#90cdf4", downstream: "#9ae6b4", dim: "transparent", plain: "transparent" };
  return (
    <Box>
      <Flex gap={3} mb={2} fontSize="xs" color="fg.muted" wrap="wrap" align="center">
        <Text>Click a column for impact analysis.</Text>
        <Badge style={{ background: fills.upstream, color: "#1a202c" }}>upstream</Badge>
        <Badge style={{ background: fills.selected, color: "#1a202c" }}>selected</Badge>
        <Badge style={{ background: fills.downstream, color: "#1a202c" }}>downstream</Badge>
        <Text>solid: DIRECT · dashed: INDIRECT (to the table header: decides every row)</Text>
        {selected ? <InternalLink onClick={() => setSelected(null)}>clear selection</InternalLink> : null}
      </Flex>
      <Box overflow="auto" borderWidth="1px" borderColor="border" borderRadius="md" bg="bg.subtle">
        <svg width={placed.width + 60} height={placed.height} role="img" aria-label="column lineage graph" data-testid="lineage-graph">
          {graph.edges.map((edge) => {
            const from = placed.boxes.get(edge.source);
            const to = placed.boxes.get(edge.target);
            if (!from || !to) return null;
            const key = edgeKey(edge);
            const lit = hit?.edges.has(key) ?? false;
            const dim = hit !== null && !lit;
            return (
              <path key={key} d={edgePath(from, edge.source_column, to, edge.target_column)} fill="none"
                stroke={lit ? "#dd6b20" : edge.type === "DIRECT" ? "#718096" : "#a0aec0"}
                strokeWidth={lit ? 2.2 : 1.2} strokeDasharray={edge.type === "DIRECT" ? undefined : "5 4"}
                opacity={dim ? 0.15 : 0.9} data-edge={`${edge.source}.${edge.source_column} -> ${edge.target}.${edge.target_column ?? "*"} ${edge.type} ${edge.subtype}`}>
                <title>{`${edge.source_column} → ${edge.target_column ?? "(every row)"}: ${edge.type} ${edge.subtype}${edge.masking ? " (masked)" : ""} · ${edge.dag_id}.${edge.task_id} (${edge.origin})`}</title>
              </path>
            );
          })}
          {graph.nodes.map((node) => {
            const box = placed.boxes.get(node.id)!;
            const route = routeOf(node.link);
            const focus = node.id === graph.focus;
            return (
              <g key={node.id} data-node={node.id}>
                <rect x={box.x} y={box.y} width={NODE_WIDTH} height={box.height} rx={6} fill="var(--chakra-colors-bg-panel, #fff)"
                  stroke={focus ? "#dd6b20" : "var(--chakra-colors-border, #cbd5e0)"} strokeWidth={focus ? 2 : 1} />
                <foreignObject x={box.x} y={box.y} width={NODE_WIDTH} height={HEADER_HEIGHT}>
                  <Flex h={`${HEADER_HEIGHT}px`} px={2} align="center" gap={1} fontSize="xs" fontWeight="semibold" overflow="hidden" whiteSpace="nowrap">
                    <Badge size="xs" colorPalette={node.kind === "file" ? "purple" : "yellow"}>{node.kind}</Badge>
                    {route ? (
                      <InternalLink onClick={() => go(route)}><span title={node.id}>{node.label}</span></InternalLink>
                    ) : (
                      <span title={node.id}>{node.label}</span>
                    )}
                    {node.asset_id !== null ? (
                      <Link href={airflowUrl(`assets/${node.asset_id}`)} color="fg.muted" fontSize="2xs" ml="auto" title="Airflow asset page">asset</Link>
                    ) : null}
                  </Flex>
                </foreignObject>
                {node.columns.map((column, i) => {
                  const s = state(node.id, column);
                  const y = box.y + HEADER_HEIGHT + i * ROW_HEIGHT;
                  return (
                    <g key={column} onClick={() => setSelected({ dataset: node.id, column })} style={{ cursor: "pointer" }}
                      data-column={`${node.id}#${column}`} data-state={s}>
                      <rect x={box.x + 1} y={y} width={NODE_WIDTH - 2} height={ROW_HEIGHT} fill={fills[s]} opacity={s === "plain" || s === "dim" ? 1 : 0.85} />
                      <text x={box.x + 10} y={y + 15} style={{ fontSize: "12px", fontFamily: "var(--chakra-fonts-mono, monospace)" }}
                        fill="currentColor" opacity={s === "dim" ? 0.35 : 1}>
                        {column}
                      </text>
                    </g>
                  );
                })}
              </g>
            );
          })}
        </svg>
      </Box>
      <Box overflowX="auto" mt={4}>
      <Table.Root size="sm" data-testid="lineage-edges">
        <HeaderRow names={["Input", "Column", "Output", "Column", "Transformation", "Task", "From"]} />
        <Table.Body>
          {graph.edges
            .filter((e) => !hit || hit.edges.has(edgeKey(e)))
            .map((e) => (
              <Table.Row key={edgeKey(e)} data-edge-row={`${e.source}.${e.source_column}->${e.target}.${e.target_column ?? "*"}`}>
                <Table.Cell fontFamily="mono" fontSize="xs">{e.source}</Table.Cell>
                <Table.Cell fontFamily="mono">{e.source_column}</Table.Cell>
                <Table.Cell fontFamily="mono" fontSize="xs">{e.target}</Table.Cell>
                <Table.Cell fontFamily="mono">{e.target_column ?? "(every row)"}</Table.Cell>
                <Table.Cell>
                  <Badge colorPalette={e.type === "DIRECT" ? "blue" : "gray"}>{`${e.type} ${e.subtype}`}</Badge>
                  {e.masking ? <Badge ml={1} colorPalette="red">masked</Badge> : null}
                </Table.Cell>
                <Table.Cell fontFamily="mono" fontSize="xs">
                  {e.dag_id ? <Link href={airflowUrl(`dags/${encodeURIComponent(e.dag_id)}`)} color="fg.info">{`${e.dag_id}.${e.task_id}`}</Link> : "–"}
                </Table.Cell>
                <Table.Cell fontSize="xs" title={e.origin === "run" ? "recorded by the task's latest run" : "read from the DAG's SQL (the task has not run)"}>
                  {e.origin === "run" ? "run" : "SQL"}
                </Table.Cell>
              </Table.Row>
            ))}
        </Table.Body>
      </Table.Root>
      </Box>
    </Box>
  );
};
