"""The session's example DAG runs (see ``tests/dags/runs.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.dags.runs import DagTestRuns


@pytest.fixture(scope="session")
def dag_runs(
    stack: Any, stack_env: dict[str, str], airflow_db: None, tmp_path_factory: pytest.TempPathFactory
) -> DagTestRuns:
    return DagTestRuns(stack, stack_env, tmp_path_factory.mktemp("dag-runs"))
