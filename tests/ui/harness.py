"""A real Airflow with the Lakehouse plugin, for the UI's API and browser tests: the stack's PostgreSQL and S3,
a fresh lake, the simple auth manager with an admin and a viewer, and the example DAGs run by the scheduler.

``python -m tests.ui.harness`` starts it and keeps it up (for looking at the UI by hand) until interrupted.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import REPO_ROOT
from tests.dags.runs import lake_env
from tests.referee import LakeSetup
from tests.support.airflow_cluster import AirflowCluster, airflow_cluster

EXAMPLES = REPO_ROOT / "dags_examples"
DAGS = [
    EXAMPLES / "example_ducklake_operations.py",
    EXAMPLES / "sql",
    EXAMPLES / "example_ducklake_sentiment.py",
    EXAMPLES / "example_datatable.py",
    EXAMPLES / "example_lineage_consumer.py",
    Path(__file__).parent / "dags" / "lakehouse_ui_report.py",
]
#: run in this order (the report reads what the first two wrote)
RUNS = ["example_ducklake_operations", "example_ducklake_sentiment", "example_datatable", "lakehouse_ui_report"]
#: touches no lake, so it runs beside the first lake run instead of after it (the lake runs keep their snapshots)
BESIDE_FIRST_RUN = "example_datatable"


@dataclass
class LakehouseAirflow:
    cluster: AirflowCluster
    lake: LakeSetup
    passwords: dict[str, str]
    runs: dict[str, str] = field(default_factory=dict)  # dag id -> run id

    @property
    def url(self) -> str:
        return self.cluster.base_url

    def token(self, user: str) -> str:
        import httpx

        response = httpx.post(
            f"{self.url}/auth/token", json={"username": user, "password": self.passwords[user]}, timeout=30
        )
        response.raise_for_status()
        return str(response.json()["access_token"])

    def get(self, path: str, user: str | None = "admin", **params: Any) -> Any:
        import httpx

        headers = {"Authorization": f"Bearer {self.token(user)}"} if user else {}
        # params only when given: httpx would replace a query string written in ``path`` with an empty one
        return httpx.get(
            f"{self.url}/lakehouse/api/{path.lstrip('/')}", headers=headers, params=params or None, timeout=120
        )


def plugins_folder(workdir: Path) -> Path:
    """Where Airflow looks for plugin files: empty when the installed provider registers the plugin through its
    ``airflow.plugins`` entry point, else one file importing it (a source checkout not reinstalled since)."""
    from importlib.metadata import entry_points

    folder = workdir / "plugins"
    folder.mkdir(exist_ok=True)
    registered = any(e.value.startswith("airflow_provider_lakehouse.") for e in entry_points(group="airflow.plugins"))
    if not registered:
        (folder / "lakehouse_plugin.py").write_text(
            "from airflow_provider_lakehouse.plugins.lakehouse import LakehousePlugin  # noqa: F401\n"
        )
    return folder


@contextmanager
def lakehouse_airflow(stack: Any, stack_env: dict[str, str], workdir: Path) -> Iterator[LakehouseAirflow]:
    # Over Spark Connect: with in-process Spark every task started a JVM, and these runs were the suite's
    # longest setup (192 s).
    stack.start_spark_connect(log=lambda _m: None)
    env, setup = lake_env(dict(stack_env, **stack.env()), "spark_connect_local")
    passwords = {"admin": secrets.token_urlsafe(12), "viewer": secrets.token_urlsafe(12)}
    password_file = workdir / "passwords.json"
    password_file.write_text(json.dumps(passwords))
    overrides = {
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(plugins_folder(workdir)),
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin,viewer:viewer",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(password_file),
        "AIRFLOW__CORE__LAZY_LOAD_PLUGINS": "False",
        "AIRFLOW__API__WORKERS": "1",
    }
    with airflow_cluster(stack, env, DAGS, overrides=overrides) as cluster:
        cluster.wait_parsed(RUNS)
        harness = LakehouseAirflow(cluster, setup, passwords)
        beside = cluster.trigger(BESIDE_FIRST_RUN)
        for dag_id in RUNS:
            run_id = beside if dag_id == BESIDE_FIRST_RUN else cluster.trigger(dag_id)
            state = cluster.wait_run(dag_id, run_id, timeout_s=900)
            if state != "success":
                raise RuntimeError(f"{dag_id} {run_id}: {state} {cluster.task_instances(dag_id, run_id)}")
            harness.runs[dag_id] = run_id
        add_inlined_rows(setup)
        yield harness


def add_inlined_rows(setup: LakeSetup) -> None:
    """DuckDB writes into the lake too: two rows small enough to be inlined in the catalog, and a delete from a
    data file, so the views also show inlined rows and a DuckDB-written delete file."""
    from tests import referee

    con = referee.connect()
    setup.attach(con, data_inlining_row_limit=10)
    con.sql(
        "INSERT INTO lake.main.messages VALUES ('Added by DuckDB', 'duck', '2026-01-04', 'positive'), "
        "('Also inlined', 'duck', '2026-01-04', NULL)"
    )
    con.sql("DELETE FROM lake.main.messages WHERE author = 'ben'")
    con.close()


def attach(info_file: Path) -> LakehouseAirflow:
    """The Airflow a running ``python -m tests.ui.harness`` serves (to rerun the UI tests without a new one)."""
    from airflow_provider_lakehouse.ducklake.store import PostgresStore
    from tests import referee

    info = json.loads(info_file.read_text())
    env = info["env"]
    conn = json.loads(env["AIRFLOW_CONN_DUCKLAKE_MAIN"])
    lake = LakeSetup(
        PostgresStore(referee.postgres_spec(conn), metadata_schema=conn["extra"]["metadata_schema"]),
        conn["extra"]["data_path"],
        s3=referee.s3_spec(json.loads(env["AIRFLOW_CONN_LAKEHOUSE_S3"])),
    )
    cluster = AirflowCluster(Path(info["home"]), env, int(info["api_port"]), info["metadata_url"])
    return LakehouseAirflow(cluster, lake, info["passwords"], info["runs"])


def main() -> None:  # pragma: no cover - a manual tool
    import os
    import tempfile

    from airflow_provider_lakehouse.devstack.stack import Stack

    stack = Stack()
    stack.up(log=print)
    env = dict(os.environ, **stack.env())
    with lakehouse_airflow(stack, env, Path(tempfile.mkdtemp())) as harness:
        info = {
            "url": harness.url,
            "passwords": harness.passwords,
            "runs": harness.runs,
            "home": str(harness.cluster.home),
            "env": harness.cluster.env,
            "api_port": harness.cluster.api_port,
            "metadata_url": harness.cluster.metadata_url,
        }
        Path("/tmp/lakehouse-ui.json").write_text(json.dumps(info))
        print(json.dumps(info), flush=True)
        while not Path("/tmp/lakehouse-ui.stop").exists():
            time.sleep(2)


if __name__ == "__main__":
    main()
