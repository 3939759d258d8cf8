"""Shared fixtures. The local stack (PostgreSQL + SeaweedFS S3) is started once per session by the
``stack`` fixture and stopped at the end if this session started it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_provider_lakehouse.devstack.stack import Stack

REPO_ROOT = Path(__file__).resolve().parents[1]

# Point Airflow at the stack's home before anything imports it (an import reads AIRFLOW_HOME once).
os.environ.update(Stack().airflow_env())
# Every lake read in every test checks the Spark types the driver derives against Spark's own (see driver.py)
os.environ["LAKEHOUSE_VERIFY_READ_TYPES"] = "1"  # driver.VERIFY_READ_TYPES_ENV


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    """The running local stack; its connections are exported into this process's environment."""
    stack = Stack()
    started = stack.up(log=lambda _msg: None)
    saved = dict(os.environ)
    os.environ.update(stack.env())
    try:
        yield stack
    finally:
        os.environ.clear()
        os.environ.update(saved)
        if started:
            stack.down(log=lambda _msg: None)


@pytest.fixture(scope="session")
def stack_env(stack: Stack) -> dict[str, str]:
    """A full environment for subprocesses (airflow CLI) pointed at the stack."""
    return dict(os.environ, **stack.env())


@pytest.fixture(scope="session")
def airflow_db(stack: Stack) -> None:
    stack.ensure_airflow_db(log=lambda _msg: None)


def run_airflow(env: dict[str, str], *args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    """Run the ``airflow`` CLI of this interpreter and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "airflow", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO_ROOT,
    )
