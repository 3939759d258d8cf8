"""What runs of the lake examples must have done (checked on each engine by ``test_engine_parity``), and the hook's
errors, task kills and embedded lakes outside a DAG run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests import referee
from tests.dags.runs import DagTestRun, assert_clean_engine_output, assert_no_secret_shown, lake_env
from tests.referee import LakeSetup
from tests.support.local_spark import stop_local_spark

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def check_sentiment_run(run: DagTestRun) -> None:
    """What a run of the sentiment example must have done on its engine: clean logs, one snapshot per task named
    after it, DuckDB's answer, no credential shown. Its runs on local Spark and on DuckDB are checked by
    ``tests/dags/test_engine_parity.py``; the Spark servers run the Data Table example
    (``tests/dags/test_example_ducklake_datatable.py``), which gets the same log and credential checks."""
    engine, setup, xcoms = run.engine, run.setup, run.xcoms
    assert_clean_engine_output(run)
    insert = xcoms["insert_messages"]
    assert insert["engine"] == engine and insert["status"] == "ok"
    requested = "duckdb" if engine == "duckdb" else "spark"
    assert insert["engine_choice"] == {
        "engine": "duckdb" if engine == "duckdb" else "spark",
        "requested": requested,
        "reason": "requested",
    }
    kinds = [(c["kind"], c.get("affected_rows")) for c in insert["result"]["commands"]]
    assert kinds == [("attach", None), ("use", None), ("create_table", None), ("temp_table", 3), ("insert", 3)]
    info = insert["catalog_info"]
    # the task is one transaction: CREATE TABLE and INSERT land as one snapshot, named after the task
    assert info["snapshots_created"] == [info["snapshot_after"]] and info["snapshot_after"] > info["snapshot_before"]
    assert info["tables_touched"] == [
        {"table": "main.messages", "rows_written": 3, "snapshot_id": info["snapshot_after"]}
    ]
    snapshot = setup.open().snapshot(info["snapshot_after"])
    assert snapshot.author == "example_ducklake_sentiment.insert_messages"
    assert snapshot.commit_message.startswith("airflow example_ducklake_sentiment.insert_messages run ")

    con = referee.connect()
    setup.attach(con)
    duck = referee.rows(con, "SELECT sentiment, count(*) AS messages FROM lake.messages GROUP BY 1 ORDER BY 1")
    assert xcoms["sentiment_summary"]["result"]["commands"][-1]["rows"] == duck
    assert [r["messages"] for r in duck] == [1, 1, 1]

    assert_no_secret_shown(run)


def test_hook_errors_are_clear(stack: Any, stack_env: dict[str, str]) -> None:
    """Unknown lake, bad SQL: clear errors; the lake stays readable and gains no snapshot."""
    import os

    from airflow_provider_lakehouse.exceptions import ConnectionNotFoundError, StatementError
    from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook

    with pytest.raises(ConnectionNotFoundError, match="ducklake_nope"):
        DucklakeHook(ducklake="nope").run("SELECT 1")
    env, setup = lake_env(dict(stack_env), None)
    saved = os.environ.get("AIRFLOW_CONN_DUCKLAKE_MAIN")
    os.environ["AIRFLOW_CONN_DUCKLAKE_MAIN"] = env["AIRFLOW_CONN_DUCKLAKE_MAIN"]
    try:
        hook = DucklakeHook()
        hook.run("CREATE TABLE t (id INTEGER); INSERT INTO t VALUES (1)")
        before = setup.open().current_snapshot_id()
        with pytest.raises(StatementError) as failure:
            hook.run("INSERT INTO t VALUES (2); INSERT INTO t SELECT no_such_column FROM t")
        assert failure.value.index == 2 and "no_such_column" in str(failure.value)
        password = json.loads(env["AIRFLOW_CONN_DUCKLAKE_MAIN"])["password"]
        assert password not in str(failure.value)
        assert setup.open().current_snapshot_id() == before  # one transaction: statement 1 did not land either
        with pytest.raises(StatementError):  # with autocommit, statement 1 lands and statement 2 does not
            hook.run("INSERT INTO t VALUES (2); INSERT INTO t SELECT no_such_column FROM t", autocommit=True)
        assert setup.open().current_snapshot_id() == before + 1
        con = referee.connect()
        setup.attach(con)
        assert referee.rows(con, "SELECT id FROM lake.t ORDER BY id") == [{"id": 1}, {"id": 2}]
    finally:
        if saved is not None:
            os.environ["AIRFLOW_CONN_DUCKLAKE_MAIN"] = saved
        stop_local_spark()  # PySpark allows no Spark Connect session in a process with a classic one


def check_operations_run(run: DagTestRun) -> None:
    """What a run of the operations example (COPY to S3, CTAS from S3 Parquet, update/delete/merge, time travel and
    maintenance) on ``engine`` (``local`` or ``duckdb``) must have done: DuckDB replays the same corrections on the
    landed file and must find the same table. Run on both by ``tests/dags/test_engine_parity.py``."""
    engine, setup, xcoms = run.engine, run.setup, run.xcoms
    assert {x["engine"] for x in xcoms.values() if isinstance(x, dict) and "engine" in x} == {engine}
    assert xcoms["land_files"]["result"]["commands"][-1]["affected_rows"] == 1000
    assert xcoms["load_orders"]["result"]["commands"][-1]["affected_rows"] == 1000
    corrections = [c["affected_rows"] for c in xcoms["correct_orders"]["result"]["commands"][2:]]

    con = referee.connect()
    setup.attach(con)
    s3 = setup.s3
    assert s3 is not None
    con.execute("CREATE TABLE expected AS FROM read_parquet('s3://landing/examples/orders.parquet')")
    doubled = con.execute("UPDATE expected SET amount = amount * 2 WHERE customer_id = 3").fetchall()[0][0]
    deleted = con.execute("DELETE FROM expected WHERE amount < 10").fetchall()[0][0]
    merged = con.execute(
        "MERGE INTO expected AS o USING (SELECT 1000 AS order_id, 0.0 AS amount UNION ALL "
        "SELECT 5000, 99.5) AS fix ON o.order_id = fix.order_id WHEN MATCHED THEN UPDATE SET "
        "amount = fix.amount WHEN NOT MATCHED THEN INSERT (order_id, customer_id, amount, order_day) "
        "VALUES (fix.order_id, 0, fix.amount, 0)"
    ).fetchall()[0][0]
    assert corrections == [doubled, deleted, merged]
    columns = "order_id, customer_id, amount, order_day"
    assert referee.rows(con, f"SELECT {columns} FROM lake.sales.orders ORDER BY order_id") == referee.rows(
        con, f"SELECT {columns} FROM expected ORDER BY order_id"
    )

    travel = xcoms["time_travel"]["result"]["commands"][-1]["rows"][0]
    assert travel["rows_when_loaded"] == 1000
    assert travel["rows_now"] == referee.rows(con, "SELECT count(*) AS n FROM expected")[0]["n"]
    maintain = xcoms["maintain"]["result"]["commands"]
    # Spark's executors leave several small files to merge; DuckDB wrote one file per statement, and files
    # carrying deletes are not merged (DuckDB's rule), so it may find none
    assert maintain[2]["files_merged"] >= (0 if engine == "duckdb" else 2)
    # Files carrying deletes are not merged (DuckDB's rule), so compare with DuckDB's own view of the catalog.
    duck_files = referee.rows(con, "SELECT file_count FROM ducklake_table_info('lake') WHERE table_name = 'orders'")
    assert maintain[-1]["rows"] == [
        {"table_name": "orders", "file_count": duck_files[0]["file_count"], "row_count": travel["rows_now"]}
    ]


def test_killing_a_spark_submit_task_stops_the_job_and_lands_nothing(stack: Any, stack_env: dict[str, str]) -> None:
    """What Airflow does on task kill or timeout (``on_kill``): the spark-submit process goes away, no snapshot."""
    import os
    import threading
    import time

    from airflow_provider_lakehouse.exceptions import LakehouseError
    from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook

    env, setup = lake_env(dict(stack_env), "spark_local")
    saved = {k: os.environ.get(k) for k in ("AIRFLOW_CONN_DUCKLAKE_MAIN", "AIRFLOW_CONN_SPARK_LOCAL")}
    os.environ.update({k: env[k] for k in saved})
    try:
        hook = DucklakeHook()
        hook.run("CREATE TABLE kept (id INTEGER)")
        before = setup.open().current_snapshot_id()
        outcome: list[BaseException | None] = []

        def slow() -> None:
            try:
                hook.run("CREATE TABLE slow AS SELECT sum(hash(id)) AS h FROM range(0, 50000000000)")
                outcome.append(None)
            except BaseException as exc:
                outcome.append(exc)

        worker = threading.Thread(target=slow)
        worker.start()
        deadline = time.monotonic() + 120
        while getattr(getattr(hook, "_submit_hook", None), "_submit_sp", None) is None:
            assert time.monotonic() < deadline, "spark-submit did not start"
            time.sleep(0.2)
        process = hook._submit_hook._submit_sp
        time.sleep(8)  # let the driver start the job
        killed_at = time.monotonic()
        hook.kill()
        worker.join(60)
        assert not worker.is_alive() and time.monotonic() - killed_at < 60
        assert isinstance(outcome[0], LakehouseError)
        assert process.poll() is not None
        assert setup.open().current_snapshot_id() == before
        con = referee.connect()
        setup.attach(con)
        assert referee.rows(con, "SELECT count(*) AS n FROM duckdb_tables() WHERE table_name = 'slow'") == [{"n": 0}]
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_embedded_lake_with_a_sqlite_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A local lake (SQLite catalog file, data on the filesystem) named by its connection; DuckDB reads it."""
    from airflow_provider_lakehouse.ducklake.store import SqliteStore
    from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook

    catalog, data = tmp_path / "lake.sqlite", tmp_path / "files"
    monkeypatch.setenv(
        "AIRFLOW_CONN_DUCKLAKE_EMBEDDED",
        json.dumps({"conn_type": "ducklake", "extra": {"catalog_sqlite_path": str(catalog), "data_path": str(data)}}),
    )
    hook = DucklakeHook(ducklake="embedded")
    try:
        response = hook.run(
            "ATTACH 'ducklake://embedded' AS dl; USE dl; "
            "CREATE TABLE squares AS SELECT id, id * id AS sq FROM range(5) t(id); "
            "SELECT sum(sq) AS total FROM squares"
        )
    finally:
        stop_local_spark()
    assert response["engine"] == "local"
    last = response["result"]["commands"][-1]
    assert last["rows"] == [{"total": 30}] and last["scans"][0]["reader"] == "spark-parquet"
    con = referee.connect()
    LakeSetup(SqliteStore(str(catalog)), str(data) + "/").attach(con)
    assert referee.rows(con, "SELECT sum(sq) AS total FROM lake.squares") == [{"total": 30}]
