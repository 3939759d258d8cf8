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


def _cached_s3a_jars() -> str:
    """The S3A jars the stack fetched before, if any, for a local session that needs no stack. A test process keeps
    the JVM its first local session started, and a later session's ``spark.jars`` do not reach that JVM's own
    classpath: without them on the first session, a later S3A test in the same process would find no S3A."""
    from airflow_provider_lakehouse.devstack.jars import cached_s3a_jars
    from airflow_provider_lakehouse.devstack.spark import spark_home
    from airflow_provider_lakehouse.devstack.stack import default_state_dir

    return ",".join(str(j) for j in cached_s3a_jars(default_state_dir() / "jars", spark_home() / "jars"))


@pytest.fixture(scope="module")
def stackless_spark() -> Iterator[Any]:
    """Local Spark for one test module that reads only local lakes (no stack; the S3A jars if they are cached)."""
    from airflow_provider_lakehouse.spark.session import local_session

    conf = {"spark.master": "local[2]", "spark.sql.shuffle.partitions": "2"}
    jars = _cached_s3a_jars()
    session = local_session({**conf, "spark.jars": jars} if jars else conf)
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
