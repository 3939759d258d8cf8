"""Fixtures shared by the integration tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import referee
from tests.referee import LakeSetup


@pytest.fixture(params=["sqlite", "postgres"])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> LakeSetup:
    if request.param == "sqlite":
        return referee.sqlite_lake(tmp_path)
    return referee.postgres_lake(request.getfixturevalue("stack"))


@pytest.fixture(scope="module")
def stackless_spark() -> Iterator[Any]:
    """Local Spark for one test module that reads only local lakes (no stack, no S3A jars)."""
    from airflow_provider_lakehouse.spark.session import local_session

    session = local_session({"spark.master": "local[2]", "spark.sql.shuffle.partitions": "2"})
    yield session
    session.stop()


@pytest.fixture(scope="module")
def spark(stack: Any) -> Iterator[Any]:
    """Local Spark for one test module, with the S3A jars (S3 lakes read by Spark itself)."""
    from airflow_provider_lakehouse.spark.session import local_session

    jars = ",".join(str(j) for j in stack.ensure_s3a_jars(log=lambda _m: None))
    session = local_session({"spark.master": "local[2]", "spark.sql.shuffle.partitions": "4", "spark.jars": jars})
    yield session
    session.stop()  # PySpark allows no Spark Connect session in a process with a classic one


@pytest.fixture(scope="module")
def con(lake: LakeSetup) -> Any:
    """DuckDB with the test module's ``lake`` attached and in use: the referee."""
    connection = referee.connect()
    lake.attach(connection)
    connection.sql("USE lake")
    return connection
