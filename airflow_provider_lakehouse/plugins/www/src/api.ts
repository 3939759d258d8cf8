import { useEffect, useState } from "react";

/** The UI's base path (Airflow sets <base href>), so every URL works behind a reverse proxy. */
export const basePath = (): string => {
  const href = document.querySelector("head > base")?.getAttribute("href") ?? "/";
  const path = new URL(href, globalThis.location.origin).pathname;
  return path.endsWith("/") ? path : `${path}/`;
};

export const apiUrl = (path: string): string => `${basePath()}lakehouse/api/${path.replace(/^\//, "")}`;

/** A link to a page of the Airflow UI itself (a DAG, an asset). */
export const airflowUrl = (path: string): string => `${basePath()}${path.replace(/^\//, "")}`;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const getJson = async <T,>(path: string, signal?: AbortSignal): Promise<T> => {
  // The Airflow UI's session cookie authenticates the request, as for the UI's own API calls.
  const response = await fetch(apiUrl(path), { credentials: "same-origin", headers: { Accept: "application/json" }, signal });
  if (!response.ok) {
    let detail = response.statusText;
    try {
      const body = (await response.json()) as { detail?: unknown };
      detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
    } catch {
      /* not JSON: keep the status text */
    }
    throw new ApiError(response.status, detail);
  }
  return (await response.json()) as T;
};

export type Loaded<T> = { data?: T; error?: ApiError | Error; loading: boolean };

/** Fetch ``path`` (null: nothing yet) and re-fetch when it changes. */
export const useApi = <T,>(path: string | null): Loaded<T> => {
  const [state, setState] = useState<Loaded<T>>({ loading: path !== null });
  useEffect(() => {
    if (path === null) {
      setState({ loading: false });
      return undefined;
    }
    const controller = new AbortController();
    setState((previous) => ({ data: previous.data, loading: true }));
    getJson<T>(path, controller.signal)
      .then((data) => setState({ data, loading: false }))
      .catch((error: Error) => {
        if (!controller.signal.aborted) setState({ error, loading: false });
      });
    return () => controller.abort();
  }, [path]);
  return state;
};
