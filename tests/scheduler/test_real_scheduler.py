"""Lake tasks under Airflow's real scheduler (LocalExecutor, parallelism 4, metadata in the stack's PostgreSQL), on
Spark Connect: tasks run in parallel processes, fail, get killed and are retried, as in production.

- the 52-task TPC-DS DAG on the Spark connection its run names (the ``spark_conn_id`` run parameter), its ingest
  tasks writing one lake concurrently; the ten answers equal DuckDB's and the generator's reference. At SF 0.01:
  what is tested here is tasks in parallel on one server, and SF 1 took three of the suite's 40 minutes
  (``tests/benchmarks/bench_tpcds`` checks SF 1 and 10 against the reference);
- 16 mapped inserts at once into one table partitioned by their source, every fifth failing after its commit on
  the first try; one task killed (SIGKILL) after its commit, one killed in the middle of its script; Airflow
  retries them. Every file sits in its partition's directory with its partition value, as DuckDB writes it.

Every run ends successful; DuckDB reads every row exactly once (0 lost, 0 duplicated); the only unreferenced files
are those of the try killed mid-script (what ``delete_orphaned_files`` lists); no task process is left running;
no credential is in any task log; the Spark Connect server (one of the test's own, beside the stack's, so that the
suite's other worker can use the stack's meanwhile) kept no per-task Python worker.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_lakehouse.devstack.spark import SparkConnectServer
from airflow_provider_lakehouse.devstack.stack import spark_connect_connection
from airflow_provider_lakehouse.tpcds.generate import generate
from tests import referee
from tests.dags.runs import lake_env
from tests.dags.test_tpcds_pipeline import check_tpcds_results
from tests.integration.test_connect_engine import last_tag, running_with_tag, write_ended
from tests.integration.test_partitioned_writes import file_layout
from tests.scheduler.dags.lake_submit_archive import TASKS as ARCHIVE_TASKS
from tests.support.airflow_cluster import airflow_cluster
from tests.support.connect_server import connect_server_of_its_own

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
RETRIES_DAG = Path(__file__).parent / "dags" / "lake_scheduler_retries.py"
ARCHIVE_DAG = Path(__file__).parent / "dags" / "lake_submit_archive.py"
MARKED_DAG = Path(__file__).parent / "dags" / "lake_marked_failed.py"
TPCDS_DAG = REPO / "dags_examples" / "tpcds_pipeline.py"
TPCDS_SCALE_FACTOR = 0.01


def _kill_when_announced(markers: Path, killed: dict[str, float], mid_script_wrote: Callable[[], bool]) -> None:
    """SIGKILL the task processes that wrote their pid: after-commit at once, mid-script once ``mid_script_wrote()``
    says its first statement's files exist (its slow second statement is then running). Evidence, not a delay: a
    fixed wait raced the task on a faster machine, which had finished the whole script by then."""
    for name, ready in (("after_commit", lambda: True), ("mid_script", mid_script_wrote)):
        marker = markers / f"{name}.pid"
        if name in killed or not marker.exists() or not ready():
            continue
        pid = int(marker.read_text())
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            raise AssertionError(f"the {name} task (pid {pid}) ended before the test could kill it") from None
        killed[name] = time.monotonic()


def _files_under(setup: Any, part: str) -> Callable[[], bool]:
    """Whether any file of the lake lies under a path containing ``part`` (an insert's partition directory)."""
    return lambda: any(part in uri for uri in setup.file_uris())


def _seconds_after_announced(markers: Path, name: str, delay: float) -> Callable[[], bool]:
    """Whether ``delay`` seconds have passed since task ``name`` wrote its pid marker: for engines whose first
    statement leaves no file to watch for (DuckDB inlines small inserts in the catalog)."""
    marker = markers / f"{name}.pid"
    return lambda: marker.exists() and time.time() - marker.stat().st_mtime >= delay


class _MarkFailedWhileCounting:
    """Marks the ``lake_marked_failed`` task failed (as a user in the UI) once its hours-long count runs: its
    insert's job has ended (the file is written, the write lease released), and its log has reported an active
    stage since (the count is the script's only statement after the insert with one)."""

    def __init__(self, airflow: Any, run_id: str, setup: Any) -> None:
        self.airflow = airflow
        self.run_id = run_id
        self.setup = setup
        self.log_offset: int | None = None
        self.marked = False

    def task_log(self) -> str:
        logs = [p for p in self.airflow.task_logs() if "dag_id=lake_marked_failed" in str(p)]
        return "".join(p.read_text(errors="replace") for p in logs)

    def poll(self) -> None:
        if self.marked:
            return
        if self.log_offset is None:
            if write_ended([uri for uri in self.setup.file_uris() if "/marked_rows/" in uri]):
                self.log_offset = len(self.task_log())
        elif "tasks done" in self.task_log()[self.log_offset :]:
            self.airflow.mark_task_failed("lake_marked_failed", self.run_id, "runs_for_hours")
            self.marked = True


def _processes_with(needle: str) -> list[int]:
    """Live processes whose environment mentions ``needle`` (this test's AIRFLOW_HOME)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if needle.encode() in (proc / "environ").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_lake_tasks_under_a_real_scheduler(stack: Any, stack_env: dict[str, str], tmp_path: Path) -> None:
    # A Connect server of this test's own: it counts the server's Python worker daemons, which the suite's other
    # worker would add to on the stack's server meanwhile.
    with connect_server_of_its_own(stack, tmp_path / "connect") as server:
        _lake_tasks_under_a_real_scheduler(stack, stack_env, tmp_path, server)


def _lake_tasks_under_a_real_scheduler(
    stack: Any, stack_env: dict[str, str], tmp_path: Path, server: SparkConnectServer
) -> None:
    url = server.url
    earlier_daemons = set(_connect_server_daemons(server))
    # The lake's own Spark is in-process: the test DAGs name the Connect server per operator and the TPC-DS run
    # per run parameter, so only that parameter can have sent the pipeline's tasks there.
    env, setup = lake_env(
        {**stack_env, **stack.env(), "AIRFLOW_CONN_SPARK_CONNECT_LOCAL": spark_connect_connection(server.port)}, None
    )
    landing = str(tmp_path / "landing")
    generate(TPCDS_SCALE_FACTOR, landing, extension_dir=referee.extension_dir())
    markers = tmp_path / "markers"
    markers.mkdir()
    env.update(
        TPCDS_LANDING=landing,
        LAKEHOUSE_DUCKDB_EXTENSIONS=referee.extension_dir(),
        TPCDS_MAX_ACTIVE_TASKS="4",
        LAKE_SCHEDULER_MARKERS=str(markers),
        LAKE_SCHEDULER_SPARK_CONN_ID="spark_connect_local",
        LAKEHOUSE_TEST_TMP=str(tmp_path),
    )
    secrets = [
        json.loads(env["AIRFLOW_CONN_DUCKLAKE_MAIN"])["password"],
        json.loads(env["AIRFLOW_CONN_LAKEHOUSE_S3"])["password"],
    ]

    with airflow_cluster(stack, env, [RETRIES_DAG, TPCDS_DAG, MARKED_DAG], parallelism=4) as airflow:
        airflow.wait_parsed(["lake_scheduler_retries", "tpcds_pipeline", "lake_marked_failed"])
        marked = _MarkFailedWhileCounting(airflow, airflow.trigger("lake_marked_failed"), setup)
        retries_run = airflow.trigger("lake_scheduler_retries")
        tpcds_run = airflow.trigger(
            "tpcds_pipeline", {"scale_factor": TPCDS_SCALE_FACTOR, "spark_conn_id": "spark_connect_local"}
        )
        killed: dict[str, float] = {}
        mid_script_wrote = _files_under(setup, "source=200/")

        def poll() -> None:
            _kill_when_announced(markers, killed, mid_script_wrote)
            marked.poll()

        state = airflow.wait_run("lake_scheduler_retries", retries_run, on_poll=poll)
        tis = airflow.task_instances("lake_scheduler_retries", retries_run)
        assert state == "success", (tis, airflow.component_log("scheduler")[-3000:])
        assert {"after_commit", "mid_script"} <= set(killed), f"the kills did not happen: {killed}"

        # -- marked failed while its statement ran: on_kill stopped the statement on the server ------------
        assert airflow.wait_run("lake_marked_failed", marked.run_id, timeout_s=600, on_poll=marked.poll) == "failed"
        marked_log = marked.task_log()
        assert marked.marked, marked_log[-4000:]
        # 0 when the kill fell between two of the count's jobs; the repeated interrupts stop the next one
        assert re.search(r"task killed; interrupted [01] running Spark operation\(s\)", marked_log), marked_log[-4000:]
        assert running_with_tag(env, url, last_tag(marked_log)) == []
        assert not any("/marked_rows/" in uri for uri in setup.file_uris()), "the killed task left files"

        tpcds_state = airflow.wait_run("tpcds_pipeline", tpcds_run, timeout_s=2400)
        tpcds_tis = airflow.task_instances("tpcds_pipeline", tpcds_run)
        assert tpcds_state == "success", [t for t in tpcds_tis if t["state"] != "success"]

        # -- retries: the exact rows, and the retries that found their earlier commit --------------------
        by_task = {(t["task_id"], t["map_index"]): t for t in tis}
        deduplicated = []
        for m in range(16):
            ti = by_task[("insert", m)]
            if m % 5 == 0:
                assert ti["try_number"] == 2, ti
                response = airflow.xcom("lake_scheduler_retries", retries_run, "insert", m)
                assert response["deduplicated"]["committed_by_try"] == 1, response
                deduplicated.append(m)
            else:
                assert ti["try_number"] == 1, ti
        after_commit = airflow.xcom("lake_scheduler_retries", retries_run, "killed_after_commit")
        assert by_task[("killed_after_commit", -1)]["try_number"] == 2
        assert after_commit["deduplicated"]["committed_by_try"] == 1, after_commit
        assert by_task[("killed_mid_script", -1)]["try_number"] == 2
        assert "deduplicated" not in airflow.xcom("lake_scheduler_retries", retries_run, "killed_mid_script")

        # -- TPC-DS: every SQL task ran on the run's Spark Connect server, ingest tasks overlapped in time,
        # answers equal DuckDB's and the generator's reference ---------------------------------------------
        returned = airflow.xcoms("tpcds_pipeline", tpcds_run).values()
        engines = [value["engine"] for value in returned if isinstance(value, dict) and "engine" in value]
        assert engines == ["spark_connect"] * 52, engines
        ingest = sorted((t["start_date"], t["end_date"]) for t in tpcds_tis if t["task_id"].startswith("ingest."))
        assert any(b[0] < a[1] for a, b in itertools.pairwise(ingest)), "ingest tasks never ran at the same time"
        logs = airflow.task_logs()
        assert logs
        for path in logs:
            text = path.read_text(errors="replace")
            assert all(secret not in text for secret in secrets), f"a credential is in {path}"
        home = str(airflow.home)

    check_tpcds_results(env, setup, landing, str(TPCDS_SCALE_FACTOR))
    con = referee.connect()
    setup.attach(con)
    counts = dict(con.execute("SELECT source, count(*) FROM lake.sched_rows GROUP BY source").fetchall())
    assert counts == {**dict.fromkeys(range(16), 10), 100: 10, 200: 10}, counts
    assert con.execute("SELECT count(*) = count(DISTINCT (source, i)) FROM lake.sched_rows").fetchone() == (True,)
    tables = con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake'").fetchall()
    assert ("sched_rows",) in tables and ("marked_rows",) not in tables, f"the task marked failed committed: {tables}"
    assert _assert_partitioned_by_source(setup, con) >= 18  # one file per insert at least: 16 mapped, 2 killed
    lake = setup.open()
    orphans = lake.delete_orphaned_files(older_than=_future()).files_deleted
    sched_dir = lake.table_dir(lake.table("sched_rows"))
    # only the killed mid-script try can have left files: its first statement's, never committed
    assert all(path.startswith(sched_dir) for path in orphans) and len(orphans) <= 2, orphans
    assert _processes_with(home) == [], "a task, JVM or Python worker of this Airflow is still running"
    # Bounded, not instant: a daemon the server is replacing can outlive its successor for a moment. Per-task
    # daemons never end, so waiting past the workers' 60 s idle timeout still catches them.
    daemons = _new_daemons(server, earlier_daemons)
    deadline = time.monotonic() + 90
    while len(daemons) > 1 and time.monotonic() < deadline:
        time.sleep(5)
        daemons = _new_daemons(server, earlier_daemons)
    assert len(daemons) <= 1, f"the Spark Connect server kept per-task Python workers: {daemons}"
    print(f"deduplicated retries: map indexes {deduplicated} and killed_after_commit; orphans: {len(orphans)}")


def test_duckdb_engine_tasks_under_a_real_scheduler(stack: Any, stack_env: dict[str, str], tmp_path: Path) -> None:
    """The retries DAG with the lake's engine set to ``duckdb`` and every task also writing a Data Table in the same
    script: 16 concurrent task processes commit to one lake table through DuckDB's own DuckLake committer and to
    one Postgres table, tasks fail after their commit or are killed, Airflow retries them; every row lands exactly
    once in both stores, no file is left unreferenced and no prepared transaction is left waiting."""
    env, setup = lake_env(dict(stack_env, **stack.env()), None, "duckdb")
    markers = tmp_path / "markers"
    markers.mkdir()
    schema = f"sched_{uuid.uuid4().hex[:8]}"
    env.update(
        LAKEHOUSE_DUCKDB_EXTENSIONS=referee.extension_dir(),
        LAKE_SCHEDULER_MARKERS=str(markers),
        LAKE_SCHEDULER_SPIN="400000000",  # DuckDB counts the Spark-sized spin in a moment
        LAKE_SCHEDULER_DATATABLE=schema,
    )
    secrets = [
        json.loads(env["AIRFLOW_CONN_DUCKLAKE_MAIN"])["password"],
        json.loads(env["AIRFLOW_CONN_LAKEHOUSE_S3"])["password"],
        json.loads(env["AIRFLOW_CONN_DATATABLE_MAIN"])["password"],
    ]
    with airflow_cluster(stack, env, [RETRIES_DAG], parallelism=4) as airflow:
        airflow.wait_parsed(["lake_scheduler_retries"])
        run_id = airflow.trigger("lake_scheduler_retries")
        killed: dict[str, float] = {}
        state = airflow.wait_run(
            "lake_scheduler_retries",
            run_id,
            on_poll=lambda: _kill_when_announced(markers, killed, _seconds_after_announced(markers, "mid_script", 6)),
        )
        tis = airflow.task_instances("lake_scheduler_retries", run_id)
        assert state == "success", (tis, airflow.component_log("scheduler")[-3000:])
        assert {"after_commit", "mid_script"} <= set(killed), f"the kills did not happen: {killed}"
        by_task = {(t["task_id"], t["map_index"]): t for t in tis}
        for m in range(16):
            response = airflow.xcom("lake_scheduler_retries", run_id, "insert", m)
            assert response["engine"] == "duckdb", response
            if m % 5 == 0:
                assert by_task[("insert", m)]["try_number"] == 2
                assert response["deduplicated"]["committed_by_try"] == 1, response
        after_commit = airflow.xcom("lake_scheduler_retries", run_id, "killed_after_commit")
        assert after_commit["deduplicated"]["committed_by_try"] == 1, after_commit
        assert by_task[("killed_mid_script", -1)]["try_number"] == 2
        assert "deduplicated" not in airflow.xcom("lake_scheduler_retries", run_id, "killed_mid_script")
        for path in airflow.task_logs():
            text = path.read_text(errors="replace")
            assert all(secret not in text for secret in secrets), f"a credential is in {path}"
        home = str(airflow.home)

    con = referee.connect()
    setup.attach(con)
    counts = dict(con.execute("SELECT source, count(*) FROM lake.sched_rows GROUP BY source").fetchall())
    assert counts == {**dict.fromkeys(range(16), 10), 100: 10, 200: 10}, counts
    assert con.execute("SELECT count(*) = count(DISTINCT (source, i)) FROM lake.sched_rows").fetchone() == (True,)
    # DuckDB keeps ten-row inserts inlined in the catalog, so there may be no file to check here
    _assert_partitioned_by_source(setup, con)
    assert setup.open().delete_orphaned_files(older_than=_future()).files_deleted == []
    conninfo = referee.postgres_conninfo(referee.postgres_spec(json.loads(env["AIRFLOW_CONN_DATATABLE_MAIN"])))
    con.execute(f"ATTACH {referee.sql_literal(conninfo)} AS dt (TYPE postgres)")
    datatable_rows = con.execute(f"SELECT source, i FROM dt.{schema}.sched_rows ORDER BY ALL").fetchall()
    assert datatable_rows == con.execute("SELECT source, i FROM lake.sched_rows ORDER BY ALL").fetchall()
    prepared = con.execute("SELECT gid FROM postgres_query('dt', 'SELECT gid FROM pg_prepared_xacts')").fetchall()
    assert [g for (g,) in prepared if g.startswith("lakehouse:")] == []
    con.execute(f"CALL postgres_execute('dt', 'DROP SCHEMA {schema} CASCADE')")
    assert _processes_with(home) == [], "a task process of this Airflow is still running"


def _connect_server_daemons(server: SparkConnectServer) -> dict[int, str]:
    """Python worker daemons under Spark Connect ``server`` (one per session; sessions are shared), by pid, each
    described by its start time and session artifact id, to say which session a second one belongs to."""
    import psutil

    def describe(child: psutil.Process) -> str | None:
        try:
            if child.cmdline()[-2:] != ["pyspark.daemon", "pyspark.worker"]:
                return None
            artifacts = child.environ().get("SPARK_JOB_ARTIFACT_UUID", "?")
            return f"pid {child.pid} started {child.create_time():.0f} session artifacts {artifacts}"
        except psutil.Error:  # ended meanwhile (a zombie, or gone): idle workers end after 60 s by design
            return None

    process = psutil.Process(server.pid())
    described = {child.pid: describe(child) for child in process.children()}
    return {pid: text for pid, text in described.items() if text is not None}


def _new_daemons(server: SparkConnectServer, earlier: set[int]) -> list[str]:
    """The Connect server's daemons that were not there before this test."""
    return [text for pid, text in _connect_server_daemons(server).items() if pid not in earlier]


def test_spark_submit_tasks_started_together_share_one_class_archive(
    stack: Any, stack_env: dict[str, str], tmp_path: Path
) -> None:
    """Spark-submit tasks that the scheduler starts at once (two), on a machine without a class-data archive: each
    first driver may write one, and exactly one whole archive is left, with no partial file. A later driver run
    with ``-Xshare:on`` (which refuses to start without mapping an archive) proves it is usable."""
    cache = tmp_path / "cache"
    env, setup = lake_env(dict(stack_env, **stack.env(), XDG_CACHE_HOME=str(cache)), "spark_local")
    archives = cache / "airflow-provider-lakehouse" / "class-archives"
    with airflow_cluster(stack, env, [ARCHIVE_DAG], parallelism=ARCHIVE_TASKS) as airflow:
        airflow.wait_parsed(["lake_submit_archive"])
        run_id = airflow.trigger("lake_submit_archive")
        state = airflow.wait_run("lake_submit_archive", run_id, timeout_s=900)
        tis = airflow.task_instances("lake_submit_archive", run_id)
        assert state == "success", (tis, airflow.component_log("scheduler")[-3000:])
        spans = sorted((t["start_date"], t["end_date"]) for t in tis)
        assert any(b[0] < a[1] for a, b in itertools.pairwise(spans)), "the tasks never ran at the same time"
        assert all(t["try_number"] == 1 for t in tis), tis

    written = list(archives.glob("spark-driver-*.jsa"))
    assert len(written) == 1 and written[0].stat().st_size > 10_000_000, list(archives.iterdir())
    assert not list(archives.glob(".*")), "a partial archive was left behind"
    con = referee.connect()
    setup.attach(con)
    for task in range(ARCHIVE_TASKS):
        assert con.execute(f"SELECT count(*), min(task), max(task) FROM lake.submit_{task}").fetchone() == (
            1000,
            task,
            task,
        )

    conn = json.loads(env["AIRFLOW_CONN_DUCKLAKE_MAIN"])
    conf = {**(conn["extra"].get("spark_conf") or {}), "spark.driver.extraJavaOptions": "-Xshare:on"}
    conn["extra"] = {**conn["extra"], "spark_conf": conf}
    strict = subprocess.run(
        [
            sys.executable,
            "-c",
            "from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook; "
            "print(DucklakeHook(ducklake='main').run('SELECT count(*) AS n FROM submit_0')['result']['commands'][-1]['rows'])",
        ],
        env=dict(env, AIRFLOW_CONN_DUCKLAKE_MAIN=json.dumps(conn)),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert strict.returncode == 0, strict.stderr[-4000:]
    assert strict.stdout.strip().splitlines()[-1] == "[{'n': 1000}]"
    assert list(archives.glob("spark-driver-*.jsa")) == written


def _assert_partitioned_by_source(setup: Any, con: Any) -> int:
    """Every live data file of ``sched_rows`` (partitioned by ``source``) lies under ``source=<value>/``, has that
    value as its one registered partition value and holds rows of that source only, as DuckDB writes them; a
    filter on one source finds its rows. Returns how many files there are."""
    layout = file_layout(setup, setup.open(), "sched_rows")
    for directory, values in layout:
        assert len(values) == 1 and directory.endswith(f"source={values[0]}"), (directory, values)
    paths = [
        path for (path,) in con.execute("SELECT data_file FROM ducklake_list_files('lake', 'sched_rows')").fetchall()
    ]
    assert len(paths) == sum(layout.values())
    for path in paths:
        source = int(path.split("source=")[1].split("/")[0])
        assert con.execute(f"SELECT DISTINCT source FROM read_parquet('{path}')").fetchall() == [(source,)], path
    assert con.execute("SELECT count(*) FROM lake.sched_rows WHERE source = 3").fetchone() == (10,)
    return len(paths)


def _future() -> Any:
    import datetime as dt

    return dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
