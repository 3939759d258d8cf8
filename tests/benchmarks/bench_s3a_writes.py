"""S3 write path benchmark (prints a table; not a test): how should Spark executors write a lake's Parquet files?

    python -m tests.benchmarks.bench_s3a_writes [--rows 5000000] [--repeat 3]

Two ways to write the same rows (computed by Spark from ``range``) to the stack's SeaweedFS S3, ``local[2]``:

- **pyarrow in the executors** (what the provider does): ``CREATE TABLE … AS SELECT`` through the planner; each
  executor writes its files with pyarrow and computes DuckDB-format statistics from the rows it holds, then the
  driver commits. Timed end to end, commit included.
- **Spark's Parquet writer over ``s3a://``**: ``DataFrame.write.parquet``, plus what a lake commit would need
  afterwards and Spark does not hand back: every file's footer read again on the driver for row counts, sizes
  and column bounds. No commit (so this side is flattered).

Then DuckDB reads both outputs, and the report says what each path leaves out of the catalog statistics.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable

import pyarrow.parquet as pq


def say(text: str = "") -> None:
    sys.__stdout__.write(text + "\n")
    sys.__stdout__.flush()


def _median(fn: Callable[[int], float], repeat: int) -> tuple[float, list[float]]:
    """Run ``fn(attempt)`` once to warm up, then ``repeat`` times; (median, all timed runs)."""
    fn(0)
    times = [fn(attempt) for attempt in range(1, repeat + 1)]
    return statistics.median(times), times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
    from airflow_provider_lakehouse.ducklake.storage import Storage
    from airflow_provider_lakehouse.spark.driver import PlanRunner
    from airflow_provider_lakehouse.spark.plan import plan_script
    from airflow_provider_lakehouse.spark.s3a import use_s3a
    from airflow_provider_lakehouse.spark.session import local_session
    from tests import referee
    from tests.benchmarks.stack import bench_stack

    with bench_stack(export_env=True) as stack:
        jars = stack.ensure_s3a_jars(log=lambda _m: None)
        if not jars:
            say("no S3A jars: this benchmark needs hadoop-aws (see the README's S3A section)")
            return 1
        spark = local_session({"spark.master": "local[2]", "spark.jars": ",".join(str(j) for j in jars)})
        setup = referee.postgres_lake(stack)
        setup.create()
        assert setup.s3 is not None and setup.pg is not None
        spec = DuckLakeSpec(
            name="main",
            catalog=setup.pg,
            data_path=setup.data_path,
            metadata_schema=setup.store.metadata_schema,  # type: ignore[attr-defined]
            s3=setup.s3,
        )
        bucket = setup.data_path.split("://", 1)[1].split("/", 1)[0]
        use_s3a(spark, {bucket}, setup.s3, True)
        storage = Storage(setup.data_path, setup.s3)
        n = args.rows
        lake_select = (
            "SELECT range AS id, CAST(range % 1000 AS INTEGER) AS qty, CAST(range AS DOUBLE) * 0.37 AS amount, "
            f"'customer_' || CAST(range % 50000 AS VARCHAR) AS name FROM range({n})"
        )
        spark_columns = [
            "id",
            "CAST(id % 1000 AS INT) AS qty",
            "CAST(id AS DOUBLE) * 0.37 AS amount",
            "concat('customer_', CAST(id % 50000 AS STRING)) AS name",
        ]

        def lake_write(attempt: int) -> float:
            start = time.perf_counter()
            PlanRunner(spark, spec).run(plan_script(f"CREATE OR REPLACE TABLE w{attempt} AS {lake_select}"))
            return time.perf_counter() - start

        footer_seconds: list[float] = []
        spark_dirs: list[str] = []

        def spark_write(attempt: int) -> float:
            directory = f"{setup.data_path}spark_writer/w{attempt}/"
            start = time.perf_counter()
            spark.range(n).selectExpr(*spark_columns).write.mode("overwrite").parquet(
                "s3a://" + directory.split("://", 1)[1]
            )
            written = time.perf_counter()
            files = [e.uri for e in storage.list_files(directory) if e.uri.endswith(".parquet")]
            for uri in files:  # what the commit needs: rows, size, per-column bounds and null counts
                with storage.fs.open_input_file(storage.fs_path(uri)) as handle:
                    meta = pq.ParquetFile(handle).metadata
                    for group in range(meta.num_row_groups):
                        for column in range(meta.num_columns):
                            meta.row_group(group).column(column).statistics  # noqa: B018
            footer_seconds.append(time.perf_counter() - written)
            spark_dirs.append(directory)
            return time.perf_counter() - start

        lake_median, lake_times = _median(lake_write, args.repeat)
        spark_median, spark_times = _median(spark_write, args.repeat)

        con = referee.connect()
        setup.attach(con)
        lake_check = con.sql(f"SELECT count(*), sum(qty), count(DISTINCT name) FROM lake.w{args.repeat}").fetchone()
        spark_check = con.sql(
            f"SELECT count(*), sum(qty), count(DISTINCT name) FROM read_parquet('{spark_dirs[-1]}*.parquet')"
        ).fetchone()
        spark_file = next(e.uri for e in storage.list_files(spark_dirs[-1]) if e.uri.endswith(".parquet"))
        with storage.fs.open_input_file(storage.fs_path(spark_file)) as handle:
            spark_schema = pq.ParquetFile(handle).schema_arrow
        field_ids = [f.metadata.get(b"PARQUET:field_id") if f.metadata else None for f in spark_schema]
        lake_files = con.sql(f"SELECT count(*) FROM ducklake_list_files('lake', 'w{args.repeat}')").fetchone()[0]  # type: ignore[index]
        spark_files = len([e for e in storage.list_files(spark_dirs[-1]) if e.uri.endswith(".parquet")])
        con.close()

        expected = (n, sum((i % 1000) for i in range(1000)) * (n // 1000) + sum(i % 1000 for i in range(n % 1000)))
        say(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
        say(f"\n## Writing {n:,} rows (4 columns) to SeaweedFS S3 from local[2] (median of {args.repeat})\n")
        say("| path | median s | runs s | files | DuckDB reads: rows, sum(qty) |\n|---|---:|---|---:|---|")
        say(
            f"| pyarrow in executors, committed to the lake | {lake_median:.2f} | "
            f"{', '.join(f'{t:.2f}' for t in lake_times)} | {lake_files} | {lake_check[0]:,}, {lake_check[1]:,} |"  # type: ignore[index]
        )
        say(
            f"| Spark Parquet writer over s3a:// + footers read back (no commit) | {spark_median:.2f} | "
            f"{', '.join(f'{t:.2f}' for t in spark_times)} | {spark_files} | "
            f"{spark_check[0]:,}, {spark_check[1]:,} |"  # type: ignore[index]
        )
        say(f"\nfooter reads alone: median {statistics.median(footer_seconds[1:]):.2f} s")
        say(f"expected rows, sum(qty): {expected[0]:,}, {expected[1]:,}")
        say(f"Spark-written Parquet field ids: {field_ids} (DuckLake maps columns by field id)")
        ok = lake_check[:2] == expected and spark_check[:2] == expected  # type: ignore[index]
        say("both outputs read back by DuckDB with the expected rows" if ok else "MISMATCH")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
