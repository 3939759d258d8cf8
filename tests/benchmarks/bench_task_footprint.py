"""What one local-Spark lake task costs, and how long the TPC-DS DAG takes to parse (prints; not a test)

    python -m tests.benchmarks.bench_task_footprint [--tasks 3] [--parses 5]

Memory: runs ``--tasks`` lake tasks one after another, each in a fresh Python process as an Airflow worker runs
a task (a ``DucklakeHook`` script on the stack's S3 lake, local Spark: the JVM starts inside the task), samples
the process and its JVM child every 0.2 s, and prints the peak summed RSS and the wall time of each.
Parse time: imports ``dags_examples/tpcds_pipeline.py`` in a fresh process ``--parses`` times, as the
dag-processor does, and prints each time (the first also fills DuckDB's query cache).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import psutil

from tests.conftest import REPO_ROOT

TASK = """
from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook
DucklakeHook(ducklake="main").run(
    "ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE IF NOT EXISTS bench_footprint (i INTEGER, task INTEGER);"
    "INSERT INTO bench_footprint SELECT i, $task FROM range(100000) r(i);"
    "SELECT task, count(*) AS n, sum(i) AS s FROM bench_footprint GROUP BY task", {"task": %d})
"""

PARSE = """
import time
from airflow.dag_processing.dagbag import DagBag  # already imported in a dag-processor: not timed
begin = time.perf_counter()
bag = DagBag(dag_folder=%r)
seconds = time.perf_counter() - begin
assert not bag.import_errors, bag.import_errors
assert len(bag.dags["tpcds_pipeline"].tasks) == 52
print(seconds)
"""


def peak_rss_mb(process: subprocess.Popen[bytes]) -> float:
    """The peak summed RSS of ``process`` and its descendants while it runs, sampled every 0.2 s."""
    root = psutil.Process(process.pid)
    peak = 0
    while process.poll() is None:
        try:
            members = [root, *root.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in members if p.is_running()))
        except psutil.Error:
            pass
        time.sleep(0.2)
    return peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=3)
    parser.add_argument("--parses", type=int, default=5)
    args = parser.parse_args()
    from tests.benchmarks.stack import bench_stack
    from tests.dags.runs import lake_env

    with bench_stack() as stack:
        env, _setup = lake_env(dict(os.environ, **stack.env()), None)
        print(f"{'local-Spark task':<20} {'peak RSS (MB)':>14} {'seconds':>8}")
        for task in range(args.tasks):
            begin = time.monotonic()
            process = subprocess.Popen(
                [sys.executable, "-c", TASK % task],
                env=env,
                cwd=REPO_ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            peak = peak_rss_mb(process)
            assert process.returncode == 0, f"task {task} failed"
            print(f"{task:<20} {peak:>14.0f} {time.monotonic() - begin:>8.1f}")
        dags = str(REPO_ROOT / "dags_examples" / "tpcds_pipeline.py")
        times = []
        for _ in range(args.parses):
            result = subprocess.run(
                [sys.executable, "-c", PARSE % dags], env=env, cwd=REPO_ROOT, capture_output=True, text=True, check=True
            )
            times.append(float(result.stdout.strip().splitlines()[-1]))
        print(
            f"TPC-DS DAG parse (DagBag of the one file, fresh process): "
            f"{', '.join(f'{t:.2f}' for t in times)} s; median {statistics.median(times):.2f} s"
        )


if __name__ == "__main__":
    main()
