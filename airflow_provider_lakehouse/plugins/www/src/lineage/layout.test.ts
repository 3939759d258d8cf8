import { describe, expect, it } from "vitest";

import type { LineageGraph } from "../types";
import { anchorY, HEADER_HEIGHT, layout, NODE_WIDTH, ROW_HEIGHT } from "./layout";

const node = (id: string, depth: number, columns: string[]) => ({
  id, label: id, kind: "table", columns, link: null, asset_uri: null, asset_id: null, depth,
});

describe("layout", () => {
  const graph: LineageGraph = {
    focus: "b",
    nodes: [node("a", -1, ["x", "y"]), node("a2", -1, ["z"]), node("b", 0, ["x"]), node("c", 1, [])],
    edges: [],
  };
  const result = layout(graph);

  it("places upstream left of the focus and downstream right of it", () => {
    const [a, b, c] = ["a", "b", "c"].map((id) => result.boxes.get(id)!);
    expect(a.x).toBeLessThan(b.x);
    expect(b.x).toBeLessThan(c.x);
    expect(result.width).toBe(c.x + NODE_WIDTH + 16);
  });

  it("stacks the tables of one depth without overlap", () => {
    const a = result.boxes.get("a")!;
    const a2 = result.boxes.get("a2")!;
    expect(a2.y).toBeGreaterThanOrEqual(a.y + a.height);
    expect(a.height).toBe(HEADER_HEIGHT + 2 * ROW_HEIGHT);
  });

  it("anchors edges on column rows, whole-table edges on the header", () => {
    const a = result.boxes.get("a")!;
    expect(anchorY(a, "y")).toBe(a.y + HEADER_HEIGHT + ROW_HEIGHT * 1.5);
    expect(anchorY(a, null)).toBe(a.y + HEADER_HEIGHT / 2);
  });
});
