"""The devstack commands (run inside the virtual environment)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from airflow_provider_lakehouse.devstack.bootstrap import REPO_ROOT
from airflow_provider_lakehouse.devstack.demo_output import (
    dataset_uri,
    latest_run_id,
    read_only,
    result_line,
    run_progress,
)
from airflow_provider_lakehouse.devstack.stack import Stack

# The example DAGs the main job runs, in order.
DEMO_DAGS = ("example_datatable", "example_ducklake_sentiment", "example_ducklake_operations", "tpcds_pipeline")
DEMO_SCALE_FACTOR = 0.01  # the README's main command: small enough for a laptop-sized demo
UI_PORT = 8080
LAKEHOUSE_URL = f"http://127.0.0.1:{UI_PORT}/plugin/lakehouse"


def _say(message: str) -> None:
    print(f"[lakehouse] {message}", flush=True)


@contextmanager
def running_stack() -> Iterator[Stack]:
    """Start the stack if needed; stop it afterwards only if this call started it (also on Ctrl-C/SIGTERM)."""
    stack = Stack()
    started = stack.up(log=_say)
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        yield stack
    finally:
        signal.signal(signal.SIGTERM, previous)
        if started:
            stack.down(log=_say)


def up(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m airflow_provider_lakehouse.devstack up")
    parser.add_argument(
        "--spark",
        action="store_true",
        help="also start the Spark Connect server and a standalone Spark cluster (three JVMs)",
    )
    options = parser.parse_args(args)
    stack = Stack()
    stack.up(log=_say)
    if options.spark:
        stack.start_spark_connect(log=_say)
        stack.start_spark_cluster(log=_say)
    _say(f"stack is up: {json.dumps(stack.status())}")
    _say(f"environment: source {stack.state_dir / 'env.sh'}")
    return 0


def down(_: list[str]) -> int:
    Stack().down(log=_say)
    return 0


def status(_: list[str]) -> int:
    print(json.dumps(Stack().status(), indent=2))
    return 0


def env(_: list[str]) -> int:
    for key, value in Stack().env().items():
        print(f"export {key}={shlex.quote(value)}")
    return 0


def demo(args: list[str]) -> int:
    """The README's first command: run the example DAGs end to end on the local stack."""
    dags = args or list(DEMO_DAGS)
    with running_stack() as stack:
        stack.ensure_airflow_db(log=_say)
        environment = dict(os.environ, **stack.env())
        logs = stack.state_dir / "demo"
        logs.mkdir(exist_ok=True)
        lineage_file = logs / "openlineage.jsonl"
        lineage_file.unlink(missing_ok=True)
        environment.update(  # the demo shows lineage: OpenLineage events go to a file
            AIRFLOW__OPENLINEAGE__DISABLED="false",
            AIRFLOW__OPENLINEAGE__NAMESPACE="lakehouse-demo",
            AIRFLOW__OPENLINEAGE__TRANSPORT=json.dumps(
                {"type": "file", "log_file_path": str(lineage_file), "append": True}
            ),
        )
        if "tpcds_pipeline" in dags:
            _generate_tpcds(environment)
        failed = []
        for dag_id in dags:
            _say(f"airflow dags test {dag_id} ...")
            begin = time.monotonic()
            log_file = logs / f"{dag_id}.log"
            with log_file.open("w") as out:
                process = subprocess.Popen(
                    [sys.executable, "-m", "airflow", "dags", "test", dag_id],
                    env=environment,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    cwd=REPO_ROOT,
                )
                rc = _wait_with_progress(process, dag_id, Path(environment["AIRFLOW_HOME"]) / "airflow.db", begin)
            seconds = time.monotonic() - begin
            outcome = "succeeded" if rc == 0 else f"FAILED (exit {rc})"
            _say(f"{dag_id} {outcome} in {seconds:.1f} s; full log: {log_file}")
            if rc != 0:
                failed.append(dag_id)
            _print_xcoms(dag_id, environment)
            _print_lineage(dag_id, lineage_file)
            if dag_id == "tpcds_pipeline":
                _say(
                    "  TPC-DS results: lake 'main' tables results.q03 ... results.q79 (query answers), agg.* "
                    "(aggregates), wide.* and tpcds.*; small aggregates in data table 'main', schema tpcds"
                )
        _say(f"OpenLineage events (schema, column lineage, snapshot ids, statistics): {lineage_file}")
        _say(f"Airflow home (metadata DB with the assets and asset events, task logs): {environment['AIRFLOW_HOME']}")
        _say(f"To look around: source {stack.state_dir / 'env.sh'}  (then airflow, psql, or the Python API)")
        _say(f"Lakehouse views (lakes, snapshots, previews, column lineage): {LAKEHOUSE_URL}")
        _say(
            f"  start the UI first: source {stack.state_dir / 'env.sh'} && airflow api-server -p {UI_PORT}  "
            f"(log in as admin, password in {environment['AIRFLOW_HOME']}/simple_auth_manager_passwords.json.generated)"
        )
    return 1 if failed else 0


def _wait_with_progress(process: subprocess.Popen[bytes], dag_id: str, metadata_db: Path, begin: float) -> int:
    """Wait for ``airflow dags test``; every 20 s say how far the run is (tasks done / total, the running task)."""
    last = ""
    next_line = begin + 20
    while process.poll() is None:
        time.sleep(1)
        if time.monotonic() < next_line:
            continue
        next_line = time.monotonic() + 20
        progress = run_progress(metadata_db, dag_id)
        line = progress.line(dag_id, time.monotonic() - begin) if progress else f"{dag_id}: starting"
        if line != last:
            _say(f"  {line}")
            last = line
    return int(process.returncode or 0)


def _print_xcoms(dag_id: str, environment: dict[str, str]) -> None:
    """One result line per task, in the order the tasks ran."""
    for task_id, value in read_xcoms(dag_id, environment).items():
        _say(f"  {result_line(task_id, value)}")


def _generate_tpcds(environment: dict[str, str]) -> None:
    from airflow_provider_lakehouse.tpcds.generate import generate

    landing = Path(environment["TPCDS_LANDING"])
    if (landing / "store_sales.parquet").exists():
        _say(f"TPC-DS data already in {landing}")
        return
    result = generate(DEMO_SCALE_FACTOR, str(landing), extension_dir=environment["LAKEHOUSE_DUCKDB_EXTENSIONS"])
    _say(
        f"TPC-DS SF {DEMO_SCALE_FACTOR}: {sum(result.rows.values()):,} rows as Parquet in {landing} "
        f"({result.seconds:.1f} s)"
    )


def _print_lineage(dag_id: str, events_file: Path) -> None:
    """One line per task: the datasets its COMPLETE event read and wrote."""
    if not events_file.exists():
        return
    for line in events_file.read_text().splitlines():
        event = json.loads(line)
        name = event.get("job", {}).get("name", "")
        if event.get("eventType") != "COMPLETE" or not name.startswith(f"{dag_id}."):
            continue
        inputs = [dataset_uri(d["namespace"], d["name"]) for d in event.get("inputs") or ()]
        outputs = [dataset_uri(d["namespace"], d["name"]) for d in event.get("outputs") or ()]
        if inputs or outputs:
            _say(f"  lineage {name[len(dag_id) + 1 :]}: {', '.join(inputs) or '-'} -> {', '.join(outputs) or '-'}")


@dataclass(frozen=True)
class LatestRun:
    """The newest run of a DAG in the Airflow metadata DB: its id and its tasks' return values.

    :param run_id: the run's ``run_id``.
    :param xcoms: each task's ``return_value`` XCom (JSON strings decoded), in the order the tasks started.
    """

    run_id: str
    xcoms: dict[str, object]


def read_latest_run(dag_id: str, environment: dict[str, str]) -> LatestRun:
    """The newest run of ``dag_id`` in the stack's Airflow metadata DB (``$AIRFLOW_HOME/airflow.db``, SQLite).

    Read with SQL, as :func:`~airflow_provider_lakehouse.devstack.demo_output.run_progress` reads progress: asking
    Airflow's models meant a fresh interpreter importing Airflow, 3.5 CPU-s for each read.
    """
    db_path = Path(environment["AIRFLOW_HOME"]) / "airflow.db"
    if not db_path.exists():
        raise RuntimeError(f"Could not read XComs of {dag_id}: no Airflow metadata DB at {db_path}")
    with closing(read_only(db_path, timeout_s=30)) as conn:
        run_id = latest_run_id(conn, dag_id)
        if run_id is None:
            return LatestRun(run_id="", xcoms={})
        rows = conn.execute(
            # in the order the tasks started (a task's first map index), then as they sort
            "SELECT x.task_id, x.value FROM xcom x WHERE x.dag_id = ? AND x.run_id = ? AND x.key = 'return_value' "
            "ORDER BY (SELECT coalesce(min(t.start_date), '') FROM task_instance t "
            "WHERE t.dag_id = x.dag_id AND t.run_id = x.run_id AND t.task_id = x.task_id), x.task_id, x.map_index",
            (dag_id, run_id),
        ).fetchall()
    values: dict[str, object] = {}
    for task_id, stored in rows:
        # JSON text, except that SQLite keeps a JSON number as a number (the column's numeric affinity)
        value = json.loads(stored) if isinstance(stored, str | bytes) else stored
        if isinstance(value, str):  # a task that returned JSON as a string
            try:
                value = json.loads(value)
            except ValueError:
                pass
        values[task_id] = value
    return LatestRun(run_id=run_id, xcoms=values)


def read_xcoms(dag_id: str, environment: dict[str, str]) -> dict[str, object]:
    """Return values (``return_value`` XComs) of the DAG's latest run (see :func:`read_latest_run`)."""
    return read_latest_run(dag_id, environment).xcoms


# Static checks the test command runs before the suite (configured in pyproject.toml); seconds, not minutes.
STATIC_CHECKS = (
    ("ruff", "check", "."),
    ("ruff", "format", "--check", "."),
    ("mypy",),
)


#: Worker processes of the test command (``LAKEHOUSE_TEST_WORKERS``; 2 by default, 1 for one plain pytest run): the
#: whole suite in two parts on one stack, first everything that can share it on that many worker processes (the
#: tests of one module, and those that share an Airflow home, stay on one worker: see tests/conftest.py), then alone
#: the tests that stop or restart its shared servers (marked ``exclusive``). Measured on the
#: 2-vCPU machine in docs/local-stack.md, "Tests".
WORKERS_ENV = "LAKEHOUSE_TEST_WORKERS"
DEFAULT_WORKERS = 2
EXCLUSIVE_PART = ("-m", "exclusive")


def parallel_part(workers: int) -> tuple[str, ...]:
    return ("-n", str(workers), "--dist", "loadscope", "-m", "not exclusive")


def pytest_runs(args: list[str], workers_setting: str | None) -> list[tuple[str, ...]]:
    """The pytest runs the test command makes, in order, for its arguments and ``LAKEHOUSE_TEST_WORKERS``.

    >>> pytest_runs([], None)
    [('-n', '2', '--dist', 'loadscope', '-m', 'not exclusive'), ('-m', 'exclusive')]
    >>> pytest_runs([], "1"), pytest_runs(["-k", "datatable"], None)
    ([()], [('-k', 'datatable')])
    """
    workers = int(workers_setting or DEFAULT_WORKERS)
    if args or workers <= 1:
        return [tuple(args)]
    return [parallel_part(workers), EXCLUSIVE_PART]


def test(args: list[str]) -> int:
    """The README's second command: lint, format and type checks, then the whole suite. A failing static check
    stops here, before the suite, and says how to see or fix the findings.

    Without arguments the stack is started here (and stopped afterwards if this call started it) and the suite
    runs in the two parts above; with ``LAKEHOUSE_TEST_WORKERS=1``, or with arguments (which go to pytest), it is
    one plain pytest run (tests/conftest.py starts and stops the stack).
    """
    environment = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    for check in STATIC_CHECKS:
        cmd = [sys.executable, "-m", *check]
        _say(" ".join(cmd[2:]))
        if subprocess.run(cmd, cwd=REPO_ROOT, env=environment).returncode:
            _say(f"{check[0]} found problems (ruff: `ruff check --fix .` and `ruff format .` fix most); tests not run")
            return 1
    runs = pytest_runs(args, os.environ.get(WORKERS_ENV))
    if len(runs) == 1:
        return _pytest(list(runs[0]), environment)
    with running_stack():  # every part runs, also after a failing one: each reports its own failures
        codes = [_pytest(list(run), environment) for run in runs]
    return next((code for code in codes if code), 0)


def _pytest(args: list[str], environment: dict[str, str]) -> int:
    cmd = [sys.executable, "-m", "pytest", *args]
    _say(" ".join(cmd[2:]))
    begin = time.monotonic()
    code = subprocess.run(cmd, cwd=REPO_ROOT, env=environment).returncode
    _say(f"pytest {' '.join(args)}: exit {code} after {(time.monotonic() - begin) / 60:.1f} min")
    return code
