"""The Data Table example DAG, run for real with ``airflow dags test`` on the local stack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_provider_lakehouse.devstack.commands import read_xcoms
from tests.conftest import run_airflow

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_example_datatable_dag(stack_env: dict[str, str], airflow_db: None) -> None:
    password = json.loads(stack_env["AIRFLOW_CONN_DATATABLE_MAIN"])["password"]
    assert all(ch in password for ch in " '\"@%"), "the stack's password must exercise quoting"

    result = run_airflow(stack_env, "dags", "test", "example_datatable")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-5000:]

    xcoms = read_xcoms("example_datatable", stack_env)
    assert xcoms["insert_rows"] == [{"id": 1}, {"id": 2}, {"id": 3}]
    assert xcoms["read_one"] == {
        "id": 1,
        "name": "Ada",
        "signed_up": "2024-01-15",
        "lifetime_value": 1250.5,
        "profile": {"tier": "gold", "tags": ["early"]},
    }
    assert xcoms["count_rows"] == 3
    assert xcoms["signed_up_since"] == [{"name": "Grace"}, {"name": "Robert'); DROP TABLE customers;--"}]
    assert xcoms.get("create_table") is None  # fetch="none"

    # The password appears nowhere: not in the CLI output (which carries the task logs) nor in log files.
    assert password not in output
    logs = Path(stack_env["AIRFLOW_HOME"]) / "logs"
    for log_file in logs.rglob("*") if logs.exists() else []:
        if log_file.is_file():
            assert password not in log_file.read_text(errors="replace"), log_file
    # ... nor in any XCom
    assert password not in json.dumps(xcoms)
    # ... nor in the rendered template fields Airflow stores and shows in the UI
    rendered = read_rendered_fields("example_datatable", stack_env)
    assert {"create_table", "insert_rows", "read_one", "count_rows"} <= set(rendered)
    assert rendered["read_one"]["datatable"] == "main:analytics"
    assert password not in json.dumps(rendered, default=str)


def read_rendered_fields(dag_id: str, env: dict[str, str]) -> dict[str, dict]:
    """Rendered template fields of the DAG's latest run, read from the Airflow metadata DB."""
    import subprocess
    import sys

    script = (
        "import json, sys\n"
        "from airflow.models import DagRun\n"
        "from airflow.models.renderedtifields import RenderedTaskInstanceFields as R\n"
        "from airflow.utils.session import create_session\n"
        "with create_session() as s:\n"
        "    run = s.query(DagRun).filter(DagRun.dag_id == sys.argv[1]).order_by(DagRun.id.desc()).first()\n"
        "    rows = s.query(R).filter(R.dag_id == sys.argv[1], R.run_id == run.run_id).all()\n"
        "    print(json.dumps({r.task_id: r.rendered_fields for r in rows}, default=str))\n"
    )
    result = subprocess.run([sys.executable, "-c", script, dag_id], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])
