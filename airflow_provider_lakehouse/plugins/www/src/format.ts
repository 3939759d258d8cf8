/** Sizes, counts and times as people read them. */

export const formatBytes = (bytes: number | null | undefined): string => {
  if (bytes === null || bytes === undefined) return "–";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
};

export const formatCount = (n: number | null | undefined): string =>
  n === null || n === undefined ? "–" : n.toLocaleString("en-US");

export const formatTime = (iso: string | null | undefined): string => {
  if (!iso) return "–";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return date.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z").replace(/Z$/, " UTC");
};

/** A snapshot's changes as one line: "inserted into 3, created main.orders". */
export const describeChanges = (changes: Record<string, string[]>): string => {
  const words: Record<string, string> = {
    schemas_created: "created schema",
    tables_created: "created table",
    tables_dropped: "dropped table",
    tables_inserted_into: "inserted into",
    tables_deleted_from: "deleted from",
    tables_altered: "altered",
    inlined_insert: "inlined insert into",
    inlined_delete: "inlined delete from",
    merge_adjacent: "compacted",
    inline_flush: "flushed",
  };
  return Object.entries(changes)
    .map(([key, values]) => `${words[key] ?? key.replaceAll("_", " ")} ${values.join(", ")}`)
    .join("; ");
};

export const cellText = (value: unknown): string => {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
};
