"""Local Spark and spark-submit without the full pyspark: a clear error naming the ``spark`` extra.

The base install has only ``pyspark-client``: the same ``pyspark/`` package as the full ``pyspark`` minus
``bin/`` (``spark-submit``) and ``jars/``. The layouts below copy that difference (checked against a venv with
only pyspark-client; tests/packaging/test_airflow_versions.py checks it again in such a venv).
"""

from __future__ import annotations

import importlib.machinery
from pathlib import Path

import pytest

from airflow_provider_lakehouse.exceptions import SPARK_EXTRA_INSTALL, SparkNotInstalledError
from airflow_provider_lakehouse.spark import session


def _pyspark_layout(root: Path, *, full: bool) -> Path:
    package = root / "pyspark"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    if full:
        (package / "bin").mkdir()
        (package / "bin" / "spark-submit").write_text("#!/bin/sh\n")
        (package / "jars").mkdir()
        (package / "jars" / "spark-core_2.13-4.3.0.jar").write_bytes(b"")
    return package


@pytest.fixture
def installed_pyspark(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """Make ``find_spec('pyspark')`` answer with a package laid out by the test."""
    monkeypatch.delenv("SPARK_HOME", raising=False)

    def install(*, full: bool) -> Path:
        package = _pyspark_layout(tmp_path / ("full" if full else "client"), full=full)
        spec = importlib.machinery.ModuleSpec("pyspark", None, origin=str(package / "__init__.py"))
        monkeypatch.setattr(session, "find_spec", lambda name: spec if name == "pyspark" else None)
        return package

    return install


def test_client_only_pyspark_has_no_spark_home(installed_pyspark) -> None:
    installed_pyspark(full=False)
    assert session.spark_home() is None


def test_full_pyspark_is_its_own_spark_home(installed_pyspark) -> None:
    package = installed_pyspark(full=True)
    assert session.spark_home() == str(package)


def test_spark_home_variable_wins(installed_pyspark, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    installed_pyspark(full=False)
    monkeypatch.setenv("SPARK_HOME", str(tmp_path / "spark-4.0.1-bin-hadoop3"))
    assert session.spark_home() == str(tmp_path / "spark-4.0.1-bin-hadoop3")


def test_local_session_without_full_pyspark_names_the_extra(installed_pyspark) -> None:
    installed_pyspark(full=False)
    with pytest.raises(SparkNotInstalledError) as raised:
        session.local_session({"spark.master": "local[1]"})  # raises before PySpark is imported or a JVM starts
    message = str(raised.value)
    assert SPARK_EXTRA_INSTALL in message
    assert "pip install 'airflow-provider-lakehouse[spark]'" in message
    assert "Local Spark" in message and "spark_connect" in message


def test_spark_submit_missing_from_path_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SparkNotInstalledError, match=r"no 'spark-submit' on PATH.*\[spark\]"):
        session.require_spark_submit("spark-submit")
    launcher = tmp_path / "spark-submit"
    launcher.write_text("#!/bin/sh\n")
    launcher.chmod(0o755)
    assert session.require_spark_submit("spark-submit") == str(launcher)
