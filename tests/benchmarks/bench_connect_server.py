"""Does a Spark Connect server stay flat under many Airflow-like tasks? (prints a table; not a test)

    python -m tests.benchmarks.bench_connect_server [--tasks 300] [--every 25]

Starts the local stack and its Spark Connect server (configured as ``devstack`` configures it), then runs
``--tasks`` tasks one after another, each in a fresh Python process as an Airflow worker would: a
``DucklakeHook`` script on an S3 lake that reads (Python data source) and writes (executors' Python writers).
Every ``--every`` tasks it samples the server: its processes (the JVM and every Python worker under it) and
their summed RSS. Flat means the last samples equal the first ones, not growing with the task count.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from tests.conftest import REPO_ROOT

TASK = """
from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook
DucklakeHook(ducklake="main").run(
    "ATTACH 'ducklake' AS dl; USE dl; CREATE TABLE IF NOT EXISTS bench_connect (i INTEGER, task INTEGER);"
    "INSERT INTO bench_connect SELECT i, $task FROM range(100) r(i);"
    "SELECT task, count(*) AS n FROM bench_connect WHERE task > $task - 5 GROUP BY task", {"task": %d})
"""


def server_tree(pid: int) -> tuple[int, int]:
    """(processes, summed RSS in MB) of ``pid`` and all its descendants."""
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid=,rss="], capture_output=True, text=True).stdout
    rows = [tuple(int(x) for x in line.split()) for line in out.splitlines()]
    members, grew = {pid}, True
    while grew:
        grew = False
        for child, parent, _rss in rows:
            if parent in members and child not in members:
                members.add(child)
                grew = True
    return len(members), sum(rss for child, _p, rss in rows if child in members) // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--every", type=int, default=25)
    args = parser.parse_args()
    from tests.benchmarks.stack import bench_stack
    from tests.dags.runs import lake_env

    with bench_stack() as stack:
        stack.start_spark_connect(log=lambda _m: None)
        server = stack.spark_connect_server()
        pid = server.pid()
        env, _setup = lake_env(dict(os.environ, **stack.env()), "spark_connect_local")
        samples = [(0, *server_tree(pid))]
        seconds = []
        for task in range(1, args.tasks + 1):
            began = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-c", TASK % task], env=env, cwd=REPO_ROOT, capture_output=True, text=True
            )
            if proc.returncode != 0:
                raise SystemExit(f"task {task} failed:\n{proc.stderr[-3000:]}")
            seconds.append(time.perf_counter() - began)
            if task % args.every == 0 or task == args.tasks:
                samples.append((task, *server_tree(pid)))
                print(f"after {task} tasks: {samples[-1][1]} processes, {samples[-1][2]} MB", flush=True)
        time.sleep(40)  # idle Python workers end after the server's idle timeout (30 s)
        samples.append((-1, *server_tree(pid)))
    print(
        f"\nSpark Connect server under {args.tasks} sequential tasks ({os.cpu_count()} CPUs); "
        f"task wall time incl. process start: median {statistics.median(seconds):.1f} s\n"
    )
    print("| tasks run | server processes | server RSS (MB) |\n|---:|---:|---:|")
    for done, processes, rss in samples:
        print(f"| {'idle 40 s later' if done < 0 else done} | {processes} | {rss} |")


if __name__ == "__main__":
    main()
