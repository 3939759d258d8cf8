"""The local stack tool: idempotent start, stale PID files, ports in use, clean stop."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psycopg
import pytest

from airflow_provider_lakehouse.devstack.ports import is_free
from airflow_provider_lakehouse.devstack.stack import APP_ROLE, DATA_TABLES_DB, Stack

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _wait_gone(pid: int, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)


def _can_query(stack: Stack) -> bool:
    creds = stack.credentials()
    with psycopg.connect(
        host="127.0.0.1",
        port=stack.postgres_port(),
        user=APP_ROLE,
        password=creds["pg_password"],
        dbname=DATA_TABLES_DB,
    ) as conn:
        return conn.execute("SELECT 1").fetchone() == (1,)


def test_second_stack_survives_restarts_stale_pids_and_busy_ports(stack: Stack, tmp_path: Path) -> None:
    other = Stack(tmp_path / "state")
    try:
        # The session stack holds the preferred ports, so this one must choose others.
        assert other.up(log=lambda _m: None) is True
        assert other.postgres_port() != stack.postgres_port()
        assert other.s3_endpoint() != stack.s3_endpoint()
        assert _can_query(other)
        other.seaweed_client().put_object(Bucket="landing", Key="probe.txt", Body=b"hi")

        # Started twice: nothing new is started.
        assert other.up(log=lambda _m: None) is False

        # Both servers die without cleaning up: PID files are stale now.
        weed_pid = int((other.state_dir / "seaweed" / "weed.pid").read_text())
        pg_pid = int((other.postgres_data_dir() / "postmaster.pid").read_text().splitlines()[0])
        os.killpg(weed_pid, signal.SIGKILL)
        os.kill(pg_pid, signal.SIGKILL)
        _wait_gone(weed_pid)
        _wait_gone(pg_pid)
        assert (other.postgres_data_dir() / "postmaster.pid").exists()
        assert other.up(log=lambda _m: None) is True
        assert _can_query(other)
        body = other.seaweed_client().get_object(Bucket="landing", Key="probe.txt")["Body"].read()
        assert body == b"hi"  # data survived the crash

        # A PID file pointing at an unrelated live process is not mistaken for our server.
        other.down(log=lambda _m: None)
        (other.state_dir / "seaweed" / "weed.pid").write_text(str(os.getpid()))
        assert other.up(log=lambda _m: None) is True
        assert other.is_up()
    finally:
        status_ports = (other.postgres_port(), int(other.s3_endpoint().rsplit(":", 1)[1]))
        other.down(log=lambda _m: None)
    assert other.status()["postgres"] == "stopped" and other.status()["s3"] == "stopped"
    assert all(is_free(port) for port in status_ports)
    assert not list((other.runtime_dir / "pg").glob(".s.PGSQL.*"))
