"""Shared fixtures. The local stack (PostgreSQL + SeaweedFS S3) is started once per session by the
``stack`` fixture and stopped at the end if this session started it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_lakehouse.devstack.stack import Stack

REPO_ROOT = Path(__file__).resolve().parents[1]

# Point Airflow at the stack's home before anything imports it (an import reads AIRFLOW_HOME once).
os.environ.update(Stack().airflow_env())
# Every lake read in every test checks the Spark types the driver derives against Spark's own (see driver.py)
os.environ["LAKEHOUSE_VERIFY_READ_TYPES"] = "1"  # driver.VERIFY_READ_TYPES_ENV
# Every JVM the tests start (local Spark, spark-submit drivers and executors, the stack's Spark servers) compiles
# with the client compiler only. The tests' JVMs live seconds to minutes on tiny data, and the optimizing compiler's
# threads spent a quarter of their CPU on two cores: tests/integration/test_spark_sql.py's SQLite half took 167 CPU
# seconds with it and 126 without (2026-11-28). Benchmarks do not import this file and keep the JVM's defaults.
# The client compiler alone shrinks the JVM's default code cache from 240 MB to 48 MB, which the real-scheduler
# test's Connect server filled with the TPC-DS pipeline's generated classes ("VirtualMachineError: Out of space in
# CodeCache for adapters" failed two tasks at once): the cache keeps its usual size.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
if TEST_JVM_OPTIONS not in os.environ.get("JAVA_TOOL_OPTIONS", ""):  # pytest-xdist workers inherit it
    os.environ["JAVA_TOOL_OPTIONS"] = f"{os.environ.get('JAVA_TOOL_OPTIONS', '')} {TEST_JVM_OPTIONS}".strip()


#: Tests that share state no uuid separates: the stack's Airflow home (one SQLite metadata database, which two
#: ``airflow dags test`` runs at once would lock each other out of) and the example DAGs' fixed Data Table tables
#: (``customers``, schema ``shop``), which the UI's Airflow writes too.
AIRFLOW_HOME_GROUP = ("tests/dags/", "tests/ui/", "tests/packaging/test_airflow_versions.py")


def worker_group(nodeid: str) -> str:
    """Which tests one worker runs together under ``pytest -n 2`` (devstack test): the tests above as one group,
    every other module as a group of its own, so that its module-scoped fixtures (a Spark session, a lake
    written once and read by every test) are set up once, on one worker, as in a run without workers."""
    module = nodeid.split("::", 1)[0]
    return "airflow_home" if module.startswith(AIRFLOW_HOME_GROUP) else module


#: The longest groups (minutes each in a two-worker run), handed out first: the workers take groups in collection
#: order, and the scheduler tests (3 real Airflow clusters) and the Spark 4.0 run came last alphabetically, leaving
#: one worker alone with them at the end while the other had nothing left.
LONGEST_GROUPS_FIRST = (
    "airflow_home",
    "tests/scheduler/test_real_scheduler.py",
    "tests/packaging/test_spark_versions.py",
    "tests/integration/test_connect_engine.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist workers only, put the :data:`LONGEST_GROUPS_FIRST` first (a stable sort: every other
    test keeps its place); a plain run keeps pytest's order."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {group: position for position, group in enumerate(LONGEST_GROUPS_FIRST)}
    items.sort(key=lambda item: rank.get(worker_group(item.nodeid), len(rank)))


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: without xdist (plain pytest) it is never called
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    # Not xdist_group marks with --dist loadgroup: on pytest 9.2, pytest-xdist 3.8 drops them silently (it tags
    # tests by rewriting a node id attribute pytest no longer reads; pytest-dev/pytest-xdist#1386, open). This
    # is --dist loadscope with worker_group's scopes instead of modules.
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkerGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

    return ByWorkerGroup(config, log)


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
        from tests import referee

        referee.drop_made_lakes()  # the lakes this process made: the stack's state outlives the session
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
