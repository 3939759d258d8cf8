import type { LineageEdge } from "../types";

/** A column of a dataset: "<dataset id>#<column>"; "<dataset id>#*" stands for every row of it. */
export const columnKey = (dataset: string, column: string | null): string => `${dataset}#${column ?? "*"}`;

export const edgeKey = (edge: LineageEdge): string =>
  [edge.source, edge.source_column, edge.target, edge.target_column ?? "*", edge.type, edge.subtype, edge.task_id].join("|");

export type Impact = {
  /** columns the selected one is computed from (transitively) */
  upstream: Set<string>;
  /** columns computed from the selected one, or whose rows it decides (transitively) */
  downstream: Set<string>;
  /** edges on those paths */
  edges: Set<string>;
};

/**
 * Impact analysis: everything upstream and downstream of one column.
 *
 * A dataset-wide edge (a join or filter column deciding every row of the target) makes every column of the
 * target depend on the source column, so walking downstream through it reaches all of the target's columns.
 */
export const impact = (
  edges: LineageEdge[],
  selected: { dataset: string; column: string },
  columnsOf: (dataset: string) => string[],
): Impact => {
  const start = columnKey(selected.dataset, selected.column);
  const bySource = new Map<string, LineageEdge[]>();
  const byTarget = new Map<string, LineageEdge[]>();
  for (const edge of edges) {
    const source = columnKey(edge.source, edge.source_column);
    bySource.set(source, [...(bySource.get(source) ?? []), edge]);
    const targets = edge.target_column === null ? columnsOf(edge.target) : [edge.target_column];
    for (const column of targets) {
      const target = columnKey(edge.target, column);
      byTarget.set(target, [...(byTarget.get(target) ?? []), edge]);
    }
  }
  const result: Impact = { upstream: new Set(), downstream: new Set(), edges: new Set() };
  const up = [start];
  while (up.length > 0) {
    const current = up.pop() as string;
    for (const edge of byTarget.get(current) ?? []) {
      result.edges.add(edgeKey(edge));
      const source = columnKey(edge.source, edge.source_column);
      if (!result.upstream.has(source) && source !== start) {
        result.upstream.add(source);
        up.push(source);
      }
    }
  }
  const down = [start];
  while (down.length > 0) {
    const current = down.pop() as string;
    for (const edge of bySource.get(current) ?? []) {
      result.edges.add(edgeKey(edge));
      const targets = edge.target_column === null ? columnsOf(edge.target) : [edge.target_column];
      for (const column of targets) {
        const target = columnKey(edge.target, column);
        if (!result.downstream.has(target) && target !== start) {
          result.downstream.add(target);
          down.push(target);
        }
      }
    }
  }
  return result;
};
