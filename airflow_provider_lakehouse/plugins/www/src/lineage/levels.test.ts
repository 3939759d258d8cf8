import { describe, expect, it } from "vitest";

import type { TaskDataFlow } from "../types";
import { levels } from "./levels";

const task = (task_id: string, downstream: string[]): TaskDataFlow => ({
  task_id, operator: "DucklakeOperator", store: null, reads: {}, writes: {}, origin: "parse", downstream, error: null,
});

describe("levels", () => {
  it("orders tasks by their longest path from a root", () => {
    const grouped = levels([task("c", []), task("a", ["b", "c"]), task("b", ["c"])]);
    expect(grouped.map((g) => g.map((t) => t.task_id))).toEqual([["a"], ["b"], ["c"]]);
  });
});
