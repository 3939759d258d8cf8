"""``DucklakeHook`` over Spark Connect on an S3 lake, where results can be empty: a scan whose files are all
pruned by their statistics, an empty temp table, a catalog function with no rows. Spark Connect cannot infer a
schema from zero rows, so each must still give its columns (found by the TPC-DS benchmark's quantity check).

Runs in a child process: this pytest process may already hold a classic SparkSession, and PySpark allows only
one kind per process."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.dags.runs import lake_env

RUN_HOOK = """
import json, logging, sys
from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook

logging.basicConfig(level=logging.INFO, stream=sys.stderr)  # after Airflow's import has set its logging up
response = DucklakeHook(ducklake="main").run(open(sys.argv[1]).read(), autocommit=True)  # snapshots per statement
open(sys.argv[2], "w").write(json.dumps(response, default=str))
"""

SQL = """
CREATE TABLE stock (id INTEGER, qty INTEGER);
INSERT INTO stock VALUES (1, 5), (2, 7);
SELECT count(*) AS negative, sum(qty) AS total FROM stock WHERE qty < 0;
CREATE TEMP TABLE none_left AS SELECT * FROM stock WHERE id > 10;
SELECT count(*) AS n FROM none_left;
SELECT * FROM none_left;
SELECT snapshot_id FROM ducklake_table_changes('dl', 'main', 'stock', 0, 1);
SELECT sum(qty) AS total FROM stock;
"""


def run_over_connect(
    stack: Any, stack_env: dict[str, str], tmp_path: Path, sql: str, spark_conf: dict[str, str] | None = None
) -> tuple[dict[str, Any], Any, str]:
    """Run ``sql`` on a fresh lake over the stack's Spark Connect server, through ``DucklakeHook`` in a child
    process, with ``spark_conf`` added to the lake's; returns the response, the lake's setup and the task log."""
    stack.start_spark_connect(log=lambda _m: None)
    env, setup = lake_env(dict(stack_env, **stack.env()), "spark_connect_local")
    if spark_conf:
        conn = json.loads(env["AIRFLOW_CONN_DUCKLAKE_MAIN"])
        conn["extra"]["spark_conf"] = {**(conn["extra"].get("spark_conf") or {}), **spark_conf}
        env["AIRFLOW_CONN_DUCKLAKE_MAIN"] = json.dumps(conn)
    script = tmp_path / "script.sql"
    script.write_text("ATTACH 'ducklake://main' AS dl; USE dl;" + sql)
    out = tmp_path / "response.json"
    proc = subprocess.run(
        [sys.executable, "-c", RUN_HOOK, str(script), str(out)], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out.read_text()), setup, proc.stdout + proc.stderr


@pytest.mark.integration
def test_empty_results_over_spark_connect(stack: Any, stack_env: dict[str, str], tmp_path: Path) -> None:
    response, _setup, _log = run_over_connect(stack, stack_env, tmp_path, SQL)
    assert response["engine"] == "spark_connect"
    commands = response["result"]["commands"]
    pruned = commands[4]
    assert pruned["rows"] == [{"negative": 0, "total": None}]
    scan = pruned["scans"][0]
    assert scan["files"] == 0 and scan["files_pruned"] > 0 and scan["reader"] == "none"
    assert commands[5]["affected_rows"] == 0
    assert commands[6]["rows"] == [{"n": 0}]
    assert commands[7]["columns"] == ["id", "qty"] and commands[7]["rows"] == []
    assert commands[8]["columns"] == ["snapshot_id"] and commands[8]["rows"] == []
    # the stack's Connect server has the S3A jars: Spark's own Parquet reader reads the S3 lake
    assert commands[9]["rows"] == [{"total": 12}] and commands[9]["scans"][0]["reader"] == "spark-parquet"


DELETES = """
CREATE TABLE stock (id INTEGER, qty INTEGER);
INSERT INTO stock SELECT i, i % 13 FROM range(1000) r(i);
DELETE FROM stock WHERE qty = 3;
UPDATE stock SET qty = -qty WHERE id % 100 = 0;
SELECT count(*) AS n, sum(qty) AS total FROM stock;
"""


@pytest.mark.integration
def test_s3_lake_with_deletes_is_read_by_sparks_own_reader_over_spark_connect(
    stack: Any, stack_env: dict[str, str], tmp_path: Path
) -> None:
    """A table with delete files, read over Spark Connect by Spark's own Parquet reader: the deleted positions
    come from each row's ``_metadata``. Found by running the operations example over Spark Connect, where
    building that projection with ``pyspark.sql.functions`` failed with a bare ``AssertionError``."""
    from tests import referee

    response, setup, _log = run_over_connect(stack, stack_env, tmp_path, DELETES)
    last = response["result"]["commands"][-1]
    assert last["scans"][0]["reader"] == "spark-parquet", last
    con = referee.connect()
    setup.attach(con)
    expected = referee.rows(con, "SELECT count(*) AS n, sum(qty) AS total FROM lake.stock")
    assert last["rows"] == [{k: int(v) for k, v in row.items()} for row in expected]
    assert last["rows"][0]["n"] < 1000  # the delete is in a delete file DuckDB reads as well


CONCURRENT_SESSIONS = """
import sys, threading
from airflow_provider_lakehouse.spark.session import connect_session
barrier = threading.Barrier(4)
sessions = []

def open_one():
    barrier.wait()  # all four ask at the same moment, as tasks of one worker process do
    spark = connect_session(sys.argv[1])
    sessions.append(spark)
    spark.sql("SELECT 1").collect()

threads = [threading.Thread(target=open_one) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len({id(s) for s in sessions}))
"""


@pytest.mark.integration
def test_tasks_of_one_process_share_one_connect_session_and_the_process_exits(stack: Any) -> None:
    """Four threads opening the session at once get one client, and the process ends: a second, uncached client
    used to be closed by ``SparkSession.__del__`` at interpreter teardown, where gRPC waits forever (the
    benchmark's runner hung there after its tasks had finished)."""
    url = stack.start_spark_connect(log=lambda _m: None)
    proc = subprocess.run([sys.executable, "-c", CONCURRENT_SESSIONS, url], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.strip() == "1"


RUN_AND_LIST_VIEWS = (
    RUN_HOOK
    + """
from airflow_provider_lakehouse.spark.driver import task_session_conf
from airflow_provider_lakehouse.spark.session import connect_session
# the session the hook used for its DuckDB-dialect script
spark = connect_session(sys.argv[3], task_session_conf("duckdb", DucklakeHook(ducklake="main").spec.spark_conf))
print(json.dumps(sorted(t.name for t in spark.catalog.listTables() if t.isTemporary)))
"""
)

BRACES = """
CREATE TABLE pairs (id INTEGER, label VARCHAR);
INSERT INTO pairs VALUES (1, '{a}'), (2, '}{'), (3, NULL);
SELECT a.id, b.label, '{"k": [1, 2]}' AS literal FROM pairs a JOIN pairs b ON a.id = b.id ORDER BY a.id;
CREATE TEMP VIEW braced AS SELECT id, label FROM pairs WHERE label LIKE '%{%';
SELECT count(*) AS n, max(label) AS last FROM braced;
SELECT (SELECT count(*) FROM pairs) + (SELECT count(*) FROM pairs WHERE id > 1) AS total;
"""


@pytest.mark.integration
def test_reads_travel_with_their_statement_and_leave_the_shared_session_clean(
    stack: Any, stack_env: dict[str, str], tmp_path: Path
) -> None:
    """Each statement's lake reads go to Spark with its SQL text (no temp view per read): braces in the text are
    kept, a table read twice answers as DuckDB does, and the Connect session the tasks share holds no view of
    the script afterwards (its temp view included)."""
    from tests import referee

    url = stack.start_spark_connect(log=lambda _m: None)
    env, _setup = lake_env(dict(stack_env, **stack.env()), "spark_connect_local")
    script = tmp_path / "script.sql"
    script.write_text("ATTACH 'ducklake://main' AS dl; USE dl;" + BRACES)
    out = tmp_path / "response.json"
    proc = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST_VIEWS, str(script), str(out), url],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    commands = json.loads(out.read_text())["result"]["commands"]
    selects = [c for c in commands if "rows" in c]
    duck = referee.connect()
    expected = []
    for statement in filter(str.strip, BRACES.split(";")):
        result = duck.execute(statement)
        if statement.strip().upper().startswith("SELECT"):
            expected.append(
                [dict(zip([d[0] for d in result.description], row, strict=True)) for row in result.fetchall()]
            )
    assert [c["rows"] for c in selects] == expected
    assert expected[0][0]["literal"] == '{"k": [1, 2]}' and expected[1] == [{"n": 2, "last": "}{"}]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


KILLED_RUN = """
import json, logging, signal, sys
from airflow_provider_lakehouse.exceptions import StatementError
from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook

logging.basicConfig(level=logging.INFO, stream=sys.stderr)
hook = DucklakeHook(ducklake="main")
if sys.argv[2] == "sigterm":
    signal.signal(signal.SIGTERM, lambda *_: hook.kill())  # what Airflow's task runner does: on_kill, go on
else:

    class TaskTimeout(BaseException):  # as Airflow's AirflowTaskTimeout: past every ``except Exception``
        pass

    def timed_out(*_):  # what Airflow's execution_timeout does: raise into the task, then on_kill
        raise TaskTimeout()

    signal.signal(signal.SIGTERM, timed_out)
try:
    hook.run(open(sys.argv[1]).read())
except StatementError as exc:
    print(json.dumps({"index": exc.index, "statement": exc.statement, "message": exc.message}))
    sys.exit(3)
except BaseException as exc:
    if type(exc).__name__ != "TaskTimeout":
        raise
    hook.kill()
    print(json.dumps({"timeout": True}))
    sys.exit(4)
"""

INTERRUPT_TAG = """
import json, sys
from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook
from airflow_provider_lakehouse.spark.driver import task_session_conf
from airflow_provider_lakehouse.spark.session import connect_session
# the session DuckDB-dialect tasks share
spark = connect_session(sys.argv[1], task_session_conf("duckdb", DucklakeHook(ducklake="main").spec.spark_conf))
print(json.dumps(spark.interruptTag(sys.argv[2])))
"""

#: an insert whose file lands, then a count Spark would need hours for
KILLED_SCRIPT = """ATTACH 'ducklake://main' AS dl; USE dl;
CREATE TABLE killed_rows (i INTEGER);
INSERT INTO killed_rows SELECT i FROM range(10) r(i);
SELECT count(*) AS n FROM range(CAST(4000000000 AS BIGINT)) a, range(10000) b
"""


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize(
    ("spark", "how"), [("connect", "sigterm"), ("connect", "timeout"), ("connect", "sigkill"), ("local", "sigterm")]
)
def test_a_killed_task_stops_its_running_statement(
    spark: str, how: str, stack: Any, stack_env: dict[str, str], tmp_path: Path
) -> None:
    """A task killed in the middle of a statement (SIGTERM: the operator's ``on_kill``) or timed out in it (an
    exception raised into the run, then ``on_kill``) interrupts that statement: on the shared Spark Connect
    server, which would otherwise run it to its end, and in the task's own Spark. The script fails naming the
    statement, nothing is committed, no file is left, and the server holds no operation of the script
    afterwards.

    A task SIGKILLed alone runs no ``on_kill``: then the server must drop the orphaned statement itself, which the
    stack's server settings bound to about a minute (Spark's defaults: up to 7.5 min). Nothing is committed; the
    files its first statement wrote are orphans, which ``delete_orphaned_files`` removes."""
    import os
    import signal
    import time

    url = stack.start_spark_connect(log=lambda _m: None)
    env, setup = lake_env(dict(stack_env, **stack.env()), "spark_connect_local" if spark == "connect" else None)
    script = tmp_path / "script.sql"
    script.write_text(KILLED_SCRIPT)
    output = tmp_path / "output.log"  # the task log (Airflow logs to stdout) and the outcome, last

    def wait_for(condition: Any) -> None:
        deadline = time.monotonic() + 300
        while not condition():
            assert proc.poll() is None and time.monotonic() < deadline, output.read_text()[-4000:]
            time.sleep(0.5)

    server_log = stack.spark_connect_server().log_file
    with output.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-c", KILLED_RUN, str(script), how], env=env, stdout=sink, stderr=subprocess.STDOUT
        )
        try:
            # Evidence that the count runs: after the insert's job ended, a progress line naming an active stage
            # (the count is the script's only statement after the insert with one). A line without a stage may
            # come while the insert finishes or the count is planned: a kill then finds nothing running yet,
            # which the repeated interrupts cover (tests/integration/test_spark_interrupt.py), but the log
            # would not show this test's evidence.
            wait_for(lambda: write_ended(setup.file_uris()))
            offset = len(output.read_text())
            wait_for(lambda: "tasks done" in output.read_text()[offset:])
            server_log_offset = server_log.stat().st_size
            os.kill(proc.pid, signal.SIGKILL if how == "sigkill" else signal.SIGTERM)
            killed_at = time.monotonic()
            try:
                proc.wait(timeout=180)  # the count alone would take hours
            except subprocess.TimeoutExpired:  # the task log says where the killed run waits
                pytest.fail(f"still running 180 s after the signal:\n{output.read_text()[-6000:]}")
            print(f"the run ended {time.monotonic() - killed_at:.1f} s after the signal")
        finally:
            if proc.poll() is None:  # never leave the count running on the shared server
                proc.send_signal(signal.SIGTERM)
                time.sleep(5)
                proc.kill()
    log = output.read_text()
    if how == "sigkill":
        tag = abandoned_tag(server_log, server_log_offset, timeout_s=150)
        assert running_with_tag(env, url, tag) == [], "the server still runs the statement"
        lake = setup.open()
        assert lake.current_snapshot_id() == 0, "the killed script committed"
        left = setup.file_uris()
        assert left and all("/killed_rows/" in uri for uri in left), left  # the insert's, never committed
        report = lake.delete_orphaned_files(older_than=dt.datetime.now(dt.UTC) + dt.timedelta(days=1), dry_run=False)
        assert sorted(report.files_deleted) == sorted(left) and setup.file_uris() == []
        return
    outcome = json.loads(log.strip().splitlines()[-1])
    if how == "sigterm":  # on_kill stopped the count
        assert proc.returncode == 3, log[-4000:]
        assert outcome["index"] == 5 and "range(10000)" in outcome["statement"], outcome
        assert outcome["message"].startswith("the task was killed while this statement ran"), outcome
        cancelled = "OPERATION_CANCELED" if spark == "connect" else "SPARK_JOB_CANCELLED"
        assert cancelled in log, log[-4000:]
        # one operation, unless the kill fell between two of the count's jobs (adaptive execution runs a
        # job per query stage): then none, and the repeated interrupts stopped the next one
        assert re.search(r"task killed; interrupted [01] running Spark operation\(s\)", log), log[-4000:]
    else:
        assert proc.returncode == 4 and outcome == {"timeout": True}, log[-4000:]
    lake = setup.open()
    assert lake.current_snapshot_id() == 0, "the killed script committed"
    assert setup.file_uris() == [], "the killed script left files"
    if spark == "connect":
        assert running_with_tag(env, url, last_tag(log)) == [], "the server still runs the statement"


def abandoned_tag(server_log: Path, offset: int, timeout_s: float) -> str:
    """Wait until the Spark Connect server logs that it dropped an abandoned execution of a lake script (one
    tagged ``lakehouse-...``) after ``offset`` of its log; return that tag."""
    import re
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        with server_log.open("rb") as log:
            log.seek(offset)
            text = log.read().decode(errors="replace")
        found = re.search(r"Set\((lakehouse-[0-9a-f]+)\).* that was abandoned and expired and will be removed", text)
        if found:
            return found.group(1)
        assert time.monotonic() < deadline, f"the server kept the orphaned statement for {timeout_s} s"
        time.sleep(2)


def write_ended(uris: list[str]) -> bool:
    """A write among ``uris`` (a lake's files) has ended: its Parquet file exists and its job released the write
    lease (``ducklake-write-<tag>.lease``)."""
    return any(uri.endswith(".parquet") for uri in uris) and not any(uri.endswith(".lease") for uri in uris)


def last_tag(log: str) -> str:
    """The Spark operation tag the last kill line of a task log names (``... (tag lakehouse-...)``)."""
    return log.split("(tag ")[-1].split(")")[0]


def running_with_tag(env: dict[str, str], url: str, tag: str) -> list[str]:
    """The Connect server's operations tagged ``tag`` in the session tasks share (interrupted, if any)."""
    proc = subprocess.run(
        [sys.executable, "-c", INTERRUPT_TAG, url, tag], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return list(json.loads(proc.stdout.strip().splitlines()[-1]))


@pytest.mark.integration
def test_lake_settings_spark_connect_cannot_set_are_named_in_the_task_log(
    stack: Any, stack_env: dict[str, str], tmp_path: Path
) -> None:
    """A task sets only ``spark.sql.*`` settings on its Connect session; the lake's other ``spark_conf`` settings
    belong to the server. They are named in the task log (names only, never values) instead of vanishing."""
    conf = {"spark.executor.memory": "7g-not-for-logs", "spark.sql.shuffle.partitions": "3"}
    response, _setup, log = run_over_connect(stack, stack_env, tmp_path, "SELECT 41 + 1 AS answer", conf)
    assert response["result"]["commands"][-1]["rows"] == [{"answer": 42}]
    named = [line for line in log.splitlines() if "not applied" in line]
    assert len(named) == 1, log[-4000:]
    assert "spark.executor.memory" in named[0] and "spark.sql.shuffle.partitions" not in named[0], named[0]
    assert "7g-not-for-logs" not in log


TYPES_AND_CASTS = """
CREATE TABLE t (id INTEGER, u UINTEGER, tm TIME, g UUID, d DOUBLE, dec DECIMAL(10, 2), b BLOB);
INSERT INTO t VALUES (1, 4000000000, TIME '20:18:00', '550e8400-e29b-41d4-a716-446655440000', 3.14159, 1.005,
  '\\xAA\\x00'::BLOB);
CREATE TABLE copied AS SELECT t.* FROM t JOIN t AS again USING (id);
"""


@pytest.mark.integration
def test_values_and_passed_through_types_over_spark_connect(
    stack: Any, stack_env: dict[str, str], tmp_path: Path
) -> None:
    """Over Spark Connect as in-process: values cast as DuckDB casts them, a copy keeps TIME/UINTEGER/UUID (the
    tags travel as column metadata through the Connect plan), USING reads its key, BLOB literals are bytes."""
    from tests import referee

    response, setup, _log = run_over_connect(stack, stack_env, tmp_path, TYPES_AND_CASTS)
    assert response["engine"] == "spark_connect"
    con = referee.connect()
    setup.attach(con)
    copied = con.sql("SELECT * FROM lake.copied")
    assert [str(t) for t in copied.types] == ["INTEGER", "UINTEGER", "TIME", "UUID", "DOUBLE", "DECIMAL(10,2)", "BLOB"]
    assert referee.rows(con, "SELECT u, tm::VARCHAR AS tm, d, dec::VARCHAR AS dec, b FROM lake.copied") == [
        {"u": 4000000000, "tm": "20:18:00", "d": 3.14159, "dec": "1.01", "b": b"\xaa\x00"}
    ]
