"""Lakehouse UI API latency (prints a table; not a test).

    python -m tests.benchmarks.bench_lakehouse_ui [--snapshots 1000] [--files 10000] [--rows 10000000] [--repeat 40]

Builds, on the local stack (PostgreSQL catalog, SeaweedFS S3 data), a lake whose table ``bench.events`` has
``--snapshots`` snapshots adding ``--files`` data files in all, and a table ``bench.big`` of ``--rows`` rows
written as DuckDB would (one large file). Then calls the plugin's FastAPI app in this process, through
Airflow's real auth (a JWT from the simple auth manager; the HTTP hop of a separate api-server is not counted),
and reports p50/p95 latency of the table page, the snapshot list and previews. The lake is reused between runs
(its catalog schema and S3 prefix are named after the sizes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

import numpy as np
import pyarrow as pa


def _build(lake: Any, snapshots: int, files: int, rows: int) -> None:
    from airflow_provider_lakehouse.ducklake.transaction import Transaction  # noqa: F401 - lake.transaction()

    tables = {t.qualified_name for t in lake.tables()}
    if "bench.events" not in tables:
        schema = pa.schema([("id", pa.int64()), ("kind", pa.string()), ("amount", pa.float64())])
        with lake.transaction(author="bench", message="create") as tx:
            tx.create_schema("bench")
            tx.create_table("bench.events", schema)
        per_snapshot = max(1, files // snapshots)
        started = time.monotonic()
        for s in range(snapshots - 1):
            with lake.transaction(
                author="bench",
                message=f"append {s}",
                extra_info=json.dumps(
                    {
                        "airflow_task": {
                            "dag_id": "bench",
                            "task_id": "load",
                            "run_id": f"r{s}",
                            "map_index": -1,
                            "try_number": 1,
                        }
                    }
                ),
            ) as tx:
                for f in range(per_snapshot):
                    base = (s * per_snapshot + f) * 20
                    tx.append(
                        "bench.events",
                        pa.table(
                            {
                                "id": np.arange(base, base + 20, dtype=np.int64),
                                "kind": ["a", "b"] * 10,
                                "amount": np.linspace(0, 1, 20),
                            }
                        ),
                    )
            if s % 100 == 99:
                print(f"  {s + 1} snapshots ({time.monotonic() - started:.0f} s)", flush=True)
    if "bench.big" not in tables:
        started = time.monotonic()
        n = rows
        big = pa.table(
            {
                "id": np.arange(n, dtype=np.int64),
                "value": np.random.default_rng(1).random(n),
                "label": pa.array(np.char.add("item-", (np.arange(n) % 1000).astype(str))),
            }
        )
        with lake.transaction(author="bench", message="big") as tx:
            tx.create_table("bench.big", big.schema)
            tx.append("bench.big", big)
        print(f"  bench.big: {n:,} rows in {time.monotonic() - started:.0f} s", flush=True)


def _measure(client: Any, headers: dict[str, str], path: str, repeat: int) -> tuple[float, float, int]:
    client.get(path, headers=headers)  # warm: the first call opens the lake
    times = []
    for _ in range(repeat):
        begin = time.perf_counter()
        response = client.get(path, headers=headers)
        times.append((time.perf_counter() - begin) * 1000)
        assert response.status_code == 200, (path, response.status_code, response.text[:300])
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * len(times)) - 1)]
    return statistics.median(times), p95, len(response.content)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--snapshots", type=int, default=1000)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=40)
    args = parser.parse_args()

    from airflow_provider_lakehouse.devstack.stack import Stack
    from tests.benchmarks.stack import bench_stack

    os.environ.update(Stack().airflow_env())  # before anything imports Airflow (it reads AIRFLOW_HOME once)
    with bench_stack(export_env=True):
        _benchmark(args)


def _benchmark(args: argparse.Namespace) -> None:
    """Build (or reuse) the benchmark lake and time the UI's API calls on it."""
    name = f"bench_ui_{args.snapshots}_{args.files}_{args.rows}"
    conn = json.loads(os.environ["AIRFLOW_CONN_DUCKLAKE_MAIN"])
    conn["extra"] = {**conn["extra"], "metadata_schema": name, "data_path": f"s3://lakehouse/{name}/"}
    os.environ["AIRFLOW_CONN_DUCKLAKE_BENCH"] = json.dumps(conn)
    os.environ.setdefault("AIRFLOW__API_AUTH__JWT_SECRET", "bench-secret-" + "x" * 32)
    os.environ["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS"] = "False"

    from airflow_provider_lakehouse.plugins.api import stores

    ref = stores.store_ref("ducklake", "bench")
    spec = stores.lake_spec(ref)
    from airflow_provider_lakehouse.ducklake.catalog import DuckLake
    from airflow_provider_lakehouse.ducklake.store import PostgresStore

    lake = DuckLake.create(PostgresStore(spec.catalog, metadata_schema=name), data_path=spec.data_path, s3=spec.s3)
    print(f"building lake {name} (reused when it exists) ...", flush=True)
    _build(lake, args.snapshots, args.files, args.rows)

    from airflow.api_fastapi.app import init_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
    from fastapi.testclient import TestClient

    from airflow_provider_lakehouse.plugins.api.app import create_app

    manager = init_auth_manager()
    token = manager.generate_jwt(SimpleAuthManagerUser(username="admin", role="admin"))
    headers = {"Authorization": f"Bearer {token}"}
    client = TestClient(create_app())
    snapshot_count = len(lake.snapshots())
    file_count = sum(t.file_count for t in lake.table_info() if t.table_name == "events")
    mid = snapshot_count // 2
    cases = [
        ("table page (bench.events)", "/api/lakes/bench/tables/bench.events"),
        ("snapshot list (100 newest)", "/api/lakes/bench/snapshots?limit=100"),
        ("preview 100 rows, current", "/api/lakes/bench/tables/bench.events/preview?limit=100"),
        (f"preview 100 rows, snapshot {mid}", f"/api/lakes/bench/tables/bench.events/preview?limit=100&version={mid}"),
        (f"preview 100 rows of {args.rows:,} (S3)", "/api/lakes/bench/tables/bench.big/preview?limit=100"),
        ("home (overview)", "/api/overview"),
    ]
    print(
        f"\nlake: {snapshot_count:,} snapshots, bench.events {file_count:,} files; bench.big {args.rows:,} rows; "
        f"{args.repeat} calls each, in process, real JWT auth\n"
    )
    print(f"| {'call':<40} | {'p50 ms':>8} | {'p95 ms':>8} | {'bytes':>9} |")
    print(f"|{'-' * 42}|{'-' * 10}|{'-' * 10}|{'-' * 11}|")
    for label, path in cases:
        p50, p95, size = _measure(client, headers, path, args.repeat)
        print(f"| {label:<40} | {p50:8.1f} | {p95:8.1f} | {size:9,} |", flush=True)


if __name__ == "__main__":
    main()
