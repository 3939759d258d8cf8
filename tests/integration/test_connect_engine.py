"""``DucklakeHook`` over Spark Connect on an S3 lake, where results can be empty: a scan whose files are all
pruned by their statistics, an empty temp table, a catalog function with no rows. Spark Connect cannot infer a
schema from zero rows, so each must still give its columns (found by the TPC-DS benchmark's quantity check).

Runs in a child process: this pytest process may already hold a classic SparkSession, and PySpark allows only
one kind per process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.dags.test_example_ducklake import lake_env

RUN_HOOK = """
import json, sys
from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook
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


@pytest.mark.integration
def test_empty_results_over_spark_connect(stack: Any, stack_env: dict[str, str], tmp_path: Path) -> None:
    stack.start_spark_connect(log=lambda _m: None)
    env, _setup = lake_env(dict(stack_env, **stack.env()), "spark_connect_local")
    script = tmp_path / "script.sql"
    script.write_text("ATTACH 'ducklake://main' AS dl; USE dl;" + SQL)
    out = tmp_path / "response.json"
    proc = subprocess.run(
        [sys.executable, "-c", RUN_HOOK, str(script), str(out)], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    response = json.loads(out.read_text())
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
from airflow_provider_lakehouse.spark.session import connect_session
spark = connect_session(sys.argv[3], DucklakeHook(ducklake="main").spec.spark_conf)  # the session the hook used
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
