"""DuckLake core benchmark (prints a table; not a test).

    python -m tests.benchmarks.bench_ducklake [--rows 2000000] [--commits 100] [--writers 8] [--backend sqlite|postgres]

Measures commits per second of 10-row appends to one table: one writer, and several writer processes at once
(started together after a warm-up commit, so process start and imports are not counted; the aggregate is all
their commits over the time from the first one's start to the last one's end), checking that no row was lost or
duplicated; the same workload through DuckDB's own ``ducklake`` extension in the same run as the anchor. Then
scan throughput of ``DuckLake.read`` against ``pyarrow.parquet`` reading the same files. The postgres backend
uses the local stack (PostgreSQL catalog, SeaweedFS S3 data).
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


def _label(engine: str) -> str:
    return "ours" if engine == "ours" else "DuckDB 1.5 ducklake"


def _writers(env: dict[str, str], engine: str, count: int, commits: int, base: int) -> tuple[float, int]:
    """Run ``count`` writer processes together; returns (aggregate commits/s, commits made)."""
    import json

    start_at = time.time() + 8 + 2 * count  # after every process has started and made its warm-up commit
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.integration.lake_writer", engine, str(base + 100_000 * w), str(commits)],
            env=dict(env, LAKE_WRITERS_START_AT=str(start_at)),
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(count)
    ]
    reports = []
    for proc in procs:
        out, _ = proc.communicate(timeout=1800)
        if proc.returncode != 0:
            raise SystemExit(f"{engine} writer failed ({proc.returncode})")
        reports.append(json.loads(out.strip().splitlines()[-1]))
    if max(r["first"] for r in reports) > start_at + 1:
        raise SystemExit("a writer was not ready at the common start: raise the start delay")
    elapsed = max(r["last"] for r in reports) - min(r["first"] for r in reports)
    return sum(r["commits"] for r in reports) / elapsed, count * commits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--writers", type=int, default=8)
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
            env = dict(os.environ, LAKE_SETUP=setup_to_env(setup), PYTHONPATH=str(REPO_ROOT))
            expected = 0
            for engine in ("ours", "duckdb"):
                rate, n = _writers(env, engine, 1, args.commits, base=10_000_000 * (1 if engine == "ours" else 5))
                expected += n
                results.append((f"commits/s, 1 writer, {_label(engine)}", f"{rate:.1f}"))
                rate, n = _writers(
                    env, engine, args.writers, args.commits, base=10_000_000 * (2 if engine == "ours" else 6)
                )
                expected += n
                results.append(
                    (f"commits/s, {args.writers} writer processes together, {_label(engine)}", f"{rate:.1f}")
                )
            ids = lake.read("t", columns=["id"]).column("id").to_numpy()
            unique = len(np.unique(ids))
            results.append(("rows lost / duplicated (all runs)", f"{expected * 10 - unique} / {len(ids) - unique}"))

            rng = np.random.default_rng(0)
            data = pa.table(
                {
                    "id": pa.array(np.arange(args.rows), pa.int64()),
                    "a": rng.random(args.rows),
                    "b": pa.array(rng.integers(0, 1000, args.rows), pa.int32()),
                    "s": pa.array([f"k{i % 1000}" for i in range(args.rows)]),
                }
            )
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
                direct = pa.concat_tables(
                    [pq.read_table(lake.storage.fs_path(f), filesystem=lake.storage.fs) for f in files]
                )
                timings["pyarrow"].append(time.perf_counter() - t0)
            assert ours.num_rows == direct.num_rows == args.rows
            best_ours, best_direct = min(timings["ours"]), min(timings["pyarrow"])
            results.append(
                (f"scan {args.rows:,} rows / {size_mb:.1f} MB: DuckLake.read (best of 3)", f"{best_ours:.3f} s")
            )
            results.append(("scan, pyarrow.parquet on the same files (best of 3)", f"{best_direct:.3f} s"))
            results.append(("DuckLake.read throughput vs pyarrow", f"{best_direct / best_ours:.2f}x"))
        finally:
            if started_stack is not None:
                started_stack.down(log=lambda _m: None)
    print(
        f"\nDuckLake core benchmark - backend {args.backend}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, pyarrow {pa.__version__}\n"
    )
    print("| measure | value |\n|---|---|")
    for name, value in results:
        print(f"| {name} | {value} |")


if __name__ == "__main__":
    main()
