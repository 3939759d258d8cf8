"""The example DAGs' ``airflow dags test`` runs, each made once per engine for the whole test session.

A run takes one to two minutes on two cores (an Airflow start, then a JVM or a spark-submit per lake task), and
several modules check the same run from different sides: its answers and snapshots (the example's own test), its
OpenLineage events and Airflow assets (``test_lineage_events``), its parity with the other engine
(``test_engine_parity``), the credentials it must not show. Every run is made with OpenLineage's file transport on
and the consumer of the lake example's asset unpaused, so that any of those checks can read it.

Also here: the environments of lake tasks in tests (:func:`lake_env`, :func:`engine_env`), each on a lake of its own.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airflow_provider_lakehouse.devstack.commands import read_latest_run
from airflow_provider_lakehouse.ducklake.store import PostgresStore
from tests import referee
from tests.conftest import run_airflow
from tests.referee import LakeSetup


def lake_env(
    stack_env: dict[str, str], spark_conn_id: str | None, engine: str | None = None
) -> tuple[dict[str, str], LakeSetup]:
    """The stack's environment with lake ``main`` pointed at a fresh catalog schema and S3 prefix (and, with
    ``engine``, that engine as the lake's default)."""
    conn = json.loads(stack_env["AIRFLOW_CONN_DUCKLAKE_MAIN"])
    name = f"dag_{uuid.uuid4().hex[:8]}"
    conn["extra"] = {**conn["extra"], "metadata_schema": name, "data_path": f"s3://lakehouse/{name}/"}
    if spark_conn_id:
        conn["extra"]["spark_conn_id"] = spark_conn_id
    if engine:
        conn["extra"]["engine"] = engine
    aws = json.loads(stack_env["AIRFLOW_CONN_LAKEHOUSE_S3"])
    setup = referee.made_in_stack(
        LakeSetup(
            PostgresStore(referee.postgres_spec(conn), metadata_schema=name),
            conn["extra"]["data_path"],
            s3=referee.s3_spec(aws),
        )
    )
    return dict(stack_env, AIRFLOW_CONN_DUCKLAKE_MAIN=json.dumps(conn)), setup


def engine_env(stack: Any, stack_env: dict[str, str], engine: str) -> tuple[dict[str, str], LakeSetup]:
    """:func:`lake_env` for ``engine``: ``local``, ``spark_connect`` or ``spark_submit`` (the stack's server is
    started), or ``duckdb`` (the lake's default engine)."""
    spark_conn_id = None
    if engine == "spark_connect":
        stack.start_spark_connect(log=lambda _m: None)
        spark_conn_id = "spark_connect_local"
    elif engine == "spark_submit":
        stack.start_spark_cluster(log=lambda _m: None)
        spark_conn_id = "spark_cluster"
    return lake_env(dict(stack_env, **stack.env()), spark_conn_id, "duckdb" if engine == "duckdb" else None)


#: the namespace of every run's OpenLineage events
OPENLINEAGE_NAMESPACE = "lakehouse-tests"


@dataclass(frozen=True)
class DagTestRun:
    """One finished ``airflow dags test`` run of an example DAG.

    :param dag_id: the DAG.
    :param engine: ``local``, ``duckdb``, ``spark_connect`` or ``spark_submit`` (see ``engine_env``).
    :param env: the environment it ran with (lake ``main`` on a catalog schema and S3 prefix of its own).
    :param setup: that lake, for DuckDB to attach.
    :param result: the finished CLI process (its output carries the task logs).
    :param run_id: the Airflow run's id.
    :param xcoms: each task's return value.
    :param events_file: the OpenLineage events the run emitted, one JSON object per line.
    """

    dag_id: str
    engine: str
    env: dict[str, str]
    setup: LakeSetup
    result: subprocess.CompletedProcess[str]
    run_id: str
    xcoms: dict[str, Any]
    events_file: Path

    @property
    def output(self) -> str:
        return self.result.stdout + self.result.stderr

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.events_file.read_text().splitlines() if line.strip()]

    def secrets(self) -> list[str]:
        """The passwords of the lake's catalog, its S3 and Data Table ``main``: none may show anywhere."""
        return [
            json.loads(self.env[name])["password"]
            for name in ("AIRFLOW_CONN_DUCKLAKE_MAIN", "AIRFLOW_CONN_LAKEHOUSE_S3", "AIRFLOW_CONN_DATATABLE_MAIN")
        ]


class DagTestRuns:
    """Makes each (DAG, engine) run on first request and hands the same run to every later one.

    :param stack: the session's local stack.
    :param stack_env: its environment for subprocesses.
    :param folder: where the runs' OpenLineage event files go.
    """

    def __init__(self, stack: Any, stack_env: dict[str, str], folder: Path) -> None:
        self.stack = stack
        self.stack_env = stack_env
        self.folder = folder
        self._runs: dict[tuple[str, str], DagTestRun] = {}
        self._airflow_ready = False

    def get(self, dag_id: str, engine: str, prepare: Callable[[dict[str, str]], None] | None = None) -> DagTestRun:
        """The run of ``dag_id`` on ``engine``, made now if it was not yet (after ``prepare(env)``, if given)."""
        if (dag_id, engine) not in self._runs:
            self._runs[dag_id, engine] = self._run(dag_id, engine, prepare)
        return self._runs[dag_id, engine]

    def _run(self, dag_id: str, engine: str, prepare: Callable[[dict[str, str]], None] | None) -> DagTestRun:
        env, setup = engine_env(self.stack, self.stack_env, engine)
        events_file = self.folder / f"{dag_id}-{engine}.jsonl"
        env.update(
            AIRFLOW__OPENLINEAGE__DISABLED="false",
            AIRFLOW__OPENLINEAGE__NAMESPACE=OPENLINEAGE_NAMESPACE,
            AIRFLOW__OPENLINEAGE__TRANSPORT=json.dumps(
                {"type": "file", "log_file_path": str(events_file), "append": True}
            ),
        )
        self._ready_airflow(env)
        if prepare is not None:
            prepare(env)
        result = run_airflow(env, "dags", "test", dag_id)
        assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
        latest = read_latest_run(dag_id, env)
        return DagTestRun(dag_id, engine, env, setup, result, latest.run_id, latest.xcoms, events_file)

    def _ready_airflow(self, env: dict[str, str]) -> None:
        """Once: every DAG known to the metadata DB and the lineage consumer unpaused, so that an asset event of a
        run queues a run of the DAG scheduled on it (paused or unknown DAGs get none)."""
        if self._airflow_ready:
            return
        for args in (
            ("dags", "reserialize", "--bundle-name", "dags-folder"),
            ("dags", "unpause", "example_lineage_consumer"),
        ):
            result = run_airflow(env, *args)
            assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
        self._airflow_ready = True


def assert_clean_engine_output(run: DagTestRun) -> None:
    """The engine's output at its real level: no error lines, no handled Py4J retry shown as a traceback, no WARN
    stack trace from the S3A probe (all three were once in every local-Spark task log of ``airflow dags test``), the
    provider's plugin found once, and each lake task reporting the engine it was run on."""
    output = run.output
    assert [line for line in output.splitlines() if "[error" in line] == []
    assert "Connection reset by peer" not in output and "Py4JNetworkError" not in output
    assert "__lakehouse_s3a_probe__" not in output
    assert "already registered" not in output  # the provider's plugin is found once (see devstack/bootstrap.py)
    engines = {x["engine"] for x in run.xcoms.values() if isinstance(x, dict) and "engine" in x}
    assert engines == {run.engine}, engines
    if run.engine == "spark_submit":
        assert "Spark-Submit cmd" in output and "spark://127.0.0.1" in output


def assert_no_secret_shown(run: DagTestRun) -> None:
    """No password of the run's connections in its output, its task log files, its XComs or OpenLineage events."""
    logs = Path(run.env["AIRFLOW_HOME"]) / "logs"
    texts = [run.output, json.dumps(run.xcoms, default=str)]
    texts += [run.events_file.read_text()] if run.events_file.exists() else []
    texts += [p.read_text(errors="replace") for p in logs.rglob("*") if p.is_file()]
    for secret in run.secrets():
        assert all(secret not in text for text in texts), "a credential leaked into output, logs, XCom or events"
