"""Spark path benchmark (prints a table; not a test).

    python -m tests.benchmarks.bench_spark [--rows 5000000] [--repeat 3]

Measures, on the local stack:
- per-task overhead of ``DucklakeHook.run("SELECT 1")`` through spark-submit (``local[2]``) and through Spark
  Connect, against a bare ``spark-submit`` of an empty job;
- scan throughput (``SELECT sum(...)`` over every row) of a filesystem lake table read by Spark's own Parquet
  reader, against ``spark.read.parquet`` of the same files, and of the same table on S3 through the provider's
  Python data source.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa


def say(text: str = "") -> None:
    """Print to the real stdout (Airflow's logging setup replaces ``sys.stdout`` once a hook is imported)."""
    sys.__stdout__.write(text + "\n")
    sys.__stdout__.flush()


def _timed(fn: Any, repeat: int) -> tuple[float, float]:
    """(first run, median of the next ``repeat``) in seconds."""
    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return first, statistics.median(times) if times else first


def _lake_env(stack: Any, name: str, spark_conn_id: str | None) -> None:
    conn = json.loads(stack.env()["AIRFLOW_CONN_DUCKLAKE_MAIN"])
    conn["extra"] = {**conn["extra"], "metadata_schema": name, "data_path": f"s3://lakehouse/{name}/"}
    if spark_conn_id:
        conn["extra"]["spark_conn_id"] = spark_conn_id
    os.environ["AIRFLOW_CONN_DUCKLAKE_MAIN"] = json.dumps(conn)


def overhead(stack: Any, repeat: int) -> list[tuple[str, float, float]]:
    from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook

    rows = []
    job = Path(tempfile.mkdtemp()) / "empty_job.py"
    job.write_text("from pyspark.sql import SparkSession\nSparkSession.builder.getOrCreate().stop()\n")
    bare = [
        str(Path(sys.executable).parent / "spark-submit"),
        "--master",
        "local[2]",
        "--conf",
        "spark.driver.host=127.0.0.1",
        "--conf",
        "spark.driver.bindAddress=127.0.0.1",
        str(job),
    ]
    rows.append(
        ("bare spark-submit, empty job", *_timed(lambda: subprocess.run(bare, check=True, capture_output=True), repeat))
    )
    name = f"bench_{os.getpid()}"
    _lake_env(stack, name, "spark_local")
    rows.append(("DucklakeHook via spark-submit (local[2])", *_timed(lambda: DucklakeHook().run("SELECT 1"), repeat)))
    stack.start_spark_connect(log=lambda _m: None)
    os.environ.update(stack.env())
    _lake_env(stack, name, "spark_connect_local")
    rows.append(("DucklakeHook via Spark Connect", *_timed(lambda: DucklakeHook().run("SELECT 1"), repeat)))
    return rows


def scans(stack: Any, n_rows: int, repeat: int) -> list[tuple[str, float, float]]:
    from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
    from airflow_provider_lakehouse.ducklake.catalog import DuckLake
    from airflow_provider_lakehouse.spark.driver import PlanRunner
    from airflow_provider_lakehouse.spark.plan import plan_script
    from airflow_provider_lakehouse.spark.session import local_session
    from tests import referee

    rng = np.random.default_rng(7)
    data = pa.table(
        {
            "id": np.arange(n_rows, dtype=np.int64),
            "amount": rng.random(n_rows),
            "qty": rng.integers(0, 100, n_rows, dtype=np.int32),
        }
    )
    spark = local_session({"spark.master": "local[2]"})
    root = Path(tempfile.mkdtemp())
    local = referee.sqlite_lake(root)
    s3 = referee.postgres_lake(stack)
    specs = {
        "fs": DuckLakeSpec(name="main", catalog=local.store.path, data_path=local.data_path),  # type: ignore[attr-defined]
        "s3": DuckLakeSpec(
            name="main",
            catalog=s3.store.spec,
            data_path=s3.data_path,  # type: ignore[attr-defined]
            metadata_schema=s3.store.metadata_schema,
            s3=s3.s3,
        ),  # type: ignore[attr-defined]
    }
    chunk = max(1, n_rows // 8)  # eight files, like eight executor outputs
    for setup in (local, s3):
        lake = DuckLake.create(setup.store, data_path=setup.data_path, s3=setup.s3)
        with lake.transaction() as tx:
            tx.create_table("main.facts", data.schema)
        for start in range(0, n_rows, chunk):
            with lake.transaction() as tx:
                tx.append("main.facts", data.slice(start, chunk))
    query = "SELECT sum(amount) AS a, sum(qty) AS q, count(*) AS n FROM facts"
    expected = (float(np.sum(data.column("amount").to_numpy())), int(np.sum(data.column("qty").to_numpy())))

    def lake_sum(spec: DuckLakeSpec) -> None:
        row = PlanRunner(spark, spec).run(plan_script(query))["result"]["commands"][-1]["rows"][0]
        assert row["n"] == n_rows and row["q"] == expected[1] and abs(row["a"] - expected[0]) < 1e-6 * n_rows

    files = [f.path for f in DuckLake(local.store).scan("facts").files]

    def raw_sum() -> None:
        row = spark.read.parquet(*files).selectExpr("sum(amount) AS a", "sum(qty) AS q", "count(*) AS n").collect()[0]
        assert row["n"] == n_rows

    return [
        ("spark.read.parquet of the lake's files (fs)", *_timed(raw_sum, repeat)),
        ("lake table, Spark Parquet reader (fs)", *_timed(lambda: lake_sum(specs["fs"]), repeat)),
        ("lake table, Python data source over S3", *_timed(lambda: lake_sum(specs["s3"]), repeat)),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from tests.benchmarks.stack import bench_stack

    with bench_stack(export_env=True) as stack:
        try:
            overheads = overhead(stack, args.repeat)
            results = scans(stack, args.rows, args.repeat)
            say(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
            say(f"\n## Per-task overhead (first call / median of {args.repeat} more)\n")
            say("| path | first (s) | median (s) |\n|---|---:|---:|")
            for label, first, median in overheads:
                say(f"| {label} | {first:.2f} | {median:.2f} |")
            say(f"\n## Scan of {args.rows:,} rows (sum over two columns; first / median)\n")
            say("| read | first (s) | median (s) | rows/s (median) |\n|---|---:|---:|---:|")
            for label, first, median in results:
                say(f"| {label} | {first:.2f} | {median:.2f} | {args.rows / median:,.0f} |")
            raw, native, ds = (r[2] for r in results)
            say(
                f"\nlake table speed relative to spark.read.parquet: filesystem {raw / native:.2f}x, "
                f"S3 data source {raw / ds:.2f}x"
            )
        finally:
            from pyspark.sql.connect.session import SparkSession as ConnectSession

            session = ConnectSession.getActiveSession()
            if session is not None:
                session.stop()  # before the server goes away, or the client retries at interpreter exit
            stack.stop_spark_connect(log=lambda _m: None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
