import { useCallback, useEffect, useState } from "react";

/**
 * In-page navigation of the Lakehouse nav view: the page is chosen by query parameters
 * (?lake=main&table=sales.orders, ?datatable=main, ?lineage=<asset uri>), so every view has a URL that
 * can be shared and the browser's back button works.
 */
export type Route =
  | { page: "home" }
  | { page: "lake"; lake: string; table: string; tab?: string }
  | { page: "datatable"; datatable: string; table?: string }
  | { page: "lineage"; dataset: string; column?: string };

export const parseRoute = (search: string): Route => {
  const params = new URLSearchParams(search);
  const lineage = params.get("lineage");
  if (lineage) return { page: "lineage", dataset: lineage, column: params.get("column") ?? undefined };
  const lake = params.get("lake");
  const table = params.get("table");
  if (lake && table) return { page: "lake", lake, table, tab: params.get("tab") ?? undefined };
  const datatable = params.get("datatable");
  if (datatable) return { page: "datatable", datatable, table: table ?? undefined };
  return { page: "home" };
};

export const routeSearch = (route: Route): string => {
  const params = new URLSearchParams();
  if (route.page === "lake") {
    params.set("lake", route.lake);
    params.set("table", route.table);
    if (route.tab) params.set("tab", route.tab);
  } else if (route.page === "datatable") {
    params.set("datatable", route.datatable);
    if (route.table) params.set("table", route.table);
  } else if (route.page === "lineage") {
    params.set("lineage", route.dataset);
    if (route.column) params.set("column", route.column);
  }
  const text = params.toString();
  return text ? `?${text}` : "";
};

/** The Lakehouse page's own path (whatever Airflow's base path is). */
export const lakehousePath = (): string => {
  const base = document.querySelector("head > base")?.getAttribute("href") ?? "/";
  const path = new URL(base, globalThis.location.origin).pathname;
  return `${path.endsWith("/") ? path : `${path}/`}plugin/lakehouse`;
};

export const useRoute = (): [Route, (next: Route) => void] => {
  const [search, setSearch] = useState(globalThis.location.search);
  useEffect(() => {
    const onPop = () => setSearch(globalThis.location.search);
    globalThis.addEventListener("popstate", onPop);
    return () => globalThis.removeEventListener("popstate", onPop);
  }, []);
  const go = useCallback((next: Route) => {
    const text = routeSearch(next);
    globalThis.history.pushState(null, "", `${globalThis.location.pathname}${text}`);
    setSearch(text);
    globalThis.scrollTo?.(0, 0);
  }, []);
  return [parseRoute(search), go];
};
