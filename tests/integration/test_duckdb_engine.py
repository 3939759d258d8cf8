"""The duckdb engine on real lakes (SQLite + local files, Postgres + SeaweedFS S3): the Spark engine's rules
(one snapshot per script, nothing left by a failure, exactly-once retries, the same refusals) and the Spark
engine's answers for the same script."""

from __future__ import annotations

import json
import os
from typing import Any

import pyarrow as pa
import pytest

from airflow_provider_lakehouse.connections.lake import DuckLakeSpec
from airflow_provider_lakehouse.duckdb_engine.choice import choose_engine, scan_bytes
from airflow_provider_lakehouse.duckdb_engine.runner import DuckDBPlanRunner
from airflow_provider_lakehouse.ducklake.maintenance import referenced_files
from airflow_provider_lakehouse.ducklake.store import PostgresStore
from airflow_provider_lakehouse.ducklake.task_commits import TaskIdentity
from airflow_provider_lakehouse.exceptions import (
    InvalidConnectionError,
    LakehouseError,
    StatementError,
    UnsupportedStatementError,
)
from airflow_provider_lakehouse.spark.driver import PlanRunner, RunOptions
from airflow_provider_lakehouse.spark.plan import plan_script
from tests import referee
from tests.integration.test_spark_sql import spec_of
from tests.referee import LakeSetup, lake_snapshots

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def run(setup: LakeSetup, sql: str, parameters: Any = None, *, autocommit: bool = False, **options: Any) -> Any:
    spec = spec_of(setup)
    plan = plan_script(sql, parameters=parameters, autocommit=autocommit)
    return DuckDBPlanRunner(spec, RunOptions(**options), redact=lambda text: _redact(text, spec)).run(plan)


def _redact(text: str, spec: DuckLakeSpec) -> str:
    for secret in spec.secrets:
        text = text.replace(secret, "***")
    return text


def files_on_storage(setup: LakeSetup) -> set[str]:
    lake = setup.open()
    return {f.uri for f in lake.storage.list_files(lake.data_path)}


def strays(setup: LakeSetup) -> set[str]:
    return {uri for uri in files_on_storage(setup) if uri.endswith(".parquet")} - referenced_files(setup.open())


PARITY_SCRIPT = """
ATTACH 'ducklake' AS dl; USE dl;
CREATE TABLE items (id INTEGER NOT NULL, name VARCHAR, price DECIMAL(10, 2), tags VARCHAR[], seen DATE);
INSERT INTO items SELECT i, 'item ' || i, i * 1.25, ['t' || (i % 3)], DATE '2026-01-01' + i::INTEGER
  FROM range(1, 41) r(i);
UPDATE items SET price = price * 2, name = upper(name) WHERE id % 4 = 0 AND id > $low;
DELETE FROM items WHERE id IN (3, 7, 11);
MERGE INTO items AS t USING (SELECT 5 AS id, 'five' AS name UNION ALL SELECT 100, 'hundred') AS s ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET name = s.name
  WHEN NOT MATCHED THEN INSERT (id, name, price) VALUES (s.id, s.name, 0);
CREATE TABLE by_tag AS SELECT tags[1] AS tag, count(*) AS n, sum(price) AS total FROM items GROUP BY 1;
ALTER TABLE items ADD COLUMN note VARCHAR DEFAULT 'none';
SELECT tag, n, total FROM by_tag ORDER BY tag;
"""


def _shape(response: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What both engines must agree on: each statement's kind, status, count and rows (not timings)."""
    return [
        (c["kind"], c.get("status"), c.get("affected_rows"), c.get("row_count"), json.dumps(c.get("rows")))
        for c in response["result"]["commands"]
    ]


def test_the_same_script_gives_the_same_answers_on_spark_and_duckdb(spark: Any, stack: Any, tmp_path: Any) -> None:
    on_spark = referee.postgres_lake(stack)
    on_duckdb = referee.postgres_lake(stack)
    for setup in (on_spark, on_duckdb):
        setup.create()
    plan = plan_script(PARITY_SCRIPT, parameters={"low": 8})
    spark_response = PlanRunner(spark, spec_of(on_spark), RunOptions()).run(plan)
    duck_response = DuckDBPlanRunner(spec_of(on_duckdb), RunOptions()).run(plan)

    assert _shape(duck_response) == _shape(spark_response)
    for response in (spark_response, duck_response):
        info = response["catalog_info"]
        assert info["snapshots_created"] == [info["snapshot_before"] + 1]  # one snapshot for the whole script
    tables = [(t["table"], t["rows_written"]) for t in duck_response["catalog_info"]["tables_touched"]]
    assert tables == [(t["table"], t["rows_written"]) for t in spark_response["catalog_info"]["tables_touched"]]
    con = referee.connect()
    on_spark.attach(con, "s")
    on_duckdb.attach(con, "d")
    for table in ("items", "by_tag"):
        query = "SELECT * FROM {}.{} ORDER BY ALL"
        assert referee.rows(con, query.format("d", table)) == referee.rows(con, query.format("s", table))
    assert strays(on_duckdb) == set()


def test_a_failing_script_lands_nothing_and_leaves_no_file(setup: LakeSetup) -> None:
    setup.create()
    run(setup, "CREATE TABLE t (id BIGINT NOT NULL, v VARCHAR); INSERT INTO t SELECT range, 'a' FROM range(50)")
    before, files = setup.open().current_snapshot_id(), files_on_storage(setup)
    failing = {
        # a statement DuckDB rejects while planning, after an insert large enough to be written as a file
        "INSERT INTO t SELECT range, 'b' FROM range(5000); INSERT INTO t SELECT nope FROM t": 2,
        # a NOT NULL violation found while inserting
        "INSERT INTO t SELECT CASE WHEN range = 4000 THEN NULL ELSE range END, 'c' FROM range(5000)": 1,
        # a conversion error near the end of a long insert: DuckDB has begun the file when it fails
        "INSERT INTO t SELECT range, CAST(CASE WHEN range = 900000 THEN 'x' ELSE '1' END AS INTEGER)::VARCHAR "
        "FROM range(1000000)": 1,
        # the last statement fails after a CTAS, an update and a delete
        "CREATE TABLE u AS SELECT range AS a FROM range(3000); UPDATE t SET v = 'z'; DELETE FROM t WHERE id < 5; "
        "SELECT CAST('x' AS INTEGER)": 4,
    }
    for sql, index in failing.items():
        with pytest.raises(StatementError) as failure:
            run(setup, sql)
        assert failure.value.index == index, sql
        assert setup.open().current_snapshot_id() == before, sql
        assert files_on_storage(setup) == files, sql
    con = referee.connect()
    setup.attach(con)
    assert referee.rows(con, "SELECT count(*) AS n, min(v) AS v FROM lake.t") == [{"n": 50, "v": "a"}]


def test_a_retry_of_a_committed_try_does_not_commit_again(setup: LakeSetup) -> None:
    setup.create()
    run(setup, "CREATE TABLE t (id INTEGER)")
    task = TaskIdentity("dag", "load", "manual__1", try_number=1)
    first = run(setup, "INSERT INTO t VALUES (1), (2)", task=task)
    snapshot = first["catalog_info"]["snapshot_after"]
    committed = setup.open().snapshot(snapshot)
    assert committed.author == "dag.load" and committed.commit_message == task.message

    retry = run(setup, "INSERT INTO t VALUES (1), (2)", task=TaskIdentity("dag", "load", "manual__1", try_number=2))
    assert retry["deduplicated"] == {"snapshot_id": snapshot, "committed_by_try": 1}
    assert [c["affected_rows"] for c in retry["result"]["commands"]] == [2]
    # a clear starts a new generation (first try 3): that try runs again
    cleared = TaskIdentity("dag", "load", "manual__1", try_number=3, first_try_number=3)
    again = run(setup, "INSERT INTO t VALUES (1), (2)", task=cleared)
    assert "deduplicated" not in again and again["catalog_info"]["snapshot_after"] == snapshot + 1
    con = referee.connect()
    setup.attach(con)
    assert referee.rows(con, "SELECT count(*) AS n FROM lake.t") == [{"n": 4}]


def test_autocommit_commits_each_statement_and_group(setup: LakeSetup) -> None:
    setup.create()
    run(setup, "CREATE TABLE t (id INTEGER)")
    before = setup.open().current_snapshot_id()
    response = run(
        setup,
        "INSERT INTO t VALUES (1); BEGIN; INSERT INTO t VALUES (2); INSERT INTO t VALUES (3); COMMIT; "
        "BEGIN; INSERT INTO t VALUES (4); ROLLBACK; INSERT INTO t VALUES (5)",
        autocommit=True,
    )
    assert response["catalog_info"]["snapshots_created"] == [before + 1, before + 2, before + 3]
    statuses = [(c["kind"], c.get("status"), c.get("snapshot_id")) for c in response["result"]["commands"]]
    assert statuses[6] == ("insert", "rolled_back", None)
    assert statuses[0][2] == before + 1 and statuses[2][2] == statuses[3][2] == before + 2
    con = referee.connect()
    setup.attach(con)
    assert [r["id"] for r in referee.rows(con, "SELECT id FROM lake.t ORDER BY id")] == [1, 2, 3, 5]


def test_what_duckdb_cannot_run_is_refused_before_anything_runs(setup: LakeSetup) -> None:
    setup.create()
    run(setup, "CREATE TABLE t (id INTEGER)")
    before = lake_snapshots(setup.open())
    with pytest.raises(UnsupportedStatementError, match="Statement 4: ROLLBACK"):
        run(setup, "INSERT INTO t VALUES (1); BEGIN; INSERT INTO t VALUES (2); ROLLBACK")
    with pytest.raises(UnsupportedStatementError, match="Statement 2"):
        run(setup, "INSERT INTO t VALUES (1); CREATE SEQUENCE seq")
    spark_sql = plan_script("INSERT INTO t SELECT 1", dialect="spark")
    with pytest.raises(UnsupportedStatementError, match="'spark' dialect"):
        choose_engine("duckdb", spark_sql, spec_of(setup))
    assert choose_engine("auto", spark_sql, spec_of(setup)).engine == "spark"
    assert lake_snapshots(setup.open()) == before


def test_parameters_bind_as_values(setup: LakeSetup) -> None:
    setup.create()
    response = run(
        setup,
        "CREATE TABLE t (id INTEGER, name VARCHAR); INSERT INTO t VALUES ($id, $name); "
        "SELECT count(*) AS n FROM t WHERE name = $name",
        {"id": 7, "name": "x'); DROP TABLE t; --"},
    )
    assert response["result"]["commands"][-1]["rows"] == [{"n": 1}]
    positional = run(setup, "SELECT $2 AS b, $1 AS a", [1, "two"])
    assert positional["result"]["commands"][-1]["rows"] == [{"b": "two", "a": 1}]


def test_auto_chooses_by_the_bytes_scanned_after_pruning(setup: LakeSetup) -> None:
    setup.create()
    run(setup, "CREATE TABLE t (id BIGINT, pad VARCHAR)")
    for low in (0, 100000):  # two files with disjoint id ranges
        run(setup, f"INSERT INTO t SELECT {low} + range, repeat('x', 50) FROM range(20000)")
    spec = spec_of(setup)
    sizes = sorted(f.file_size_bytes for f in setup.open().scan("main.t").files)
    assert len(sizes) == 2
    everything = plan_script("SELECT count(*) FROM t")
    assert scan_bytes(everything, spec) == sum(sizes)
    one_file = plan_script("SELECT count(*) FROM t WHERE id < 50000")
    assert scan_bytes(one_file, spec) in sizes

    small = choose_engine("auto", everything, spec, threshold_bytes=sum(sizes))
    assert (small.engine, small.scan_bytes) == ("duckdb", sum(sizes))
    large = choose_engine("auto", everything, spec, threshold_bytes=sum(sizes) - 1)
    assert large.engine == "spark" and "more than" in large.reason
    assert choose_engine("auto", one_file, spec, threshold_bytes=max(sizes)).engine == "duckdb"


def _lake_main_at_a_new_lake(stack: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[LakeSetup, dict[str, Any]]:
    """Point connection ``ducklake_main`` at a fresh Postgres + S3 lake; returns the lake and the connection."""
    setup = referee.postgres_lake(stack)
    setup.create()
    conn = json.loads(os.environ["AIRFLOW_CONN_DUCKLAKE_MAIN"])
    assert isinstance(setup.store, PostgresStore)
    conn["extra"] = {**conn["extra"], "metadata_schema": setup.store.metadata_schema, "data_path": setup.data_path}
    monkeypatch.setenv("AIRFLOW_CONN_DUCKLAKE_MAIN", json.dumps(conn))
    return setup, conn


def test_the_hook_runs_duckdb_when_asked_and_keeps_secrets_out_of_errors(
    stack: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook

    _setup, conn = _lake_main_at_a_new_lake(stack, monkeypatch)

    response = DucklakeHook(engine="duckdb").run("CREATE TABLE t AS SELECT 42 AS answer; SELECT answer FROM t")
    assert response["engine"] == "duckdb"
    assert response["engine_choice"] == {"engine": "duckdb", "requested": "duckdb", "reason": "requested"}
    assert response["result"]["commands"][-1]["rows"] == [{"answer": 42}]
    auto = DucklakeHook(engine="auto").run("SELECT count(*) AS n FROM t")
    assert auto["engine"] == "duckdb" and auto["engine_choice"]["requested"] == "auto"
    assert "threshold" in auto["engine_choice"]["reason"]

    with pytest.raises(InvalidConnectionError, match="'sparkk' is not one of spark, duckdb, auto"):
        DucklakeHook(engine="sparkk")
    with pytest.raises(StatementError) as failure:
        DucklakeHook(engine="duckdb").run("SELECT * FROM no_such_table")
    assert conn["password"] not in str(failure.value)
    wrong = dict(conn, password=conn["password"] + "-wrong")
    monkeypatch.setenv("AIRFLOW_CONN_DUCKLAKE_MAIN", json.dumps(wrong))
    with pytest.raises(LakehouseError) as refused:
        DucklakeHook(engine="duckdb").run("SELECT 1")
    assert wrong["password"] not in str(refused.value) and conn["password"] not in str(refused.value)


def test_maintenance_calls_report_as_on_spark(setup: LakeSetup) -> None:
    setup.create()
    run(setup, "CREATE TABLE t (a INTEGER)")
    for low in (0, 100, 200):
        run(setup, f"INSERT INTO t SELECT range FROM range({low}, {low + 100})")  # 100 rows: files, not inlined
    task = TaskIdentity("dag", "maintain", "manual__1")
    response = run(
        setup,
        "CALL ducklake_merge_adjacent_files('lake'); CALL ducklake_expire_snapshots('lake', versions => [1]); "
        "SELECT count(*) AS n FROM t",
        task=task,
    )
    merge, expire, count = response["result"]["commands"]
    assert (merge["files_merged"], merge["tables"]) == (3, {"main.t": 3})
    merged = setup.open().snapshot(merge["snapshot_id"])
    assert merged.author == "dag.maintain" and json.loads(merged.commit_extra_info)["airflow_task"]["task_id"] == (
        "maintain"
    )
    assert expire["snapshots_expired"] == [1] and expire["dry_run"] is False
    assert count["rows"] == [{"n": 300}]
    # expiring removes snapshots and makes none (as on Spark)
    assert expire["snapshot_id"] is None and response["catalog_info"]["snapshots_created"] == [merge["snapshot_id"]]


def test_a_script_without_attach_names_the_lake_in_catalog_functions(setup: LakeSetup) -> None:
    setup.create()
    response = run(
        setup,
        "CREATE TABLE t AS SELECT 1 AS a; SELECT count(*) AS n FROM t; "
        "SELECT count(*) AS snapshots FROM ducklake_snapshots('main')",
    )
    # the script has not committed yet: the lake still has only its first snapshot, as DuckDB sees it too
    assert [c.get("rows") for c in response["result"]["commands"][1:]] == [[{"n": 1}], [{"snapshots": 1}]]
    merged = run(setup, "CALL ducklake_merge_adjacent_files('main')")
    assert merged["result"]["commands"][0]["status"] == "executed"


def test_a_large_select_keeps_max_rows_and_counts_them_all(setup: LakeSetup) -> None:
    setup.create()
    response = run(setup, "SELECT range AS i FROM range(300000) ORDER BY i", max_rows=5)
    select = response["result"]["commands"][0]
    assert (select["row_count"], select["truncated"], select["rows"]) == (300000, True, [{"i": i} for i in range(5)])
    empty = run(setup, "SELECT 1 AS one WHERE false")["result"]["commands"][0]
    assert (empty["row_count"], empty["truncated"], empty["rows"], empty["columns"]) == (0, False, [], ["one"])


def test_the_first_script_of_a_new_lake_creates_it(tmp_path: Any) -> None:
    """As on Spark: a lake whose catalog does not exist yet is created by its first script."""
    setup = referee.sqlite_lake(tmp_path)  # not created
    response = run(setup, "CREATE TABLE t AS SELECT 1 AS a")
    assert response["catalog_info"]["snapshots_created"] == [1]
    con = referee.connect()
    setup.attach(con)
    assert referee.rows(con, "SELECT a FROM lake.t") == [{"a": 1}]


def test_a_failed_script_keeps_the_files_it_only_read(setup: LakeSetup) -> None:
    """The cleanup after a failure removes what the script wrote, never a file it read under the data path."""
    setup.create()
    lake = setup.open()
    landed = lake.data_path.rstrip("/") + "/landing/orders.parquet"
    lake.storage.write_parquet(pa.table({"id": list(range(5000))}), landed)  # a user's file, not the catalog's
    with pytest.raises(StatementError):
        run(setup, f"CREATE TABLE t AS SELECT * FROM read_parquet('{landed}'); SELECT CAST('x' AS INTEGER)")
    assert landed in files_on_storage(setup)
    assert strays(setup) == {landed}  # the user's own file, not the catalog's: left alone


def test_killing_a_duckdb_task_interrupts_it_and_lands_nothing(stack: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """What Airflow does on task kill or timeout (``on_kill`` -> ``hook.kill()``): the statement stops, nothing
    commits, and the files the script had written are removed."""
    import threading
    import time

    from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook

    setup, _conn = _lake_main_at_a_new_lake(stack, monkeypatch)
    hook = DucklakeHook(engine="duckdb")
    hook.run("CREATE TABLE kept (id INTEGER)")
    before, files = setup.open().current_snapshot_id(), files_on_storage(setup)
    outcome: list[BaseException | None] = []

    def slow() -> None:
        try:
            hook.run(
                "INSERT INTO kept SELECT range FROM range(200000); "
                "SELECT count(*) FROM range(100000000) a, range(100000) b WHERE (a.range * b.range) % 7 = 3"
            )
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=slow)
    worker.start()
    time.sleep(6)
    killed_at = time.monotonic()
    hook.kill()
    worker.join(60)
    assert not worker.is_alive() and time.monotonic() - killed_at < 30
    assert isinstance(outcome[0], StatementError) and "the task was killed" in str(outcome[0]), outcome
    assert setup.open().current_snapshot_id() == before
    assert files_on_storage(setup) == files  # the INSERT's file is gone with the transaction


def test_a_duckdb_run_killed_between_statements_starts_no_more(setup: LakeSetup) -> None:
    """A kill that finds no statement running (DuckDB forgets an interrupt when its next query begins) still
    stops the script before its next statement, and nothing commits."""
    run(setup, "CREATE TABLE k (id BIGINT)")
    before = setup.open().current_snapshot_id()
    runner = DuckDBPlanRunner(spec_of(setup), RunOptions())
    runner.interrupt()  # on_kill before the script's first statement
    with pytest.raises(StatementError) as failure:
        runner.run(plan_script("INSERT INTO k VALUES (1); INSERT INTO k VALUES (2)"))
    assert failure.value.index == 1 and "killed before this statement started" in str(failure.value)
    assert setup.open().current_snapshot_id() == before
