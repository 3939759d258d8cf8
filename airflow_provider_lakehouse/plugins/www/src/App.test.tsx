import { ChakraProvider, defaultSystem } from "@chakra-ui/react";
import { render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { LakehouseView } from "./App";
import type { DagDataFlow, Overview } from "./types";

const overview: Overview = {
  stores: [
    { kind: "ducklake", name: "main", conn_id: "ducklake_main", reachable: true, error: null, schemas: ["main"],
      tables: ["main.orders"], snapshot_count: 4, data_size_bytes: 2048 },
    { kind: "datatable", name: "reports", conn_id: "datatable_reports", reachable: false, error: "connection refused",
      schemas: [], tables: [], snapshot_count: null, data_size_bytes: null },
  ],
  recent_changes: [
    { lake: "main", snapshot_id: 4, snapshot_time: "2026-11-23T08:00:00+00:00", schema_version: 1,
      changes: { tables_inserted_into: ["1"] }, author: "etl.load", commit_message: "airflow etl.load run r try 1",
      task: { dag_id: "etl", task_id: "load", run_id: "r", map_index: -1, try_number: 1 } },
  ],
};

const reply = (body: unknown, status = 200) =>
  Promise.resolve(new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } }));

const view = (props = {}) => render(<ChakraProvider value={defaultSystem}><LakehouseView {...props} /></ChakraProvider>);

afterEach(() => vi.unstubAllGlobals());

describe("LakehouseView", () => {
  it("home lists lakes, Data Tables and recent changes with their task", async () => {
    const fetch = vi.fn((_url: string) => reply(overview));
    vi.stubGlobal("fetch", fetch);
    view();
    expect(await screen.findByText("main.orders")).toBeTruthy();
    expect(screen.getByText("unreachable")).toBeTruthy();
    expect(screen.getByText("connection refused")).toBeTruthy();
    expect(screen.getByText("etl.load (try 1)")).toBeTruthy();
    expect(String(fetch.mock.calls[0][0])).toContain("/lakehouse/api/overview");
  });

  it("says when the user may not read", async () => {
    vi.stubGlobal("fetch", vi.fn(() => reply({ detail: "needs read access to connection" }, 403)));
    view();
    expect(await screen.findByRole("alert")).toBeTruthy();
    expect(screen.getByRole("alert").textContent).toContain("Not allowed");
  });

  it("on a DAG page shows each task's reads and writes with column badges", async () => {
    const flow: DagDataFlow = {
      dag_id: "etl",
      tasks: [
        { task_id: "load", operator: "DucklakeOperator", store: "ducklake://main", origin: "run", error: null,
          reads: { "ducklake://main/main.raw": ["amount", "id"] }, writes: { "ducklake://main/main.orders": ["id", "total"] },
          downstream: [] },
      ],
    };
    vi.stubGlobal("fetch", vi.fn(() => reply(flow)));
    const { container } = view({ dagId: "etl" });
    await waitFor(() => expect(container.querySelector("[data-task='load']")).toBeTruthy());
    const read = [...container.querySelectorAll("[data-badge='columns read']")].map((b) => b.textContent);
    const written = [...container.querySelectorAll("[data-badge='columns written']")].map((b) => b.textContent);
    expect(read).toEqual(["amount", "id"]);
    expect(written).toEqual(["id", "total"]);
  });
});
