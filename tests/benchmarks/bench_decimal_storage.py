"""Decimal storage benchmark (prints a table; not a test): how fast does Spark read DECIMAL(7,2) columns stored
as Parquet fixed-length byte arrays (pyarrow's default) and as INT32 (what DuckDB and Spark write)?

    python -m tests.benchmarks.bench_decimal_storage [--parquet FILE] [--repeat 5]

The rows are TPC-DS ``store_sales`` (12 decimal columns), by default the SF 1 landing file that ``bench_tpcds``
generates. pyarrow writes them twice (the same rows, snappy, 1 M rows per group), once per physical type, and
``local[2]`` Spark sums every decimal column of each file. Both files are read once to warm the JVM up, then
``--repeat`` times each, alternating; the report gives the median.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

LAYOUTS = {"fixed-length byte array": False, "INT32 / INT64": True}


def say(text: str = "") -> None:
    sys.__stdout__.write(text + "\n")
    sys.__stdout__.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parquet", default=".lakehouse/tpcds/sf1/store_sales.parquet")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    table = pq.read_table(args.parquet)
    decimals = [f.name for f in table.schema if pa.types.is_decimal(f.type)]
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", "3g")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    with tempfile.TemporaryDirectory() as workdir:
        files = {}
        for layout, as_integer in LAYOUTS.items():
            files[layout] = Path(workdir) / f"{as_integer}.parquet"
            pq.write_table(
                table,
                files[layout],
                compression="snappy",
                row_group_size=1_000_000,
                store_decimal_as_integer=as_integer,
            )
        query = "SELECT " + ", ".join(f"sum({c})" for c in decimals) + " FROM parquet.`{}`"
        answers, times = {}, {layout: [] for layout in LAYOUTS}
        for attempt in range(args.repeat + 1):
            for layout, path in files.items():
                start = time.perf_counter()
                answers[layout] = spark.sql(query.format(path)).collect()
                if attempt:  # the first round warms the JVM up
                    times[layout].append(time.perf_counter() - start)
        if len({repr(a) for a in answers.values()}) != 1:
            raise SystemExit(f"the two layouts gave different sums: {answers}")
        say(f"{table.num_rows:,} rows, {len(decimals)} decimal columns, median of {args.repeat}, local[2]\n")
        say("| decimals stored as | file MB | median s | runs s |")
        say("|---|---:|---:|---|")
        for layout, path in files.items():
            runs = ", ".join(f"{t:.2f}" for t in times[layout])
            say(f"| {layout} | {path.stat().st_size / 1e6:.1f} | {statistics.median(times[layout]):.2f} | {runs} |")
    spark.stop()


if __name__ == "__main__":
    main()
