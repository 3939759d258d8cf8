"""A real Airflow for tests: api-server, scheduler and dag-processor with the LocalExecutor, on loopback, its
metadata database in the local stack's PostgreSQL. Tasks run as they do in production: each in its own process
under the scheduler, in parallel, with retries.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import quote

from airflow_provider_lakehouse.devstack.ports import LOOPBACK, pick_port
from tests.conftest import REPO_ROOT

COMPONENTS = ("api-server", "scheduler", "dag-processor")


@dataclass
class AirflowCluster:
    """One Airflow installation under ``home``: see :func:`airflow_cluster`."""

    home: Path
    env: dict[str, str]
    api_port: int
    metadata_url: str
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def dags_folder(self) -> Path:
        return Path(self.env["AIRFLOW__CORE__DAGS_FOLDER"])

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.api_port}"

    def cli(self, *args: str, timeout: int = 300, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, "-m", "airflow", *args],
            env=self.env,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and result.returncode != 0:
            raise RuntimeError(f"airflow {' '.join(args)} failed:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
        return result

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Read the metadata database directly (faster than the CLI for polling)."""
        import psycopg

        with psycopg.connect(self.metadata_url.replace("postgresql+psycopg://", "postgresql://")) as conn:
            return list(conn.execute(sql, params).fetchall())

    def start(self) -> None:
        logs = self.home / "component-logs"
        logs.mkdir(exist_ok=True)
        for name in COMPONENTS:
            argv = [sys.executable, "-m", "airflow", name]
            if name == "scheduler":
                argv.append("--skip-serve-logs")  # its log server binds 0.0.0.0; task logs are local files here
            out = open(logs / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
            self.processes[name] = subprocess.Popen(
                argv, env=self.env, cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.wait_healthy()

    def wait_healthy(self, timeout_s: float = 180) -> None:
        import httpx

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for name, proc in self.processes.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"airflow {name} exited ({proc.returncode}): {self.component_log(name)[-3000:]}")
            try:
                health = httpx.get(f"{self.base_url}/api/v2/monitor/health", timeout=5).json()
                if all(
                    (health.get(k) or {}).get("status") == "healthy"
                    for k in ("metadatabase", "scheduler", "dag_processor")
                ):
                    return
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(2)
        raise RuntimeError(f"Airflow did not become healthy: {self.component_log('scheduler')[-3000:]}")

    def component_log(self, name: str) -> str:
        path = self.home / "component-logs" / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        for proc in self.processes.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        for proc in self.processes.values():
            try:
                proc.wait(timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.processes.clear()

    def wait_parsed(self, dag_ids: list[str], timeout_s: float = 300) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = {r[0] for r in self.query("SELECT dag_id FROM dag WHERE dag_id = ANY(%s)", (dag_ids,))}
            if found == set(dag_ids):
                return
            time.sleep(2)
        raise RuntimeError(f"DAGs {dag_ids} were not parsed: {self.component_log('dag-processor')[-3000:]}")

    def trigger(self, dag_id: str, conf: dict[str, Any] | None = None) -> str:
        """Unpause ``dag_id`` and start a run of it with ``conf``, through the REST API as the UI does (the CLI
        started an interpreter and imported Airflow for each, about 5 CPU-s); returns the run's id."""
        run_id = f"test__{uuid.uuid4().hex[:12]}"
        self.api("PATCH", f"dags/{dag_id}", json={"is_paused": False})
        self.api(
            "POST", f"dags/{dag_id}/dagRuns", json={"dag_run_id": run_id, "logical_date": None, "conf": conf or {}}
        )
        return run_id

    def api(self, method: str, path: str, **kwargs: Any) -> Any:
        """A call to the public REST API (``/api/v2/<path>``) as an admin; raises on an error status."""
        import httpx

        response = httpx.request(
            method,
            f"{self.base_url}/api/v2/{path}",
            headers={"Authorization": f"Bearer {self.admin_token}"},
            timeout=30,
            **kwargs,
        )
        if response.is_error:
            raise RuntimeError(f"{method} /api/v2/{path}: {response.status_code} {response.text[:2000]}")
        return response.json()

    @cached_property
    def admin_token(self) -> str:
        """An access token of an admin, asked for once per cluster (valid far longer than a test): any user's when
        all users are admins, else user ``admin``'s (password from the simple auth manager's passwords file)."""
        import httpx

        if self.env.get("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS", "False") == "True":
            response = httpx.get(f"{self.base_url}/auth/token", timeout=30)
        else:
            passwords = json.loads(Path(self.env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"]).read_text())
            response = httpx.post(
                f"{self.base_url}/auth/token", json={"username": "admin", "password": passwords["admin"]}, timeout=30
            )
        response.raise_for_status()
        return str(response.json()["access_token"])

    def wait_run(self, dag_id: str, run_id: str, timeout_s: float = 1500, on_poll: Any = None) -> str:
        """Wait for the run to finish; returns its state. ``on_poll()`` is called between polls."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            rows = self.query("SELECT state FROM dag_run WHERE dag_id = %s AND run_id = %s", (dag_id, run_id))
            if rows and rows[0][0] in ("success", "failed"):
                return str(rows[0][0])
            if on_poll is not None:
                on_poll()
            time.sleep(2)
        raise RuntimeError(f"{dag_id} {run_id} did not finish in {timeout_s} s")

    def task_instances(self, dag_id: str, run_id: str) -> list[dict[str, Any]]:
        rows = self.query(
            "SELECT task_id, map_index, state, try_number, start_date, end_date FROM task_instance "
            "WHERE dag_id = %s AND run_id = %s ORDER BY task_id, map_index",
            (dag_id, run_id),
        )
        keys = ("task_id", "map_index", "state", "try_number", "start_date", "end_date")
        return [dict(zip(keys, r, strict=False)) for r in rows]

    def xcom(self, dag_id: str, run_id: str, task_id: str, map_index: int = -1) -> Any:
        """The return value of one task instance (``None`` if it returned nothing)."""
        return self.xcoms(dag_id, run_id).get((task_id, map_index))

    def xcoms(self, dag_id: str, run_id: str) -> dict[tuple[str, int], Any]:
        """The return values of a run's task instances, by (task id, map index)."""
        rows = self.query(
            "SELECT task_id, map_index, value FROM xcom WHERE dag_id = %s AND run_id = %s AND key = 'return_value'",
            (dag_id, run_id),
        )
        return {
            (task_id, map_index): json.loads(value) if isinstance(value, str) else value
            for task_id, map_index, value in rows
        }

    def mark_task_failed(self, dag_id: str, run_id: str, task_id: str) -> None:
        """Mark a task instance failed through the REST API, as a user does in the UI: a running task is then
        terminated by its supervisor (SIGTERM, the operator's ``on_kill``; SIGKILL 5 s later)."""
        self.api(
            "PATCH",
            f"dags/{dag_id}/dagRuns/{quote(run_id, safe='')}/taskInstances/{task_id}",
            json={"new_state": "failed"},
        )

    def task_logs(self) -> list[Path]:
        return [p for p in (self.home / "logs").rglob("*") if p.is_file()]


API_PORT_BASE = 18280


def _worker_index() -> int:
    """This pytest-xdist worker's number (``gw1`` → 1; 0 outside xdist). Each worker picks API ports from its own
    block: two clusters starting at once on different workers would otherwise both find the same port free and
    race to bind it (the api-server starts many seconds after the port is picked)."""
    return int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)


@contextmanager
def airflow_cluster(
    stack: Any, env: dict[str, str], dags: list[Path], *, parallelism: int = 4, overrides: dict[str, str] | None = None
) -> Iterator[AirflowCluster]:
    """Start Airflow with ``dags`` (files, or folders such as ``sql/``, copied into a fresh DAGs folder) and
    ``env`` (connections etc.); stop it and drop its metadata database afterwards.

    :param overrides: settings applied last (e.g. the simple auth manager's users instead of all-admins).
    """
    home = Path(env.get("LAKEHOUSE_TEST_TMP") or "/tmp") / f"airflow-{uuid.uuid4().hex[:8]}"
    dags_folder = home / "dags"
    dags_folder.mkdir(parents=True)
    for dag in dags:
        if dag.is_dir():
            shutil.copytree(dag, dags_folder / dag.name)
        else:
            shutil.copy(dag, dags_folder / dag.name)
    database = f"airflow_{uuid.uuid4().hex[:8]}"
    creds = stack.credentials()
    server = stack.postgres_server()
    with server.admin_connect() as admin:
        admin.execute(f'CREATE DATABASE "{database}" OWNER lakehouse')
    password = quote(creds["pg_password"], safe="")  # the stack's password holds a space, quotes, @ and %
    url = f"postgresql+psycopg://lakehouse:{password}@{LOOPBACK}:{stack.postgres_port()}/{database}"
    port = pick_port(API_PORT_BASE + 20 * _worker_index())
    cluster_env = dict(env)
    for key in list(cluster_env):
        if key.startswith("AIRFLOW__DATABASE__"):
            del cluster_env[key]
    cluster_env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags_folder),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": str(parallelism),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": url,
            "AIRFLOW__API__HOST": LOOPBACK,
            "AIRFLOW__API__PORT": str(port),
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://{LOOPBACK}:{port}/execution/",
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_hex(32),
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
            "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "2",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "10",
            # The DAG files do not change during a test: parsed once, not again every 30 s (each parse is a
            # forked process of about 1 CPU-s, some 40 in a seven-minute test)
            "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "3600",
            "AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT": "120",
            "SPARK_LOCAL_IP": LOOPBACK,
            "PATH": f"{Path(sys.executable).parent}:{env.get('PATH', os.environ.get('PATH', ''))}",
        }
    )
    cluster_env.update(overrides or {})
    cluster = AirflowCluster(home, cluster_env, port, url)
    try:
        cluster.cli("db", "migrate", timeout=600)
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        with server.admin_connect() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
