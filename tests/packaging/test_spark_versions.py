"""The provider on the other Spark releases it declares (``pyspark>=4.0,<5``): the Spark tests that touch what
changed between them, run again on another pyspark.

The rest of the suite runs on the tested set's Spark (constraints/constraints-3.11.txt). Here each version in
``LAKEHOUSE_TEST_SPARK_VERSIONS`` (comma-separated; default: the lowest declared, the floor CI keeps honest) is
installed with pip into a folder of its own under the stack's state folder (``--target``, once; about
470 to 490 MB each), put first on ``PYTHONPATH`` so that it shadows the tested set's pyspark, and a subset of the
integration tests runs against it in a child pytest: in-process local Spark, Spark Connect (a server started
from that Spark), spark-submit with S3A (``hadoop-aws`` of that Spark's Hadoop, fetched with ``mvn``), and the
reads, writes and DuckDB semantics whose PySpark APIs changed between releases (Arrow schema conversion,
timestamps, column types of created tables).

The child runs on a stack of its own (a second state folder, other ports): its Spark servers are that Spark's, and
the suite's other tests keep using the session stack's meanwhile. Afterwards that stack's Connect server is asked
for again from this process, and is restarted from the tested set's Spark (``Stack.start_spark_connect``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from airflow_provider_lakehouse.devstack.bootstrap import REPO_ROOT
from airflow_provider_lakehouse.devstack.spark import spark_home
from airflow_provider_lakehouse.devstack.stack import Stack
from airflow_provider_lakehouse.spark.session import client_version, spark_release

pytestmark = [pytest.mark.slow, pytest.mark.integration]

#: the child run: every way the provider runs Spark, and what differed between Spark releases when measured
SUBSET = (
    "tests/integration/test_spark_sql.py::test_dml_script_lands_snapshots_duckdb_reads_identically",
    "tests/integration/test_spark_sql.py::test_a_script_is_one_snapshot_and_reads_its_own_writes_as_duckdb_does",
    "tests/integration/test_spark_sql.py::test_spark_reads_what_duckdb_wrote",
    "tests/integration/test_spark_sql.py::test_parquet_load_is_copied_by_executors_exactly_as_the_query_path_writes_it",
    "tests/integration/test_spark_sql.py::test_s3_lakes_are_read_by_sparks_own_reader_over_s3a",
    "tests/integration/test_spark_sql.py::test_files_in_and_out_on_s3",
    "tests/integration/test_duckdb_functions.py::test_a_created_table_keeps_duckdbs_column_types",
    "tests/integration/test_duckdb_functions.py::test_aggregates_return_duckdbs_values",
    "tests/integration/test_connect_engine.py::test_values_and_passed_through_types_over_spark_connect",
    "tests/integration/test_connect_engine.py::test_s3_lake_with_deletes_is_read_by_sparks_own_reader_over_spark_connect",
    "tests/integration/test_s3a_credentials.py",
)
#: the catalog database does not depend on Spark: the SQLite-catalog half of each parametrized test is enough
SELECTION = "not postgres"


def lowest_spark() -> str:
    """The floor of the ``spark`` extra's ``pyspark>=X`` in pyproject.toml, as a release (``4.0`` → ``4.0.0``)."""
    extras = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (requirement,) = [r for r in extras["spark"] if r.startswith("pyspark>=")]
    floor = re.match(r"pyspark>=([0-9.]+)", requirement).group(1)
    return floor if floor.count(".") == 2 else f"{floor}.0"


def versions() -> list[str]:
    chosen = os.environ.get("LAKEHOUSE_TEST_SPARK_VERSIONS", "").strip()
    return [v.strip() for v in chosen.split(",") if v.strip()] or [lowest_spark()]


def pyspark_folder(state_dir: Path, version: str) -> Path:
    """pyspark ``version`` (and its py4j) installed with pip into a folder of its own, once."""
    folder = state_dir / "spark-versions" / version
    if not (folder / ".installed").exists():
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--target", str(folder), "--upgrade", f"pyspark=={version}"],
            check=True,
            env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"),
            timeout=900,
        )
        (folder / ".installed").write_text(version)
    return folder


def stack_of_its_own(stack: Stack, state_dir: Path) -> Stack:
    """A second stack beside the session's: its own PostgreSQL and S3 (on free ports), Spark ports 50 above the
    preferred ones (both stacks may start a Connect server at the same moment), the S3A jar cache shared, and no
    class-data archives (each of its two Connect servers and its first spark-submit driver wrote one, for nothing:
    the stack lives in a temporary folder)."""
    state_dir.mkdir(parents=True)
    (state_dir / "jars").symlink_to(stack.state_dir / "jars", target_is_directory=True)
    other = Stack(state_dir)
    other.prefer_spark_ports(50)
    other.without_class_archives()
    other.up(log=lambda _m: None)
    return other


@pytest.mark.parametrize("version", versions())
def test_the_spark_tests_pass_on_another_spark(stack: Stack, tmp_path: Path, version: str) -> None:
    begin = time.monotonic()
    folder = pyspark_folder(stack.state_dir, version)
    installed = time.monotonic() - begin
    other = stack_of_its_own(stack, tmp_path / "state")
    try:
        assert json.loads(other.env()["AIRFLOW_CONN_DUCKLAKE_MAIN"])["extra"]["spark_class_archive"] is False
        _check_another_spark(other, tmp_path, version, folder, installed)
        # asked for from this process, the Connect server that Spark started is replaced by one of this Spark
        other.start_spark_connect(log=lambda _m: None)
        pid = other.spark_connect_server().pid()
        assert pid is not None
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        assert str(spark_home() / "jars") in command, command[:500]
    finally:
        other.down(log=lambda _m: None)
    assert list((tmp_path / "state").rglob("*.jsa")) == [], "the stack without class archives wrote one"


def _check_another_spark(stack: Stack, tmp_path: Path, version: str, folder: Path, installed: float) -> None:
    """The subset, in a child pytest on ``stack`` with pyspark ``version`` from ``folder`` first on the path."""
    env = {
        **os.environ,  # holds the session stack's connections: the second stack's replace every one of them
        **stack.env(),
        "PYTHONPATH": os.pathsep.join([str(folder), str(REPO_ROOT)]),
        "LAKEHOUSE_STATE_DIR": str(stack.state_dir),
    }
    probe = subprocess.run(
        [sys.executable, "-c", "import pyspark; print(pyspark.__version__, pyspark.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    running, where = probe.stdout.split()
    assert running == version and where.startswith(str(folder)), probe.stdout

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            f"--basetemp={tmp_path / 'run'}",
            "-k",
            SELECTION,
            *SUBSET,
        ],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    print(f"\n[Spark {version}] installed in {installed:.1f} s; {summary}")
    assert result.returncode == 0, f"on Spark {version}:\n{result.stdout[-6000:]}\n{result.stderr[-2000:]}"
    assert re.search(r"\d+ passed", summary) and "skipped" not in summary, summary
    # The Connect server the child started from that Spark logs: Spark 4.0's S3A jars once sent its whole log to
    # SLF4J's no-op logger (see devstack.jars.without_unshaded_slf4j).
    server_log = stack.spark_connect_server().log_file.read_text(errors="replace")
    assert f" INFO SparkContext: Running Spark version {version}" in server_log.rsplit("starting connect", 1)[-1]
    if spark_release(version) < spark_release(client_version()):
        # the tested set's newer pyspark on that older server: refused at connect, naming both releases (it used
        # to fail later, on a setting the server does not know)
        refused = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from airflow_provider_lakehouse.spark.session import connect_session; "
                "connect_session(sys.argv[1])",
                stack.spark_connect_server().url,
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert refused.returncode != 0
        assert (
            f"SparkVersionError: The Spark Connect server at {stack.spark_connect_server().url} runs Spark {version}, an older release than this task's pyspark {client_version()}"
            in refused.stderr
        ), refused.stderr[-3000:]
