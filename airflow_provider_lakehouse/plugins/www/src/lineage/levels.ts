import type { TaskDataFlow } from "../types";

/** Tasks grouped by level (longest path from a root), so upstream tasks come first; cycles cannot occur in a DAG. */
export const levels = (tasks: TaskDataFlow[]): TaskDataFlow[][] => {
  const byId = new Map(tasks.map((t) => [t.task_id, t]));
  const level = new Map<string, number>();
  const parents = new Map<string, string[]>();
  for (const t of tasks) for (const d of t.downstream) parents.set(d, [...(parents.get(d) ?? []), t.task_id]);
  const visit = (id: string, seen: Set<string>): number => {
    if (level.has(id)) return level.get(id)!;
    if (seen.has(id)) return 0;
    seen.add(id);
    const value = Math.max(-1, ...(parents.get(id) ?? []).filter((p) => byId.has(p)).map((p) => visit(p, seen))) + 1;
    level.set(id, value);
    return value;
  };
  tasks.forEach((t) => visit(t.task_id, new Set()));
  const grouped: TaskDataFlow[][] = [];
  for (const t of tasks) {
    const l = level.get(t.task_id) ?? 0;
    (grouped[l] ??= []).push(t);
  }
  return grouped.filter(Boolean);
};
