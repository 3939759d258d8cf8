"""The partitioned-table example with ``airflow dags test``: ``ALTER TABLE … SET PARTITIONED BY`` through
``DucklakeOperator``, then Spark's executors (or DuckDB) write the partitioned files, which DuckDB reads and
prunes as its own (issue 15)."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_provider_lakehouse.devstack.commands import read_xcoms
from tests import referee
from tests.conftest import run_airflow
from tests.dags.runs import engine_env

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DAG_ID = "example_ducklake_partitioned"


@pytest.mark.parametrize("engine", ["spark_connect", "duckdb"])
def test_partitioned_example(engine: str, stack: Any, stack_env: dict[str, str], airflow_db: None) -> None:
    env, setup = engine_env(stack, stack_env, engine)
    result = run_airflow(env, "dags", "test", DAG_ID)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]

    with setup.store.connection() as conn:
        spec = conn.query(
            "SELECT c.transform FROM {M}ducklake_partition_column c JOIN {M}ducklake_partition_info i "
            "ON i.partition_id = c.partition_id AND i.table_id = c.table_id WHERE i.end_snapshot IS NULL "
            "ORDER BY c.partition_key_index"
        )
        found = conn.query(
            "SELECT f.path, v.partition_value FROM {M}ducklake_data_file f JOIN {M}ducklake_file_partition_value v "
            "ON v.data_file_id = f.data_file_id WHERE f.end_snapshot IS NULL ORDER BY f.path, v.partition_key_index"
        )
    assert [t for (t,) in spec] == ["month", "identity", "bucket(8)"]
    files: dict[str, list[str]] = {}
    for path, value in found:
        files.setdefault(path, []).append(value)
    con = referee.connect()
    setup.attach(con)
    # the files' partitions are exactly the rows' partitions, as DuckDB computes them
    key = "month(ts)::VARCHAR, region, ((murmur3_32(user_id) & 2147483647) % 8)::VARCHAR"
    expected = set(con.sql(f"SELECT DISTINCT {key} FROM lake.web.events").fetchall())
    assert {tuple(v) for v in files.values()} == expected
    for path, values in files.items():
        # in its partition's hive directory, holding only that partition's rows
        assert path.startswith(f"month={values[0]}/region={values[1]}/bucket={values[2]}/"), path
        inside = con.sql(f"SELECT DISTINCT {key} FROM read_parquet('{setup.data_path}web/events/{path}')").fetchall()
        assert inside == [tuple(values)]
    counted = con.sql(
        "SELECT kind, count(*) AS events FROM lake.web.events WHERE region = 'eu' GROUP BY kind ORDER BY kind"
    )
    xcoms = read_xcoms(DAG_ID, env)
    answer = xcoms["eu_that_day"]["result"]["commands"]
    selected = [c for c in answer if c["kind"] == "select"][-1]
    assert [(r["kind"], r["events"]) for r in selected["rows"]] == counted.fetchall()
    if engine != "duckdb":  # DuckDB's own scan reports no file counts
        assert selected["scans"][0]["files_pruned"] > 0
