import { describe, expect, it } from "vitest";

import type { LineageEdge } from "../types";
import { columnKey, impact } from "./impact";

const edge = (source: string, sourceColumn: string, target: string, targetColumn: string | null, subtype = "IDENTITY"): LineageEdge => ({
  source,
  source_column: sourceColumn,
  target,
  target_column: targetColumn,
  type: targetColumn === null ? "INDIRECT" : "DIRECT",
  subtype,
  masking: false,
  dag_id: "d",
  task_id: "t",
  origin: "run",
});

const columns: Record<string, string[]> = { raw: ["id", "amount", "day"], daily: ["day", "total"], report: ["total"] };
const columnsOf = (dataset: string) => columns[dataset] ?? [];

describe("impact", () => {
  const edges = [
    edge("raw", "amount", "daily", "total", "AGGREGATION"),
    edge("raw", "day", "daily", "day"),
    edge("raw", "day", "daily", null, "GROUP_BY"),
    edge("daily", "total", "report", "total"),
  ];

  it("walks downstream through column edges", () => {
    const result = impact(edges, { dataset: "raw", column: "amount" }, columnsOf);
    expect([...result.downstream].sort()).toEqual([columnKey("daily", "total"), columnKey("report", "total")]);
    expect(result.upstream.size).toBe(0);
  });

  it("a dataset-wide edge reaches every column of its target", () => {
    const result = impact(edges, { dataset: "raw", column: "day" }, columnsOf);
    expect([...result.downstream].sort()).toEqual(
      [columnKey("daily", "day"), columnKey("daily", "total"), columnKey("report", "total")].sort(),
    );
  });

  it("walks upstream, including the columns that decide the rows", () => {
    const result = impact(edges, { dataset: "report", column: "total" }, columnsOf);
    expect([...result.upstream].sort()).toEqual(
      [columnKey("daily", "total"), columnKey("raw", "amount"), columnKey("raw", "day")].sort(),
    );
    expect(result.edges.size).toBe(3);
  });
});
