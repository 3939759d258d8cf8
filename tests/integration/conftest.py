"""Fixtures shared by the integration tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import referee
from tests.referee import LakeSetup
from tests.support.local_spark import local_test_spark


@pytest.fixture(params=["sqlite", "postgres"])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> LakeSetup:
    if request.param == "sqlite":
        return referee.sqlite_lake(tmp_path)
    return referee.postgres_lake(request.getfixturevalue("stack"))


@pytest.fixture
def lakes(tmp_path: Path) -> tuple[LakeSetup, LakeSetup]:
    """Two empty SQLite-catalog lakes: ``ours`` for the Spark side of a comparison, ``theirs`` for DuckDB's."""
    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    return referee.sqlite_lake(tmp_path / "ours"), referee.sqlite_lake(tmp_path / "theirs")


@pytest.fixture(scope="module")
def stackless_spark() -> Iterator[Any]:
    """Local Spark for one test module that reads only local lakes (no server; the S3A jars on its class path all
    the same, for the process's later modules: see tests/support/local_spark.py)."""
    session = local_test_spark(shuffle_partitions=2)
    yield session
    session.stop()


@pytest.fixture(scope="module")
def spark(stack: Any) -> Iterator[Any]:
    """Local Spark for one test module, with the S3A jars (S3 lakes read by Spark itself)."""
    session = local_test_spark(shuffle_partitions=4)
    yield session
    session.stop()  # PySpark allows no Spark Connect session in a process with a classic one


@pytest.fixture(scope="module")
def con(lake: LakeSetup) -> Any:
    """DuckDB with the test module's ``lake`` attached and in use: the referee."""
    connection = referee.connect()
    lake.attach(connection)
    connection.sql("USE lake")
    return connection
