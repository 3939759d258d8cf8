"""S3A credentials never leave the driver's memory: not on any command line while a spark-submit lake task runs
(sampled with ``ps``), not in the Spark UI's properties, not in the task's output or response."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from typing import Any

import pytest

from tests.dags.runs import lake_env

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _sample(stop: threading.Event, seen: list[str]) -> None:
    while not stop.is_set():
        seen.append(subprocess.run(["ps", "-e", "-ww", "-o", "args="], capture_output=True, text=True).stdout)
        for port in range(4040, 4045):  # the submitted driver's Spark UI, while it runs
            try:
                import httpx

                apps = httpx.get(f"http://127.0.0.1:{port}/api/v1/applications", timeout=1).json()
                for app in apps:
                    seen.append(
                        httpx.get(
                            f"http://127.0.0.1:{port}/api/v1/applications/{app['id']}/environment", timeout=2
                        ).text
                    )
                    seen.append(
                        httpx.get(
                            f"http://127.0.0.1:{port}/api/v1/applications/{app['id']}/sql",
                            params={"details": "true"},
                            timeout=2,
                        ).text
                    )
            except Exception:
                continue
        time.sleep(0.2)


def test_spark_submit_with_s3a_keeps_s3_credentials_off_command_lines_and_ui(
    stack: Any, stack_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from airflow_provider_lakehouse.hooks.ducklake import DucklakeHook

    stack.ensure_s3a_jars(log=lambda _m: None)
    env, _setup = lake_env(dict(stack_env, **stack.env()), "spark_local")
    for key in ("AIRFLOW_CONN_DUCKLAKE_MAIN", "AIRFLOW_CONN_LAKEHOUSE_S3", "AIRFLOW_CONN_SPARK_LOCAL"):
        monkeypatch.setenv(key, env[key])
    secrets = [
        json.loads(env["AIRFLOW_CONN_LAKEHOUSE_S3"])["password"],
        json.loads(env["AIRFLOW_CONN_DUCKLAKE_MAIN"])["password"],
    ]
    seen: list[str] = []
    stop = threading.Event()
    sampler = threading.Thread(target=_sample, args=(stop, seen))
    sampler.start()
    try:
        response = DucklakeHook(ducklake="main").run(
            "CREATE TABLE t AS SELECT i AS id FROM range(1000) r(i); SELECT count(*) AS n FROM t; "
            "SELECT sum(id) AS total FROM t WHERE id > 10",
            autocommit=True,
        )
    finally:
        stop.set()
        sampler.join()
    assert response["engine"] == "spark_submit"
    last = response["result"]["commands"][-1]
    assert last["rows"] == [{"total": sum(range(11, 1000))}] and last["scans"][0]["reader"] == "spark-parquet"
    assert any("spark-submit" in snapshot or "SparkSubmit" in snapshot for snapshot in seen), "ps saw the job"
    assert any("sparkProperties" in snapshot for snapshot in seen), "the Spark UI's properties were read"
    output = capfd.readouterr()
    for secret in secrets:
        assert all(secret not in text for text in seen), "a credential was on a command line or in the Spark UI"
        assert secret not in json.dumps(response) and secret not in output.out + output.err
