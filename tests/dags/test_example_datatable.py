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
        "id": 1, "name": "Ada", "signed_up": "2024-01-15", "lifetime_value": 1250.5,
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
