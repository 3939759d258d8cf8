"""A writer process for the concurrency tests: ``python -m tests.integration.lake_writer ours|duckdb START COUNT``.

The lake to open comes in the environment (``LAKE_SETUP``, JSON), never on the command line.
"""

from __future__ import annotations

import json
import os
import sys

import pyarrow as pa


def setup_from_env():  # type: ignore[no-untyped-def]
    from airflow_provider_lakehouse.connections.lake import S3Spec
    from airflow_provider_lakehouse.connections.specs import PostgresSpec
    from airflow_provider_lakehouse.ducklake.store import PostgresStore, SqliteStore
    from tests.referee import LakeSetup

    raw = json.loads(os.environ["LAKE_SETUP"])
    s3 = S3Spec(**raw["s3"]) if raw.get("s3") else None
    if raw["kind"] == "postgres":
        store = PostgresStore(PostgresSpec(**raw["pg"]), metadata_schema=raw["metadata_schema"])
    else:
        store = SqliteStore(raw["path"])
    return LakeSetup(store, raw["data_path"], s3=s3)


def setup_to_env(setup) -> str:  # type: ignore[no-untyped-def]
    from dataclasses import asdict

    from airflow_provider_lakehouse.ducklake.store import PostgresStore

    raw = {"data_path": setup.data_path, "s3": asdict(setup.s3) if setup.s3 else None}
    if isinstance(setup.store, PostgresStore):
        spec = setup.store.spec
        raw.update(
            kind="postgres",
            metadata_schema=setup.store.metadata_schema,
            pg={
                "host": spec.host,
                "port": spec.port,
                "user": spec.user,
                "dbname": spec.dbname,
                "password": spec.password,
            },
        )
    else:
        raw.update(kind="sqlite", path=setup.store.path)
    return json.dumps(raw)


def main() -> None:
    """Write COUNT commits of 10 rows; with ``LAKE_WRITERS_START_AT`` (epoch seconds) in the environment, all
    writers start together; prints ``{"first": t0, "last": t1, "commits": n}`` (what a benchmark aggregates)."""
    import time

    engine, start, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    setup = setup_from_env()
    commit = _our_writer(setup, start) if engine == "ours" else _duckdb_writer(setup, start)
    commit(0)  # connect, load extensions and warm up before the clock starts; counts as the first commit
    start_at = float(os.environ.get("LAKE_WRITERS_START_AT", "0"))
    if start_at:
        time.sleep(max(0.0, start_at - time.time()))
    first = time.time()
    for i in range(1, count):
        commit(i)
    print(json.dumps({"first": first, "last": time.time(), "commits": count - 1}), flush=True)


def _our_writer(setup, start: int):  # type: ignore[no-untyped-def]
    from airflow_provider_lakehouse.connections.lake import RetryPolicy

    lake = setup.open()
    lake.retry = RetryPolicy(max_retries=100, wait_ms=20, backoff=1.2)

    def commit(i: int) -> None:
        ids = pa.array(range(start + i * 10, start + i * 10 + 10), pa.int64())
        with lake.transaction(author=f"writer-{start}") as tx:
            tx.append("t", pa.table({"id": ids, "v": [f"w{start}"] * 10}))

    return commit


def _duckdb_writer(setup, start: int):  # type: ignore[no-untyped-def]
    import time

    from airflow_provider_lakehouse.ducklake.store import SqliteStore
    from tests import referee

    con = referee.connect()
    con.sql("SET ducklake_max_retry_count = 100")
    # SQLite serializes writers with a file lock; without a busy timeout DuckDB fails at once on contention.
    setup.attach(con, **({"busy_timeout": 60000} if isinstance(setup.store, SqliteStore) else {}))

    def commit(i: int) -> None:
        for attempt in range(50):
            try:
                con.sql(f"INSERT INTO lake.t SELECT {start + i * 10} + i, 'duck' FROM range(10) r(i)")
                return
            except Exception as exc:
                # DuckDB on a SQLite catalog fails (does not wait) when a lock upgrade would deadlock;
                # the failed transaction left nothing behind, so the application retries it.
                if "database is locked" not in str(exc) or attempt == 49:
                    raise
                time.sleep(0.05)

    return commit


if __name__ == "__main__":
    main()
