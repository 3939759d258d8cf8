import { Link, Text } from "@chakra-ui/react";

import { airflowUrl } from "../api";
import type { TaskRef } from "../types";

/** The Airflow task instance that committed a snapshot, linked to its page in the Airflow UI. */
export const TaskLink = ({ task }: { task: TaskRef | null }) => {
  if (!task) return <Text color="fg.muted">–</Text>;
  const mapped = task.map_index >= 0 ? `/mapped/${task.map_index}` : "";
  const href = airflowUrl(
    `dags/${encodeURIComponent(task.dag_id)}/runs/${encodeURIComponent(task.run_id)}/tasks/${encodeURIComponent(task.task_id)}${mapped}`,
  );
  return (
    <Link href={href} color="fg.info" fontFamily="mono" fontSize="sm" data-testid="task-link">
      {task.dag_id}.{task.task_id}
      {task.try_number ? ` (try ${task.try_number})` : ""}
    </Link>
  );
};
