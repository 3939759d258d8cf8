import type { LineageGraph } from "../types";

export const NODE_WIDTH = 250;
export const HEADER_HEIGHT = 30;
export const ROW_HEIGHT = 22;
export const COLUMN_GAP = 130;
export const NODE_GAP = 28;
export const PADDING = 16;

export type Box = { id: string; x: number; y: number; height: number; columns: string[] };

export type Layout = { boxes: Map<string, Box>; width: number; height: number };

/**
 * Places the graph's tables in columns by distance from the focus (upstream left, downstream right), each
 * table a box with one row per column, so edges can join column rows. Pure: sizes are fixed, no DOM measuring.
 */
export const layout = (graph: LineageGraph): Layout => {
  const depths = [...new Set(graph.nodes.map((n) => n.depth))].sort((a, b) => a - b);
  const boxes = new Map<string, Box>();
  let height = 0;
  depths.forEach((depth, index) => {
    let y = PADDING;
    for (const node of graph.nodes.filter((n) => n.depth === depth)) {
      const boxHeight = HEADER_HEIGHT + Math.max(1, node.columns.length) * ROW_HEIGHT;
      boxes.set(node.id, { id: node.id, x: PADDING + index * (NODE_WIDTH + COLUMN_GAP), y, height: boxHeight, columns: node.columns });
      y += boxHeight + NODE_GAP;
    }
    height = Math.max(height, y);
  });
  return { boxes, width: PADDING * 2 + depths.length * NODE_WIDTH + Math.max(0, depths.length - 1) * COLUMN_GAP, height };
};

/** Where an edge attaches: the middle of a column's row, or of the header for "every row" edges. */
export const anchorY = (box: Box, column: string | null): number => {
  const index = column === null ? -1 : box.columns.indexOf(column);
  return index < 0 ? box.y + HEADER_HEIGHT / 2 : box.y + HEADER_HEIGHT + index * ROW_HEIGHT + ROW_HEIGHT / 2;
};

export const edgePath = (from: Box, fromColumn: string, to: Box, toColumn: string | null): string => {
  const x1 = from.x + NODE_WIDTH;
  const y1 = anchorY(from, fromColumn);
  const x2 = to.x;
  const y2 = anchorY(to, toColumn);
  if (x2 <= x1) {
    // same column of boxes (a table read and written by one task): loop around the right side
    const out = Math.max(x1, to.x + NODE_WIDTH) + 40;
    return `M ${x1} ${y1} C ${out} ${y1}, ${out} ${y2}, ${to.x + NODE_WIDTH} ${y2}`;
  }
  const mid = (x1 + x2) / 2;
  return `M ${x1} ${y1} C ${mid} ${y1}, ${mid} ${y2}, ${x2} ${y2}`;
};
