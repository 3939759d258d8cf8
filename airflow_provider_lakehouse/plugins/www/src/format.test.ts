import { describe, expect, it } from "vitest";

import { describeChanges, formatBytes, formatCount } from "./format";
import { parseRoute, routeSearch } from "./nav";

describe("format", () => {
  it("formats sizes and counts", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(null)).toBe("–");
    expect(formatCount(1234567)).toBe("1,234,567");
  });

  it("describes snapshot changes", () => {
    expect(describeChanges({ tables_created: ["main.t"], tables_inserted_into: ["3"] })).toBe(
      "created table main.t; inserted into 3",
    );
  });
});

describe("routes", () => {
  it("round-trips every page through the query string", () => {
    for (const route of [
      { page: "home" as const },
      { page: "lake" as const, lake: "main", table: "sales.orders", tab: "preview" },
      { page: "datatable" as const, datatable: "main", table: "public.events" },
      { page: "lineage" as const, dataset: "ducklake://main/sales.orders", column: "amount" },
    ]) {
      expect(parseRoute(routeSearch(route))).toEqual(route);
    }
  });
});
