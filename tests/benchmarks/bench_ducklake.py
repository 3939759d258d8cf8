"""DuckLake core benchmark (prints a table; not a test).

    python -m tests.benchmarks.bench_ducklake [--rows 2000000] [--commits 50] [--writers 4] [--backend sqlite|postgres]

Measures commits per second (one writer; several writer processes on one table, checking that no row
was lost) and scan throughput of ``DuckLake.read`` against ``pyarrow.parquet`` reading the same files.
The postgres backend uses the local stack (PostgreSQL catalog, SeaweedFS S3 data).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tests.conftest import REPO_ROOT


def _setup(backend: str, root: Path):  # type: ignore[no-untyped-def]
    from tests import referee

    if backend == "sqlite":
        return referee.sqlite_lake(root), None
    from airflow_provider_lakehouse.devstack.stack import Stack

    stack = Stack()
    started = stack.up(log=lambda _m: None)
    os.environ.update(stack.env())
    return referee.postgres_lake(stack), (stack if started else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--commits", type=int, default=50)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    args = parser.parse_args()
    from tests.integration.lake_writer import setup_to_env

    results: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        setup, started_stack = _setup(args.backend, Path(tmp))
        try:
            lake = setup.create()
            with lake.transaction() as tx:
                tx.create_table("t", pa.schema([("id", pa.int64()), ("v", pa.string())]))
            begin = time.perf_counter()
            for i in range(args.commits):
                with lake.transaction() as tx:
                    tx.append("t", pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64()), "v": ["x"] * 10}))
            elapsed = time.perf_counter() - begin
            results.append(("commits/s, 1 writer (10-row appends)", f"{args.commits / elapsed:.1f}"))

            env = dict(os.environ, LAKE_SETUP=setup_to_env(setup), PYTHONPATH=str(REPO_ROOT))
            begin = time.perf_counter()
            procs = [subprocess.Popen([sys.executable, "-m", "tests.integration.lake_writer", "ours",
                                       str(1_000_000 * (w + 1)), str(args.commits)], env=env, cwd=REPO_ROOT,
                                      stdout=subprocess.DEVNULL) for w in range(args.writers)]
            for p in procs:
                p.wait()
            elapsed = time.perf_counter() - begin
            total = args.writers * args.commits
            ids = lake.read("t", columns=["id"]).column("id").to_numpy()
            lost = args.commits * 10 + total * 10 - len(np.unique(ids))
            results.append((f"commits/s, {args.writers} writer processes (incl. process start)", f"{total / elapsed:.1f}"))
            results.append(("rows lost or duplicated under concurrency", str(lost + (len(ids) - len(np.unique(ids))))))

            rng = np.random.default_rng(0)
            data = pa.table({"id": pa.array(np.arange(args.rows), pa.int64()), "a": rng.random(args.rows),
                             "b": pa.array(rng.integers(0, 1000, args.rows), pa.int32()),
                             "s": pa.array([f"k{i % 1000}" for i in range(args.rows)])})
            with lake.transaction() as tx:
                tx.create_table("scan", data.schema)
                tx.append("scan", data)
            files = [f.path for f in lake.scan("scan").files]
            size_mb = sum(f.file_size_bytes for f in lake.scan("scan").files) / 1e6
            timings = {"ours": [], "pyarrow": []}
            for _ in range(3):
                t0 = time.perf_counter()
                ours = lake.read("scan")
                timings["ours"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                direct = pa.concat_tables([pq.read_table(lake.storage.fs_path(f), filesystem=lake.storage.fs) for f in files])
                timings["pyarrow"].append(time.perf_counter() - t0)
            assert ours.num_rows == direct.num_rows == args.rows
            best_ours, best_direct = min(timings["ours"]), min(timings["pyarrow"])
            results.append((f"scan {args.rows:,} rows / {size_mb:.1f} MB: DuckLake.read (best of 3)", f"{best_ours:.3f} s"))
            results.append(("scan, pyarrow.parquet on the same files (best of 3)", f"{best_direct:.3f} s"))
            results.append(("DuckLake.read throughput vs pyarrow", f"{best_direct / best_ours:.2f}x"))
        finally:
            if started_stack is not None:
                started_stack.down(log=lambda _m: None)
    print(f"\nDuckLake core benchmark - backend {args.backend}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, pyarrow {pa.__version__}\n")
    print("| measure | value |\n|---|---|")
    for name, value in results:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
