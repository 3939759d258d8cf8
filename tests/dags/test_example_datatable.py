"""The Data Table example DAG, run for real with ``airflow dags test`` on the local stack."""

from __future__ import annotations

import json

import pytest

from tests.dags.runs import DagTestRuns, assert_no_secret_shown

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_example_datatable_dag(dag_runs: DagTestRuns) -> None:
    run = dag_runs.get("example_datatable", "local")  # the engine is the lake's, which this DAG does not use
    password = json.loads(run.env["AIRFLOW_CONN_DATATABLE_MAIN"])["password"]
    assert all(ch in password for ch in " '\"@%"), "the stack's password must exercise quoting"

    xcoms = run.xcoms
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

    # The password appears nowhere: not in the CLI output (which carries the task logs), log files, XCom or
    # OpenLineage events ...
    assert_no_secret_shown(run)
    # ... nor in the rendered template fields Airflow stores and shows in the UI
    rendered = read_rendered_fields("example_datatable", run.run_id, run.env)
    assert {"create_table", "insert_rows", "read_one", "count_rows"} <= set(rendered)
    assert rendered["read_one"]["datatable"] == "main:analytics"
    assert password not in json.dumps(rendered, default=str)


def read_rendered_fields(dag_id: str, run_id: str, env: dict[str, str]) -> dict[str, dict]:
    """Rendered template fields of the DAG's run ``run_id``, read from the Airflow metadata DB."""
    import subprocess
    import sys

    script = (
        "import json, sys\n"
        "from airflow.models.renderedtifields import RenderedTaskInstanceFields as R\n"
        "from airflow.utils.session import create_session\n"
        "with create_session() as s:\n"
        "    rows = s.query(R).filter(R.dag_id == sys.argv[1], R.run_id == sys.argv[2]).all()\n"
        "    print(json.dumps({r.task_id: r.rendered_fields for r in rows}, default=str))\n"
    )
    result = subprocess.run([sys.executable, "-c", script, dag_id, run_id], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])
