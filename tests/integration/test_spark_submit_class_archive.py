"""spark-submit tasks and the drivers' class-data archive, on the real stack: a lake can turn it off. That the first
drivers write one whole archive and a later driver maps it is proven under a real scheduler, with two first drivers
started together (``tests/scheduler/test_real_scheduler.py``,
``test_spark_submit_tasks_started_together_share_one_class_archive``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.dags.runs import lake_env

RUN_HOOK = """
import json, sys
from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook
response = DucklakeHook(ducklake="main").run("SELECT 40 + 2 AS answer")
print(json.dumps(response["result"]["commands"][-1]["rows"]))
"""


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", RUN_HOOK], env=env, capture_output=True, text=True, timeout=600)


def _with_extra(env: dict[str, str], **extra: Any) -> dict[str, str]:
    conn = json.loads(env["AIRFLOW_CONN_DUCKLAKE_MAIN"])
    conn["extra"] = {**conn["extra"], **extra}
    return dict(env, AIRFLOW_CONN_DUCKLAKE_MAIN=json.dumps(conn))


@pytest.mark.integration
@pytest.mark.slow
def test_a_lake_can_turn_the_archive_off(stack: Any, stack_env: dict[str, str], tmp_path: Path) -> None:
    env, _setup = lake_env(dict(stack_env, XDG_CACHE_HOME=str(tmp_path / "cache")), "spark_local")
    result = _run(_with_extra(env, spark_class_archive="false"))
    assert result.returncode == 0, result.stderr[-4000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [{"answer": 42}]
    assert not (tmp_path / "cache" / "airflow-provider-lakehouse").exists()
