"""spark-submit tasks and the drivers' class-data archive, on the real stack: the first task's driver JVM writes it,
the next one maps it, and a lake can turn it off."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.dags.test_example_ducklake import lake_env

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
def test_the_first_driver_writes_the_archive_and_the_next_one_maps_it(
    stack: Any, stack_env: dict[str, str], tmp_path: Path
) -> None:
    env, _setup = lake_env(dict(stack_env, XDG_CACHE_HOME=str(tmp_path / "cache")), "spark_local")
    archives = tmp_path / "cache" / "airflow-provider-lakehouse" / "class-archives"

    first = _run(env)
    assert first.returncode == 0, first.stderr[-4000:]
    assert json.loads(first.stdout.strip().splitlines()[-1]) == [{"answer": 42}]
    written = list(archives.glob("spark-driver-*.jsa"))
    assert len(written) == 1 and written[0].stat().st_size > 10_000_000  # Spark's classes, not a stub
    assert not list(archives.glob(".*.partial"))

    # -Xshare:on makes the JVM refuse to start unless it can map the archive: the second task proves it does.
    conf = json.loads(env["AIRFLOW_CONN_DUCKLAKE_MAIN"])["extra"].get("spark_conf") or {}
    strict = _with_extra(env, spark_conf={**conf, "spark.driver.extraJavaOptions": "-Xshare:on"})
    second = _run(strict)
    assert second.returncode == 0, second.stderr[-4000:]
    assert json.loads(second.stdout.strip().splitlines()[-1]) == [{"answer": 42}]
    assert list(archives.glob("spark-driver-*.jsa")) == written  # used, not written again


@pytest.mark.integration
@pytest.mark.slow
def test_a_lake_can_turn_the_archive_off(stack: Any, stack_env: dict[str, str], tmp_path: Path) -> None:
    env, _setup = lake_env(dict(stack_env, XDG_CACHE_HOME=str(tmp_path / "cache")), "spark_local")
    result = _run(_with_extra(env, spark_class_archive="false"))
    assert result.returncode == 0, result.stderr[-4000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [{"answer": 42}]
    assert not (tmp_path / "cache" / "airflow-provider-lakehouse").exists()
